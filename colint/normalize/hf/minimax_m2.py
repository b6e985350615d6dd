"""MiniMax-M2 / M2.5 (``minimax_m2``).

transformers 5.24 ``modeling_minimax_m2.py``: GQA attention without bias, head_dim default 128
(not H / heads), q/k RMSNorms over the whole projection (heads·head_dim and kv·head_dim:
``qk_norm_type`` "per_layer"); partial rotary (``rotary_dim``) changes no shape. Every layer is
MoE: router ``[E, H]`` without bias (``e_score_correction_bias`` is a buffer), fused gated experts
of ``intermediate_size``; no shared expert (``shared_intermediate_size`` is not read). Two
RMSNorms (H) per layer. MTP modules (``use_mtp``, ``num_mtp_modules`` ×
``mtp_transformer_layers``) are not built by transformers; reported apart, each layer sized as
one decoder layer + enorm + hnorm + eh_proj (2H -> H) + final norm (an estimate after
DeepSeek-V3's MTP module).
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention, routed_experts
from colint.normalize.hf.base import HFReader, read_common
from colint.normalize.hf.moe_common import KindTable, deepseek_style_mtp_params, ignored_key, layer
from colint.normalize.model_spec import ModelSpec


def build(r: HFReader) -> ModelSpec:
    c = read_common(
        r,
        dict(hidden=3072, layers=62, heads=48, kv=8, head_dim=128, inter=1536, vocab=200064, tie=False),
        intermediate=("moe_intermediate_size", "intermediate_size"),
    )
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    inter = c.ffn_width
    e = r.int("num_experts", "num_local_experts", "num_experts", default=256)
    k = r.int("top_k", "num_experts_per_tok", default=8)

    mixer = heads_attention(heads, kv, hd)
    ffn = routed_experts(e, k, inter)
    kind = layer(mixer, ffn, 2 * h + heads * hd + kv * hd)
    t = KindTable()
    for _ in range(n_layers):
        t.add(kind)
    mtp = 0
    notes, issues = [], []
    if (r.opt_int(None, "shared_intermediate_size") or 0) > 0:
        issues.append(ignored_key(r, "shared_intermediate_size", "transformers' minimax_m2 builds no shared expert"))
    if r.bool(None, "use_mtp", default=bool(r.raw("num_mtp_modules"))):
        modules = r.int(None, "num_mtp_modules", default=1, minimum=0)
        per = r.int(None, "mtp_transformer_layers", default=1, minimum=0)
        mtp = modules * per
        if mtp:
            r.record("mtp_layers", "num_mtp_modules")
            notes.append(
                f"MTP: {modules} module(s) × {per} layer(s), not built by transformers; mtp_params is an estimate"
            )
    return r.header_spec(
        c,
        t,
        intermediate_size=None,
        act_default="silu",
        extra_params=h,
        mtp_layers=mtp,
        mtp_params=mtp * deepseek_style_mtp_params(kind, h),
        notes=notes,
        key_issues=issues,
    )
