"""Nemotron-NAS / DeciLM (``model_type: "nemotron-nas"``, remote code ``DeciLMForCausalLM``).

Each layer's shape comes from ``block_configs[i]``:
- ``attention``: ``no_op`` → no attention and no ``input_layernorm``; ``replace_with_linear``
  → one H x H Linear without bias (Mixer kind ``linear``); else Llama attention with
  ``num_attention_heads // n_heads_in_group`` KV heads (``attention_bias``); a
  ``window_length`` makes it sliding-window attention (same weights).
- ``ffn``: ``no_op`` → no MLP and no ``post_attention_layernorm``; ``replace_with_linear`` → one
  H x H Linear (FFN kind ``linear``); else a gated MLP (``mlp_bias``) whose width is
  ``_ffn_mult_to_intermediate_size(ffn_mult, H)`` = ``int(2 * ffn_mult * H / 3)`` rounded up to
  a multiple of 256, exactly as DeciLM's ``modeling_decilm.py`` computes it.
Norms are RMSNorms of width H; final RMSNorm; LM head untied by default. transformers has no
DeciLM class, so there is no meta-device oracle; the tests check the count against this rule.
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention
from colint.normalize.hf.base import HFReader, Header
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec
from colint.normalize.reader import Reader

FFN_MULTIPLE = 256  # DeciLM's _find_multiple(intermediate_size, 256)


def ffn_mult_to_intermediate_size(ffn_mult: float, hidden_size: int) -> int:
    """DeciLM's ``_ffn_mult_to_intermediate_size``."""
    size = int(2 * ffn_mult * hidden_size / 3)
    return size if size % FFN_MULTIPLE == 0 else size + FFN_MULTIPLE - size % FFN_MULTIPLE


def build(r: HFReader) -> ModelSpec:
    h = r.int("hidden_size", "hidden_size")
    n_layers = r.int("num_layers", "num_hidden_layers")
    heads = r.int("num_heads", "num_attention_heads")
    hd = r.int("head_dim", "head_dim", default=h // heads)
    vocab = r.int("vocab_size", "vocab_size")
    tie = tie_embeddings(r, False)
    attn_bias = r.bool(None, "attention_bias", default=False)
    mlp_bias = r.bool(None, "mlp_bias", default=False)
    blocks = r.list("block_configs", "block_configs")
    if blocks is None:
        raise r.error((), "missing key 'block_configs' (nemotron-nas describes every layer there)")
    if len(blocks) != n_layers:
        raise r.error("block_configs", f"'block_configs' lists {len(blocks)} layers, num_hidden_layers is {n_layers}")
    kinds: list[LayerKind] = []
    index: dict[tuple, int] = {}
    pattern: list[int] = []
    kv_seen: list[int] = []
    inter_seen: list[int] = []
    for i, block in enumerate(blocks):
        mixer, ffn, norms = _block(r, i, block, h, heads, hd, attn_bias, mlp_bias)
        if mixer.kind == "attention":
            kv_seen.append(mixer.num_kv_heads)
        if ffn.kind == "dense":
            inter_seen.append(ffn.intermediate_size)
        key = (mixer, ffn)
        if key not in index:
            index[key] = len(kinds)
            kinds.append(LayerKind(name=_kind_name(mixer, ffn), mixer=mixer, ffn=ffn, other_params=norms))
        pattern.append(index[key])
    common_kv = max(set(kv_seen), key=kv_seen.count) if kv_seen else 0
    common_inter = max(set(inter_seen), key=inter_seen.count) if inter_seen else None
    return r.header_spec(
        Header(h, n_layers, heads, common_kv, hd, common_inter, vocab, tie),
        (kinds, pattern),
        extra_params=h,
        notes=[
            "heterogeneous layers from block_configs (DeciLM): FFN widths from ffn_mult, KV heads from n_heads_in_group"
        ],
    )


def _block(
    r: HFReader, i: int, block: object, h: int, heads: int, hd: int, attn_bias: bool, mlp_bias: bool
) -> tuple[Mixer, FFN, int]:
    """Layer ``i``'s mixer, FFN and norm parameters (an RMSNorm before each sub-block that is not a no-op)."""
    b = r.sub("block_configs")  # located reads inside block i (key paths keep the index)
    b.prefix = r.path(("block_configs", i))
    if not isinstance(block, dict):
        raise r.error(("block_configs", i), f"'block_configs[{i}]' must be a mapping")
    a_noop = b.bool(None, "attention.no_op", default=False)
    a_lin = b.bool(None, "attention.replace_with_linear", default=False)
    f_noop = b.bool(None, "ffn.no_op", default=False)
    f_lin = b.bool(None, "ffn.replace_with_linear", default=False)
    norms = 0
    if a_noop:
        mixer = Mixer(kind="none")
    elif a_lin:
        mixer, norms = Mixer(kind="linear"), norms + h
    else:
        mixer, norms = _attention(b, i, heads, hd, attn_bias), norms + h
    if f_noop:
        ffn = FFN(kind="none")
    elif f_lin:
        ffn, norms = FFN(kind="linear"), norms + h
    else:
        ffn, norms = _dense_ffn(b, i, h, mlp_bias), norms + h
    return mixer, ffn, norms


def _attention(b: Reader, i: int, heads: int, hd: int, bias: bool) -> Mixer:
    """Llama attention of ``heads // n_heads_in_group`` KV heads, sliding where ``window_length`` is given."""
    group = b.int(f"layers[{i}].num_kv_heads", "attention.n_heads_in_group")
    if heads % group:
        raise b.error(
            "attention.n_heads_in_group",
            f"n_heads_in_group {group} does not divide num_attention_heads {heads}",
        )
    window = b.opt_int(f"layers[{i}].window", "attention.window_length", minimum=1)
    return heads_attention(
        heads, heads // group, hd, attention="sliding" if window else "full", window=window, qkv_bias=bias, o_bias=bias
    )


def _dense_ffn(b: Reader, i: int, h: int, bias: bool) -> FFN:
    """A gated MLP of the width DeciLM derives from ``ffn_mult``."""
    mult = b.float(f"layers[{i}].ffn.intermediate_size", "ffn.ffn_mult", minimum=0.0)
    inter = ffn_mult_to_intermediate_size(mult, h)
    if inter <= 0:
        raise b.error("ffn.ffn_mult", f"ffn_mult {mult} gives no FFN width")
    return FFN(kind="dense", intermediate_size=inter, gated=True, bias=bias)


def _kind_name(mixer: Mixer, ffn: FFN) -> str:
    a_name = {"none": "no-op", "linear": "linear"}.get(
        mixer.kind, f"attention/{mixer.attention}(kv={mixer.num_kv_heads})"
    )
    f_name = {"none": "no-op", "linear": "linear"}.get(ffn.kind, f"dense({ffn.intermediate_size})")
    return f"{a_name}+{f_name}"
