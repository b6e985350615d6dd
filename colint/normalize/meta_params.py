"""Meta ``params.json`` / ``ModelArgs``-style JSON → ModelSpec.

Variants (all keyed by ``dim``, ``n_layers``, ``n_heads``):

- **Llama reference** (meta-llama ``params.json``): ``n_kv_heads``, ``vocab_size`` (-1 = set by the
  tokenizer → unknown), ``multiple_of``, ``ffn_dim_multiplier``; the FFN width is derived exactly as
  Meta's ``FeedForward``: ``4·dim → int(2·h/3) → int(multiplier·h) → round up to multiple_of``.
- **torchchat** ``model_params`` (gpt-fast ``TransformerArgs``): ``hidden_dim`` given directly,
  ``n_local_heads`` = KV heads, ``attention_bias`` / ``feed_forward_bias``, ``tie_word_embeddings``;
  LLaVA's file nests the text decoder under ``decoder:`` (the vision ``encoder:`` is not linted).
  torchchat fuses q, k and v into one ``wqkv`` weight.
- **ExecuTorch** ``llama_transformer`` ``ModelArgs``: ``hidden_dim``, ``head_dim``,
  ``attention_qkv_bias``, ``use_qk_norm`` (per-head RMSNorms), ``post_attention_norm`` /
  ``post_ffn_norm``, ``layer_types`` (``full_attention`` / ``sliding_attention`` with
  ``sliding_window`` / LFM2's ``conv`` short-convolution blocks), sometimes written as the text of a
  Python list.
- **DeepSeek reference inference** ``ModelArgs`` (deepseek-ai/DeepSeek-V3 ``inference/model.py``):
  MLA (``q_lora_rank`` 0 = plain q projection), ``n_dense_layers`` dense layers of ``inter_dim``, then
  MoE layers of ``n_routed_experts`` × ``moe_inter_dim`` with ``n_shared_experts`` merged into one MLP
  and a router whose bias exists only when ``dim == 7168`` (as that code builds it).

These reference implementations keep a separate output matrix (``self.output``); the spec is untied
unless the file says ``tie_word_embeddings: true``.
"""

from __future__ import annotations

from colint.loading.document import Document
from colint.normalize.format_reader import (
    FormatReader,
    attention,
    routed_experts,
    layer,
    literal_list,
    llama_ffn_hidden,
    mla,
    mla_norm_params,
    positive_float,
    raise_at,
)
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec, Quantization

ACCEPTS_VOCAB_SIZE = True  # normalize(doc, vocab_size=...) applies --vocab-size itself

_CORE = ("dim", "n_layers", "n_heads")
_DEEPSEEK = ("inter_dim", "moe_inter_dim", "n_routed_experts", "kv_lora_rank", "n_dense_layers")
_TORCHCHAT = (
    "n_local_heads",
    "block_size",
    "use_tiktoken",
    "use_hf_tokenizer",
    "rope_base",
    "max_seq_length",
    "feed_forward_bias",
    "attention_bias",
)
# ExecuTorch LFM2 short convolution: kernel length (short_conv.py hardcodes L_cache = 3).
LFM2_CONV_KERNEL = 3


def _root(doc: Document) -> tuple | None:
    data = doc.data
    if not isinstance(data, dict):
        return None
    dec = data.get("decoder")
    if isinstance(dec, dict) and all(k in dec for k in ("dim", "n_layers")) and "text_config" not in data:
        return ("decoder",)
    if "model_type" in data or "num_hidden_layers" in data:
        return None  # a Hugging Face config (DistilBERT also says dim / n_layers / n_heads)
    if all(k in data for k in ("dim", "n_layers")) and ("n_heads" in data or "n_kv_heads" in data):
        return ()
    return None


def detect(doc: Document) -> bool:
    return _root(doc) is not None


def normalize(doc: Document, vocab_size: int | None = None) -> ModelSpec:
    root = _root(doc)
    if root is None:
        raise raise_at(
            doc,
            (),
            "not a Meta-style ModelArgs file: expected dim, n_layers and n_heads (or a decoder: section holding them)",
        )
    r = FormatReader(doc, "meta", root)
    if root:
        r.notes.append("text decoder under 'decoder:' linted; the vision encoder is not")
    sect = doc.get(root) if root else doc.data
    if any(k in sect for k in _DEEPSEEK):
        return _deepseek(r, vocab_size)
    return _llama(r, vocab_size, torchchat=any(k in sect for k in _TORCHCHAT) or bool(root))


def _vocab(r: FormatReader, given: int | None) -> int | None:
    if r.has("vocab_size"):
        r.check_resolved("vocab_size")
        v = r.raw("vocab_size")
        if isinstance(v, int) and not isinstance(v, bool) and v == -1:
            r.notes.append("vocab_size -1: set by the tokenizer at load time (pass --vocab-size)")
            r.record("vocab_size", "vocab_size")
        else:
            return r.int("vocab_size", "vocab_size")
    else:
        r.record("vocab_size", "vocab_size", default=True)
        r.notes.append("no vocab_size: the tokenizer sets it (pass --vocab-size)")
    if given is not None:
        r.notes.append(f"vocab_size {given} from --vocab-size")
    return given


def _tied(r: FormatReader) -> bool:
    if r.has("tie_word_embeddings"):
        return bool(r.bool("tie_word_embeddings", "tie_word_embeddings"))
    r.record("tie_word_embeddings", "tie_word_embeddings", default=True)
    return False


def _llama(r: FormatReader, vocab_size: int | None, torchchat: bool) -> ModelSpec:
    h = r.req("hidden_size", "dim")
    n_layers = r.req("num_layers", "n_layers")
    heads = r.req("num_heads", "n_heads")
    kv = r.req("num_kv_heads", "n_kv_heads", "n_local_heads", default=heads)
    head_dim = _head_dim(r, h, heads)
    inter = _ffn_width(r, h)
    qkv_bias = bool(r.bool(None, "attention_qkv_bias", default=False))
    o_bias = False
    if r.has("attention_bias"):
        qkv_bias = o_bias = bool(r.bool(None, "attention_bias"))
    ffn_bias = bool(r.bool(None, "feed_forward_bias", default=False))
    qk_norm = 2 * head_dim if r.bool(None, "use_qk_norm", default=False) else 0
    norms = (
        2
        + int(bool(r.bool(None, "post_attention_norm", default=False)))
        + int(bool(r.bool(None, "post_ffn_norm", default=False)))
    )
    window = r.opt("sliding_window", "sliding_window")
    ffn = _llama_ffn(r, inter, ffn_bias)
    full = attention(heads, kv, head_dim, qkv_bias=qkv_bias, o_bias=o_bias, fused_qkv=torchchat)
    sliding = attention(heads, kv, head_dim, window=window, qkv_bias=qkv_bias, o_bias=o_bias, fused_qkv=torchchat)
    other = norms * h + qk_norm
    layers = _typed_layers(r, n_layers, layer(full, ffn, other), layer(sliding if window else full, ffn, other), h)

    tie = _tied(r)
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        layers=layers,
        model_type=_model_type(r, torchchat),
        architecture="ModelArgs",
        vocab_size=_vocab(r, vocab_size),
        tie_word_embeddings=tie,
        max_position_embeddings=r.opt(
            "max_position_embeddings", "max_position_embeddings", "max_seq_len", "block_size", "max_seq_length"
        ),
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=head_dim,
        intermediate_size=inter,
        hidden_act=r.name("act_fn", default="silu"),
        sliding_window=window,
        extra_params=h,
        notes=["untied: the reference Transformer has its own output matrix"] if not tie else [],
    )


def _head_dim(r: FormatReader, h: int, heads: int) -> int:
    head_dim = r.opt("head_dim", "head_dim")
    if head_dim is None:
        if h % heads:
            raise r.error("n_heads", f"dim {h} is not divisible by n_heads {heads} and head_dim is not given")
        head_dim = h // heads
        r.record("head_dim", "head_dim", default=True)
    return head_dim


def _ffn_width(r: FormatReader, h: int) -> int:
    """``hidden_dim`` (torchchat, ExecuTorch), else the width Meta's FeedForward derives from ``dim``."""
    if r.has("hidden_dim"):
        return r.req("intermediate_size", "hidden_dim")
    multiple_of = r.req(None, "multiple_of", default=256)
    mult = positive_float(r, "ffn_dim_multiplier")
    inter = llama_ffn_hidden(h, multiple_of, mult)
    # Derived: no key holds the width. Findings point at the key in the file it is computed from, the one
    # the user would edit: multiple_of (the width is a multiple of it), else ffn_dim_multiplier (Meta's
    # ModelArgs takes no hidden_dim). With neither in the file, hidden_dim is the key to add (torchchat,
    # ExecuTorch read it), with no line.
    knob = next((k for k in ("multiple_of", "ffn_dim_multiplier") if r.has(k)), None)
    if knob:
        r.record_derived("intermediate_size", knob)
    else:
        r.record("intermediate_size", "hidden_dim", default=True)
    r.notes.append(
        f"FFN width {inter} derived as Meta's FeedForward does: 4*dim -> int(2h/3)"
        + (f" -> int({mult:g}*h)" if mult is not None else "")
        + f" -> multiple of {multiple_of}"
    )
    return inter


def _llama_ffn(r: FormatReader, inter: int, ffn_bias: bool) -> FFN:
    """A gated MLP of ``inter``, or (``moe: true``, gpt-fast's MoE) experts of that width."""
    if not r.bool(None, "moe", default=False):
        return FFN(kind="dense", intermediate_size=inter, gated=True, bias=ffn_bias)
    ffn = routed_experts(
        r.req("num_experts", "num_experts", default=8),
        r.req("top_k", "num_activated_experts", default=2),
        inter,
        bias=ffn_bias,
        expert_bias=ffn_bias,
    )
    r.sources["moe_intermediate_size"] = r.sources["intermediate_size"]
    return ffn


def _typed_layers(r: FormatReader, n_layers: int, full: LayerKind, sliding: LayerKind, h: int) -> list[LayerKind]:
    """Each layer's kind by ExecuTorch's ``layer_types`` (full or sliding attention, LFM2's short convolution);
    every layer ``full`` without it, and the layers the list does not name."""
    types = literal_list(r, "layer_types")
    if types is None:
        return [full] * n_layers
    r.record("layer_types", "layer_types")
    r.per_layer_lists["layer_types"] = len(types)
    if len(types) != n_layers:
        r.notes.append(
            f"INCONSISTENT: layer_types lists {len(types)} entries for n_layers {n_layers}; "
            f"the first {min(len(types), n_layers)} describe the layers"
        )
    conv = layer(
        Mixer(kind="short_conv", conv_kernel=LFM2_CONV_KERNEL, d_inner=h), full.ffn, 2 * h + h * LFM2_CONV_KERNEL
    )
    layers = []
    for i, t in enumerate(types[:n_layers]):
        if t in ("full_attention", "global", "attention"):
            layers.append(full)
        elif t in ("sliding_attention", "local", "sliding"):
            layers.append(sliding)
        elif t == "conv":
            layers.append(conv)
        else:
            raise r.error(
                ("layer_types", i),
                f"'{r.key_name(('layer_types', i))}' is {t!r}; expected full_attention, sliding_attention or conv",
            )
    return layers + [full] * (n_layers - len(layers))


def _model_type(r: FormatReader, torchchat: bool) -> str:
    if r.prefix:
        mt = r.doc.get(("model_type",))
        return mt if isinstance(mt, str) else "llava"
    return "torchchat" if torchchat else "llama"


def _deepseek(r: FormatReader, vocab_size: int | None) -> ModelSpec:
    h = r.req("hidden_size", "dim")
    n_layers = r.req("num_layers", "n_layers")
    heads = r.req("num_heads", "n_heads")
    dense_layers = r.req("first_k_dense", "n_dense_layers", default=1, minimum=0)
    inter = r.req("intermediate_size", "inter_dim")
    q_lora = r.req("q_lora_rank", "q_lora_rank", default=0, minimum=0)
    kv_lora = r.req("kv_lora_rank", "kv_lora_rank", default=512)
    nope = r.req("qk_nope_head_dim", "qk_nope_head_dim", default=128)
    rope = r.req("qk_rope_head_dim", "qk_rope_head_dim", default=64)
    v_dim = r.req("v_head_dim", "v_head_dim", default=128)
    m = mla(heads, q_lora_rank=q_lora or None, kv_lora_rank=kv_lora, nope=nope, rope=rope, v_head_dim=v_dim)
    other = 2 * h + mla_norm_params(m)
    dense = FFN(kind="dense", intermediate_size=inter, gated=True)
    experts = r.req("num_experts", "n_routed_experts", default=64)
    moe_inter = r.req("moe_intermediate_size", "moe_inter_dim", default=1408)
    r.record("shared_expert_intermediate_size", "moe_inter_dim", default=not r.has("moe_inter_dim"))
    shared = r.req("num_shared_experts", "n_shared_experts", default=2, minimum=0)
    moe = routed_experts(
        experts,
        r.req("top_k", "n_activated_experts", default=6),
        moe_inter,
        num_shared_experts=shared,
        shared_intermediate_size=moe_inter,
        router_bias=h == 7168,
    )
    if h == 7168:
        r.notes.append("router bias counted: the reference Gate has one only when dim == 7168")
    if dense_layers > n_layers:
        raise r.error("n_dense_layers", f"n_dense_layers {dense_layers} exceeds n_layers {n_layers}")
    layers = [layer(m, dense, other)] * dense_layers + [layer(m, moe, other)] * (n_layers - dense_layers)
    dtype = r.name("dtype", default="bf16")
    quant = None
    if dtype == "fp8":
        # inference/model.py: Linear weights in float8_e4m3fn with one scale per 128x128 block.
        quant = Quantization(quant_method="fp8", fmt="e4m3", weight_block_size=[128, 128])
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        layers=layers,
        model_type="deepseek-ref",
        architecture="ModelArgs",
        vocab_size=_vocab(r, vocab_size),
        tie_word_embeddings=False,
        max_position_embeddings=r.opt("max_position_embeddings", "max_seq_len"),
        num_heads=heads,
        num_kv_heads=heads,
        head_dim=nope + rope,
        intermediate_size=inter,
        hidden_act="silu",
        extra_params=h,
        dtype=dtype,
        quantization=quant,
    )
