"""CL5xx MoE expert parallelism (guideline 5): MoE layers sized for wide expert parallelism.

Under uniform routing a routed expert's GEMM sees ``global concurrency x top-k / E`` rows per
step (global = tokens per rank x ep). Below the M* where its GEMM turns compute-bound on the
target, the expert layer is a weight read; widening EP raises M (more ranks' tokens meet the
same experts) and spreads the weight reads. E should divide the EP sizes deployments use, and
fine-grained experts should be spread by EP rather than cut by TP.
"""

from __future__ import annotations

import math
from dataclasses import replace

from colint.analysis.collectives import past_domain_link
from colint.analysis.gemm_model import tile_efficiency
from colint.analysis.moe import experts_per_gpu, parts_touched, redundant_to_fill
from colint.analysis.ops_moe import expert_k_tile
from colint.analysis.padding import Dim, step_effect_pct
from colint.analysis.scale_out import scale_out_cost_pct
from colint.analysis.expert_batching import (
    ExpertBatching,
    concurrency_fit_at_ep,
    expert_batching,
    expert_gemm_rows,
    expert_imbalance,
    moe_kinds,
)
from colint.findings import Severity
from colint.rules.base import Context, Family, Option, RuleDoc, edit, fix, rule, past_domain_versus
from colint.rules.fix_builders import edit_key, param_delta

FAMILY = Family(name="moe-ep", number=5)
SOURCES = (
    "NVIDIA blog 'AI Model Co-Design', Guideline 5: GEMM-M = global concurrency x top-k / #experts; widen EP",
    "DeepSeek-V3 report §3.4 (EP32 prefill, EP320 decode, 'batch per expert usually within 256 tokens' -> "
    "memory-bound); open-infra-index day 6 (EP144, 32 redundant experts)",
    "TensorRT-LLM Wide-EP blog (EP64 on GB200 NVL72: 4 experts per GPU per layer)",
)
COMMON_EP = (8, 16, 32, 64, 72)
EXPERT_FIX_MULTIPLE = 8  # CL502's fixes offer expert counts that fill one 8-GPU HGX node (the smallest EP)


def _fmt_tokens(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else f"{x:.2g}"


@rule(
    code="CL501",
    kind="deployment",
    fields=("num_experts",),
    name="expert-gemm-memory-bound",
    severity="info",
    summary="Routed-expert GEMMs see too few tokens to be compute-bound: the concurrency or EP width that fixes it.",
    doc=RuleDoc(
        what="Tokens per routed expert per decode step = concurrency per rank x ep x top-k / E (uniform routing), "
        "compared with M*, the M at which the expert GEMMs turn compute-bound on the target and format. "
        "Reports the global concurrency C* = M* x E / top-k and the EP width that reaches it at the "
        "scenario's concurrency per rank.",
        why="Below M* each expert's weights are streamed for a handful of rows: the expert layers run at HBM "
        "speed, not Tensor-Core speed. Per-GPU concurrency is capped by the KV cache, so widening EP is the "
        "lever (more ranks' tokens meet each expert, fewer experts per GPU).",
        example="DeepSeek-V3 (256 experts, top-8) at 256 seq per rank: 8 tokens per expert at ep=1; M* ~ 340 on "
        "B200 BF16 -> about 10,900 concurrent tokens, ep>=43.",
        fix="Deploy with wide EP (and attention data parallelism); at design time, a smaller E/top-k ratio lowers "
        "the concurrency needed.",
        sources=SOURCES,
    ),
    options=(
        Option(name="common_ep", type=tuple, default=COMMON_EP, doc="EP sizes deployments use (8 HGX ... 72 NVL72)"),
    ),
)
def expert_gemm_memory_bound(ctx: Context):
    w, sc, spec = ctx.analysis, ctx.target_scenario, ctx.spec
    conc = sc.decode_concurrency
    common = sorted(ctx.option("common_ep"))
    for kind, n_layers in moe_kinds(spec):
        e, k = kind.ffn.num_experts, kind.ffn.top_k
        b = expert_batching(w, sc, kind)
        if b is None or not b.memory_bound:
            continue
        grp = sc.group_gpus
        # one GPU per expert at most: wider EP adds replicas, not rows per expert. Sizes advised: the common ones
        # and the HGX-node multiples that divide E (384 experts: 96, 128, 192 beside 72)
        sizes = sorted(set(common) | {d for d in range(EXPERT_FIX_MULTIPLE, e + 1, EXPERT_FIX_MULTIPLE) if e % d == 0})
        domain = getattr(ctx.profile, "domain_size", 0)
        advised = ep_choices(b.ep_needed, e, sizes, grp, domain) if b.ep_needed > sc.ep else []
        max_ep = max([x for x in sizes if x <= e], default=b.ep_needed)
        details = _batching_details(ctx, kind, b, advised, max_ep)
        # capacity: does the concurrency this advice assumes fit in memory at the EP width it proposes?
        ep_adv = advised[0] if advised else sc.ep
        fit = concurrency_fit_at_ep(spec, ctx.target_profile, sc, w, ep_adv)
        if fit is not None and fit < conc:
            details.append(
                f"capacity: at ep={ep_adv} only est. {fit} of the {conc} seq of {sc.context:,} tokens fit "
                f"per GPU (CL801); the concurrency this needs is not reachable there"
            )
        fixes = []
        choices = [_ep_advice(x, e, domain, ctx.gpu or "") for x in advised]
        if choices:  # the best first; colint.engine.closure moves to the next when its state raises a finding
            fixes.append(replace(choices[0], alternatives=choices[1:]))
        yield ctx.finding(
            "info",
            _batching_message(ctx, kind, b),
            field="num_experts",
            evidence={
                "num_experts": e,
                "top_k": k,
                "decode_concurrency": conc,
                "ep": sc.ep,
                "est_tokens_per_expert": round(b.tokens_per_expert, 3),
                "est_m_star_tokens": round(b.m_star_tokens, 1),
                "est_concurrency_needed_tokens": round(b.concurrency_needed_tokens),
                "est_ep_needed": b.ep_needed,
                "est_experts_touched_per_step": round(b.experts_touched, 1),
                "experts_per_gpu": experts_per_gpu(e, sc.ep),
                "est_prefill_tokens_per_expert": round(b.prefill_tokens_per_expert, 1),
                "moe_layers": n_layers,
                "gpu": ctx.gpu,
            },
            fixes=fixes,
            details=details,
        )


def _batching_message(ctx: Context, kind, b: ExpertBatching) -> str:
    """CL501's message: tokens per expert (or experts touched, below one token each) against M*."""
    sc = ctx.target_scenario
    conc, groups, grp = sc.decode_concurrency, sc.attention_dp_groups, sc.group_gpus
    e, k, m_star, touched = kind.ffn.num_experts, kind.ffn.top_k, b.m_star_tokens, b.experts_touched
    gpu_fmt = f"{ctx.gpu} {sc.gemm_format}"
    spread = (
        f"ep={sc.ep}" if grp == 1 else f"{groups} attention-DP group{'s' if groups != 1 else ''} of {sc.tp_label()}"
    )
    # tokens per expert, experts touched and M* are estimates (uniform routing, the roofline): each says so
    if b.tokens_per_expert >= 1:
        return (
            f"routed experts get est. {_fmt_tokens(b.tokens_per_expert)} tokens each per decode step ({conc} seq x "
            f"{spread} x top-{k} / {e} experts), below est. M*={m_star:.0f} where their GEMMs turn compute-bound on "
            f"{gpu_fmt}"
        )
    per_touched = conc * groups * k / touched if touched else 0.0
    return (
        f"at {conc} seq x {spread} a decode step touches est. {touched:,.0f} of {e} routed experts "
        f"({per_touched:.1f} tokens each); their GEMMs turn compute-bound only from est. M*={m_star:.0f} "
        f"on {gpu_fmt}"
    )


def _batching_details(ctx: Context, kind, b: ExpertBatching, advised: list[int], max_ep: int) -> list[str]:
    """CL501's details: the concurrency and EP width that reach M* (or that none in reach does), and the experts
    touched, held per GPU and fed at prefill."""
    sc = ctx.target_scenario
    conc, groups, grp, e = sc.decode_concurrency, sc.attention_dp_groups, sc.group_gpus, kind.ffn.num_experts
    unit = "rank" if grp == 1 else f"attention group of {sc.tp_label()}"
    first = (
        f"compute-bound needs est. {b.concurrency_needed_tokens:,.0f} concurrent tokens per EP group (uniform routing)"
    )
    if b.ep_needed <= max_ep:
        first += f": ep>={b.ep_needed} at {conc} seq per {unit}" + (
            f" (ep={advised[0]}: the nearest size that divides the experts or fits the domain)"
            if advised and advised[0] != b.ep_needed
            else ""
        )
    else:
        per_group = math.ceil(b.concurrency_needed_tokens / max(1, max_ep // grp))
        first += f": out of reach at {conc} seq per {unit}; at ep={max_ep} it takes >={per_group:,} seq per {unit}"
    m_pre = b.prefill_tokens_per_expert
    return [
        first,
        f"est. {b.experts_touched:,.0f} of {e} experts touched per step by {conc * groups} token"
        f"{'s' if conc * groups != 1 else ''}; {experts_per_gpu(e, sc.ep)} experts per GPU at "
        f"ep={sc.ep}; prefill gives est. {m_pre:,.0f} tokens per expert "
        f"({'compute' if m_pre >= b.prefill_m_star_tokens else 'memory'}-bound) ({ctx.analysis.label()})",
    ]


def ep_choices(ep_need: int, num_experts: int, common: list[int], tp: int, domain: int) -> list[int]:
    """EP sizes to advise, best first: from the common sizes (and multiples of tp) at least ``ep_need``
    and at most E, those that divide the experts before those that need redundant experts (EPLB), those
    inside the GPU's NVLink domain before those that span domains, then the smallest. Of the sizes that span
    domains, only the first: a wider span only sends more of the all-to-all over the scale-out network."""
    sizes = sorted({x for x in common if ep_need <= x <= num_experts and x % max(1, tp) == 0})
    ranked = sorted(sizes, key=lambda x: (num_experts % x != 0, bool(domain) and x > domain, x))
    spanning = [x for x in ranked if domain and x > domain]
    return [x for x in ranked if x not in spanning[1:]]


def _ep_advice(ep: int, num_experts: int, domain: int, gpu: str):
    """Display advice for one EP size; it says what it costs (redundant experts, domains spanned)."""
    notes = []
    r = redundant_to_fill(num_experts, ep)
    if r:
        notes.append(
            f"{num_experts} experts need {r} redundant copies (EPLB) to fill {ep} x "
            f"{experts_per_gpu(num_experts, ep)} slots"
        )
    if domain and ep > domain:
        notes.append(
            f"spans {math.ceil(ep / domain)} {domain}-GPU NVLink domains of {gpu}: the all-to-all runs "
            "over the scale-out network"
        )
    title = f"deploy the experts with ep={ep} and data-parallel attention" + (f" ({'; '.join(notes)})" if notes else "")
    return fix(title, "display", settings={"ep": ep})


@rule(
    code="CL502",
    fields=("num_experts",),
    name="experts-not-divisible-by-ep",
    severity="error",
    summary="The routed experts do not divide evenly over the EP ranks.",
    doc=RuleDoc(
        what="With --ep, each rank holds ceil(E/ep) expert slots; when ep does not divide E some ranks hold one "
        "more expert (or, when ep > E, none). Without --ep: experts that divide none of the common EP sizes "
        "(8, 16, 32, 64; 72 on NVL72 systems).",
        why="The expert layer finishes when the busiest rank does; the others idle for the difference, and the "
        "uneven weight footprint leaves less KV room on the busiest rank.",
        example="256 experts at ep=72: 3.56 per GPU, the busiest GPUs hold 4 (DeepSeek fills 288 = 4 x 72 slots "
        "with 32 redundant experts).",
        fix="Choose E divisible by the EP sizes you deploy (a power of two times 9 fits 72 and 8..64), or fill "
        "the remainder with redundant experts (EPLB).",
        sources=SOURCES,
    ),
    options=(
        Option(name="common_ep", type=tuple, default=(8, 16, 32, 64), doc="EP sizes checked when --ep is not given"),
        Option(
            name="nvl_domain",
            type=int,
            default=72,
            doc="EP size of a rack-scale NVLink domain, checked on GPUs whose domain is that big",
        ),
    ),
    graded=True,
)
def experts_not_divisible(ctx: Context):
    spec = ctx.spec
    for kind, _n_layers in moe_kinds(spec):
        if ctx.target_scenario.ep > 1:
            yield from _experts_over_ep(ctx, kind)
        else:
            yield from _experts_over_common_ep(ctx, kind.ffn.num_experts)


def _experts_over_ep(ctx: Context, kind):
    """CL502 with --ep: the experts the busiest rank holds beyond the mean, graded by the idle expert time."""
    w, spec, ep = ctx.analysis, ctx.spec, ctx.target_scenario.ep
    e = kind.ffn.num_experts
    if e % ep == 0:
        return
    key = edit_key(spec, "num_experts", "num_experts")
    im = expert_imbalance(w, kind, ep)
    slots, mean, idle, r, loss = im.slots_per_gpu, im.mean_per_gpu, im.idle_share, im.redundant_to_fill, im.loss_pct
    if ep > e:
        msg = f"ep={ep} exceeds the {e} routed experts: {ep - e} of the {ep} EP ranks hold no expert"
    else:
        msg = (
            f"{e} experts over ep={ep} is {mean:.2f} per GPU: the busiest GPUs hold {slots} "
            f"(est. {idle:.0%} of expert capacity idle)"
        )
    fixes = [fix(f"add {r} redundant expert copies (EPLB) to fill {e + r} = {slots} x {ep} slots", "display")]
    lo, hi = e // ep * ep, (e // ep + 1) * ep
    for v in (lo, hi):
        if v > 0 and v != e:
            d = param_delta(spec, "num_experts", v, old=e)
            fixes.append(fix(f"use {v} experts ({d.label()})", "unsafe", edit(key, e, v)))
    yield ctx.finding(
        ctx.graded(loss),
        msg,
        field="num_experts",
        evidence={
            "num_experts": e,
            "ep": ep,
            "experts_per_gpu_max": slots,
            "experts_per_gpu_mean": round(mean, 3),
            "idle_expert_share": round(idle, 4),
            "redundant_to_fill": r,
            "gpu": ctx.gpu,
        },
        loss_pct=loss,
        fixes=fixes,
        details=[
            f"expert GEMMs are est. {im.expert_decode_s * 1e3:.2f} ms of a {im.decode_step_s * 1e3:.2f} ms decode "
            f"step ({w.label()})"
        ],
    )


def _experts_over_common_ep(ctx: Context, e: int):
    """CL502 without --ep: experts that divide none of the common EP sizes (or not the rack-scale domain)."""
    spec = ctx.spec
    key = edit_key(spec, "num_experts", "num_experts")
    sizes = [x for x in ctx.option("common_ep") if x <= e]
    dom = ctx.option("nvl_domain")
    nvl = getattr(ctx.profile, "domain_size", 0) >= dom and e >= dom and e % dom != 0
    bad = [x for x in sizes if e % x]
    if not ((sizes and len(bad) == len(sizes)) or nvl):
        return
    check = bad if len(bad) == len(sizes) and sizes else []
    if nvl:
        check.append(dom)
    parts = [
        f"ep={x}: {experts_per_gpu(e, x)} per GPU on the busiest ({e / x:.2f} mean; "
        f"{redundant_to_fill(e, x)} redundant experts fill it)"
        for x in check
    ]
    msg = (
        f"{e} experts divide none of the common EP sizes {', '.join(map(str, sizes))}"
        if len(check) > 1 or not nvl
        else f"{e} experts do not divide the {dom}-GPU {ctx.target_profile.domain_noun} of {ctx.gpu}"
    )
    lo = e // EXPERT_FIX_MULTIPLE * EXPERT_FIX_MULTIPLE
    yield ctx.finding(
        "info",
        msg,
        field="num_experts",
        evidence={
            "num_experts": e,
            "ep_sizes": check,
            "experts_per_gpu_max": {str(x): experts_per_gpu(e, x) for x in check},
            "gpu": ctx.gpu,
        },
        details=["; ".join(parts)],
        fixes=[
            fix(
                f"use {v} experts ({param_delta(spec, 'num_experts', v, old=e).label()})",
                "unsafe",
                edit(key, e, v),
            )
            for v in sorted({lo, lo + EXPERT_FIX_MULTIPLE} - {0, e})
        ]
        if check != [dom]
        else [],
    )


@rule(
    code="CL503",
    kind="deployment",
    fields=("moe_intermediate_size",),
    name="fine-grained-experts-under-tp",
    severity="error",
    summary="Experts cut by tensor parallelism become tiny or misaligned GEMMs: spread them with EP instead.",
    doc=RuleDoc(
        what="With tp>1 and no EP, each expert's FFN width H'_e is split over the tp ranks (gate/up N = 2H'_e/tp, "
        "down K = H'_e/tp). Reports per-shard widths under one 128-wide tile (warning), widths that are "
        "multiples of 128 whole but not per shard (warning when the time model finds a measurable cost, "
        "info otherwise), and aligned per-shard widths under min_expert_shard_width (info), with the EP "
        "layout over the same GPUs. CL201 leaves expert widths that only the split misaligns to this rule; "
        "a width that is not a multiple of 128 even unsplit stays CL201's.",
        why="TP favours coarse experts; fine-grained experts under TP give GEMMs narrower than a tile, padding "
        "every tile and multiplying tiny kernels, while EP keeps each expert whole on one GPU.",
        example="Qwen3-30B-A3B (H'_e=768) at tp=8: 96 per shard, three quarters of a 128-wide tile.",
        fix="Shard the experts by EP (ep = the tp group size) and keep TP for attention, or use wider experts.",
        sources=(
            "NVIDIA blog 'AI Model Co-Design', Guideline 7: TP favours coarse MoE, EP favours fine-grained "
            "MoE whose small H' would produce inefficiently small GEMMs under TP",
        ),
    ),
    options=(
        Option(
            name="min_expert_shard_width",
            type=int,
            default=256,
            doc="report per-shard expert widths below this (2-SM tile width)",
        ),
        Option(name="tile_width", type=int, default=128, doc="the tile width the per-shard expert width is padded to"),
    ),
    graded=True,
)
def fine_grained_under_tp(ctx: Context):

    sc, spec, w = ctx.target_scenario, ctx.spec, ctx.analysis
    tp = sc.tp_of("ffn")  # expert TP splits the experts over the FFN's tp x kvp GPUs (Helix)
    if tp <= 1 or sc.ep > 1:
        return
    tile = ctx.option("tile_width")
    for kind, _n_layers in moe_kinds(spec):
        f = kind.ffn
        he = f.expert_intermediate_size
        shard = he / tp
        sub_tile = shard < tile
        split_misaligned = he % tile == 0 and (he % tp != 0 or (he // tp) % tile != 0)
        if shard >= ctx.option("min_expert_shard_width") and not split_misaligned:
            continue
        dims = [
            Dim(r.name, "k" if "down" in r.name else "n", r.k if "down" in r.name else r.n, [r])
            for reg in ("decode", "prefill")
            for r in expert_gemm_rows(w, reg, kind.name)
        ]
        priced = split_misaligned or sub_tile
        eff = step_effect_pct(ctx.analysis, dims, tile) if priced else {"decode": 0.0, "prefill": 0.0}
        loss = max(eff.values())
        sev: Severity = ctx.graded(loss if priced else None)
        shard_i = math.ceil(shard)
        eta_n = tile_efficiency(tile, 2 * shard_i, tile, tile)
        k_tile = expert_k_tile(sc.gemm_format)  # 128 B of a weight row, as the step pads an expert's K
        eta_k = shard_i / (math.ceil(shard_i / k_tile) * k_tile)
        per_gpu = experts_per_gpu(f.num_experts, tp)
        if sub_tile:
            what = f", under one {tile}-wide tile"
        elif split_misaligned:
            what = f", not a multiple of {tile} (the whole {he} is)"
        else:
            what = ""
        msg = (
            f"expert FFN width {he} is {shard:g} per shard at {sc.tp_label()}{what}: spread the {f.num_experts} "
            f"experts with ep={tp} instead ({per_gpu} whole experts per GPU)"
        )
        details = [
            f"per expert: gate/up N={2 * shard_i} fills {eta_n:.0%} of {tile}-wide tiles, down K={shard_i} "
            f"fills {eta_k:.0%} of the {k_tile}-deep K tile (estimate: {ctx.gpu}, {sc.gemm_format})"
        ]
        if priced:
            details.append(
                f"est. +{eff['decode']:.1f}% decode step, +{eff['prefill']:.1f}% prefill step from the "
                f"padding ({w.label()})"
            )
        yield ctx.finding(
            sev,
            msg,
            field="moe_intermediate_size",
            loss_pct=loss if priced else None,
            evidence={
                "expert_intermediate_size": he,
                "tp": tp,
                "per_shard_width": shard,
                "gate_up_tile_efficiency": round(eta_n, 3),
                "down_k_tile_efficiency": round(eta_k, 3),
                "experts_per_gpu_at_ep": per_gpu,
                "gpu": ctx.gpu,
                "est_decode_step_pct": round(eff["decode"], 2),
                "est_prefill_step_pct": round(eff["prefill"], 2),
            },
            details=details,
            fixes=[fix(f"experts on ep={tp} (tp for attention only)", "display", settings={"ep": tp})],
        )


@rule(
    code="CL504",
    kind="deployment",
    fields=("num_experts",),
    name="ep-beyond-scale-up-domain",
    severity="error",
    summary="Expert parallelism spans more GPUs than the NVLink domain: the all-to-all runs at scale-out speed.",
    doc=RuleDoc(
        what="With --ep larger than the profile's scale-up domain (8 on HGX, 72 on NVL72), the dispatch and combine "
        "all-to-all sends (ep - domain)/(ep - 1) of its volume over the scale-out network (the profile's "
        "scale_out_gbps: a 400-800 Gb/s NIC per GPU; between the NVLink-bridged pairs of one PCIe server, its "
        "PCIe: host_gpus) instead of NVLink. Reports the estimated share of the step this costs against an "
        "NVLink-speed all-to-all, and how many domains a token reaches under the model's router; past 4 domains "
        "with a router that is not group-limited, what DeepSeek-V3's node-limited routing would save.",
        why="NVLink moves 0.9-1.8 TB/s per GPU, a NIC 50-100 GB/s: past the domain the all-to-all can outweigh "
        "what wider EP gains in expert batch size (DeepSeek serves EP over InfiniBand with two-batch overlap "
        "and hides it only with enough tokens in flight).",
        example="DeepSeek-R1 at --ep 64 on b200 (8-GPU HGX domain): 56 of 63 peers are off-node; the decode step's "
        "all-to-all takes est. several times its NVLink time.",
        fix="Keep EP within the domain (ep <= 8 on HGX) or use a rack-scale domain (GB200/GB300 NVL72) for wide "
        "EP; overlap the all-to-all with compute (two micro-batches) where the engine supports it.",
        sources=SOURCES
        + (
            "NVIDIA DGX user guides: one 400 Gb/s ConnectX-7 per GPU (HGX H100/B200)",
            "DeepSeek-V3 report §2.1.2: node-limited routing, each token sent to at most 4 nodes (8 groups, top-4)",
        ),
    ),
    options=(
        Option(
            name="rack_domain",
            type=int,
            default=72,
            doc="GPUs of a rack-scale NVLink domain (GB200/GB300 NVL72): advised where the GPU's domain is smaller",
        ),
        Option(
            name="domains_per_token",
            type=int,
            default=4,
            doc="domains a group-limited router advised to an unlimited one may send a token to (DeepSeek-V3: 4 "
            "nodes), at most half of those the EP spans; advised from 2 (EP over 4 domains or more)",
        ),
    ),
    graded=True,
)
def ep_beyond_domain(ctx: Context):
    sc, p, spec = ctx.target_scenario, ctx.target_profile, ctx.spec
    dom = max(1, p.domain_size)
    if sc.ep <= dom or not moe_kinds(spec):
        return
    so = past_domain_link(p, sc.ep)[1]  # the rate the step prices, which the finding quotes
    eff = scale_out_cost_pct(ctx.analysis, "ep")
    loss = max(eff.values())
    out_share = (sc.ep - dom) / max(1, sc.ep - 1)
    msg = (
        f"ep={sc.ep} spans {-(-sc.ep // dom)} {p.domain_noun}s of {dom} on {ctx.gpu}: {out_share:.0%} of the expert "
        f"all-to-all crosses {past_domain_versus(p, sc.ep)}"
    )
    details = [
        f"est. +{eff['decode']:.1f}% decode step, +{eff['prefill']:.1f}% prefill step against an all-to-all "
        f"at {p.scale_up} speed ({ctx.analysis.label()})"
    ]
    fixes = [
        fix(
            f"keep ep <= {dom} (the {ctx.gpu} {p.domain_noun})"
            + (", or deploy wide EP on a rack-scale NVLink domain (NVL72)" if dom < ctx.option("rack_domain") else ""),
            "display",
        )
    ]
    domains = -(-sc.ep // dom)
    ffn = moe_kinds(spec)[0][0].ffn
    reach = parts_touched(domains, ffn.top_k, ffn.expert_groups, ffn.groups_per_token)
    limit = min(ctx.option("domains_per_token"), domains // 2)
    noun = p.domain_noun
    if ffn.group_limited:
        details.append(
            f"its router picks a token's experts within {ffn.groups_per_token} of {ffn.expert_groups} groups, so a "
            f"token reaches est. {reach:.1f} of the {domains} {noun}s (priced so)"
        )
    elif limit >= 2 and ffn.num_experts % domains == 0 and ffn.top_k <= limit * (ffn.num_experts // domains):
        # DeepSeek-V3's node-limited routing, a group per domain: the prefill's high-throughput kernels send a
        # token once per remote domain (the decode's low-latency kernels send a copy per expert either way)
        limited = parts_touched(domains, ffn.top_k, domains, limit)
        details.append(
            f"a token reaches est. {reach:.1f} of the {domains} {noun}s; a router confined to {limit} of "
            f"{domains} expert groups, a group per {noun} (DeepSeek-V3's node-limited routing), would send it to "
            f"{limited:.1f}: {1 - limited / reach:.0%} less prefill exchange traffic past the {noun}"
        )
        fixes.append(
            fix(
                f"limit each token's experts to {limit} of {domains} groups (n_group={domains}, topk_group={limit})",
                "display",
            )
        )
    yield ctx.finding(
        ctx.graded(loss),
        msg,
        field="num_experts",
        loss_pct=loss,
        evidence={
            "ep": sc.ep,
            "domain_gpus": dom,
            "off_domain_share": round(out_share, 4),
            "scale_out_gbps": so,
            "interconnect_gbps": p.interconnect_gbps,
            "gpu": ctx.gpu,
            "est_decode_step_pct": round(eff["decode"], 2),
            "est_prefill_step_pct": round(eff["prefill"], 2),
            "est_domains_per_token": round(reach, 2),
        },
        details=details,
        fixes=fixes,
    )
