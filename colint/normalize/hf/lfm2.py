"""LFM2 (``lfm2``): attention layers and gated short-convolution layers, each with a SwiGLU MLP.

transformers 5.24 ``modeling_lfm2.py``: ``layer_types`` (else ``full_attn_idxs``, else every
layer attention) says which layers attend; the others are ``Lfm2ShortConv`` — ``in_proj`` H -> 3H
(B, C, x), a depthwise ``conv`` of ``conv_L_cache`` taps over H channels, ``out_proj`` H -> H, all
with ``conv_bias``. Attention: q/k/v/``out_proj`` without bias, per-head q/k RMSNorms (head_dim
each). MLP w1/w3/w2 without bias; its width is ``intermediate_size`` (alias ``block_ff_dim``)
unless ``block_auto_adjust_ff_dim``: int(2/3 x), times ``block_ffn_dim_multiplier``, rounded up
to ``block_multiple_of``. Two RMSNorms (H) per layer and ``embedding_norm`` (H) at the end;
LM head tied by default (alias ``tie_embedding``).
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention
from colint.normalize.hf.base import HFReader, Header
from colint.normalize.hf.moe_common import KindTable, int_list, layer, str_list
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, Mixer, ModelSpec


def ffn_width(r: HFReader) -> int:
    if not r.bool(None, "block_auto_adjust_ff_dim", default=True):
        return r.int("intermediate_size", "intermediate_size", "block_ff_dim", default=12288)
    width = int(2 * r.int(None, "intermediate_size", "block_ff_dim", default=12288) / 3)
    key = "block_ffn_dim_multiplier"
    mult = r.doc.get(r.path(key)) if r.doc.has(r.path(key)) else 1.0
    if isinstance(mult, bool) or not isinstance(mult, (int, float)):  # null included: Lfm2Config rejects it
        raise r.error(key, f"'{r.key_name(key)}' must be a number, got {mult!r}")
    of = r.int(None, "block_multiple_of", default=256)
    return of * ((int(mult * width) + of - 1) // of)


def build(r: HFReader) -> ModelSpec:
    h = r.int("hidden_size", "hidden_size", default=2560)
    n_layers = r.int("num_layers", "num_hidden_layers", default=32)
    heads, kv, hd = r.attention_dims(h, heads_default=32, kv_default=8)
    inter = ffn_width(r)
    vocab = r.int("vocab_size", "vocab_size", default=65536)
    tie = tie_embeddings(r, True, "tie_embedding")
    conv_bias = r.bool(None, "conv_bias", default=False)
    taps = r.int(None, "conv_L_cache", default=3)
    types = str_list(r, "layer_types") if r.has("layer_types") else None
    if types is not None:
        r.per_layer_lists["layer_types"] = len(types)
    else:
        full = int_list(r, "full_attn_idxs")
        types = ["full_attention" if full is None or i in full else "conv" for i in range(n_layers)]

    ffn = FFN(kind="dense", intermediate_size=inter, gated=True)
    attn = heads_attention(heads, kv, hd)
    conv = Mixer(kind="short_conv", conv_kernel=taps, d_inner=h, in_bias=conv_bias, out_bias=conv_bias)
    conv_params = h * taps + (h if conv_bias else 0)
    t = KindTable()
    for i in range(n_layers):
        if i < len(types) and types[i] == "conv":
            t.add(layer(conv, ffn, 2 * h + conv_params))
        else:
            t.add(layer(attn, ffn, 2 * h + 2 * hd))
    return r.header_spec(
        Header(h, n_layers, heads, kv, hd, inter, vocab, tie),
        t,
        act="silu",
        extra_params=h,
    )
