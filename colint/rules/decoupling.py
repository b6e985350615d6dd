"""CL7xx attention/FFN decoupling (guideline 7): parallelize attention and FFN independently.

Attention tensor parallelism scales only up to the number of KV heads (MLA: one latent KV
head); beyond it every rank holds a copy of the KV cache. Query heads must split evenly over
tp. At long context and low concurrency decode time is KV-cache reads, which sharding the KV
along the sequence (KV / Helix parallelism) spreads over GPUs that TP cannot use.
"""

from __future__ import annotations

import math

from colint.analysis.inventory import layer_counts
from colint.analysis.kv_cache import indexer_kv_bytes_per_token
from colint.analysis.kv_replication import KvReplication, attention_kinds, kv_heads, kv_replication
from colint.analysis.ops_attention import INDEXER_LOGIT_BYTES, decode_kv_bytes_per_s
from colint.analysis.collectives import past_domain_link
from colint.analysis.scale_out import scale_out_cost_pct
from colint.hardware_profiles import time_model
from colint.rules.base import Context, Family, Option, RuleDoc, edit, fix, rule, past_domain_versus
from colint.rules.fix_builders import divisors, edit_key, param_delta

FAMILY = Family(name="decoupling", number=7)
SOURCES_KV = (
    "NVIDIA blog 'AI Model Co-Design', Guideline 7 (attention TP scales only up to the KV heads)",
    "NVIDIA blog 'Co-designing AI model attention for fast interactive long-context inference' (keep TP <= KH)",
    "Helix Parallelism, Bhatia et al., arXiv 2507.07120; TensorRT-LLM tech blog 22",
)


def _indexer_bytes_per_token(mx) -> float:
    """Decode bytes a DSA indexer moves per cached token and sequence: its FP8 key and the FP32 logit written and read."""
    return indexer_kv_bytes_per_token(mx) + 2 * INDEXER_LOGIT_BYTES


def _kv_field(spec, mx) -> str:
    """The spec field a KV finding points at: the latent rank (MLA), the KV heads, else the heads."""
    if mx.kind == "mla" and spec.sources.get("kv_lora_rank"):
        return "kv_lora_rank"
    src = spec.sources.get("num_kv_heads")
    if src is not None and src.line is not None:
        return "num_kv_heads"
    return "num_heads" if spec.sources.get("num_heads") else "num_kv_heads"


def _mb(x: float) -> str:
    return f"{x / 1e6:,.1f} MB" if x < 1e9 else f"{x / 1e9:,.1f} GB"


@rule(
    code="CL701",
    kind="deployment",
    name="kv-cache-replicated-by-tp",
    severity="error",
    summary="Attention tensor parallelism above the KV-head count replicates the KV cache.",
    doc=RuleDoc(
        what="Under tp, each rank holds n_kv/tp KV heads; when tp exceeds the KV heads (MLA's latent cache "
        "counts as one head) whole KV heads are copied onto tp/n_kv ranks each.",
        why="Every copy costs HBM that would hold other sequences' context, and each rank streams the full "
        "copy per decode step, so attention decode time stops falling with tp.",
        example="DeepSeek-V3 (MLA) at tp=8: 70,272 B of KV per token on every GPU instead of 8,784 B.",
        fix="Run attention data-parallel (or with tp <= KV heads) and give the FFN/experts their own tp/ep "
        "(decoupled parallelism); shard the KV along the sequence (Helix); or raise the KV heads to tp.",
        sources=SOURCES_KV,
    ),
    options=(
        Option(
            name="min_replication",
            type=int,
            default=2,
            doc="report when a KV head is held by at least this many tp ranks",
        ),
    ),
    graded=True,
)
def kv_cache_replicated(ctx: Context):
    w, sc, spec = ctx.analysis, ctx.target_scenario, ctx.spec
    rp = kv_replication(spec, w, sc)
    if rp is None or rp.factor < ctx.option("min_replication"):
        return
    tp, mx, n_kv, loss = rp.tp, rp.mixer, rp.kv_heads, rp.loss_pct
    kv_gpu, kv_ideal = rp.kv_bytes_per_token_per_gpu, rp.kv_bytes_per_token_sharded
    seqs, context = sc.decode_concurrency, sc.context
    mla = mx.kind == "mla"
    details = [
        f"est. {_mb(rp.extra_kv_bytes_per_gpu)} of extra KV cache per GPU at {seqs} seq x {context} tokens; the "
        f"replicated KV reads are est. {loss:.1f}% of the decode step ({w.label()})",
        f"attention tp scales without copies only up to {n_kv}; decouple: attention data-parallel"
        + (f" (or tp<={n_kv})" if n_kv > 1 else "")
        + " with the FFN/experts on tp/ep, or KV (Helix) parallelism "
        "along the sequence",
    ]
    fixes = [
        fix(
            ("run attention data-parallel" if n_kv == 1 else f"run attention with tp<={n_kv} (data-parallel replicas)")
            + f" and keep tp={tp} / ep for the FFN",
            "display",
            settings={"tp": n_kv} if n_kv > 1 else {},
        )
    ]
    # the key that holds this mixer's KV heads: the model's, or Gemma-4's separate one for its full layers
    kv_key = (
        edit_key(spec, "num_kv_heads", "num_key_value_heads")
        if mx.num_kv_heads == spec.num_kv_heads
        else spec.sources["num_global_kv_heads"].key
        if "num_global_kv_heads" in spec.sources
        else None
    )
    if not mla and kv_key and mx.num_heads % tp == 0 and tp <= mx.num_heads:
        d = param_delta(spec, "num_kv_heads", tp, old=mx.num_kv_heads)
        # capacity: the KV cache per GPU stays the same (each rank holds one head either way), so does what fits
        fit = getattr(w, "max_decode_concurrency", None) if getattr(w, "memory", None) is not None else None
        cap = f"; as now, est. {fit} seq of {context:,} tokens fit per GPU" if fit is not None and fit < seqs else ""
        fixes.append(
            fix(
                f"use {tp} KV heads ({d.label()}, {tp / n_kv:g}x the KV cache per token{cap})",
                "unsafe",
                edit(kv_key, mx.num_kv_heads, tp),
            )
        )
    # MLA's latent cache is one head by design: its only fix is the deployment (attention data-parallel), never a
    # shape change, so it warns at most; GQA/MQA heads below tp are also a shape an architect can change
    yield ctx.finding(
        ctx.graded(loss, cap="warning" if mla else "error"),
        _replication_message(rp),
        field="num_global_kv_heads"
        if kv_key and "num_global_kv_heads" in spec.sources and kv_key == spec.sources["num_global_kv_heads"].key
        else _kv_field(spec, mx),
        evidence={
            "tp": tp,
            "kv_heads": n_kv,
            "kv_replication": rp.factor,
            "kv_bytes_per_token_per_gpu": round(kv_gpu),
            "kv_bytes_per_token_sharded": round(kv_ideal),
            "extra_kv_bytes_per_gpu": round(rp.extra_kv_bytes_per_gpu),
            "decode_concurrency": seqs,
            "context_tokens": context,
            "est_replicated_kv_read_s": rp.replicated_kv_read_s,
            "est_attention_core_s": w.steps["decode"].attention_core_s,
            "gpu": ctx.gpu,
        },
        loss_pct=loss,
        fixes=fixes,
        details=details,
    )


def _replication_message(rp: KvReplication) -> str:
    """CL701's message: what is copied onto how many ranks, and the KV bytes per token per GPU it costs."""
    tp, n_kv, kv_gpu, kv_ideal = rp.tp, rp.kv_heads, rp.kv_bytes_per_token_per_gpu, rp.kv_bytes_per_token_sharded
    one = rp.mixer.kind == "mla" or n_kv == 1
    what = (
        "MLA's latent KV cache (one KV head)"
        if rp.mixer.kind == "mla"
        else "the single KV head (multi-query attention)"
        if n_kv == 1
        else f"{n_kv} KV heads"
    )
    verb = (
        f"is copied onto all {tp} tp ranks"
        if one
        else f"under tp={tp}: each KV head is copied onto {rp.factor:g} ranks"
    )
    if one:
        return f"{what} {verb}: {kv_gpu:,.0f} B of KV cache per token on every GPU instead of {kv_ideal:,.0f} B"
    return f"{what} {verb}, {kv_gpu:,.0f} B of KV cache per token per GPU instead of {kv_ideal:,.0f} B"


def _nearest_divisible(n: int, tp: int) -> list[int]:
    below = n // tp * tp
    out = [v for v in (below, below + tp) if v > 0 and v != n]
    return out


@rule(
    code="CL702",
    kind="deployment",
    name="heads-not-divisible-by-tp",
    severity="error",
    summary="Attention heads must split evenly over the tensor-parallel ranks.",
    doc=RuleDoc(
        what="Tensor parallelism gives each rank num_heads/tp query heads; KV heads are either split (n_kv "
        "divisible by tp) or replicated (tp divisible by n_kv). Mamba/linear-attention heads split the "
        "same way.",
        why="With a remainder the heads cannot be split: Megatron-LM, vLLM and TensorRT-LLM reject the "
        "configuration at start-up.",
        example="Falcon-7B: 71 query heads cannot be split over tp=2, 4 or 8.",
        fix="Choose a head count divisible by the tp you deploy with (72 or 64 instead of 71), or a smaller tp.",
        sources=(
            "Megatron-LM: num_attention_heads must be divisible by tensor_model_parallel_size",
            "vLLM: total_num_heads % tensor_parallel_size == 0 (and KV heads divisible or replicable)",
        ),
    ),
    hard="heads that tp neither divides nor replicates evenly: serving engines refuse the configuration",
)
def heads_not_divisible(ctx: Context):
    spec, tp = ctx.spec, ctx.target_scenario.tp
    if tp <= 1:
        return
    seen = set()
    counts = layer_counts(spec)
    for kind, n in zip(spec.layer_kinds, counts):
        if not n:
            continue
        mx = kind.mixer
        for field, label, count, fallback in _head_checks(mx, tp):
            if not count or (field, count) in seen:
                continue
            if field == "num_kv_heads":
                bad = True
            else:
                bad = count % tp != 0
            if not bad:
                continue
            seen.add((field, count))
            max_tp = max(d for d in divisors(count) if d & (d - 1) == 0) if field != "num_kv_heads" else None
            key = edit_key(spec, field, fallback)
            fixes = _head_count_fixes(spec, mx, field, key, count, tp)
            if field == "num_kv_heads":
                msg = f"{count} KV heads can neither be split over nor replicated evenly on tp={tp}"
            else:
                msg = f"{count} {label} cannot be split over tp={tp} ({count / tp:.2f} per rank)"
            if max_tp and max_tp > 1:
                fixes.append(
                    fix(
                        f"deploy with tp<={max_tp} (the largest power of two dividing {count})",
                        "display",
                        settings={"tp": max_tp},
                    )
                )
            elif max_tp == 1:
                fixes.append(
                    fix(
                        f"run attention without tensor parallelism ({count} has no power-of-two divisor "
                        "above 1): data-parallel attention, tp/ep for the FFN",
                        "display",
                    )
                )
            yield ctx.finding(
                "error",
                msg,
                field=field if spec.sources.get(field) else None,
                key=None if spec.sources.get(field) else key,
                evidence={"heads": count, "tp": tp, "max_power_of_two_tp": max_tp},
                fixes=fixes,
                gpu_specific=False,
            )  # heads vs tp: the same on every GPU, reported once


def _head_checks(mx, tp: int) -> list[tuple[str, str, int, str]]:
    """(field, label, count, key fallback) of each head count of mixer ``mx`` that tp must split (KV heads: only
    those that tp can neither split nor replicate)."""
    checks = []
    if mx.kind in ("attention", "mla"):
        checks.append(("num_heads", "query heads", mx.num_heads, "num_attention_heads"))
        if (
            mx.kind == "attention"
            and mx.num_kv_heads
            and mx.num_kv_heads != mx.num_heads
            and mx.num_kv_heads % tp
            and tp % mx.num_kv_heads
        ):
            checks.append(("num_kv_heads", "KV heads", mx.num_kv_heads, "num_key_value_heads"))
    elif mx.kind == "mamba" and mx.num_heads:
        checks.append(("mamba_num_heads", "Mamba heads", mx.num_heads, "mamba_num_heads"))
    elif mx.kind == "linear_attention":
        if mx.num_v_heads:
            checks.append(
                ("linear_num_value_heads", "linear-attention value heads", mx.num_v_heads, "linear_num_value_heads")
            )
        if mx.num_k_heads:
            checks.append(
                ("linear_num_key_heads", "linear-attention key heads", mx.num_k_heads, "linear_num_key_heads")
            )
    return checks


def _head_count_fixes(spec, mx, field: str, key: str, count: int, tp: int) -> list:
    """The head counts near ``count`` that tp splits (query heads) or splits or replicates (KV heads)."""
    fixes = []
    if field == "num_heads" and mx.kind == "attention":
        for v in _nearest_divisible(count, tp):
            if mx.num_kv_heads and v % mx.num_kv_heads:
                continue
            d = param_delta(spec, "num_heads", v, old=count)
            fixes.append(fix(f"use {v} query heads ({d.label()})", "unsafe", edit(key, count, v)))
    if field == "num_kv_heads":
        opts = [v for v in divisors(mx.num_heads) if v % tp == 0 or tp % v == 0]
        near = sorted(opts, key=lambda v: (abs(v - count), v))[:2]
        for v in sorted(near):
            d = param_delta(spec, "num_kv_heads", v, old=count)
            fixes.append(fix(f"use {v} KV head{'s' if v > 1 else ''} ({d.label()})", "unsafe", edit(key, count, v)))
    return fixes


@rule(
    code="CL703",
    kind="deployment",
    name="kv-parallelism-pays",
    severity="info",
    summary="At long context and low concurrency, KV-cache reads dominate decode: KV (Helix) parallelism pays.",
    doc=RuleDoc(
        what="Compares the decode step's KV-cache read time with its weight read time at the scenario's "
        "context and concurrency, and gives the context length where the two cross.",
        why="Beyond the crossover TP cannot help (it is capped by the KV heads); sharding the KV along the "
        "sequence over the same GPUs (Helix: KVP x TP_A for attention, TP/EP for the FFN) cuts the "
        "dominant term.",
        example="Llama-3.1-8B at 131,072 tokens, 16 sequences: KV reads are most of the step; the "
        "crossover is near 9k tokens at this concurrency.",
        fix="Serve long contexts with KV parallelism (Helix), fewer KV bytes per token (fewer KV heads, MLA, "
        "FP8 KV), or sliding-window/linear-attention layers.",
        sources=SOURCES_KV[2:] + ("TensorRT-LLM: Helix for ISL > ~64K at low batch",),
    ),
    options=(
        Option(
            name="max_concurrency",
            type=int,
            default=64,
            doc=(
                "only for decode concurrencies up to this many sequences per replica "
                "(at high batch, attention data parallelism already spreads the KV)"
            ),
        ),
        Option(
            name="min_kv_over_weights",
            type=float,
            default=1.0,
            doc="report when KV reads take at least this multiple of the weight reads",
        ),
    ),
)
def kv_parallelism_pays(ctx: Context):

    w, sc, spec = ctx.analysis, ctx.target_scenario, ctx.spec
    seqs = sc.decode_concurrency
    if seqs > ctx.option("max_concurrency"):
        return
    if spec.max_position_embeddings and sc.context > spec.max_position_embeddings:
        return  # the model does not attend that far
    kinds = {k.name: mx for k, mx in attention_kinds(spec)}
    rows = [a for a in w.attention["decode"] if a.kind in kinds]
    if not rows:
        return
    step = w.steps["decode"]
    kv_s = sum(a.estimate_s * a.layers for a in rows)
    weights_s = step.gemm_s
    if not weights_s or kv_s < ctx.option("min_kv_over_weights") * weights_s:
        return
    # KV time as a function of context: full-attention layers grow with it, windows stop growing; a DeepSeek Sparse
    # Attention layer reads a constant top-k of its latent, and only its indexer's keys and logits grow
    bw = decode_kv_bytes_per_s(ctx.target_profile, time_model(ctx.target_profile))
    dsa = {name for name, mx in kinds.items() if mx.index_topk}
    grow = (
        sum(
            a.bytes / a.attended_tokens * a.layers
            for a in rows
            if a.attended_tokens and not kinds[a.kind].window and a.kind not in dsa
        )
        + sum(seqs * _indexer_bytes_per_token(kinds[a.kind]) * a.layers for a in rows if a.kind in dsa)
    ) / bw
    const = (
        sum(a.bytes * a.layers for a in rows if kinds[a.kind].window)
        + sum(
            seqs * a.attended_tokens * (a.kv_bytes_per_token - indexer_kv_bytes_per_token(kinds[a.kind])) * a.layers
            for a in rows
            if a.kind in dsa
        )
    ) / bw
    crossover = None
    if grow > 0:
        crossover = max(1, math.ceil((weights_s - const) / grow))
    mx = min((mx for mx in kinds.values()), key=kv_heads)
    n_kv = kv_heads(mx)
    share = kv_s / step.estimate_s
    msg = (
        f"at {sc.context:,}-token context and {seqs} seq, KV-cache reads are est. {share:.0%} of decode time "
        f"({kv_s * 1e3:.2f} ms vs {weights_s * 1e3:.2f} ms of weight reads): KV (Helix) parallelism pays"
        + (f" from est. {crossover:,} tokens" if crossover else "")
    )
    details = [
        f"attention tp is capped at {n_kv} KV head{'s' if n_kv > 1 else ''} without copies; KV parallelism "
        f"shards the sequence instead ({w.label()})"
    ]
    mem = getattr(w, "memory", None)
    if mem is not None and not mem.fits:
        details.append(
            f"at this context only est. {mem.max_decode_concurrency} of the {seqs} seq fit per GPU (CL801); "
            "KV parallelism over k GPUs also divides each sequence's cache by k"
        )
    yield ctx.finding(
        "info",
        msg,
        field=_kv_field(spec, mx),
        evidence={
            "context_tokens": sc.context,
            "decode_concurrency": seqs,
            "est_kv_read_s": kv_s,
            "est_weight_read_s": weights_s,
            "est_decode_step_s": step.estimate_s,
            "est_kv_share": round(share, 4),
            "est_attention_share": round(step.attention_share, 4),
            "est_crossover_context_tokens": crossover,
            "kv_heads": n_kv,
            "gpu": ctx.gpu,
        },
        fixes=[fix("serve with KV parallelism (Helix: KVP x TP_A for attention, TP/EP for the FFN)", "display")],
        details=details,
    )


@rule(
    code="CL704",
    kind="deployment",
    fields=("num_heads",),
    name="tp-beyond-scale-up-domain",
    severity="error",
    summary="Tensor parallelism spans more GPUs than the NVLink domain: its all-reduces run at scale-out speed.",
    doc=RuleDoc(
        what="With --tp (times --kvp, whose GPUs share the FFN's tensor parallelism) larger than the profile's "
        "scale-up domain, each layer's two all-reduces cross the scale-out network (the profile's "
        "scale_out_gbps; between the NVLink-bridged pairs of one PCIe server, its PCIe: host_gpus), paced by its "
        "slowest hop. Reports the estimated share of the step this costs against an all-reduce at NVLink speed.",
        why="Tensor parallelism puts collectives on the critical path of every layer; at NIC bandwidth (50-100 "
        "GB/s per GPU against 0.9-1.8 TB/s of NVLink) they dominate the step.",
        example="Llama-3.1-70B at --tp 16 on h100-sxm (8-GPU HGX): every all-reduce leaves the node.",
        fix="Keep tp within the NVLink domain and scale out with pipeline or data parallelism (or EP for MoE).",
        sources=SOURCES_KV[:1] + ("NVIDIA DGX user guides: one 400 Gb/s ConnectX-7 per GPU (HGX H100/B200)",),
    ),
    graded=True,
)
def tp_beyond_domain(ctx: Context):
    sc, p = ctx.target_scenario, ctx.target_profile
    dom = max(1, p.domain_size)
    group = sc.group_gpus  # tp x kvp: the all-reduces after o_proj and the FFN span the attention group (Helix)
    if group <= dom:
        return
    so = past_domain_link(p, group)[1]  # the rate the step prices, which the finding quotes
    eff = scale_out_cost_pct(ctx.analysis, "tp")
    loss = max(eff.values())
    size = f"tp={sc.tp}" if sc.kvp == 1 else f"the attention group of tp={sc.tp} x kvp={sc.kvp} = {group} GPUs"
    msg = (
        f"{size} spans {-(-group // dom)} {p.domain_noun}s of {dom} on {ctx.gpu}: every layer's all-reduce "
        + ("crosses " if sc.kvp == 1 else "and KV-parallel exchange (decode) cross ")
        + past_domain_versus(p, group)
    )
    yield ctx.finding(
        ctx.graded(loss),
        msg,
        field="num_heads",
        loss_pct=loss,
        evidence={
            "tp": sc.tp,
            **({"kvp": sc.kvp} if sc.kvp > 1 else {}),
            "domain_gpus": dom,
            "scale_out_gbps": so,
            "interconnect_gbps": p.interconnect_gbps,
            "gpu": ctx.gpu,
            "est_decode_step_pct": round(eff["decode"], 2),
            "est_prefill_step_pct": round(eff["prefill"], 2),
        },
        details=[
            f"est. +{eff['decode']:.1f}% decode step, +{eff['prefill']:.1f}% prefill step against all-reduces at "
            f"{p.scale_up} speed ({ctx.analysis.label()})"
        ],
        fixes=[
            fix(
                f"keep tp{' x kvp' if sc.kvp > 1 else ''} <= {dom} and scale out with pp/dp (or ep for experts)",
                "display",
            )
        ],
    )
