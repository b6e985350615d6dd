"""Qwen3-Next (``qwen3_next``) and Qwen3.5 (``qwen3_5_text`` dense, ``qwen3_5_moe_text`` MoE,
and their multimodal wrappers ``qwen3_5`` / ``qwen3_5_moe``): Gated DeltaNet linear attention
with a gated full-attention layer every ``full_attention_interval`` layers (or ``layer_types``).

transformers 5.24 (``modeling_qwen3_next.py``, ``modeling_qwen3_5*.py``):

- full attention: ``q_proj`` H -> 2·heads·head_dim (query and output gate), k/v/o, bias from
  ``attention_bias``; per-head q/k RMSNorms (head_dim each); head_dim defaults to 256.
- Gated DeltaNet: key dim = ``linear_num_key_heads · linear_key_head_dim``, value dim =
  ``linear_num_value_heads · linear_value_head_dim``. qwen3_next fuses ``in_proj_qkvz``
  (H -> 2·key + 2·value) and ``in_proj_ba`` (H -> 2·v heads); Qwen3.5 splits them into
  ``in_proj_qkv`` / ``in_proj_z`` / ``in_proj_b`` / ``in_proj_a``. Depthwise ``conv1d`` over
  2·key + value channels (``linear_conv_kernel_dim`` taps, no bias), ``dt_bias`` and ``A_log``
  (one per v head), a gated RMSNorm of ``linear_value_head_dim``, ``out_proj`` value -> H.
- FFN: qwen3_next applies mlp_only_layers / decoder_sparse_step like qwen2_moe; the sparse
  block has a gated shared expert and its sigmoid gate (H -> 1). Qwen3.5 dense uses a gated MLP
  in every layer, Qwen3.5-MoE the sparse block in every layer.
- MTP (``num_nextn_predict_layers`` / ``mtp_num_hidden_layers``) is not built by transformers;
  it is reported apart, sized like DeepSeek's MTP module (a full-attention MoE layer + two norms
  + fc 2H -> H + final norm) — an estimate.
"""

from __future__ import annotations

from colint.normalize.format_reader import gated_deltanet, heads_attention, routed_experts
from colint.normalize.hf.base import HFReader, layer_types_of, read_common
from colint.normalize.hf.moe_common import KindTable, deepseek_style_mtp_params, int_list, layer
from colint.normalize.model_spec import FFN, Mixer, ModelSpec

# transformers 5.24 dataclass defaults
_DEFAULTS = {
    "qwen3_next": dict(
        hidden=2048, layers=48, heads=16, kv=2, inter=5632, moe=512, shared=512, k=10, e=512, vocab=151936
    ),
    "qwen3_5_text": dict(hidden=4096, layers=32, heads=16, kv=4, inter=12288, moe=0, shared=0, k=0, e=0, vocab=248320),
    "qwen3_5_moe_text": dict(
        hidden=2048, layers=40, heads=16, kv=2, inter=0, moe=512, shared=512, k=8, e=256, vocab=248320
    ),
}
_WRAPPERS = {"qwen3_5": "qwen3_5_text", "qwen3_5_moe": "qwen3_5_moe_text"}


def build(r: HFReader) -> ModelSpec:
    mt = _WRAPPERS.get(r.model_type, r.model_type)
    if mt not in _DEFAULTS:
        mt = "qwen3_next"
    d = _DEFAULTS[mt]
    c = read_common(r, {**d, "head_dim": 256, "tie": False}, intermediate=None)
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    attn_bias = r.bool(None, "attention_bias", default=False)
    lin, lin_other = _gated_deltanet(r, mt)
    types = r.layer_types(n_layers)
    if types is None:
        interval = r.int(None, "full_attention_interval", default=4)
        types = ["linear_attention" if (i + 1) % interval else "full_attention" for i in range(n_layers)]
    inter, moe_ffn, ffns = _layer_ffns(r, mt, d, n_layers)
    full = heads_attention(heads, kv, hd, qkv_bias=attn_bias, o_bias=attn_bias, gated_q=True)
    full_other = 2 * hd
    t = KindTable()
    for lt, ffn in zip(layer_types_of(types, n_layers), ffns):
        mixer, other = (lin, lin_other) if lt == "linear_attention" else (full, full_other)
        t.add(layer(mixer, ffn, other + 2 * h))

    mtp = r.opt_int("mtp_layers", "num_nextn_predict_layers", "mtp_num_hidden_layers") or 0
    mtp_params = 0
    if mtp:
        mtp_kind = layer(full, moe_ffn or FFN(kind="dense", intermediate_size=inter or 0), full_other + 2 * h)
        mtp_params = mtp * deepseek_style_mtp_params(mtp_kind, h)
    return r.header_spec(
        c,
        t,
        intermediate_size=inter,
        act_default="silu",
        extra_params=h,
        mtp_layers=mtp,
        mtp_params=mtp_params,
    )


def _gated_deltanet(r: HFReader, mt: str) -> tuple[Mixer, int]:
    """The Gated DeltaNet mixer and its parameters outside GEMMs (conv1d, dt_bias, A_log, gated RMSNorm);
    Qwen3.5 splits the input projections."""
    nk = r.int(None, "linear_num_key_heads", default=16)
    nv = r.int(None, "linear_num_value_heads", default=32)
    dk = r.int(None, "linear_key_head_dim", default=128)
    dv = r.int(None, "linear_value_head_dim", default=128)
    conv = r.int(None, "linear_conv_kernel_dim", default=4)
    return gated_deltanet(nk, nv, dk, dv, conv, split_in_proj=mt != "qwen3_next")


def _layer_ffns(r: HFReader, mt: str, d: dict, n_layers: int) -> tuple[int | None, FFN | None, list[FFN]]:
    """(the dense width, the MoE FFN, each layer's FFN): Qwen3.5 dense a gated MLP everywhere, Qwen3.5-MoE the
    sparse block everywhere, qwen3_next the sparse block where mlp_only_layers / decoder_sparse_step put it."""
    dense = mt == "qwen3_5_text"
    inter = r.int("intermediate_size", "intermediate_size", default=d["inter"]) if mt != "qwen3_5_moe_text" else None
    dense_ffn = FFN(kind="dense", intermediate_size=inter or 0)
    if dense:
        return inter, None, [dense_ffn] * n_layers
    moe_inter = r.int("moe_intermediate_size", "moe_intermediate_size", default=d["moe"])
    shared = r.int("shared_expert_intermediate_size", "shared_expert_intermediate_size", default=d["shared"], minimum=0)
    e = r.int("num_experts", "num_experts", "num_local_experts", default=d["e"], minimum=0 if mt == "qwen3_next" else 1)
    k = r.int("top_k", "num_experts_per_tok", default=d["k"])
    moe_ffn = routed_experts(
        e, k, moe_inter, num_shared_experts=1, shared_intermediate_size=shared, shared_expert_gate=True
    )
    if mt != "qwen3_next":
        return inter, moe_ffn, [moe_ffn] * n_layers
    step = r.int("decoder_sparse_step", "decoder_sparse_step", default=1)
    mlp_only = set(int_list(r, "mlp_only_layers") or [])
    sparse = [i not in mlp_only and e > 0 and (i + 1) % step == 0 for i in range(n_layers)]
    return inter, moe_ffn, [moe_ffn if s else dense_ffn for s in sparse]
