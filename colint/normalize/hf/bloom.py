"""BLOOM (``n_head``/``n_layer``; ALiBi, so no position table).

transformers' BloomForCausalLM: ``word_embeddings`` plus ``word_embeddings_layernorm``
(LayerNorm, weight+bias), per layer fused ``query_key_value`` (H -> 3H, bias), ``dense``
(bias), an MLP fixed at 4H (``dense_h_to_4h``/``dense_4h_to_h``, bias, not gated) and two
LayerNorms with bias; final ``ln_f``; LM head tied by default.
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention
from colint.normalize.hf.base import Header, HFReader, head_dim_of
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, LayerKind, ModelSpec


def build(r: HFReader) -> ModelSpec:
    h = r.int("hidden_size", "hidden_size", "n_embed")
    n_layers = r.int("num_layers", "num_hidden_layers")
    heads = r.int("num_heads", "num_attention_heads")
    hd = head_dim_of(r, h, heads, "hidden_size")
    vocab = r.int("vocab_size", "vocab_size")
    tie = tie_embeddings(r)
    mixer = heads_attention(heads, heads, hd, qkv_bias=True, o_bias=True, fused_qkv=True)
    ffn = FFN(kind="dense", intermediate_size=4 * h, gated=False, bias=True)  # fixed 4H in BloomMLP
    kind = LayerKind(name="attention/full+dense", mixer=mixer, ffn=ffn, other_params=2 * 2 * h)
    return r.header_spec(
        Header(h, n_layers, heads, heads, hd, 4 * h, vocab, tie),
        ([kind], [0] * n_layers),
        act="gelu",
        embedding_params_extra=2 * h,  # word_embeddings_layernorm
        extra_params=2 * h,  # ln_f
        notes=["ALiBi positions (no position table); MLP width is fixed at 4 x hidden_size"],
        positions=None,
    )
