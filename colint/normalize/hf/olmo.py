"""OLMo (``olmo``), OLMo-2 (``olmo2``) and OLMo-3 (``olmo3``).

transformers: q/k/v/o (``attention_bias``), gated MLP without bias. OLMo's LayerNorms have
no learnable parameters. OLMo-2/3 put RMSNorms *after* attention and MLP (two of width H per
layer) and normalise q and k over all heads (``q_norm``: heads x head_dim, ``k_norm``:
kv_heads x head_dim); final RMSNorm. OLMo-3 adds ``layer_types`` with sliding windows.
"""

from __future__ import annotations

from colint.normalize.hf.base import HFReader, sliding_full_kinds
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, ModelSpec


def build(r: HFReader) -> ModelSpec:
    mt = r.model_type
    h = r.int("hidden_size", "hidden_size")
    n_layers = r.int("num_layers", "num_hidden_layers")
    heads, kv, hd = r.attention_dims(h)
    inter = r.int("intermediate_size", "intermediate_size")
    vocab = r.int("vocab_size", "vocab_size")
    tie = tie_embeddings(r)
    bias = r.bool(None, "attention_bias", default=False)
    if mt == "olmo":
        other, extra = 0, 0
    else:
        other, extra = 2 * h + heads * hd + kv * hd, h
    window = r.opt_int("sliding_window", "sliding_window") if mt == "olmo3" else None
    types = r.layer_types(n_layers) if mt == "olmo3" else None
    ffn = FFN(kind="dense", intermediate_size=inter, gated=True)
    kinds, pattern = sliding_full_kinds(
        n_layers, types, window, ffn, other, num_heads=heads, num_kv_heads=kv, head_dim=hd, qkv_bias=bias, o_bias=bias
    )
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        kinds=kinds,
        pattern=pattern,
        vocab_size=vocab,
        tie_word_embeddings=tie,
        max_position_embeddings=r.opt_int("max_position_embeddings", "max_position_embeddings"),
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=hd,
        intermediate_size=inter,
        hidden_act=r.str(None, "hidden_act"),
        sliding_window=window,
        extra_params=extra,
    )
