"""GEMM dimensions as the kernels see them on one GPU, for the rules that judge them (CL2xx alignment,
CL4xx quantization): which spec field sets each dimension (:func:`owning_field`), its value per shard
(column-parallel N/tp, row-parallel K/tp, attention widths with KV heads replicated past tp, routed
experts whole under EP or split by tp under expert TP), the affected GEMMs grouped by field
(:func:`collect_dims`), and how much padding a tile costs (the estimate is colint.analysis.padding's).
"""

from __future__ import annotations

from colint.analysis.gemm_model import FORMATS, tile_efficiency
from colint.analysis.inventory import is_gate
from colint.analysis.padding import TILE, Dim
from colint.analysis.padding import step_effect_pct as padding_step_effect_pct
from colint.util.memo import keep
from colint.rules.base import Context
from colint.rules.fix_builders import round_up


def step_effect_pct(ctx: Context, dims: list[Dim], multiple: int) -> dict[str, float]:
    """Estimated step-time effect (percent of the step) per regime of padding ``dims`` (colint.analysis.padding)."""
    return padding_step_effect_pct(ctx.analysis, dims, multiple)


def pad_waste(value: int, multiple: int) -> tuple[int, float]:
    """(padded value, percent of the padded work that is wasted)."""
    padded = round_up(value, multiple)
    return padded, 100.0 * (1.0 - tile_efficiency(1, value, 1, multiple))


def dim_lines(ctx: Context, dims: list[Dim]) -> list[str]:
    """One line per affected GEMM dim: N padded to the 128-wide (and cooperative) tiles, K padded
    to the format's K step."""
    coop = cooperative_tile(ctx)
    lines = []
    for d in dims:
        if d.axis == "n":
            padded, waste = pad_waste(d.value, TILE)
            line = f"{d.name} N={d.value} runs {padded} wide on 128-wide tiles ({waste:.1f}% of its work wasted)"
            if coop is not None:
                cp, cw = pad_waste(d.value, coop.n)
                line += f", {cp} on {coop.sms}-SM {coop.n}-wide tiles ({cw:.1f}%)"
        else:
            dtype = d.rows[0].dtype if d.rows else ctx.target_scenario.gemm_format
            kt = ctx.target_profile.tiles.k_tile.get(FORMATS.get(dtype, (dtype,))[0], 64)
            padded, waste = pad_waste(d.value, kt)
            line = (
                f"{d.name} K={d.value} pads to {padded} in {kt}-element K steps ({dtype}, {waste:.1f}%)"
                if waste
                else f"{d.name} K={d.value} is whole {kt}-element K steps ({dtype}): no K padding"
            )
        lines.append(line)
    return lines


def hard_multiple(ctx: Context, dtype: str) -> int:
    hw = FORMATS.get(dtype, (dtype,))[0]
    return int(ctx.target_profile.alignment.get(hw, 8))


def refuses_unaligned(dtype: str) -> bool:
    """Whether the format's GEMM kernels refuse rows that are not 16-byte aligned (a hard constraint): the
    FP8/INT8/FP4 paths (cuBLASLt and CUTLASS require 16-byte aligned leading dimensions for them). BF16/FP16
    and weight-only formats run on a slower unaligned path instead: a cost, graded by its estimate."""
    return FORMATS.get(dtype, (dtype, 2.0, 2.0))[1] < 2.0


def cooperative_tile(ctx: Context):
    t = ctx.target_profile.tiles.cooperative
    return t if t is not None and t.n > TILE else None


# --------------------------------------------------------------------------- which field owns a dim
_OWNERS: dict[tuple, str | None] = {}  # (GEMM name, axis, the inventory's field of that axis) -> owning_field's
_OWNERS_MAX = 4096  # the keys are a few dozen GEMM names x 2 axes: the bound only guards a pathological run


def owning_field(row, axis: str) -> str | None:
    """The spec field that sets this GEMM dimension (None: not a design knob we report). It reads the row's name
    and its GEMM's field of that axis only: kept per those (a few dozen; CL201 asks per row shape and check)."""
    g = row.gemm
    key = (row.name, axis, g.n_field if axis == "n" else g.k_field)
    if key in _OWNERS:
        return _OWNERS[key]
    return keep(_OWNERS, key, _owning_field(row.name, axis, key[2]), _OWNERS_MAX)


def _owning_field(name: str, axis: str, f: str | None) -> str | None:
    if name.startswith("mla.kv_a_proj") and axis == "n":
        return "kv_lora_rank"
    if name == "mla.kv_b_proj" and axis == "k":
        return "kv_lora_rank"
    if name in ("attn.qkv_proj", "attn.q_proj", "attn.k_proj", "attn.v_proj") and axis == "n":
        return "num_heads"
    if name in ("attn.o_proj", "mla.o_proj") and axis == "k":
        return "num_heads"
    if name in ("mla.q_b_proj", "mla.kv_b_proj", "mla.q_proj") and axis == "n":
        return "num_heads"
    if is_gate(name):
        return None  # N = experts (or 1): a tiny replicated BF16 GEMM, not a tile question
    if name.startswith("moe.shared_experts"):
        return "shared_expert_intermediate_size" if f == "shared_expert_intermediate_size" else f
    if name.startswith(("mamba.", "linear_attn.", "conv.", "mla.indexer")) and f != "hidden_size":
        return None
    return f


FFN_FIELDS = ("intermediate_size", "moe_intermediate_size", "shared_expert_intermediate_size")


def layer_kind(ctx: Context, name: str):
    return next((k for k in ctx.spec.layer_kinds if k.name == name), None)


def attention_shard(m, tp: int) -> tuple[int, int] | None:
    """(fused q/k/v N, o_proj K) per rank for GQA/MHA attention, as engines shard it: query heads
    split by tp, KV heads split by tp or, when tp exceeds them, one KV head replicated per rank.
    None when the heads do not split evenly (CL7xx reports that)."""
    q_heads, kv_heads, hd = m.num_heads, m.num_kv_heads or m.num_heads, m.head_dim
    vd = m.v_head_dim or hd
    if q_heads % tp:
        return None
    if kv_heads >= tp:
        if kv_heads % tp:
            return None
        kv_rank = kv_heads // tp
    elif tp % kv_heads:
        return None
    else:
        kv_rank = 1
    q = q_heads // tp * hd * (2 if m.gated_q else 1)
    return q + kv_rank * (hd + vd), q_heads // tp * vd


def _dim_value(ctx: Context, row, axis: str, f: str) -> int | None:
    """The per-shard value of this dim as the kernel sees it (attention widths recomputed with KV
    replication; None when not defined)."""
    if f == "num_heads" and row.name in ("attn.qkv_proj", "attn.o_proj"):
        k = layer_kind(ctx, row.kind)
        if k is None or k.mixer.kind != "attention":
            return None
        shard = attention_shard(k.mixer, ctx.target_scenario.tp)
        if shard is None:
            return None
        return shard[0] if axis == "n" else shard[1]
    if (
        f == "num_heads"
        and ctx.spec.num_heads
        and ctx.target_scenario.tp > 1
        and ctx.spec.num_heads % ctx.target_scenario.tp
    ):
        return None
    return row.n if axis == "n" else row.k


def _full_value(ctx: Context, row, axis: str, f: str) -> int | None:
    """The whole-model value of the field this dim comes from (per layer kind: FFN widths vary in
    Nemotron-NAS-style stacks)."""
    if f in FFN_FIELDS:
        g = row.gemm
        v = g.n if axis == "n" else g.k
        return v // 2 if axis == "n" and g.name.endswith("gate_up") else v
    return field_value(ctx, f)


def collect_dims(ctx: Context) -> dict[tuple, list[Dim]]:
    """(field, whole-model value) -> affected dims (per shard) over both regimes, GEMMs fused as
    engines fuse them. A regime's rows differ from another's in M alone, and what is judged here reads the
    GEMM's name, kind, N and K: each shape is judged once, for the rows of both regimes."""
    out: dict[tuple, dict[tuple, Dim]] = {}
    judged: dict[tuple, list[tuple]] = {}  # row shape -> its (field, whole value, dim key) per axis
    for regime in ("prefill", "decode"):
        for row in ctx.analysis.gemms[regime]:
            if row.name == "lm_head":
                continue  # CL202
            shape = (row.name, row.kind, row.n, row.k, id(row.gemm))
            found = judged.get(shape)
            if found is None:
                found = judged[shape] = _row_dims(ctx, row)
            for f, full, key in found:
                dims = out.get((f, full))
                if dims is None:
                    dims = out[(f, full)] = {}
                d = dims.get(key)
                if d is None:
                    d = dims[key] = Dim(*key)
                d.rows.append(row)
    return {f: list(v.values()) for f, v in out.items()}


def _row_dims(ctx: Context, row) -> list[tuple]:
    """(field, whole-model value, (GEMM, axis, value per shard)) of each axis of ``row`` a field owns."""
    found = []
    for axis in ("n", "k"):
        f = owning_field(row, axis)
        if f is None:
            continue
        value = _dim_value(ctx, row, axis, f)
        if value is None:
            continue
        full = _full_value(ctx, row, axis, f) if f in FFN_FIELDS or f == "hidden_size" else None
        found.append((f, full, (row.name, axis, value)))
    return found


# --------------------------------------------------------------------------- the per-field unit
def tp_shard(ctx: Context, f: str) -> int:
    """How many ways tensor parallelism splits this field's width (1: not split): the FFN's over tp x kvp
    (Helix), the vocabulary's over tp."""
    sc = ctx.target_scenario
    if f in ("intermediate_size", "shared_expert_intermediate_size"):
        return sc.tp_of("ffn")
    if f == "vocab_size":
        return sc.tp
    if f == "moe_intermediate_size":
        return sc.tp_of("ffn") if sc.ep == 1 else 1  # expert TP splits H'_e; EP keeps experts whole
    return 1


def tp_shard_label(ctx: Context, f: str) -> str:
    """How a finding names tp_shard's split: ``tp=8``, ``expert tp=8``, ``tp=4 x kvp=2``."""
    label = ctx.target_scenario.tp_label("ffn" if f in FFN_FIELDS else "other")
    return f"expert {label}" if f == "moe_intermediate_size" else label


def field_value(ctx: Context, f: str) -> int | None:
    s = ctx.spec
    for k in s.layer_kinds:
        if f == "moe_intermediate_size" and k.ffn.kind == "moe":
            return k.ffn.expert_intermediate_size
        if f == "shared_expert_intermediate_size" and k.ffn.kind == "moe" and k.ffn.shared_intermediate_size:
            return k.ffn.num_shared_experts * k.ffn.shared_intermediate_size
        if f == "kv_lora_rank" and k.mixer.kv_lora_rank:
            return k.mixer.kv_lora_rank
    v = getattr(s, f, None)
    return v if isinstance(v, int) else None


def location_field(ctx: Context, f: str) -> str:
    """Where to point: DeepSeek-style shared experts are n_shared x moe_intermediate_size."""
    if f == "shared_expert_intermediate_size" and f not in ctx.spec.sources:
        return "moe_intermediate_size"
    return f


LABELS = {
    "hidden_size": "hidden_size",
    "intermediate_size": "intermediate_size",
    "moe_intermediate_size": "moe_intermediate_size (routed experts)",
    "shared_expert_intermediate_size": "shared expert width",
}


def dims_text(dims: list[Dim]) -> str:
    seen = []
    for d in dims:
        t = f"{d.name} {d.axis.upper()}={d.value}"
        if t not in seen:
            seen.append(t)
    return ", ".join(seen)


def unique_dims(dims: list[Dim]) -> list[Dim]:
    """One entry per (GEMM, axis, value): the same shape in several layer kinds is one line."""
    out: dict[tuple, Dim] = {}
    for d in dims:
        key = (d.name, d.axis, d.value)
        if key in out:
            out[key].rows.extend(d.rows)
        else:
            out[key] = Dim(d.name, d.axis, d.value, list(d.rows))
    return list(out.values())
