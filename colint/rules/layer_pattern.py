"""CL6xx layer pattern (guideline 6): regular, repeatable layer stacks that split into balanced
pipeline stages.

A pipeline runs at the pace of its slowest stage. The stack is split into ``pp`` contiguous
stages; the embedding sits on the first, the LM head (and MTP layers) on the last. The rules
use the analysis' per-layer cost vectors (``w.layer_costs``: prefill FLOPs, weight bytes per
GPU), find the best contiguous split (colint.analysis.pipeline) and report how far it is from
even — in FLOPs (time of training and prefill stages) and in weight bytes (memory per stage,
and each stage's decode weight reads). The stack's cost vectors, its repeating pattern and Megatron's
layout string are colint.rules.layer_stack.
"""

from __future__ import annotations

from colint.analysis.memory import USABLE_HBM_SHARE
from colint.analysis.pipeline import Partition, best_partition, even_sizes
from colint.findings import Fix, Severity
from colint.rules.base import Context, Family, Option, RuleDoc, edit, fix, rule
from colint.rules.fix_builders import edit_key, param_delta_layers
from colint.rules.layer_stack import STRUCTURAL, StackCosts, irregularities, megatron_layout, period, stack_costs

FAMILY = Family(name="layer-pattern", number=6)
SOURCES = (
    "NVIDIA blog 'AI Model Co-Design', Guideline 6 (regular, repeatable layer patterns; CPP pays off only "
    "with balanced stages)",
    "Megatron-LM (Narayanan et al., SC'21, arXiv 2104.04473): bubble (p-1)/m; --decoder-first/last-pipeline-"
    "num-layers, --account-for-embedding-in-pipeline-split, --pipeline-model-parallel-layout",
    "DeepSeek-V3 (arXiv 2412.19437): 61 layers, first 3 dense, 1 MTP layer; Megatron layout Et*3|(tt|)*29,m|L",
)
_OPTIONS = {
    o.name: o
    for o in (
        Option(
            name="warn_idle_pct",
            type=float,
            default=2.0,
            doc="warn when the best split still leaves this share (%) of pipeline time idle in FLOPs",
        ),
        Option(
            name="weight_excess_hbm_pct",
            type=float,
            default=5.0,
            doc="report when the heaviest stage holds this share (%) of the GPU's memory more weight bytes than the mean stage",
        ),
        Option(
            name="balanced_idle_pct",
            type=float,
            default=0.5,
            doc="a layer count counts as balanced (for the suggested layouts) below this idle share (%)",
        ),
        Option(
            name="common_pp",
            type=tuple,
            default=(2, 4, 8),
            doc="pipeline sizes to check when --pp is not given (irregular stacks only)",
        ),
    )
}


def _opts(*names: str) -> tuple[Option, ...]:
    """The family's shared thresholds that one rule reads."""
    return tuple(_OPTIONS[n] for n in names)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _sizes(sizes) -> str:
    return "/".join(str(s) for s in sizes)


def _layout_fix(sizes, mtp: int) -> Fix:
    sizes = list(sizes)
    mid = sizes[1:-1]
    title = f'uneven stages {_sizes(sizes)}: Megatron --pipeline-model-parallel-layout "{megatron_layout(sizes, mtp)}"'
    if len(sizes) >= 2 and (not mid or all(m == mid[0] for m in mid)):
        title += f" (or --decoder-first-pipeline-num-layers {sizes[0]} --decoder-last-pipeline-num-layers {sizes[-1]})"
    title += f"; vLLM VLLM_PP_LAYER_PARTITION={','.join(map(str, sizes))}"
    return fix(title, "display")


def _nearest_regular(ctx: Context, c: StackCosts, pp: int, warn: float) -> list[tuple[int, Partition]]:
    """The nearest layer count on each side of L whose best split (FLOPs) idles less than
    ``balanced_idle_pct``; failing that, the best one within 2·pp layers that idles less than ``warn``."""
    balanced = ctx.option("balanced_idle_pct") / 100
    spec = ctx.spec
    L = spec.num_layers
    if len(c.flops) != L:
        return []
    out = []
    for direction in (-1, 1):
        cands = []
        for step in range(1, 2 * pp + 1):
            n = L + direction * step
            if n < pp:
                break
            r = c.resized(spec.layer_pattern, n)
            p = best_partition(r.flops, pp, r.first_flops, r.last_flops)  # idle share: FLOPs only
            if p is None:
                continue
            if p.idle_share < balanced:
                cands = [(n, p)]
                break
            if p.idle_share < warn:
                cands.append((n, p))
        if cands:
            n, _ = min(cands, key=lambda t: (round(t[1].idle_share, 3), abs(t[0] - L)))
            best = c.resized(spec.layer_pattern, n).best(pp)
            if best is not None:  # n has a split by FLOPs (above), so it has a best one
                out.append((n, best))
    return sorted(out, key=lambda t: t[0])


def _describe(c: StackCosts, p: Partition, pp: int) -> dict:
    wp = c.weights_of(p.sizes)
    return {
        "pp": pp,
        "stage_layers": list(p.sizes),
        "flops_imbalance_pct": round(100 * p.imbalance, 2),
        "weight_bytes_imbalance_pct": round(100 * wp.imbalance, 2),
        "stage_prefill_flops": [round(x) for x in p.sums],
        "stage_weight_bytes": [round(x) for x in wp.sums],
    }


@rule(
    code="CL601",
    kind="deployment",
    fields=("num_layers",),
    name="layers-not-divisible-by-pp",
    severity="warning",
    summary="The layer count does not split evenly into the pipeline stages.",
    doc=RuleDoc(
        what="With --pp, the decoder layers (plus MTP layers, embedding and LM head) are split into pp contiguous "
        "stages; when pp does not divide the layers, some stage holds more. Reports the best contiguous "
        "split, its imbalance in prefill FLOPs and in weight bytes, and the nearest layer counts that split "
        "evenly.",
        why="Every stage waits for the slowest one: the idle share is lost throughput on every GPU of the "
        "pipeline, on top of the (p-1)/m bubble. Megatron-LM also refuses an uneven split unless told how.",
        example="DeepSeek-V3: 61 layers (3 dense) + 1 MTP layer at pp=4: best split 16/15/16/14 (MTP and LM head on "
        "the last stage), est. 3% of pipeline time idle; 59 or 63 layers split evenly.",
        fix="Pick a layer count that divides (counting MTP layers on the last stage), or state the uneven split "
        "explicitly (--decoder-first/last-pipeline-num-layers).",
        sources=SOURCES,
    ),
    options=_opts("balanced_idle_pct"),
    graded=True,
    warning_loss_pct=2.0,
    hard="fewer layers than pipeline stages (a stage would be empty)",
)
def layers_not_divisible(ctx: Context):
    spec, sc, w = ctx.spec, ctx.target_scenario, ctx.analysis
    pp = sc.pp
    L = spec.num_layers
    if pp <= 1 or L % pp == 0:
        return
    if L < pp:
        yield ctx.finding(
            "error", f"{L} layers cannot fill pp={pp} stages", field="num_layers", evidence={"num_layers": L, "pp": pp}
        )
        return
    c = stack_costs(spec, w)
    p = c.best(pp)
    if p is None:
        return
    warn = ctx.option("warning_loss_pct") / 100
    sev: Severity = ctx.graded(100 * p.idle_share)
    ev = _describe(c, p, pp)
    wp = c.weights_of(p.sizes)
    irr = irregularities(spec)
    msg = (
        f"{L} layers do not split evenly into pp={pp} stages ({L / pp:.2f} per stage): the best split "
        f"{_sizes(p.sizes)} leaves est. {_pct(p.idle_share)} of pipeline time idle"
    )
    details = [
        f"best contiguous split {_sizes(p.sizes)}: est. {_pct(p.imbalance)} above the mean stage in prefill "
        f"FLOPs, {_pct(wp.imbalance)} in weight bytes per GPU ({w.label()})"
    ]
    if irr:
        details.append(
            "stack: "
            + ", ".join(irr.values())
            + "; embedding on the first stage, LM head"
            + (" and MTP" if spec.mtp_layers else "")
            + " on the last"
        )
    fixes: list[Fix] = [_layout_fix(p.sizes, spec.mtp_layers)]
    regular = _nearest_regular(ctx, c, pp, warn)
    if regular:
        details.append(
            "balanced layer counts: "
            + ", ".join(f"{n} ({_sizes(q.sizes)}, est. {_pct(q.idle_share)} idle)" for n, q in regular)
        )
    key = edit_key(spec, "num_layers", "num_hidden_layers")
    for n, q in regular:
        d = param_delta_layers(spec, n)
        fixes.append(fix(f"use {n} layers ({d:+.1f}% params; stages {_sizes(q.sizes)})", "unsafe", edit(key, L, n)))
    ev.update(
        {"num_layers": L, "mtp_layers": spec.mtp_layers, "idle_pct": round(100 * p.idle_share, 2), "gpu": ctx.gpu}
    )
    yield ctx.finding(
        sev, msg, field="num_layers", evidence=ev, loss_pct=100 * p.idle_share, fixes=fixes, details=details
    )


@rule(
    code="CL602",
    kind="deployment",
    fields=("num_layers",),
    name="pipeline-stage-imbalance",
    severity="warning",
    summary="An even split of the layers gives stages of unequal cost (irregular layer kinds).",
    doc=RuleDoc(
        what="The layers divide by pp, but the layer kinds differ in cost (hybrid Mamba/attention patterns, "
        "no-op blocks, dense vs MoE layers, a pattern period that does not divide the layers per stage), "
        "so the plain L/pp split is unbalanced in prefill FLOPs. Reports that split, the best contiguous "
        "split and its residual imbalance.",
        why="The slowest stage sets the pipeline's pace; the others idle for the difference.",
        example="A 52-layer hybrid with attention every 8th layer at pp=4: stages hold 1 or 2 attention layers.",
        fix="Make the pattern period divide the layers per stage, or give the split explicitly.",
        sources=SOURCES,
    ),
    graded=True,
    warning_loss_pct=2.0,
)
def stage_imbalance(ctx: Context):
    spec, sc, w = ctx.spec, ctx.target_scenario, ctx.analysis
    pp = sc.pp
    L = spec.num_layers
    if pp <= 1 or L % pp:
        return
    c = stack_costs(spec, w)
    even = c.flops_of(even_sizes(L, pp))
    warn = ctx.option("warning_loss_pct") / 100
    if even.idle_share < warn:
        return  # below the warning threshold the even split is balanced enough: not reported
    best = c.best(pp)
    prefix, per = period(spec.layer_pattern)
    per_stage = L // pp
    msg = (
        f"{L} layers split into pp={pp} stages of {per_stage} are unbalanced: the even split leaves est. "
        f"{_pct(even.idle_share)} of pipeline time idle in prefill FLOPs"
    )
    details = []
    irr = irregularities(spec)
    if irr:
        details.append("stack: " + ", ".join(irr.values()) + f" ({w.label()})")
    if per and per > 1 and per_stage % per:
        details.append(
            f"the {per}-layer pattern does not divide {per_stage} layers per stage: stages hold different layer mixes"
        )
    fixes: list[Fix] = []
    ev = _describe(c, even, pp)
    ev.update(
        {
            "num_layers": L,
            "idle_pct": round(100 * even.idle_share, 2),
            "pattern_period": per,
            "pattern_prefix": prefix,
            "gpu": ctx.gpu,
        }
    )
    if best is not None and best.sizes != even.sizes:
        details.append(f"best contiguous split {_sizes(best.sizes)}: est. {_pct(best.idle_share)} idle")
        fixes.append(_layout_fix(best.sizes, spec.mtp_layers))
        ev["best_stage_layers"] = list(best.sizes)
        ev["best_idle_pct"] = round(100 * best.idle_share, 2)
    yield ctx.finding(
        ctx.graded(100 * even.idle_share),
        msg,
        field="num_layers",
        evidence=ev,
        loss_pct=100 * even.idle_share,
        fixes=fixes,
        details=details,
    )


@rule(
    code="CL603",
    kind="deployment",
    fields=("num_layers",),
    name="pipeline-weight-imbalance",
    severity="error",
    summary="Pipeline stages balanced in FLOPs hold unequal weight bytes (embedding, LM head, dense vs MoE layers).",
    doc=RuleDoc(
        what="For the split that is best in prefill FLOPs, the weight bytes per GPU of each stage: the "
        "embedding and LM head sit on the first and last stage, dense first-k layers hold far fewer "
        "weights than MoE layers.",
        why="The heaviest stage caps the KV cache (and so the concurrency) of the whole pipeline, and in decode "
        "each stage's step time is its weight reads.",
        example="Llama-3.1-8B at pp=4: the embedding and the LM head add 1.05 GB each to the first and last stage.",
        fix="Move layers off the heavy stages (Megatron --account-for-embedding-in-pipeline-split / "
        "--account-for-loss-in-pipeline-split, or explicit first/last stage sizes).",
        sources=SOURCES,
    ),
    options=_opts("warn_idle_pct", "weight_excess_hbm_pct"),
    hard="the heaviest stage's weights (with the activations) exceed usable memory: that split will not load",
)
def weight_imbalance(ctx: Context):
    spec, sc, w = ctx.spec, ctx.target_scenario, ctx.analysis
    pp = sc.pp
    L = spec.num_layers
    if pp <= 1 or L < pp:
        return
    c = stack_costs(spec, w)
    warn = ctx.option("warn_idle_pct") / 100
    chosen: Partition | None
    if L % pp == 0:
        chosen = c.flops_of(even_sizes(L, pp))
        if chosen.idle_share >= warn:
            return  # CL602 reports this stack
    else:
        chosen = c.best(pp)
        if chosen is None:
            return
    wp = c.weights_of(chosen.sizes)
    hbm_bytes = ctx.target_profile.memory_gb * 1e9
    excess = wp.max - wp.mean
    if 100 * excess / hbm_bytes < ctx.option("weight_excess_hbm_pct"):
        return
    heavy = max(range(pp), key=lambda i: wp.sums[i])
    wb = c.best_weights(pp)
    msg = (
        f"at pp={pp}, stages {_sizes(chosen.sizes)} hold unequal weights: stage {heavy} has est. "
        f"{wp.sums[heavy] / 1e9:.1f} GB per GPU, {excess / 1e9:.1f} GB ({100 * excess / hbm_bytes:.0f}% of "
        f"{ctx.gpu}'s memory) above the mean stage"
    )
    why = _heavy_stage_causes(spec, c, heavy, pp)
    details = []
    if why:
        details.append("from " + "; ".join(why) + f" ({w.label()})")
    fixes: list[Fix] = []
    ev = _describe(c, chosen, pp)
    ev.update(num_layers=L, heaviest_stage=heavy, excess_weight_bytes=round(excess))
    ev.update(hbm_bytes=round(hbm_bytes), gpu=ctx.gpu)
    if wb is not None and wb.sizes != chosen.sizes:
        fp = c.flops_of(wb.sizes)
        details.append(
            f"weight-balanced split {_sizes(wb.sizes)}: est. {_pct(wb.imbalance)} in weight bytes, "
            f"{_pct(fp.imbalance)} in prefill FLOPs"
        )
        if fp.idle_share < warn:
            fixes.append(_layout_fix(wb.sizes, spec.mtp_layers))
        ev["weight_balanced_stage_layers"] = list(wb.sizes)
    # a stage whose weights (with the activations) exceed usable memory will not load: a hard constraint

    usable = USABLE_HBM_SHARE * hbm_bytes
    act = getattr(w, "activation_bytes_per_gpu", 0.0)
    sev: Severity = "info"
    if wp.sums[heavy] + act > usable:
        # that stage will not load: a hard constraint of this split
        sev = "error"
        msg += (
            f"; it exceeds the {usable / 1e9:.0f} GB usable (with est. {act / 1e9:.1f} GB activations): will not load"
        )
        if wb is not None and wb.max + act <= usable:
            details.append(
                f"the weight-balanced split {_sizes(wb.sizes)} holds at most est. {wb.max / 1e9:.1f} GB per "
                "GPU: it loads"
            )
            if wb.sizes != chosen.sizes and not fixes:
                fixes.append(_layout_fix(wb.sizes, spec.mtp_layers))
        else:
            details.append("no split into these stages loads: more GPUs per stage or a narrower format (CL801)")
        ev["usable_bytes"] = round(usable)
    yield ctx.finding(sev, msg, field="num_layers", evidence=ev, fixes=fixes, details=details)


def _heavy_stage_causes(spec, c: StackCosts, heavy: int, pp: int) -> list[str]:
    """What makes stage ``heavy`` the heaviest: the embedding, the LM head (and MTP), or dense first layers."""
    why = []
    if c.first_weights and heavy == 0:
        why.append("the embedding on stage 0")
    if heavy == pp - 1 and c.last_weights:
        why.append("the LM head" + (" and MTP" if spec.mtp_layers else "") + f" on stage {pp - 1}")
    prefix, _ = period(spec.layer_pattern)
    k0, kl = spec.kind_of(0), spec.kind_of(spec.num_layers - 1)
    if prefix and k0.ffn.kind != kl.ffn.kind:
        why.append(f"the first {prefix} layers' {k0.ffn.kind} FFN holds far fewer weights than a {kl.ffn.kind} layer")
    return why


@rule(
    code="CL604",
    fields=("num_layers",),
    name="irregular-stack-pipeline",
    severity="info",
    summary="Without --pp: an irregular layer stack that splits unevenly at common pipeline sizes.",
    doc=RuleDoc(
        what="When no pipeline size is given, a structurally irregular stack (first-k dense layers, MTP layers, "
        "no-op blocks, a layer sequence with no short repeating unit) is split at the common sizes (2, 4, 8) "
        "and reported when the best split still idles stages. Regular and periodic stacks are not reported "
        "(give --pp to check one).",
        why="Guideline 6: irregular stacks should still split into balanced stages for pipeline (and chunked "
        "pipeline) parallelism.",
        example="DeepSeek-V3 (61 layers, 3 dense, 1 MTP): 16/15/16/14 at pp=4, 8/7/8/8/8/8/8/6 at pp=8.",
        fix="Choose a layer count that splits evenly with its irregular parts, or check with --pp.",
        sources=SOURCES,
    ),
    options=_opts("warn_idle_pct", "common_pp"),
)
def irregular_stack(ctx: Context):
    spec, sc, w = ctx.spec, ctx.target_scenario, ctx.analysis
    if sc.pp > 1:
        return
    irr = irregularities(spec)
    if not any(t in irr for t in STRUCTURAL):
        return
    c = stack_costs(spec, w)
    warn = ctx.option("warn_idle_pct") / 100
    bad = []
    for pp in ctx.option("common_pp"):
        if spec.num_layers < pp or not c.may_idle(pp, warn):
            continue
        p = c.best(pp)
        if p is not None and p.idle_share >= warn:
            bad.append((pp, p))
    if not bad:
        return
    parts = ", ".join(f"pp={pp}: {_sizes(p.sizes)}, est. {_pct(p.idle_share)} idle" for pp, p in bad)
    # "the best split still idles" rather than "split unevenly": an equal layer count (13/13/13/13) can be uneven work
    msg = (
        f"{spec.num_layers} layers ({', '.join(irr.values())}): the best contiguous split still idles stages at "
        + ", ".join(f"pp={pp}" for pp, _ in bad)
        + f": {parts}"
    )
    yield ctx.finding(
        "info",
        msg,
        field="num_layers",
        evidence={
            "num_layers": spec.num_layers,
            "mtp_layers": spec.mtp_layers,
            "splits": {
                str(pp): {"stage_layers": list(p.sizes), "idle_pct": round(100 * p.idle_share, 2)} for pp, p in bad
            },
            "gpu": ctx.gpu,
        },
        details=[f"best contiguous splits in prefill FLOPs ({w.label()}); check a deployment with --pp"],
    )
