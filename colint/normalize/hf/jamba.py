"""Jamba (``jamba``): Mamba-1 / attention hybrid with MoE on every other layer.

transformers 5.24 (``configuration_jamba.py``, ``modeling_jamba.py``): layer *i* is attention iff
``i % attn_layer_period == attn_layer_offset`` (else Mamba), MoE iff
``i % expert_layer_period == expert_layer_offset`` and ``num_experts > 1`` (else a gated MLP of
``intermediate_size``). Attention: q/k/v/o without bias. Mamba mixer, d_inner =
``mamba_expand · H``, dt_rank = ``mamba_dt_rank`` ("auto" = ceil(H / 16)): ``in_proj`` H -> 2·d_inner
(bias = ``mamba_proj_bias``), depthwise ``conv1d`` (``mamba_d_conv`` taps, bias =
``mamba_conv_bias``), ``x_proj`` d_inner -> dt_rank + 2·d_state (no bias), ``dt_proj``
dt_rank -> d_inner (bias), ``A_log [d_inner, d_state]``, ``D [d_inner]``, RMSNorms on dt (dt_rank),
B and C (d_state each), ``out_proj`` d_inner -> H (bias = ``mamba_proj_bias``). MoE: router
``[E, H]`` no bias, fused experts of ``intermediate_size``. Two RMSNorms (H) per layer.
"""

from __future__ import annotations

import math

from colint.normalize.format_reader import heads_attention, routed_experts
from colint.normalize.hf.base import HFReader, read_common
from colint.normalize.hf.moe_common import KindTable, layer
from colint.normalize.model_spec import FFN, Mixer, ModelSpec


def build(r: HFReader) -> ModelSpec:
    c = read_common(r, dict(hidden=4096, layers=32, heads=32, kv=8, inter=14336, vocab=65536, tie=False))
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    inter = c.ffn_width
    e = r.int("num_experts", "num_experts", "num_local_experts", default=16)
    k = r.int("top_k", "num_experts_per_tok", default=2)
    attn_period = r.int(None, "attn_layer_period", default=8)
    attn_offset = r.int(None, "attn_layer_offset", default=4, minimum=0)
    exp_period = r.int(None, "expert_layer_period", default=2)
    exp_offset = r.int(None, "expert_layer_offset", default=1, minimum=0)
    rejects = []  # JambaConfig.validate_architecture
    if attn_offset >= attn_period:
        rejects.append(
            f"JambaConfig rejects attn_layer_offset {attn_offset} >= attn_layer_period {attn_period} "
            "(no layer would be attention)"
        )
    if exp_offset >= exp_period:
        rejects.append(
            f"JambaConfig rejects expert_layer_offset {exp_offset} >= expert_layer_period {exp_period} "
            "(no layer would be MoE)"
        )
    d_state = r.int(None, "mamba_d_state", default=16)
    d_conv = r.int(None, "mamba_d_conv", default=4)
    expand = r.int(None, "mamba_expand", default=2)
    if r.raw("mamba_dt_rank", default="auto") == "auto":
        dt_rank = math.ceil(h / 16)
    else:
        dt_rank = r.int(None, "mamba_dt_rank")
    conv_bias = r.bool(None, "mamba_conv_bias", default=True)
    proj_bias = r.bool(None, "mamba_proj_bias", default=False)

    d_inner = expand * h
    attn = heads_attention(heads, kv, hd)
    mamba = Mixer(
        kind="mamba",
        mamba_version=1,
        d_inner=d_inner,
        d_state=d_state,
        conv_kernel=d_conv,
        dt_rank=dt_rank,
        in_bias=proj_bias,
        out_bias=proj_bias,
    )
    mamba_other = (
        d_inner * d_conv
        + (d_inner if conv_bias else 0)  # conv1d
        + d_inner * d_state
        + d_inner  # A_log, D
        + dt_rank
        + 2 * d_state
    )  # dt / B / C RMSNorms
    dense_ffn = FFN(kind="dense", intermediate_size=inter)
    moe_ffn = routed_experts(e, k, inter)
    t = KindTable()
    for i in range(n_layers):
        is_attn = i % attn_period == attn_offset
        is_moe = e > 1 and i % exp_period == exp_offset
        mixer, other = (attn, 0) if is_attn else (mamba, mamba_other)
        t.add(layer(mixer, moe_ffn if is_moe else dense_ffn, other + 2 * h))
    return r.header_spec(
        c,
        t,
        act_default="silu",
        extra_params=h,
        loader_rejects=rejects,
    )
