"""Falcon, including the legacy RefinedWeb/RefinedWebModel files (remote code, ``n_head``,
``n_head_kv``, ``n_layer``).

transformers' FalconForCausalLM: fused ``query_key_value`` whose width depends on the
variant — ``new_decoder_architecture`` (40B/180B; the legacy ``RefinedWeb`` type):
(heads + 2 kv_heads) x head_dim; ``multi_query`` (7B, ``RefinedWebModel``): H + 2 head_dim;
otherwise 3H — ``dense`` (H -> H), an MLP H -> ``ffn_hidden_size`` (default 4H, not gated),
all with ``bias``. Norms (LayerNorm, weight+bias): two per layer unless ``parallel_attn`` with
one (``input_layernorm``); the new architecture has two (``ln_attn``, ``ln_mlp``) unless
``num_ln_in_parallel_attn`` is 1. Final ``ln_f``; LM head tied by default; ALiBi or rotary.
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention
from colint.normalize.hf.base import HFReader, Header
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, LayerKind, ModelSpec


def build(r: HFReader) -> ModelSpec:
    legacy = r.doc.get(r.prefix + ("model_type",))
    h = r.int("hidden_size", "hidden_size", "n_embed")
    n_layers = r.int("num_layers", "num_hidden_layers", "n_layer")
    heads = r.int("num_heads", "num_attention_heads", "n_head")
    hd = h // heads
    new_arch = r.bool(None, "new_decoder_architecture", default=legacy == "RefinedWeb")
    multi_query = r.bool(None, "multi_query", default=legacy != "RefinedWeb")
    parallel = r.bool(None, "parallel_attn", default=True)
    bias = r.bool(None, "bias", default=False)
    if new_arch:
        kv = r.int("num_kv_heads", "num_kv_heads", "n_head_kv", default=heads)
    elif multi_query:
        kv = 1
    else:
        kv = heads
    ffn_width = r.opt_int("intermediate_size", "ffn_hidden_size", minimum=1) or 4 * h
    vocab = r.int("vocab_size", "vocab_size")
    tie = tie_embeddings(r)
    alibi = r.bool(None, "alibi", default=False)
    if not parallel:
        norms = 2
    else:
        n_ln = r.opt_int(None, "num_ln_in_parallel_attn", minimum=1)
        if n_ln is None and new_arch:
            n_ln = 2
        norms = 2 if n_ln == 2 else 1
    mixer = heads_attention(heads, kv, hd, qkv_bias=bias, o_bias=bias, fused_qkv=True)
    ffn = FFN(kind="dense", intermediate_size=ffn_width, gated=False, bias=bias)
    kind = LayerKind(name="attention/full+dense", mixer=mixer, ffn=ffn, other_params=norms * 2 * h)
    notes = []
    if isinstance(legacy, str) and legacy.startswith("RefinedWeb"):
        notes.append(
            f"legacy model_type {legacy} read as falcon ({'new decoder architecture' if new_arch else 'multi-query'})"
        )
    return r.header_spec(
        Header(h, n_layers, heads, kv, hd, ffn_width, vocab, tie),
        ([kind], [0] * n_layers),
        positions=None if alibi else ("max_position_embeddings",),
        act=("activation",),
        extra_params=2 * h,
        notes=notes,
    )
