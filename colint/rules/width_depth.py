"""CL3xx width vs depth (guideline 3): for a fixed parameter budget, wider and shallower decodes
faster — fewer sequential layers, so fewer per-layer fixed costs (kernel launches, GEMM floors,
collectives) on the critical path, and wider GEMMs with more weight reuse.

The rule reads the latency scenario (one sequence): that is where per-layer fixed costs show.
The what-if (that workload, the equal-parameter alternative, its ITL) is colint.analysis.wider. Below about 1B
parameters deep-and-thin is a known good choice for quality (MobileLLM), so it only advises; above it, a
shape within the band of shipped designs (H/L from ``deep_aspect_ratio`` 32 up to ``min_aspect_ratio`` 64) is advice
too, and only a really deep and narrow stack (below 32) warns, graded by the gain.
"""

from __future__ import annotations

from colint.analysis.inventory import param_counts
from colint.analysis.wider import equivalent_layers, fixed_decode_s, latency_workload, wider_what_if
from colint.findings import Severity
from colint.rules.base import NEVER, Context, Family, Option, RuleDoc, edit, fix, rule
from colint.rules.fix_builders import edit_key

FAMILY = Family(name="width-depth", number=3)
SOURCES = (
    "NVIDIA blog 'AI Model Co-Design', Guideline 3 (wider models: higher arithmetic intensity, shorter critical path)",
    "Kaplan et al. 2020 (arXiv 2001.08361) Fig. 5: aspect ratio d_model/n_layer can vary ~40x at small loss cost",
    "MobileLLM (Liu et al., ICML 2024, arXiv 2402.14905): below 1B parameters deeper beats wider",
    "Hazy Research 'Look Ma, No Bubbles' (2025): ~1.3-2.1 us launch per kernel, per-kernel stalls in decode",
)


def _ceiling(spec, option) -> Severity:
    """CL301's most severe level on ``spec`` (Rule.ceiling), the cap deep_narrow_stack grades under: a warning only
    for a really deep and narrow stack (H/L below deep_aspect_ratio) of small_model_params or more; else advice."""
    if spec.num_layers < 2 or spec.hidden_size / equivalent_layers(spec) >= option("deep_aspect_ratio"):
        return "info"
    return "info" if param_counts(spec).total < option("small_model_params") else "warning"


@rule(
    code="CL301",
    fields=("num_layers",),
    name="deep-narrow-stack",
    severity="info",
    summary="Deep and narrow for its size: per-layer fixed costs take a large share of interactive decode time.",
    doc=RuleDoc(
        what="The aspect ratio H/L (hidden size per transformer-layer equivalent) below the band of shipped "
        "designs, the share of a one-sequence decode step spent in per-layer fixed costs (kernel launches, "
        "GEMM floors, collectives) on the target, and an equal-parameter wider/shallower alternative (same "
        "parameters within 2%, widths multiples of 128) with its estimated ITL gain.",
        why="Each layer adds a sequential chain of small kernels; at one sequence the weights stream in the "
        "same time either way, so fewer, wider layers cut the fixed part. Quality is roughly shape-neutral "
        "over a wide band (Kaplan) but below ~1B parameters depth wins (MobileLLM): there it only advises. It "
        "warns only below H/L 32 (deep_aspect_ratio), outside the band of shipped designs; above that it advises.",
        example="Qwen3-30B-A3B: H=2048 over 48 layers (H/L 43); about half of its one-sequence decode step on "
        "B200 is per-layer fixed cost.",
        fix="At design time, trade layers for width at equal parameters (the alternative shown), or serve with "
        "CUDA graphs / fused (mega)kernels that hide per-kernel costs.",
        sources=SOURCES,
    ),
    options=(
        Option(
            name="min_aspect_ratio",
            type=float,
            default=64.0,
            doc="report below this H/L (shipped designs: ~80-130; GPT-2 XL 33)",
        ),
        Option(
            name="min_fixed_share",
            type=float,
            default=0.25,
            doc=(
                "and only when per-layer fixed costs are at least this share of the "
                "latency-scenario decode step (models of 1B parameters and more)"
            ),
        ),
        Option(
            name="deep_aspect_ratio",
            type=float,
            default=32.0,
            doc="a warning only below this H/L (really deep and narrow: MobileLLM-1.5B 30, GPT-2 XL 33); "
            "between it and min_aspect_ratio the shape is within the band of shipped designs and only advised",
        ),
        Option(
            name="small_model_params",
            type=float,
            default=1.0e9,
            doc="below this many parameters deep-and-thin is a known good choice (MobileLLM): advise only",
        ),
        Option(
            name="param_tolerance",
            type=float,
            default=0.02,
            doc="the alternative keeps the parameter count within this fraction",
        ),
        Option(
            name="min_itl_gain",
            type=float,
            default=0.05,
            doc=(
                "models of 1B parameters and more: report only when the equal-parameter "
                "alternative cuts the estimated ITL by at least this fraction"
            ),
        ),
    ),
    graded=True,
    warning_loss_pct=5.0,
    error_loss_pct=NEVER,
    ceiling=_ceiling,
)
def deep_narrow_stack(ctx: Context):
    spec = ctx.spec
    L = spec.num_layers
    l_eq = equivalent_layers(spec)
    aspect = spec.hidden_size / l_eq
    if L < 2 or aspect >= ctx.option("min_aspect_ratio"):
        return
    params = param_counts(spec).total
    small = params < ctx.option("small_model_params")
    w = latency_workload(ctx.spec, ctx.analysis)
    step = w.steps["decode"]
    fixed_s = fixed_decode_s(spec, w)
    share = fixed_s / step.estimate_s if step.estimate_s else 0.0
    if not small and share < ctx.option("min_fixed_share"):
        return
    # the alternative: the depth that brings H/L to the band (at most halving the layers)
    alt = wider_what_if(spec, ctx.target_profile, w, ctx.option("min_aspect_ratio"), ctx.option("param_tolerance"))
    gain = None
    details = [
        f"per-layer fixed costs: est. {fixed_s * 1e3:.2f} ms of a {step.estimate_s * 1e3:.2f} ms decode step "
        f"({fixed_s / L * 1e6:.1f} us per layer; {w.label()})"
    ]
    fixes = []
    ev = {
        "hidden_size": spec.hidden_size,
        "num_layers": L,
        "layer_equivalents": l_eq,
        "aspect_ratio": round(aspect, 1),
        "params": params,
        "est_fixed_share": round(share, 4),
        "est_fixed_s": fixed_s,
        "est_itl_s": step.estimate_s,
        "gpu": ctx.gpu,
    }
    if alt is not None:
        gain = alt.gain_share
        if not small and gain < ctx.option("min_itl_gain"):
            return
        d_pct = 100.0 * (alt.params - params) / params
        desc = f"H={alt.spec.hidden_size} x {alt.spec.num_layers} layers" + (
            f", intermediate {alt.spec.intermediate_size}" if alt.spec.intermediate_size else ""
        )
        details.append(
            f"equal-parameter alternative {desc} ({d_pct:+.1f}% params): est. ITL {alt.itl_s * 1e3:.2f} ms "
            f"({gain:.0%} lower)"
        )
        ev.update(alt_hidden_size=alt.spec.hidden_size, alt_num_layers=alt.spec.num_layers, alt_params=alt.params)
        ev.update(est_alt_itl_s=alt.itl_s, est_alt_itl_gain_share=round(gain, 4))
        fixes.append(
            fix(
                f"wider and shallower at equal parameters: {desc} (est. {gain:.0%} lower ITL; "
                "changes the architecture, retrain)",
                "display" if small else "unsafe",
                *_wider_edits(spec, alt.spec),
            )
        )
    # the loss is the one-sequence decode step the equal-parameter alternative saves (est.); a design change that
    # needs retraining and trades quality (Kaplan, MobileLLM): at most a warning
    loss = 100.0 * gain if gain is not None and gain > 0 else None
    # advice (info) below ~1B parameters (MobileLLM: depth wins there) and within the band of shipped designs
    # (Qwen3-30B-A3B's 43, SmolLM3's 57); graded by the gain only where the stack is really deep and narrow
    yield ctx.finding(
        ctx.graded(loss, cap=_ceiling(spec, ctx.option)),
        _stack_message(ctx, aspect, l_eq, share, gain, small),
        field="num_layers",
        evidence=ev,
        fixes=fixes,
        details=details,
        loss_pct=loss,
    )


def _stack_message(ctx: Context, aspect: float, l_eq: float, share: float, gain, small: bool) -> str:
    """CL301's message: the aspect ratio, the fixed-cost share and the alternative's gain (small models: a known
    good choice, weighed against quality)."""
    head = f"H/L = {aspect:.1f} ({ctx.spec.hidden_size} over {l_eq:g} layers) is deep and "
    if small:
        msg = (
            head + f"thin: below 1B parameters that is a known good choice (MobileLLM); per-layer fixed costs are "
            f"est. {share:.0%} of one-sequence decode time on {ctx.gpu}"
        )
        if gain is not None and gain > 0:
            msg += f"; an equal-parameter wider stack is est. {gain:.0%} faster (weigh it against quality)"
        return msg
    msg = head + f"narrow: per-layer fixed costs are est. {share:.0%} of one-sequence decode time on {ctx.gpu}"
    if gain is not None and gain > 0:
        msg += f"; an equal-parameter wider stack is est. {gain:.0%} faster"
    return msg


def _wider_edits(spec, alt_spec) -> list:
    """The edits from ``spec`` to the wider alternative: hidden size and layers, the FFN widths that changed, and
    the head counts the file sets."""
    L = spec.num_layers
    edits = [
        edit(edit_key(spec, "hidden_size", "hidden_size"), spec.hidden_size, alt_spec.hidden_size),
        edit(edit_key(spec, "num_layers", "num_hidden_layers"), L, alt_spec.num_layers),
    ]
    if (
        spec.intermediate_size
        and alt_spec.intermediate_size != spec.intermediate_size
        and spec.sources.get("intermediate_size")
    ):
        edits.append(edit(edit_key(spec, "intermediate_size"), spec.intermediate_size, alt_spec.intermediate_size))
    moe0 = next((k.ffn for k in spec.layer_kinds if k.ffn.kind == "moe"), None)
    moe1 = next((k.ffn for k in alt_spec.layer_kinds if k.ffn.kind == "moe"), None)
    if (
        moe0
        and moe1
        and spec.sources.get("moe_intermediate_size")
        and moe1.expert_intermediate_size != moe0.expert_intermediate_size
    ):
        edits.append(
            edit(
                edit_key(spec, "moe_intermediate_size"),
                moe0.expert_intermediate_size,
                moe1.expert_intermediate_size,
            )
        )
    first_edit: dict = {}
    for e in edits:
        first_edit.setdefault(e.key, e)
    edits = list(first_edit.values())
    for fld in ("num_heads", "num_kv_heads"):
        old, new = getattr(spec, fld), getattr(alt_spec, fld)
        if old and new != old and spec.sources.get(fld) and not spec.sources[fld].default:
            edits.append(edit(edit_key(spec, fld), old, new))
    return edits
