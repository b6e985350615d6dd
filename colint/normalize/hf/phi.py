"""Phi-1/1.5/2 (``phi``; Phi-3/Phi-4, ``phi3``, is a row of decoder.TRAITS).

transformers' PhiForCausalLM: q/k/v and ``dense`` (o) with bias, optional per-head
``q_layernorm``/``k_layernorm`` (LayerNorm of H/heads, weight+bias, ``qk_layernorm``), MLP
fc1/fc2 (not gated, bias), one LayerNorm per layer (attention and MLP run in parallel), a
final LayerNorm and an LM head **with bias** (V extra parameters), untied by default.
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention
from colint.normalize.hf.base import HFReader, read_common
from colint.normalize.model_spec import FFN, LayerKind, ModelSpec


def build(r: HFReader) -> ModelSpec:
    c = read_common(r)
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    inter, vocab = c.ffn_width, c.vocab_size
    qk_ln = r.bool(None, "qk_layernorm", default=False)
    mixer = heads_attention(heads, kv, hd, qkv_bias=True, o_bias=True)
    ffn = FFN(kind="dense", intermediate_size=inter, gated=False, bias=True)
    other = 2 * h + (2 * 2 * (h // heads) if qk_ln else 0)
    kind = LayerKind(name=f"attention/{mixer.attention}+dense", mixer=mixer, ffn=ffn, other_params=other)
    return r.header_spec(
        c,
        ([kind], [0] * n_layers),
        sliding_window=None,
        extra_params=2 * h + vocab,  # final LayerNorm (weight+bias) + lm_head bias
    )
