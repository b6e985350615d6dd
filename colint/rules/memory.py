"""CL8xx memory: does the model fit in the GPU's memory in the scenario it is linted for?

Weights + KV cache + activations per GPU (colint.analysis.memory, estimates) against usable HBM:
weights that do not fit mean the model will not load (an error); a KV cache with no room for one
sequence at the scenario's context means it will not run there (an error); room for fewer
sequences than the scenario's concurrency costs throughput (graded by the estimated loss of
tokens/s at the concurrency that fits). Each finding gives the largest concurrency that fits and
the smallest deployment (tp, ep, pp within the NVLink domain) that fits the scenario.
"""

from __future__ import annotations

from colint.analysis.deployments import COMMON_PP, replica_sequences, smallest_fitting
from colint.analysis.memory_shortfall import decode_at_fit
from colint.rules.base import Context, Family, Option, RuleDoc, fix, rule

FAMILY = Family(name="memory", number=8)
SOURCES = (
    "vLLM gpu_memory_utilization (default 0.9) and its KV-cache profiling: weights + peak activations + KV blocks",
    "KV bytes per token: 2·n_kv·d_h·b_kv per layer (MLA: (kv_lora_rank + rope)·b_kv; DSA adds the indexer key, "
    "index_head_dim FP8 + an FP32 scale per 128); docs/design.md §5",
)


def _gb(x: float) -> str:
    return f"{x / 1e9:,.1f} GB"


def _layout(tp: int, ep: int, pp: int) -> str:
    parts = [f"tp={tp}"] + ([f"ep={ep}"] if ep > 1 else []) + ([f"pp={pp}"] if pp > 1 else [])
    return ", ".join(parts) + f" ({max(tp, ep) * pp} GPUs)"


@rule(
    code="CL801",
    kind="deployment",
    name="does-not-fit-in-memory",
    severity="error",
    summary="Weights + KV cache + activations per GPU exceed the GPU's usable memory in this scenario.",
    doc=RuleDoc(
        what="Per GPU: the weights of the heaviest pipeline stage (sharded by tp/ep, in the scenario's format), "
        "the KV cache of the scenario's concurrency (sequences per attention group of tp x kvp GPUs; a replica under attention data-parallelism with EP holds ep/tp groups) at its context (sharded, or replicated where tp exceeds "
        "the KV heads), and the peak activations of one forward, against usable HBM (90% of the profile's "
        "memory, vLLM's default). With no deployment named, colint checks the automatic one (the fewest GPUs that hold the weights and a sequence, at the sequences that fit), where this finding is advice (info). Gives the largest concurrency that fits and the smallest deployment "
        "(tp/ep within the NVLink domain, then pp) that fits the scenario.",
        why="A model whose weights do not fit will not load; one whose KV cache has no room for a sequence at the "
        "context will not serve it; fewer sequences than planned cut tokens/s, and every other estimate "
        "(expert batch sizes, KV reads) assumes the planned concurrency.",
        example="Llama-3.1-405B in BF16 on one H100 (80 GB): 812 GB of weights per GPU; tp=8 with pp=4 holds "
        "the weights and 256 sequences of 8,192 tokens.",
        fix="Deploy over more GPUs (the layout given), store weights or KV in a narrower format (FP8), lower the "
        "concurrency (--concurrency N, concurrency = N in [tool.colint]) or context, or reduce the KV bytes per token (fewer KV heads, MLA, sliding windows).",
        sources=SOURCES,
    ),
    options=(
        Option(name="max_candidates", type=int, default=64, doc="deployments tried when looking for one that fits"),
    ),
    graded=True,
    hard="weights (with activations) above usable memory: the model will not load; no room for one sequence "
    "at the scenario's context: it will not run there",
)
def does_not_fit(ctx: Context):
    w, sc, spec = ctx.analysis, ctx.target_scenario, ctx.spec
    mem = w.memory
    if mem is None or mem.fits:
        return
    ev = _footprint_evidence(ctx, mem)
    where = f"{_gb(mem.usable_bytes)} usable of {ctx.gpu}'s {ctx.target_profile.memory_gb:g} GB"
    # the deployment that fits is advice and text: a closure re-check (ctx.brief) reads only the severity
    found = (
        None
        if ctx.brief
        else smallest_fitting(spec, ctx.target_profile, sc, sc.decode_concurrency, int(ctx.option("max_candidates")))
    )
    details, fixes = _fit_advice(ctx, mem, found, ev)
    total = replica_sequences(sc)
    kv_field = "num_kv_heads" if spec.sources.get("num_kv_heads") else "num_heads"
    if not mem.weights_fit:
        msg = (
            f"does not fit: est. {_gb(mem.weight_bytes_per_gpu)} of weights per GPU"
            + (
                f" at {', '.join(f'{k}={getattr(sc, k)}' for k in ('tp', 'kvp', 'ep', 'pp') if getattr(sc, k) > 1)}"
                if max(sc.tp, sc.kvp, sc.ep, sc.pp) > 1
                else ""
            )
            + f" exceed {where}: the model will not load"
        )
        if found is not None:
            msg += f"; {_layout(*found[:3])} fits"
        yield ctx.finding("error", msg, field="hidden_size", evidence=ev, fixes=fixes, details=details)
        return
    if mem.max_decode_concurrency < 1:
        msg = (
            f"does not fit: the weights leave no room for the KV cache of one sequence of {sc.context:,} tokens "
            f"(est. {_gb(mem.kv_bytes_per_sequence_per_gpu)} per GPU) in {where}"
        )
        if found is not None:
            msg += f"; {_layout(*found[:3])} fits {total:,} seq per replica"
        yield ctx.finding("error", msg, field=kv_field, evidence=ev, fixes=fixes, details=details)
        return
    # room for fewer sequences than planned: the throughput lost at the concurrency that fits
    at_fit = decode_at_fit(spec, ctx.target_profile, sc, w)
    cap, tps, tps_cap, loss = at_fit.concurrency_fit, at_fit.tokens_per_s, at_fit.tokens_per_s_at_fit, at_fit.loss_pct
    ev.update(est_decode_tokens_per_s=round(tps, 1), est_decode_tokens_per_s_at_fit=round(tps_cap, 1))
    details.insert(
        1,
        f"at {cap} seq (what fits) decode gives est. {tps_cap:,.0f} tokens/s per replica instead of "
        f"{tps:,.0f} ({loss:.0f}% less)"
        if loss is not None
        else f"at most {cap} seq fit",
    )
    group = " per attention group" if sc.attention_dp_groups > 1 else ""
    msg = (
        f"only {cap} of the scenario's {sc.decode_concurrency} sequences{group} of {sc.context:,} tokens fit in "
        f"{where} (est. {_gb(mem.kv_bytes_per_sequence_per_gpu)} of KV cache each per GPU): set --concurrency {cap} "
        f"(concurrency = {cap} in [tool.colint]) or deploy on more GPUs"
    )
    fixes.insert(0, fix(f"check at --concurrency {cap}", "display", settings={"concurrency": cap}))
    yield ctx.finding(ctx.graded(loss), msg, field=kv_field, evidence=ev, loss_pct=loss, fixes=fixes, details=details)


def _footprint_evidence(ctx: Context, mem) -> dict:
    """CL801's evidence: the per-GPU footprint against usable memory and the scenario it was priced in."""
    sc = ctx.target_scenario
    return {
        "weight_bytes_per_gpu": round(mem.weight_bytes_per_gpu),
        "kv_cache_bytes_per_gpu": round(mem.kv_cache_bytes_per_gpu),
        "activation_bytes_per_gpu": round(mem.activation_bytes_per_gpu),
        "kv_bytes_per_sequence_per_gpu": round(mem.kv_bytes_per_sequence_per_gpu),
        "usable_bytes": round(mem.usable_bytes),
        "hbm_bytes": round(mem.hbm_bytes),
        "decode_concurrency": sc.decode_concurrency,
        "context_tokens": sc.context,
        "max_decode_concurrency": mem.max_decode_concurrency,
        "tp": sc.tp,
        "ep": sc.ep,
        "pp": sc.pp,
        "gpu": ctx.gpu,
    }


def _fit_advice(ctx: Context, mem, found, ev: dict) -> tuple[list[str], list]:
    """CL801's details (the footprint, then the smallest deployment that fits or that none does) and its fix."""
    sc = ctx.target_scenario
    details = [
        f"est. {_gb(mem.weight_bytes_per_gpu)} weights + {_gb(mem.kv_cache_bytes_per_gpu)} KV cache "
        f"({sc.decode_concurrency} seq x {sc.context:,} tokens) + {_gb(mem.activation_bytes_per_gpu)} activations "
        f"per GPU ({ctx.analysis.label()})"
    ]
    fixes = []
    # concurrency counts sequences per attention group (colint.analysis.scenario); advice for another layout keeps
    # the replica's sequences (a layout with fewer attention groups holds more in each)
    total = replica_sequences(sc)
    per_group = (
        f" ({sc.decode_concurrency} per attention group x {sc.attention_dp_groups})"
        if total != sc.decode_concurrency
        else ""
    )
    if found is not None:
        tp, ep, pp, fit = found
        details.append(
            f"smallest deployment that fits the same {total:,} seq per replica{per_group} x {sc.context:,} tokens: "
            f"{_layout(tp, ep, pp)}, est. {_gb(fit.total_bytes)} per GPU (--tp/--ep/--pp, or tp/ep/pp in "
            f"[tool.colint])"
        )
        ev.update(fit_tp=tp, fit_ep=ep, fit_pp=pp)  # parallel sizes (unitless counts)
        fixes.append(fix(f"deploy with {_layout(tp, ep, pp)}", "display"))
    else:
        details.append(
            f"no deployment of up to {int(ctx.option('max_candidates'))} candidates (tp/ep within the "
            f"{ctx.target_profile.domain_size}-GPU {ctx.target_profile.domain_noun}, pp up to {max(COMMON_PP)}) fits the scenario"
        )
    return details, fixes
