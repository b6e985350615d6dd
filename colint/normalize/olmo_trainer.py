"""OLMo trainer YAML (allenai/OLMo, allenai/OLMoE ``configs/*.yml``) → ModelSpec.

The model sits under ``model:`` (``d_model``, ``n_layers``, ``n_heads``, ``n_kv_heads``).
Shapes follow ``olmo/model.py``: a fused ``att_proj`` (q, k, v), ``attn_out``, ``ff_proj`` of
``mlp_hidden_size`` (default ``mlp_ratio·d_model``) whose SwiGLU output is halved, so the gated
width is ``mlp_hidden_size / 2``; ``block_type: moe`` replaces the MLP by ``moe_num_experts``
experts of that width, top ``moe_top_k``, with a bias-free router. Biases when ``include_bias``;
norms carry a weight when ``layer_norm_with_affine`` and a bias when ``bias_for_layer_norm``
(default: ``include_bias``); ``attention_layer_norm`` adds q/k norms of widths d_model and
kv_heads·head_dim. The embedding has ``embedding_size`` rows (the vocabulary padded) when given.
``${oc.env:...}`` interpolations elsewhere in the file do not matter to the model.
"""

from __future__ import annotations

from colint.loading.document import Document
from colint.normalize.format_reader import FormatReader, attention, layer, raise_at, routed_experts
from colint.normalize.model_spec import FFN, ModelSpec

ACCEPTS_VOCAB_SIZE = False


def detect(doc: Document) -> bool:
    m = doc.data.get("model") if isinstance(doc.data, dict) else None
    return isinstance(m, dict) and "d_model" in m and "n_layers" in m


def normalize(doc: Document) -> ModelSpec:
    if not detect(doc):
        raise raise_at(
            doc,
            ("model",) if isinstance(doc.data, dict) and "model" in doc.data else (),
            "not an OLMo trainer config: expected model.d_model and model.n_layers",
        )
    r = FormatReader(doc, "olmo", ("model",))
    h = r.req("hidden_size", "d_model")
    n_layers = r.req("num_layers", "n_layers")
    heads = r.req("num_heads", "n_heads")
    kv = r.req(
        "num_kv_heads", "n_kv_heads", default=1 if r.bool(None, "multi_query_attention", default=False) else heads
    )
    if h % heads:
        raise r.error("n_heads", f"d_model {h} is not divisible by n_heads {heads}")
    head_dim = h // heads  # derived: no key holds it

    act = r.name("activation_type", default="swiglu")
    gated = act == "swiglu"
    inter = _ffn_width(r, h, gated)
    bias = bool(r.bool(None, "include_bias", default=True))
    norm_w, qk = _norm_params(r, h, bias, kv * head_dim)
    mixer = attention(heads, kv, head_dim, qkv_bias=bias, o_bias=bias, fused_qkv=True)
    block = r.name("block_type", default="sequential")
    ffn = _ffn(r, block, inter, gated, bias)

    vocab = r.req(None, "vocab_size")
    rows = r.opt("vocab_size", "embedding_size") or vocab
    if not r.has("embedding_size"):
        r.record("vocab_size", "vocab_size")
    elif rows != vocab:
        r.notes.append(f"vocab_size {vocab} padded to embedding_size {rows} rows")
    positions = 0
    if not r.bool(None, "rope", default=False) and not r.bool(None, "alibi", default=False):
        positions = r.req(None, "max_sequence_length", default=1024)
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        layers=[layer(mixer, ffn, 2 * norm_w + qk)] * n_layers,
        model_type="olmoe" if block == "moe" else "olmo",
        vocab_size=rows,
        tie_word_embeddings=bool(r.bool("tie_word_embeddings", "weight_tying", default=True)),
        max_position_embeddings=r.opt("max_position_embeddings", "max_sequence_length"),
        position_embeddings=positions,
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=head_dim,
        intermediate_size=inter,
        hidden_act=act,
        extra_params=norm_w,
    )


def _ffn_width(r: FormatReader, h: int, gated: bool) -> int:
    """The FFN width: ``mlp_hidden_size`` (else ``mlp_ratio`` x d_model), halved by SwiGLU."""
    if r.has("mlp_hidden_size"):
        # The key holds the FFN width only without SwiGLU (which halves it): its source only then,
        # else the key the width is computed from.
        hidden = r.req(None if gated else "intermediate_size", "mlp_hidden_size")
        if gated:
            r.record_derived("intermediate_size", "mlp_hidden_size")
    else:
        hidden = r.req(None, "mlp_ratio", default=4) * h
        r.record_derived("intermediate_size", "mlp_ratio")  # mlp_ratio x d_model (halved by SwiGLU)
    inter = hidden // 2 if gated else hidden
    if gated:
        r.notes.append(f"SwiGLU halves ff_proj's {hidden} outputs: gated width {inter}")
    return inter


def _norm_params(r: FormatReader, h: int, bias: bool, kv_width: int) -> tuple[int, int]:
    """(one block norm's parameters, the q/k norms' parameters): weight when affine, bias when
    ``bias_for_layer_norm`` (default ``include_bias``) and not RMS; q/k norms of d_model and ``kv_width``."""
    affine = bool(r.bool(None, "layer_norm_with_affine", default=True))
    norm_bias = r.raw("bias_for_layer_norm")
    norm_bias = bias if norm_bias is None else bool(r.bool(None, "bias_for_layer_norm"))
    norm_w = (h if affine else 0) + (h if affine and norm_bias and r.name("layer_norm_type") != "rms" else 0)
    qk = 0
    if r.bool(None, "attention_layer_norm", default=False):
        if r.bool(None, "attention_layer_norm_with_affine", default=True):
            per = 2 if norm_bias and r.name("layer_norm_type") != "rms" else 1
            qk = per * (h + kv_width)
    return norm_w, qk


def _ffn(r: FormatReader, block: str | None, inter: int, gated: bool, bias: bool) -> FFN:
    """``block_type: moe``: experts of the FFN width with a bias-free router; else the dense MLP."""
    if block != "moe":
        return FFN(kind="dense", intermediate_size=inter, gated=gated, bias=bias)
    ffn = routed_experts(
        r.req("num_experts", "moe_num_experts"),
        r.req("top_k", "moe_top_k", default=2),
        inter,
        gated=gated,
        expert_gated=gated,
        expert_bias=False,
    )
    r.sources["moe_intermediate_size"] = r.sources["intermediate_size"]
    return ffn
