"""CL1xx near-square (guideline 1): weight GEMMs too thin to leave the memory-bound regime.

For C[M,N] = A[M,K]·W[K,N] the arithmetic intensity 2MNK / (M·K·b_a + K·N·b_w + M·N·b_out)
rises with the token count M towards the limit

    I∞ = 2·N·K / (K·b_a + N·b_out)        (= (2/b)·NK/(N+K) when b_a = b_out = b)

a harmonic-mean cap set by the smaller of N and K. When I∞ is at or below the ridge of the
target format (dense peak / HBM bandwidth) the GEMM is memory-bound at every M: batching
cannot help, only a wider K or N (or a different format) can. When I∞ is above the ridge the
GEMM turns compute-bound at M* (``gemm_model.m_star``); a large square GEMM does so at about
ridge·b_w/2, so a thin one whose M* is far above that, while the regime's M sits between the
two, is memory-bound *because of its shape* at that M.

Regimes: prefill (the scenario's tokens per forward) and decode at the scenario's concurrency.
Decode at concurrency 1 never makes a CL102 finding: at M=1 everything is memory-bound, a fact
of decoding, not of the design. Every number is an estimate of the roofline on the scenario's
GPU and format; routers and other tiny replicated GEMMs below ``min_share_pct`` of the step are
not reported. The shape arithmetic (I∞, the square references, the loss of a thin shape, the field
that sets the thin side) is colint.analysis.gemm_shape and colint.rules.gemm_shapes.
"""

from __future__ import annotations

import math

from colint.rules.base import Context, Family, Option, RuleDoc, fix, rule
from colint.analysis.gemm_shape import (
    limit_intensity,
    reference_shape,
    square_m_star,
    thin_side_for_ridge,
    whole_expert_shape,
)
from colint.rules.gemm_shapes import field_of_thin, memory_bound, shape_loss_s, thin_by_design, thin_dim, thin_value

FAMILY = Family(name="near-square", number=1)
SOURCES = (
    "NVIDIA co-design blog, guideline 1 and Table 2 (GB300 NVFP4 FFN-2, K=512, N=8192: memory-bound at every M)",
    "NVIDIA Matrix Multiplication Background guide: arithmetic intensity and the ops:byte ridge",
)


def _shares(ctx: Context, row) -> float:
    step = ctx.analysis.steps[row.regime].estimate_s
    return 100.0 * row.total_s / step if step else 0.0


def _regime_m(ctx: Context, regime: str) -> int:
    sc = ctx.target_scenario
    return sc.decode_concurrency if regime == "decode" else sc.prefill_tokens


def _location(ctx: Context, f: str | None) -> str | None:
    """DeepSeek-style shared experts are n_shared x moe_intermediate_size: point at the latter."""
    if f == "shared_expert_intermediate_size" and f not in ctx.spec.sources:
        return "moe_intermediate_size"
    return f


def _gemm_list(rows) -> str:
    seen = []
    for r in rows:
        t = f"{r.name} (N={r.n}, K={r.k})"
        if t not in seen:
            seen.append(t)
    return ", ".join(seen)


def _distinct(rows) -> list:
    """One row per distinct GEMM: layer kinds that share an FFN or attention shape (gpt-oss's and Gemma-3's
    sliding and full layers) give the same GEMM once per kind."""
    return list({(r.name, r.n, r.k, r.m): r for r in rows}.values())


def _m_key(row, name: str = "m_tokens") -> str:
    """The evidence key of a value at a GEMM row's M: ``est_``-prefixed for a routed expert (uniform routing)."""
    return f"est_{name}" if row.parallel == "expert" else name


def _m_text(row) -> str:
    """A GEMM row's M; a routed expert's rows assume uniform routing, so they read as an estimate."""
    return f"est. M={row.m}" if row.parallel == "expert" else f"M={row.m}"


@rule(
    code="CL101",
    name="memory-bound-at-any-batch",
    severity="warning",
    summary="A weight GEMM's limit intensity I∞ is at or below the ridge: it is memory-bound at every token count.",
    doc=RuleDoc(
        what="For each weight GEMM per shard, I∞ = 2NK/(K·b_a + N·b_out) — the arithmetic intensity as the "
        "token count M grows without bound — against the ridge (dense peak / bandwidth) of the target "
        "format on the GPU. I∞ <= ridge means no batch size makes it compute-bound (M* = inf). Reported only "
        "where the time model's estimate is memory-bound too; the loss is what the shape costs: the GEMMs' "
        "time against the same work on an aligned near-square reference (same M, format and library path).",
        why="The weight bytes amortise over M but the activation reads and output writes grow with M; their "
        "ratio to the FLOPs is fixed by N and K. A thin GEMM therefore runs at bandwidth speed however much "
        "work it gets, and lower precision (a higher ridge) makes it worse.",
        example="GB300, NVFP4 in, FP8 out (--dtype nvfp4 --out-dtype fp8): FFN-2 with K = H'ₑ = 512, N = H = 8192 "
        "has I∞ = 989 FLOP/B < ridge 1875 FLOP/B: memory-bound on the roofline at M = 256, 2048 and 16384 "
        "(NVIDIA co-design blog, Table 2; CL103 quotes the I∞). colint's time model finds those GEMMs "
        "limited by the kernel floor and tile fill instead, so CL101 stays silent there; it fires on "
        "e.g. Qwen3-Next's 512-wide shared expert at tp=8 (K=64 per shard).",
        fix="Widen the thin dimension (a larger expert width H'ₑ, fewer tensor-parallel ranks over it), or keep "
        "that GEMM in a higher-precision format whose ridge is lower.",
        sources=SOURCES,
    ),
    options=(
        Option(
            name="min_share_pct",
            type=float,
            default=1.0,
            doc="report only GEMMs taking at least this percent of the decode or prefill step (estimate)",
        ),
        Option(
            name="margin_pct",
            type=float,
            default=10.0,
            doc="I∞ within this percent below the ridge reads 'on the ridge' rather than 'memory-bound at every M'",
        ),
        Option(
            name="min_loss_pct",
            type=float,
            default=0.1,
            doc="report only when the shape costs at least this percent of the step against the near-square reference",
        ),
    ),
    graded=True,
)
def memory_bound_at_any_batch(ctx: Context):
    w, sc = ctx.analysis, ctx.target_scenario
    groups: dict[str | None, list] = {}
    for reg in ("prefill", "decode"):
        for r in w.gemms[reg]:
            if thin_by_design(r) or not math.isinf(r.time.m_star) or not memory_bound(r):
                continue  # memory-bound on the roofline at every M, and by the time model at this M
            groups.setdefault(field_of_thin(ctx, r), []).append(r)
    for f, rows in sorted(groups.items(), key=lambda kv: kv[0] or ""):
        shares = {reg: sum(_shares(ctx, r) for r in rows if r.regime == reg) for reg in ("decode", "prefill")}
        if max(shares.values()) < ctx.option("min_share_pct"):
            continue
        prefill = _distinct([r for r in rows if r.regime == "prefill"] or rows)
        r0 = min(prefill, key=lambda r: limit_intensity(r.n, r.k, r.dtype, sc.outputs))
        ridge = r0.time.ridge
        i_inf = limit_intensity(r0.n, r0.k, r0.dtype, sc.outputs)
        # within margin_pct below the ridge: balanced in the limit ("on the ridge"), advice rather than waste
        on_ridge = i_inf >= ridge * (1.0 - ctx.option("margin_pct") / 100.0)
        lines = [_limit_line(r, sc.outputs) for r in prefill]
        losses = {reg: sum(shape_loss_s(ctx, r) for r in rows if r.regime == reg) for reg in ("decode", "prefill")}
        loss = max(
            100.0 * losses[reg] / w.steps[reg].estimate_s if w.steps[reg].estimate_s else 0.0
            for reg in ("decode", "prefill")
        )
        if loss < ctx.option("min_loss_pct"):
            continue  # the shape costs next to nothing against a near-square GEMM of the same work
        lines.append(
            f"est. {shares['prefill']:.1f}% of the prefill step, {shares['decode']:.1f}% of the decode step "
            f"({w.label()}, outputs {sc.outputs})"
        )
        n_ref, k_ref = reference_shape(r0.n, r0.k)
        lines.append(
            f"the shape costs est. {loss:.1f}% of the step against the same GEMMs at a near-square "
            f"{n_ref}x{k_ref} of equal work on the same {r0.dtype} path"
        )
        split = sc.tp_of(r0.component)  # the FFN's GEMMs over tp x kvp (Helix), the others over tp
        tp = (
            f" at {sc.tp_label(r0.component)}"
            if split > 1 and any(r.parallel in ("column", "row", "expert") for r in rows)
            else ""
        )
        names = sorted({r.name for r in rows})
        verdict = "on the ridge even at unbounded M" if on_ridge else "memory-bound at every M"
        yield ctx.finding(
            ctx.graded(loss),
            f"{thin_value(ctx, f, r0)}{tp}: {', '.join(names)} {verdict} on {ctx.gpu} in "
            f"{r0.dtype} (I∞ {i_inf:.0f} FLOP/B <= ridge {ridge:.0f} FLOP/B)",
            field=_location(ctx, f),
            loss_pct=loss,
            evidence={
                "gemms": [
                    {
                        "gemm": r.name,
                        "n": r.n,
                        "k": r.k,
                        "limit_intensity_flop_per_byte": round(limit_intensity(r.n, r.k, r.dtype, sc.outputs), 1),
                    }
                    for r in prefill
                ],
                "dtype": r0.dtype,
                "out_dtype": sc.outputs,
                "limit_intensity_flop_per_byte": round(i_inf, 1),
                "ridge_flop_per_byte": round(ridge, 1),
                "est_m_star_tokens": None,
                "memory_bound_at_any_m": True,
                "gpu": ctx.gpu,
                "est_prefill_share_pct": round(shares["prefill"], 1),
                "est_decode_share_pct": round(shares["decode"], 1),
                "est_shape_loss_pct": round(loss, 2),
            },
            details=lines,
            fixes=_widen_fixes(ctx, r0, ridge),
        )


def _limit_line(r, out_dtype: str) -> str:
    """One GEMM's limit intensity and its roofline at the prefill M, for CL101's details."""
    i_r = limit_intensity(r.n, r.k, r.dtype, out_dtype)
    return (
        f"{r.name} N={r.n}, K={r.k}: I∞ {i_r:.0f} FLOP/B; at prefill {_m_text(r)}: intensity "
        f"{r.time.arithmetic_intensity:.0f} FLOP/B, est. math {r.time.math_s * 1e6:.2f} µs vs memory "
        f"{r.time.memory_s * 1e6:.2f} µs (read {r.time.read_s * 1e6:.2f}, write "
        f"{r.time.write_s * 1e6:.2f}) per instance"
    )


def _widen_fixes(ctx: Context, r0, ridge: float) -> list:
    """CL101's fixes: EP instead of expert TP where that keeps each expert's GEMM above the ridge (first), then
    widening the thin side to where I∞ reaches the ridge."""
    sc = ctx.target_scenario
    fixes = [
        fix(
            f"widen {thin_dim(r0)} of {r0.name} (I∞ reaches the ridge at about "
            f"{_needed_thin(r0.n, r0.k, r0.dtype, sc.outputs, ridge)}), shard it less, or keep these GEMMs "
            f"in a format with a lower ridge",
            "display",
        )
    ]
    whole = whole_expert_shape(r0, sc)
    if whole is not None and whole[2] > ridge:
        # expert TP made it thin: EP over the same GPUs keeps each expert whole (the actionable fix first)
        split = sc.tp_of(r0.component)
        fixes.insert(
            0,
            fix(
                f"deploy the experts with ep={split} instead of expert {sc.tp_label()}: a whole expert's "
                f"{r0.name} has N={whole[0]}, K={whole[1]}, I∞ {whole[2]:.0f} FLOP/B above the "
                f"ridge {ridge:.0f}",
                "display",
                settings={"ep": split},
            ),
        )
    return fixes


def _needed_thin(n: int, k: int, dtype: str, out_dtype: str, ridge: float) -> str:
    """The thin dimension at which I∞ would equal the ridge (the other held), or 'never'."""
    side = thin_side_for_ridge(n, k, dtype, out_dtype, ridge)
    return "never at this width of the other side" if side is None else f"{side[0]}={side[1]}"


@rule(
    code="CL102",
    name="memory-bound-by-shape",
    severity="warning",
    summary="A weight GEMM is memory-bound in the throughput regime only because K or N is small.",
    doc=RuleDoc(
        what="At the regime's M (prefill tokens; decode concurrency; tokens per expert for routed experts), a "
        "large square GEMM would be clearly compute-bound (M >= 2 x ridge·b_w/2) but this one is not: its M* "
        "— where it turns compute-bound — lies above M (and above 1.5 x a square GEMM's) because its limit "
        "intensity I∞ is close to the ridge. Decode at low concurrency never qualifies: at M near 1 every "
        "GEMM is memory-bound.",
        why="Memory-bound GEMMs run at bandwidth speed; the time above the math time is lost to the shape, "
        "not to the batch. Guideline 1: favour near-square weight matrices; avoid a small projection or "
        "reduction dimension.",
        example="MobileLLM-125M's o_proj (N = K = 576, BF16) on B200: memory-bound at 8192 prefill tokens, "
        "compute-bound only from M* = 12000 (a large square GEMM from 281)",
        fix="Widen the thin dimension or shard it less (lower tp for that GEMM); or raise M (more concurrency) "
        "up to the M* quoted.",
        sources=SOURCES,
    ),
    options=(
        Option(
            name="min_share_pct",
            type=float,
            default=1.0,
            doc="report only GEMMs taking at least this percent of their regime's step (estimate)",
        ),
        Option(
            name="min_m_ratio",
            type=float,
            default=2.0,
            doc=(
                "report only where the regime's M is at least this multiple of a large square "
                "GEMM's M* (a square GEMM is clearly compute-bound there)"
            ),
        ),
        Option(
            name="min_m_star_ratio",
            type=float,
            default=1.5,
            doc=(
                "report only GEMMs whose M* is at least this multiple of a large square "
                "GEMM's (ridge·b_w/2): the shape, not the batch, keeps them memory-bound"
            ),
        ),
        Option(
            name="min_loss_pct",
            type=float,
            default=0.1,
            doc="report only when the shape costs at least this percent of the step against the near-square reference",
        ),
    ),
    graded=True,
)
def memory_bound_by_shape(ctx: Context):
    w, sc = ctx.analysis, ctx.target_scenario
    for regime in ("prefill", "decode"):
        groups: dict[str | None, list] = {}
        for r in w.gemms[regime]:
            t = r.time
            if thin_by_design(r) or math.isinf(t.m_star) or t.bound != "memory" or not memory_bound(r):
                continue  # CL101 reports the hopeless ones; compute-bound ones (roofline or time model) are fine
            m_sq = square_m_star(r.dtype, t.ridge)
            if not (ctx.option("min_m_ratio") * m_sq <= r.m < t.m_star):
                continue  # near or below m_sq any GEMM is (nearly) memory-bound at this M: the regime, not the shape
            if t.m_star < ctx.option("min_m_star_ratio") * m_sq:
                continue  # M* barely above a square GEMM's: the batch sits on the ridge, the shape is not thin
            groups.setdefault(field_of_thin(ctx, r), []).append(r)
        step = w.steps[regime].estimate_s
        for f, rows in sorted(groups.items(), key=lambda kv: kv[0] or ""):
            share = sum(_shares(ctx, r) for r in rows)
            if share < ctx.option("min_share_pct"):
                continue
            r0 = max(rows, key=lambda r: r.time.m_star)
            t = r0.time
            m_sq = square_m_star(r0.dtype, t.ridge)
            lost = sum(shape_loss_s(ctx, r) for r in rows)
            loss = 100.0 * lost / step if step else 0.0
            if loss < ctx.option("min_loss_pct"):
                continue  # a near-square GEMM of the same work would be no faster
            m_word = (
                "tokens per expert" if r0.parallel == "expert" else ("sequences" if regime == "decode" else "tokens")
            )
            names = sorted({r.name for r in rows})
            shown = _distinct(rows)
            n_ref, k_ref = reference_shape(r0.n, r0.k)
            yield ctx.finding(
                ctx.graded(loss),
                f"{thin_value(ctx, f, r0)}: {', '.join(names)} memory-bound in {regime} at "
                f"{_m_text(r0)} {m_word} on {ctx.gpu}; compute-bound only from "
                f"est. M*={t.m_star:.0f} ({m_sq:.0f} for a square GEMM)",
                field=_location(ctx, f),
                loss_pct=loss,
                evidence={
                    "regime": regime,
                    "est_shape_loss_pct": round(loss, 2),
                    _m_key(r0): r0.m,
                    "dtype": r0.dtype,
                    "ridge_flop_per_byte": round(t.ridge, 1),
                    "square_m_star_tokens": round(m_sq, 1),
                    "gpu": ctx.gpu,
                    "est_step_share_pct": round(share, 1),
                    "gemms": [
                        {
                            "gemm": r.name,
                            "n": r.n,
                            "k": r.k,
                            _m_key(r): r.m,
                            _m_key(r, "arithmetic_intensity_flop_per_byte"): round(r.time.arithmetic_intensity, 1),
                            "limit_intensity_flop_per_byte": round(limit_intensity(r.n, r.k, r.dtype, sc.outputs), 1),
                            "est_m_star_tokens": round(r.time.m_star, 1),
                        }
                        for r in shown
                    ],
                },
                details=[
                    f"{r.name} N={r.n}, K={r.k}: intensity {r.time.arithmetic_intensity:.0f} FLOP/B at {_m_text(r)} "
                    f"vs ridge {r.time.ridge:.0f} FLOP/B, est. M*={r.time.m_star:.0f}"
                    for r in shown
                ]
                + [
                    f"est. {share:.1f}% of the {regime} step ({w.label()}); the shape costs est. {loss:.1f}% of it "
                    f"against the same GEMMs at a near-square {n_ref}x{k_ref} of equal work on the same {r0.dtype} path"
                ],
            )


@rule(
    code="CL103",
    fields=("moe_intermediate_size",),
    name="tiny-expert-width",
    severity="info",
    summary="Routed experts are very narrow against the hidden size: their GEMMs are thin by construction.",
    doc=RuleDoc(
        what="The ratio H'ₑ / H of the routed-expert width to the hidden size. Each expert's down projection "
        "has K = H'ₑ and its gate/up projection N = 2H'ₑ; a ratio far below 1 makes them the thin GEMMs "
        "guideline 1 warns about, whatever the batch.",
        why="Fine-grained experts trade GEMM shape for routing flexibility. Below about 1/8 the expert GEMMs' "
        "limit intensity falls towards the ridge of low-precision formats (NVIDIA's Table 2 example: "
        "H'ₑ = 512 against H = 8192 stays memory-bound in NVFP4 on GB300 at every M).",
        example="moe_intermediate_size 512, hidden_size 8192: H'ₑ/H = 1/16",
        fix="Fewer, wider experts (same active parameters: halve top-k and double H'ₑ), or accept the cost and "
        "deploy with EP so that experts are never split further by TP.",
        sources=SOURCES,
    ),
    options=(
        Option(
            name="min_ratio",
            type=float,
            default=0.125,
            doc="report when moe_intermediate_size / hidden_size is below this",
        ),
    ),
)
def tiny_expert_width(ctx: Context):
    s = ctx.spec
    seen = set()
    for k in s.layer_kinds:
        f = k.ffn
        if f.kind != "moe" or not f.expert_intermediate_size:
            continue
        he = f.expert_intermediate_size
        h = f.latent_size or s.hidden_size
        if (he, h) in seen:
            continue
        seen.add((he, h))
        ratio = he / h
        if ratio >= ctx.option("min_ratio"):
            continue
        down = next((r for r in ctx.analysis.gemms["prefill"] if r.parallel == "expert" and "down" in r.name), None)
        ev = {"moe_intermediate_size": he, "hidden_size": h, "ratio": round(ratio, 4), "gpu": ctx.gpu}
        details = []
        if down is not None:
            i_inf = limit_intensity(down.n, down.k, down.dtype, ctx.target_scenario.outputs)
            ev.update(down_limit_intensity_flop_per_byte=round(i_inf, 1), ridge_flop_per_byte=round(down.time.ridge, 1))
            details.append(
                f"expert down_proj K={down.k}, N={down.n}: I∞ {i_inf:.0f} FLOP/B vs ridge "
                f"{down.time.ridge:.0f} FLOP/B ({ctx.analysis.label()})"
            )
        yield ctx.finding(
            "info",
            f"moe_intermediate_size {he} is 1/{h / he:.0f} of {'latent' if f.latent_size else 'hidden'} "
            f"size {h}: expert GEMMs are thin by construction",
            field="moe_intermediate_size",
            evidence=ev,
            details=details,
        )
