"""GPT-2 (``n_embd``/``n_layer``/``n_head``/``n_inner``, also the 2019 files without model_type).

transformers' GPT2LMHeadModel: per layer ``c_attn`` (Conv1D H -> 3H, bias), ``attn.c_proj``
(H -> H, bias), ``c_fc`` (H -> n_inner, default 4H, bias), ``mlp.c_proj`` (bias), and two
LayerNorms with weight and bias (``ln_1``, ``ln_2``). Learned positions ``wpe``
(n_positions x H), final ``ln_f``, LM head tied to ``wte`` (``tie_word_embeddings`` default true).
Conv1D stores weights [in, out]; the GEMM shapes are the same as a Linear's.
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention
from colint.normalize.hf.base import Header, HFReader, head_dim_of
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, LayerKind, ModelSpec


def build(r: HFReader) -> ModelSpec:
    h = r.int("hidden_size", "hidden_size")  # n_embd through transformers' attribute_map
    n_layers = r.int("num_layers", "num_hidden_layers")
    heads = r.int("num_heads", "num_attention_heads")
    hd = head_dim_of(r, h, heads, "n_embd")
    inner = r.opt_int("intermediate_size", "n_inner", minimum=1) or 4 * h  # GPT2MLP reads n_inner only
    if "intermediate_size" not in r.sources:
        r.record("intermediate_size", "n_inner", default=True)
    vocab = r.int("vocab_size", "vocab_size")
    positions = r.int("max_position_embeddings", "max_position_embeddings")
    tie = tie_embeddings(r)
    mixer = heads_attention(heads, heads, hd, qkv_bias=True, o_bias=True, fused_qkv=True)
    ffn = FFN(kind="dense", intermediate_size=inner, gated=False, bias=True)
    kind = LayerKind(name="attention/full+dense", mixer=mixer, ffn=ffn, other_params=2 * 2 * h)
    return r.header_spec(
        Header(h, n_layers, heads, heads, hd, inner, vocab, tie),
        ([kind], [0] * n_layers),
        positions=positions,
        position_embeddings=positions,
        act=("activation_function",),
        extra_params=2 * h,  # ln_f weight + bias
    )
