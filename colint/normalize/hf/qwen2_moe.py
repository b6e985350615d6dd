"""Qwen MoE decoders: ``qwen2_moe`` (Qwen1.5/Qwen2-MoE), ``qwen3_moe`` and the Qwen3-VL-MoE
language model (``qwen3_vl_moe_text``, also reached through the ``qwen3_vl_moe`` wrapper).

transformers 5.24 (``modeling_qwen2_moe.py``, ``modeling_qwen3_moe.py``,
``modeling_qwen3_vl_moe.py``): layer *i* is sparse iff ``i not in mlp_only_layers`` and
``num_experts > 0`` and ``(i + 1) % decoder_sparse_step == 0``; otherwise a gated dense MLP of
``intermediate_size``. Sparse block: router ``[E, H]`` (no bias), fused experts
``gate_up_proj [E, 2I, H]`` / ``down_proj [E, H, I]`` with I = ``moe_intermediate_size``.
qwen2_moe adds a gated shared expert (``shared_expert_intermediate_size``) and its sigmoid gate
``shared_expert_gate`` (H -> 1, no bias); q/k/v carry a bias (``qkv_bias``, default true), o not.
qwen3_moe / qwen3_vl_moe: ``attention_bias`` on q/k/v/o and per-head q/k RMSNorms (head_dim
each). ``norm_topk_prob`` changes routing weights, not shapes. Two RMSNorms (H) per layer.
Qwen3-Omni's thinker language model (``qwen3_omni_moe_text`` under ``thinker_config.text_config``)
is built like qwen3_moe; only ``thinker_config.tie_word_embeddings`` ties its LM head.
"""

from __future__ import annotations

from typing import Any

from colint.normalize.format_reader import routed_experts
from colint.normalize.hf.base import HFReader, full_and_windowed, read_common
from colint.normalize.hf.moe_common import KindTable, int_list, layer
from colint.normalize.model_spec import FFN, ModelSpec

# transformers 5.24 dataclass defaults per model_type
_DEFAULTS: dict[str, dict[str, Any]] = {
    "qwen2_moe": dict(
        hidden=2048, layers=24, heads=16, kv=16, inter=5632, moe=1408, shared=5632, k=4, e=60, vocab=151936, tie=False
    ),
    "qwen3_moe": dict(
        hidden=2048, layers=24, heads=32, kv=4, inter=6144, moe=768, shared=0, k=8, e=128, vocab=151936, tie=False
    ),
    "qwen3_vl_moe_text": dict(
        hidden=2048, layers=24, heads=16, kv=16, inter=5632, moe=1408, shared=0, k=4, e=60, vocab=151936, tie=True
    ),
    # Qwen3-Omni's thinker language model (thinker_config.text_config); its thinker_config ties (default false)
    "qwen3_omni_moe_text": dict(
        hidden=2048, layers=28, heads=28, kv=4, inter=18944, moe=768, shared=0, k=8, e=128, vocab=3584, tie=False
    ),
}
_WRAPPERS = {"qwen3_vl_moe": "qwen3_vl_moe_text", "qwen3_omni_moe": "qwen3_omni_moe_text"}


def build(r: HFReader) -> ModelSpec:
    mt = r.model_type if r.model_type in _DEFAULTS else _WRAPPERS.get(r.model_type, "qwen3_moe")
    d = _DEFAULTS[mt]
    qwen2 = mt == "qwen2_moe"
    c = read_common(r, d)
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    inter = c.ffn_width
    moe_inter = r.int("moe_intermediate_size", "moe_intermediate_size", default=d["moe"])
    e = r.int("num_experts", "num_experts", "num_local_experts", default=d["e"], minimum=0)
    k = r.int("top_k", "num_experts_per_tok", default=d["k"])
    step = r.int("decoder_sparse_step", "decoder_sparse_step", default=1)
    mlp_only = set(int_list(r, "mlp_only_layers") or [])
    if qwen2:
        shared = r.int(
            "shared_expert_intermediate_size", "shared_expert_intermediate_size", default=d["shared"], minimum=0
        )
        qkv_bias, o_bias = r.bool(None, "qkv_bias", default=True), False
    else:
        shared = 0
        qkv_bias = o_bias = r.bool(None, "attention_bias", default=False)

    # Sliding window: weights are unaffected; which layers slide follows transformers.
    window = None
    use_sw = r.bool(None, "use_sliding_window", default=False) and mt != "qwen3_vl_moe_text"
    if use_sw:
        window = r.opt_int("sliding_window", "sliding_window") or None
    types = r.layer_types(n_layers) if mt == "qwen2_moe" else None
    max_window_layers = r.int(None, "max_window_layers", default=28 if qwen2 else n_layers, minimum=0)

    def sliding(i: int) -> bool:
        if not window:
            return False
        if mt != "qwen2_moe":
            return True  # qwen3_moe: the sliding mask applies to every layer
        if types is not None:
            return i < len(types) and types[i] == "sliding_attention"
        return bool((i + 1) % 2) and i < max_window_layers

    other = 2 * h + (0 if qwen2 else 2 * hd)
    moe_ffn = routed_experts(
        e, k, moe_inter, num_shared_experts=1 if qwen2 else 0, shared_intermediate_size=shared, shared_expert_gate=qwen2
    )
    dense_ffn = FFN(kind="dense", intermediate_size=inter)
    mixers = full_and_windowed(window, num_heads=heads, num_kv_heads=kv, head_dim=hd, qkv_bias=qkv_bias, o_bias=o_bias)
    # [full, sliding] x [dense, sparse]
    kinds = [[layer(m, dense_ffn, other), layer(m, moe_ffn, other)] for m in mixers]
    t = KindTable()
    for i in range(n_layers):
        sparse = i not in mlp_only and e > 0 and (i + 1) % step == 0
        t.add(kinds[bool(sliding(i))][sparse])
    return r.header_spec(
        c,
        t,
        act_default="silu",
        sliding_window=window,
        extra_params=h,
    )
