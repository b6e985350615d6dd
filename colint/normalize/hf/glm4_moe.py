"""GLM-4.5 / 4.6 / 4.7 MoE (``glm4_moe``) and the GLM-4.5V language model (``glm4v_moe_text``, also
reached through the ``glm4v_moe`` wrapper: the same layers, ``attention_bias`` default true, no q/k
norms, vocab default 151424).

transformers 5.24 ``modeling_glm4_moe.py``: GQA attention with ``attention_bias`` on q/k/v
(never on o), head_dim from the file (else H / heads), optional per-head q/k RMSNorms
(``use_qk_norm``); partial rotary (``partial_rotary_factor``, default 0.5) changes no shape.
Layer *i* is MoE iff ``i >= first_k_dense_replace``: router ``[E, H]`` fp32 (the correction
bias is a buffer), fused experts of ``moe_intermediate_size``, shared experts as one gated MLP of
``n_shared_experts · moe_intermediate_size``; dense layers a gated MLP of ``intermediate_size``.
MTP (``num_nextn_predict_layers``, transformers default 1) is not built by transformers and is
reported apart, sized like DeepSeek-V3's MTP module.
"""

from __future__ import annotations

from colint.normalize.hf.base import HFReader, read_common
from colint.normalize.hf.moe_common import KindTable, deepseek_style_mtp_params, layer
from colint.normalize.model_spec import FFN, Mixer, ModelSpec


def build(r: HFReader) -> ModelSpec:
    vision = r.model_type in ("glm4v_moe_text", "glm4v_moe")
    vocab_default = 151424 if vision else 151552
    c = read_common(r, dict(hidden=4096, layers=46, heads=96, kv=8, inter=10944, vocab=vocab_default, tie=False))
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    inter, vocab, tie = c.intermediate_size, c.vocab_size, c.tie_word_embeddings
    attn_bias = r.bool(None, "attention_bias", default=vision)
    qk_norm = False if vision else r.bool(None, "use_qk_norm", default=False)
    moe_inter = r.int("moe_intermediate_size", "moe_intermediate_size", default=1408)
    e = r.int("num_experts", "n_routed_experts", "num_local_experts", default=128)
    k = r.int("top_k", "num_experts_per_tok", default=8)
    n_shared = r.int("num_shared_experts", "n_shared_experts", default=1, minimum=0)
    first_k = r.int("first_k_dense_replace", "first_k_dense_replace", default=1, minimum=0)

    mixer = Mixer(kind="attention", num_heads=heads, num_kv_heads=kv, head_dim=hd, qkv_bias=attn_bias)
    other = 2 * h + (2 * hd if qk_norm else 0)
    dense_ffn = FFN(kind="dense", intermediate_size=inter)
    moe_ffn = FFN(
        kind="moe",
        num_experts=e,
        top_k=k,
        expert_intermediate_size=moe_inter,
        num_shared_experts=n_shared,
        shared_intermediate_size=moe_inter if n_shared else 0,
    )
    t = KindTable()
    for i in range(n_layers):
        t.add(layer(mixer, moe_ffn if i >= first_k else dense_ffn, other))
    mtp = r.int("mtp_layers", "num_nextn_predict_layers", "num_mtp_layers", default=0 if vision else 1, minimum=0)
    mtp_params = mtp * deepseek_style_mtp_params(layer(mixer, moe_ffn, other), h) if mtp else 0
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        kinds=t.kinds,
        pattern=t.pattern,
        vocab_size=vocab,
        tie_word_embeddings=tie,
        max_position_embeddings=r.opt_int("max_position_embeddings", "max_position_embeddings"),
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=hd,
        intermediate_size=inter,
        hidden_act=r.str(None, "hidden_act", default="silu"),
        extra_params=h,
        mtp_layers=mtp,
        mtp_params=mtp_params,
    )
