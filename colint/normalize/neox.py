"""GPT-NeoX training YAML (EleutherAI/gpt-neox, Pythia) → ModelSpec.

NeoX accepts every key with hyphens or underscores (``hidden-size`` = ``hidden_size``); both are
read here, hyphen first. Published files are often JSON with ``#`` comments and a trailing comma
— YAML flow mappings, which the YAML loader reads as they are. A file that is not even that
(an unbalanced brace, a missing comma) is reported by the loader at its line and column.

Shapes follow NeoX's ``ParallelTransformerLayer`` (HF ``GPTNeoXLayer``): fused QKV with bias,
dense out with bias, MLP ``h → 4h → h`` with biases (gated activations: NeoX's LLaMA MLP
width ``int(8h/3)`` rounded up to 256 unless ``intermediate-size``), two LayerNorms with bias
(``gpt-j-residual`` runs attention and MLP in parallel but keeps both norms), a final norm, a
learned position table unless ``pos-emb`` is rotary/alibi/none, and an untied output layer when
``no-weight-tying``. The vocabulary comes from the tokenizer: with ``--vocab-size`` it is padded
to a multiple of ``make-vocab-size-divisible-by`` (128) × ``model-parallel-size``, as NeoX pads it.
"""

from __future__ import annotations

from colint.loading.document import Document
from colint.normalize.format_reader import FormatReader, attention, layer, megatron_padded_vocab, raise_at, round_up
from colint.normalize.model_spec import FFN, ModelSpec

ACCEPTS_VOCAB_SIZE = True

_MARKERS = (
    "pos-emb",
    "pos_emb",
    "rotary-pct",
    "rotary_pct",
    "gpt-j-residual",
    "gpt_j_residual",
    "no-weight-tying",
    "no_weight_tying",
    "attention-config",
    "attention_config",
    "num-layers",
    "hidden-size",
    "num-attention-heads",
)
GATED = {"swiglu", "geglu", "reglu", "glu"}


def _k(name: str) -> tuple[str, str]:
    """The hyphenated and underscored spellings of a NeoX key."""
    return name.replace("_", "-"), name.replace("-", "_")


def detect(doc: Document) -> bool:
    data = doc.data
    if not isinstance(data, dict) or "model_type" in data:
        return False
    has_dims = any(k in data for k in _k("num-layers")) and any(k in data for k in _k("hidden-size"))
    return has_dims and any(k in data for k in _MARKERS)


def normalize(doc: Document, vocab_size: int | None = None) -> ModelSpec:
    if not isinstance(doc.data, dict) or not any(k in doc.data for k in _k("hidden-size")):
        raise raise_at(doc, (), "not a GPT-NeoX config: expected hidden-size, num-layers, num-attention-heads")
    r = FormatReader(doc, "gpt-neox", ())
    h = r.req("hidden_size", *_k("hidden-size"))
    n_layers = r.req("num_layers", *_k("num-layers"))
    heads = r.req("num_heads", *_k("num-attention-heads"))
    kv = r.req("num_kv_heads", *_k("num-kv-heads"), default=heads)
    if h % heads:
        raise r.error(
            _present(r, "num-attention-heads"), f"hidden-size {h} is not divisible by num-attention-heads {heads}"
        )
    head_dim = h // heads  # derived: no key holds it

    act = r.name(*_k("activation"), default="gelu")
    gated = act in GATED
    inter = _mlp_width(r, h, act, gated)
    attn_bias = bool(r.bool(None, *_k("use-bias-in-attn-linear"), default=True))
    mlp_bias = bool(r.bool(None, *_k("use-bias-in-mlp"), default=True))
    norm_w = _norm_width(r, h)
    if r.bool(None, *_k("gpt-j-residual"), default=False):
        r.notes.append("gpt-j-residual: attention and MLP run in parallel from the same input")

    mixer = attention(heads, kv, head_dim, qkv_bias=attn_bias, o_bias=attn_bias, fused_qkv=True)
    ffn = FFN(kind="dense", intermediate_size=inter, gated=gated, bias=mlp_bias)
    pos = r.name(*_k("pos-emb"), default="learned")
    positions = 0
    if pos == "learned":
        positions = r.req(None, *_k("max-position-embeddings"))
    tie = not r.bool(None, *_k("no-weight-tying"), default=False)  # inverse: not a tie source
    vocab = _vocab(r, vocab_size)
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        layers=[layer(mixer, ffn, 2 * norm_w)] * n_layers,
        model_type="gpt-neox",
        vocab_size=vocab,
        tie_word_embeddings=tie,
        vocab_padding=r.vocab_padding,
        max_position_embeddings=r.opt("max_position_embeddings", *_k("max-position-embeddings")),
        position_embeddings=positions,
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=head_dim,
        intermediate_size=inter,
        hidden_act=act,
        extra_params=norm_w,
    )


def _mlp_width(r: FormatReader, h: int, act: str | None, gated: bool) -> int:
    """``intermediate-size``, else NeoX's default for the activation (8H/3 rounded up to mlp-multiple-of, or 4H)."""
    inter = r.opt("intermediate_size", *_k("intermediate-size"))
    if inter is None:
        if gated:
            inter = round_up(int(2 * h * 4 / 3), r.req(None, *_k("mlp-multiple-of"), default=256))
        else:
            inter = 4 * h
        r.record("intermediate_size", "intermediate-size", default=True)
        r.notes.append(f"MLP width {inter} is NeoX's default for activation {act}")
    return inter


def _norm_width(r: FormatReader, h: int) -> int:
    """The parameters of one norm: LayerNorm (with or without bias), RMSNorm or ScaleNorm (one scalar)."""
    norm = r.name(*_k("norm"), default="layernorm")
    norm_bias = bool(r.bool(None, *_k("use-bias-in-norms"), default=True))
    if norm == "rmsnorm":
        return h
    if norm == "scalenorm":
        return 1
    if norm == "layernorm":
        return h * (2 if norm_bias else 1)
    raise r.error(_present(r, "norm"), f"unknown norm {norm!r}; expected layernorm, rmsnorm or scalenorm")


def _vocab(r: FormatReader, vocab_size: int | None) -> int | None:
    """The vocabulary of ``--vocab-size`` padded as NeoX pads it; None without one (it is the tokenizer's)."""
    if vocab_size is None:
        r.notes.append(
            "vocab size comes from the tokenizer (vocab-file), not this file: parameter counts "
            "exclude the embedding and output layer (pass --vocab-size)"
        )
        return None
    div = r.req(None, *_k("make-vocab-size-divisible-by"), default=128)
    mp = r.req(None, *_k("model-parallel-size"), default=1)
    vocab = megatron_padded_vocab(vocab_size, div, mp)
    r.vocab_padding = (div, mp)  # CL202 fixes the divisor, the key this format reads
    r.record("vocab_divisible_by", _present(r, "make-vocab-size-divisible-by"))
    r.notes.append(
        f"vocab {vocab_size} (--vocab-size) padded to {vocab}: a multiple of "
        f"make-vocab-size-divisible-by {div} x model-parallel-size {mp}, as NeoX pads it"
    )
    return vocab


def _present(r: FormatReader, name: str) -> str:
    return r.first_present(_k(name)) or name
