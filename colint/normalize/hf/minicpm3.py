"""MiniCPM3 (multi-head latent attention, dense MLP).

transformers' MiniCPM3ForCausalLM: ``q_a_proj`` (H -> q_lora_rank, ``attention_bias``) +
``q_a_layernorm`` + ``q_b_proj`` (-> heads x (nope + rope)), or a plain ``q_proj`` without
q_lora_rank; ``kv_a_proj_with_mqa`` (H -> kv_lora_rank + rope, ``attention_bias``) +
``kv_a_layernorm`` + ``kv_b_proj`` (-> heads x (nope + v_head_dim)); ``o_proj``
(``attention_bias``); gated MLP (``mlp_bias``); two RMSNorms per layer; final RMSNorm.
"""

from __future__ import annotations

from colint.normalize.format_reader import mla_attention, mla_norm_params
from colint.normalize.hf.base import HFReader, Header
from colint.normalize.hf.moe_common import nullable_int
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, LayerKind, ModelSpec


def build(r: HFReader) -> ModelSpec:
    h = r.int("hidden_size", "hidden_size")
    n_layers = r.int("num_layers", "num_hidden_layers")
    heads = r.int("num_heads", "num_attention_heads")
    kv_heads = r.int("num_kv_heads", "num_key_value_heads", default=heads)
    # explicit null: a plain q projection; absent: MiniCPM3Config's default (768), q_a_proj + q_b_proj
    q_lora = nullable_int(r, "q_lora_rank", "q_lora_rank", r.defaults.get("q_lora_rank", 768))
    kv_lora = r.int("kv_lora_rank", "kv_lora_rank")
    nope = r.int("qk_nope_head_dim", "qk_nope_head_dim")
    rope = r.int("qk_rope_head_dim", "qk_rope_head_dim")
    # absent or null: MiniCPM3Config.__post_init__ derives it as hidden_size // num_attention_heads
    v_dim = r.int("v_head_dim", "v_head_dim", default=h // heads)
    inter = r.int("intermediate_size", "intermediate_size")
    vocab = r.int("vocab_size", "vocab_size")
    tie = tie_embeddings(r)
    bias = r.bool(None, "attention_bias", default=False)
    mlp_bias = r.bool(None, "mlp_bias", default=False)
    mixer = mla_attention(heads, kv_heads, q_lora=q_lora, kv_lora=kv_lora, nope=nope, rope=rope, v_dim=v_dim, bias=bias)
    ffn = FFN(kind="dense", intermediate_size=inter, gated=True, bias=mlp_bias)
    other = 2 * h + mla_norm_params(mixer)
    kind = LayerKind(name="mla+dense", mixer=mixer, ffn=ffn, other_params=other)
    return r.header_spec(
        Header(h, n_layers, heads, kv_heads, nope + rope, inter, vocab, tie),
        ([kind], [0] * n_layers),
        extra_params=h,
    )
