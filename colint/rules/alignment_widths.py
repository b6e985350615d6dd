"""How CL201 (colint.rules.alignment) judges one field's GEMM widths per shard, and the fixes it offers.

A width tp does not divide, or below the format's 16-byte row multiple in a format whose kernels
refuse it: an error (a hard constraint). Not a multiple of 128: graded by the estimated step loss.
A multiple of 128 but not of the GPU's cooperative tile: reported where the time model finds a cost
(option ``coop_min_loss_pct``). Attention projection widths and MLA's latent width have their own
judgments (:func:`attention_widths`, :func:`mla_latent`). Fixes: the nearest aligned widths on both
sides with their parameter delta; hidden_size moves the head count with it when head_dim is derived.
"""

from __future__ import annotations

from colint.analysis.padding import Dim
from colint.findings import Severity
from colint.rules.base import Context, edit, fix
from colint.rules.fix_builders import (
    aligned_neighbours,
    edit_key,
    nearest_divisor,
    param_delta,
    param_pct_change,
    round_up,
    with_field,
)
from colint.rules.gemm_dims import (
    FFN_FIELDS,
    LABELS,
    TILE,
    cooperative_tile,
    dim_lines,
    dims_text,
    hard_multiple,
    location_field,
    pad_waste,
    refuses_unaligned,
    step_effect_pct,
    tp_shard,
    tp_shard_label,
)


def _shard_phrase(f: str, value: int, tp: int, per_shard: int, ctx: Context) -> str:
    label = LABELS.get(f, f)
    if tp > 1:
        return f"{label} {value} is {per_shard} per shard at {tp_shard_label(ctx, f)}"
    return f"{label} {value}"


def _evidence(ctx: Context, f: str, value: int, tp: int, per_shard: int, dims: list[Dim]) -> dict:
    """``tp``: the shards of ``f``; under KV parallelism an FFN width's are tp x kvp, said as such."""
    sc = ctx.target_scenario
    split = {"tp": sc.tp, "kvp": sc.kvp, "shards": tp} if sc.kvp > 1 and f in FFN_FIELDS and tp > 1 else {"tp": tp}
    return {
        "value": value,
        **split,
        "per_shard": per_shard,
        "gpu": ctx.gpu,
        "dtype": ctx.target_scenario.gemm_format,
        "gemms": [{"gemm": d.name, "dim": d.axis, "per_shard": d.value} for d in dims],
    }


def judge_width(ctx: Context, f: str, value: int, tp: int, per_shard: int, dims: list[Dim]):
    w = ctx.analysis
    dtype = dims[0].rows[0].dtype if dims and dims[0].rows else ctx.target_scenario.gemm_format
    hard = hard_multiple(ctx, dtype)
    loc = location_field(ctx, f)
    ev = _evidence(ctx, f, value, tp, per_shard, dims)
    head = _shard_phrase(f, value, tp, per_shard, ctx)
    mult_field = TILE * tp  # the whole-model multiple that keeps every shard 128-aligned
    if value % tp:
        yield ctx.finding(
            "error",
            f"{LABELS.get(f, f)} {value} is not divisible by "
            + (
                f"{ctx.target_scenario.tp_label()} = {tp}"
                if ctx.target_scenario.kvp > 1 and f in FFN_FIELDS
                else f"tp={tp}"
            )
            + ": the shards are unequal "
            "(serving engines refuse it)",
            field=loc,
            evidence=ev,
            fixes=_width_fixes(ctx, f, value, tp * hard, "unsafe"),
        )
        return
    bad_hard = [d for d in dims if d.value % hard]
    if bad_hard and refuses_unaligned(dtype):
        yield ctx.finding(
            "error",
            f"{head}, not a multiple of {hard} ({dtype}'s 16-byte row alignment on {ctx.gpu})",
            field=loc,
            evidence=ev,
            details=[
                f"{dims_text(bad_hard)}: {dtype} GEMM kernels need every dimension to be a multiple of "
                f"{hard} elements (16-byte rows) and refuse others",
                f"({w.label()})",
            ],
            fixes=_width_fixes(ctx, f, value, mult_field, "unsafe"),
        )
        return
    bad = [d for d in dims if d.value % TILE]
    if bad and f == "moe_intermediate_size" and tp > 1 and value % TILE == 0:
        return  # aligned unsplit: only the expert-TP split breaks it, CL503 owns that (fix: EP)
    if bad:
        yield _off_tile(ctx, f, value, tp, per_shard, bad, bad_hard, dtype, ev)
        return
    yield from _off_cooperative_tile(ctx, f, value, head, dims, ev)


def _off_tile(ctx: Context, f: str, value: int, tp: int, per_shard: int, bad, bad_hard, dtype: str, ev: dict):
    """CL201 on a width off the 128 tile (or the 16-byte path): graded by the step time its padding costs."""
    w = ctx.analysis
    hard = hard_multiple(ctx, dtype)
    eff = step_effect_pct(ctx, bad, TILE)
    loss = max(eff.values())
    padded, waste = pad_waste(per_shard, TILE)
    # a width off the 16-byte path runs unvectorized kernels the time model does not price: a warning at least
    sev: Severity = ctx.graded(loss, floor="warning" if bad_hard else "info")
    ev.update(
        padded_128=padded,
        waste_128_pct=round(waste, 2),
        est_decode_step_pct=round(eff["decode"], 2),
        est_prefill_step_pct=round(eff["prefill"], 2),
    )
    details = dim_lines(ctx, bad) + [
        f"est. +{eff['decode']:.1f}% decode step, +{eff['prefill']:.1f}% prefill step ({w.label()})"
    ]
    if bad_hard:
        details.append(
            f"{dims_text(bad_hard)} is not a multiple of {hard} {dtype} elements (16-byte rows): it "
            "runs on an unaligned kernel path whose extra cost the tile model does not price"
        )
    fixes = _width_fixes(ctx, f, value, TILE * tp, "unsafe")
    if f == "moe_intermediate_size" and tp > 1:  # (aligned unsplit returned above)
        details.append(
            f"expert parallelism keeps each expert whole, but {value} is not a multiple of 128 unsplit either"
        )
    what = f"not a multiple of {hard} (off the 16-byte aligned path)" if bad_hard else "not a multiple of 128"
    head = _shard_phrase(f, value, tp, per_shard, ctx)
    return ctx.finding(
        sev, f"{head}, {what}", field=location_field(ctx, f), evidence=ev, loss_pct=loss, details=details, fixes=fixes
    )


def _off_cooperative_tile(ctx: Context, f: str, value: int, head: str, dims: list[Dim], ev: dict):
    """CL201 advice on a 128-aligned width off the GPU's cooperative tile (256/512 wide), when it costs enough."""
    coop = cooperative_tile(ctx)
    if coop is None:
        return
    bad_n = [d for d in dims if d.axis == "n" and d.value % coop.n]
    if not bad_n:
        return
    eff = step_effect_pct(ctx, bad_n, coop.n)
    loss = max(eff.values())
    if loss < ctx.option("coop_min_loss_pct"):
        return
    cp, cw = pad_waste(bad_n[0].value, coop.n)
    ev.update(est_decode_step_pct=round(eff["decode"], 2), est_prefill_step_pct=round(eff["prefill"], 2))
    yield ctx.finding(
        ctx.graded(loss, cap="info"),  # docs/design.md §6: 256/512 on cooperative-tile GPUs is advice
        f"{head}: a multiple of 128 but not of {coop.n} ({ctx.gpu}'s {coop.sms}-SM cooperative tile)",
        field=location_field(ctx, f),
        evidence=ev,
        loss_pct=loss,
        details=[
            f"{dims_text(bad_n)} pads to {cp} on {coop.n}-wide tiles ({cw:.1f}%); est. "
            f"+{eff['decode']:.1f}% decode step, +{eff['prefill']:.1f}% prefill step ({ctx.analysis.label()})"
        ],
        fixes=_width_fixes(ctx, f, value, coop.n * tp_shard(ctx, f), "unsafe"),
    )


def _width_fixes(ctx: Context, f: str, value: int, multiple: int, safety: str):
    """Nearest multiples on both sides, each with its parameter delta (FFN share for FFN widths); none in a
    closure re-check (ctx.brief), which reads only the finding's severity."""
    if ctx.brief:
        return []
    spec = ctx.spec
    below, above = aligned_neighbours(value, multiple)
    key = edit_key(spec, location_field(ctx, f))
    fixes = []
    scope = "ffn" if f in ("intermediate_size", "moe_intermediate_size", "shared_expert_intermediate_size") else "total"
    coop = cooperative_tile(ctx)
    wide = coop.n * tp_shard(ctx, f) if coop is not None and multiple % (coop.n * tp_shard(ctx, f)) else None
    for new in (above, below):
        if new is None:
            continue
        # on a GPU with a cooperative tile, a 128-multiple can re-fire as "not a multiple of 256": the same side's
        # multiple of the wider tile is the alternative colint.engine.closure offers then (2880 -> 2944, else 3072)
        alt = None
        if wide and new % wide:
            alt_v = round_up(value, wide) if new > value else value // wide * wide
            alt = alt_v if alt_v > 0 and alt_v != value else None
        if f == "hidden_size":
            fx = _hidden_fix(ctx, value, new)
            if fx:
                fixes.append(fx)
            continue
        if f == "shared_expert_intermediate_size" and "shared_expert_intermediate_size" not in spec.sources:
            continue  # DeepSeek-style: n_shared x moe_intermediate_size; the routed-expert fix covers it
        try:
            d = param_delta(spec, f, new, None)
            label = f" ({d.label(scope)})"
        except Exception:  # an adapter value with_field cannot rebuild: offer the edit without a delta
            label = ""
        alts = []
        if alt is not None:
            try:
                alt_label = f" ({param_delta(spec, f, alt, None).label(scope)})"
            except Exception:
                alt_label = ""
            alts = [fix(f"{key} {value} → {alt}{alt_label}", safety, edit(key, value, alt))]
        fixes.append(fix(f"{key} {value} → {new}{label}", safety, edit(key, value, new), alternatives=alts))
    return fixes


def _hidden_fix(ctx: Context, old: int, new: int):
    """hidden_size → new; when head_dim is derived from H / heads, the head count follows."""
    spec = ctx.spec
    key = edit_key(spec, "hidden_size")
    hd_src = spec.sources.get("head_dim")
    derived = spec.num_heads and (hd_src is None or hd_src.default) and spec.head_dim
    changed = with_field(spec, "hidden_size", new)
    edits = [edit(key, old, new)]
    if derived:
        if new % spec.head_dim:
            return None
        heads = new // spec.head_dim
        changed = with_field(changed, "num_heads", heads, spec.num_heads)
        edits.append(edit(edit_key(spec, "num_heads", "num_attention_heads"), spec.num_heads, heads))
        kv = spec.num_kv_heads
        if kv and heads % kv:
            new_kv = nearest_divisor(heads, kv)  # nearest the old KV head count (ties: the larger)
            changed = with_field(changed, "num_kv_heads", new_kv, kv)
            edits.append(edit(edit_key(spec, "num_kv_heads", "num_key_value_heads"), kv, new_kv))
    pct = param_pct_change(spec, changed)
    title = " + ".join(f"{e.key} {e.old} → {e.new}" for e in edits) + f" ({pct:+.1f}% params)"
    return fix(title, "unsafe", *edits)


def attention_widths(ctx: Context, dims: list[Dim]):
    """q/k/v and o widths (heads x head_dim per shard)."""
    spec, sc = ctx.spec, ctx.target_scenario
    heads = spec.num_heads
    if heads and sc.tp > 1 and heads % sc.tp:
        return  # heads not divisible by tp: CL7xx reports it; widths per shard are not defined
    hard = hard_multiple(ctx, dims[0].rows[0].dtype)
    bad_hard = [d for d in dims if d.value % hard]
    bad = [d for d in dims if d.value % TILE]
    if not bad:
        return
    eff = step_effect_pct(ctx, bad, TILE)
    loss: float | None = max(eff.values())
    hd = spec.head_dim
    shard = f" per shard at tp={sc.tp}" if sc.tp > 1 else ""
    ev = {
        "num_heads": heads,
        "num_kv_heads": spec.num_kv_heads,
        "head_dim": hd,
        "tp": sc.tp,
        "gpu": ctx.gpu,
        "gemms": [{"gemm": d.name, "dim": d.axis, "per_shard": d.value} for d in dims],
        "est_decode_step_pct": round(eff["decode"], 2),
        "est_prefill_step_pct": round(eff["prefill"], 2),
    }
    sev: Severity
    if bad_hard and refuses_unaligned(dims[0].rows[0].dtype):
        sev, what, loss = "error", f"not a multiple of {hard}", None
    else:
        sev, what = (
            ctx.graded(loss, floor="warning" if bad_hard else "info"),
            f"not a multiple of {hard if bad_hard else 128}",
        )
    details = dim_lines(ctx, bad)
    details.append(
        f"est. +{eff['decode']:.1f}% decode step, +{eff['prefill']:.1f}% prefill step ({ctx.analysis.label()})"
    )
    yield ctx.finding(
        sev,
        f"attention projection widths{shard} ({dims_text(bad)}) are {what}: {heads} heads x head_dim {hd}",
        field="num_heads",
        evidence=ev,
        loss_pct=loss,
        details=details,
        fixes=[fix(f"use a head count whose q width{shard} is a multiple of 128 (heads x {hd})", "display")],
    )


def mla_latent(ctx: Context, dims: list[Dim]):
    """MLA: kv_a_proj N = kv_lora_rank + rope (576 in DeepSeek-V3) is the latent cache width, by design."""
    spec = ctx.spec
    mixer = next((k.mixer for k in spec.layer_kinds if k.mixer.kv_lora_rank), None)
    if mixer is None:
        return
    bad = [d for d in dims if d.value % TILE]
    if not bad:
        return
    eff = step_effect_pct(ctx, bad, TILE)
    loss: float | None = max(eff.values())
    rope = mixer.qk_rope_head_dim or 0
    lat = mixer.kv_lora_rank or 0  # nonzero: the mixer was picked by it
    hard = hard_multiple(ctx, bad[0].rows[0].dtype)
    # by design: info whatever the estimate (changing it changes the cache format and FlashMLA's kernels)
    hard_bad = any(d.value % hard for d in bad) and refuses_unaligned(bad[0].rows[0].dtype)
    if not hard_bad and round(loss or 0.0, 2) <= 0.0:
        return  # by design and free at two decimals: nothing an architect would act on (issue 29)
    sev: Severity = "error" if hard_bad else "info"
    if hard_bad:
        loss = None
    details = dim_lines(ctx, bad)
    details.append(
        f"by design: the latent (kv_lora_rank {lat}) and the shared RoPE key ({rope}) are one projection "
        f"and one cached vector of {lat + rope} per token (FlashMLA is built for 512+64); the cost is the "
        f"padding of this one small GEMM: est. +{eff['decode']:.2f}% decode step, "
        f"+{eff['prefill']:.2f}% prefill step ({ctx.analysis.label()})"
    )
    yield ctx.finding(
        sev,
        f"MLA latent width kv_lora_rank {lat} + rope {rope} = {lat + rope} is not a multiple of 128 ({dims_text(bad)})",
        field="kv_lora_rank",
        loss_pct=loss,
        details=details,
        evidence={
            "kv_lora_rank": lat,
            "qk_rope_head_dim": rope,
            "gpu": ctx.gpu,
            "gemms": [{"gemm": d.name, "dim": d.axis, "per_shard": d.value} for d in bad],
            "est_decode_step_pct": round(eff["decode"], 3),
            "est_prefill_step_pct": round(eff["prefill"], 3),
        },
    )
