"""`colint report`: the numbers behind the report's charts, computed from a Workload.

Pure data (dicts of floats and strings), no drawing: colint.reporters.html_report draws
them with matplotlib. Every time here is an ESTIMATE of colint's GEMM time model.

- ``roofline(w)``: every weight GEMM of the model as a point per regime (arithmetic
  intensity, FLOP/B; attained FLOP/s = FLOPs / estimated time), the HBM roof and the compute
  roof and ridge of each format the GPU runs natively.
- ``time_breakdown(w)``: where each step's estimated time goes — attention projections,
  attention core, FFN (dense FFN, shared experts, routers), routed experts, LM head, collectives
  (TP all-reduces, EP dispatch/combine) and overheads (elementwise passes, kernel launches).
- ``pipeline_balance(w)``: for pp = 2..16, the imbalance (slowest stage / mean − 1) of the
  even split of the decoder layers and of the best contiguous split, in estimated prefill
  and decode time per layer (embedding on the first stage, LM head on the last).
- ``report_file(path, opts, ...)``: what ``colint report`` draws for one file: the file checked (strict), then
  one ``report_data`` section per target GPU.
- ``frontier_chart(frontiers)``: the throughput–interactivity frontier of the design (and of a
  compared one) on the GPU, from colint.analysis.frontier: every point that fits, the frontier,
  and where along it the deployment changes (the points the chart labels).
"""

from __future__ import annotations

from typing import Any

from colint.analysis.frontier import INTERACTIVITY_LEVELS, frontier
from colint.analysis.serving import default_serving
from colint.analysis.inventory import param_counts
from colint.analysis.pipeline import best_partition, evaluate, even_sizes
from colint.analysis.workload import analyse
from colint.engine.checking import FileResult, build_targets, check_file
from colint.errors import ColintError
from colint.design.pareto import load_design, parse_variants
from colint.engine.settings import Settings

PP_RANGE = range(2, 17)  # pipeline sizes charted
# The pipeline table is an exact split per pp and regime (O(pp * layers * log layers)) and the charts draw every
# layer: 1,000 layers (the deepest published transformer, DeepNet) take as long as 32; 3,000 took 20 s and
# 100,000 over 100 s. Deeper stacks are refused with this limit named (colint check reads up to 100,000).
MAX_REPORT_LAYERS = 1_000
COMPONENTS = ("attention projections", "attention core", "FFN", "experts", "LM head", "collectives", "overheads")


def roofline(w) -> dict[str, Any]:
    p = w.profile
    points = []
    for regime in ("prefill", "decode"):
        step_s = w.steps[regime].estimate_s or 1.0
        for row in w.gemms[regime]:
            t = row.time
            points.append(
                {
                    "regime": regime,
                    "name": row.name,
                    "kind": row.kind or "lm_head",
                    "dtype": row.dtype,
                    "m": row.m,
                    "n": row.n,
                    "k": row.k,
                    "arithmetic_intensity": t.arithmetic_intensity,
                    "attained_flops_per_s": t.flops / t.estimate_s if t.estimate_s else 0.0,
                    "sol_flops_per_s": t.flops / t.sol_s if t.sol_s else 0.0,
                    "bound": t.bound,
                    "step_share": row.total_s / step_s,
                }
            )
    roofs = [
        {"format": f, "peak_flops_per_s": p.peak_flops(f), "ridge": p.ridge(f)}
        for f in sorted(p.peak_tflops, key=lambda f: p.peak_tflops[f])
    ]
    return {
        "gpu": p.name,
        "memory_bytes_per_s": p.memory_bytes_per_s,
        "roofs": roofs,
        "gemm_format": w.scenario.gemm_format,
        "points": points,
        "label": w.label(),
    }


def _split_gemm_scale(w, regime: str) -> dict[tuple[str, str], float]:
    """(kind, component) -> the layer's GEMM time over its rows' (1 but where two micro-batches run the
    layer: colint.analysis.overlap prices each half's GEMMs at half the rows, which ``w.gemms`` does not show)."""
    rows: dict[tuple[str, str], float] = {}
    for row in w.gemms[regime]:
        rows[(row.kind, row.component)] = rows.get((row.kind, row.component), 0.0) + row.layer_s
    out = {}
    for kind, parts in w.layer_parts.get(regime, {}).items():
        for component, part in (("attention", "attention_gemms"), ("ffn", "ffn_gemms")):
            have = rows.get((kind, component), 0.0)
            if have and parts[part] != have:
                out[(kind, component)] = parts[part] / have
    return out


def time_breakdown(w) -> dict[str, Any]:
    out: dict[str, Any] = {"components": list(COMPONENTS), "regimes": {}, "label": w.label()}
    for regime in ("decode", "prefill"):
        step = w.steps[regime]
        parts = dict.fromkeys(COMPONENTS, 0.0)
        scale = _split_gemm_scale(w, regime)
        for row in w.gemms[regime]:
            t = row.total_s * scale.get((row.kind, row.component), 1.0)
            if row.kind == "":
                parts["LM head"] += t
            elif row.component == "attention":
                parts["attention projections"] += t
            elif row.parallel == "expert":
                parts["experts"] += t
            else:
                parts["FFN"] += t
        parts["attention core"] = step.attention_core_s
        parts["collectives"] = step.comm_s
        parts["overheads"] = max(0.0, step.estimate_s - sum(parts.values()))
        out["regimes"][regime] = {
            "step_s": step.estimate_s,
            "tokens": step.tokens,
            "seconds": parts,
            "shares": {k: (v / step.estimate_s if step.estimate_s else 0.0) for k, v in parts.items()},
        }
    return out


def pipeline_balance(w) -> dict[str, Any]:

    n = len(w.layer_costs)
    rows = []
    for pp in PP_RANGE:
        if pp > n:
            break
        row: dict[str, Any] = {"pp": pp}
        for regime, attr in (("prefill", "prefill_s"), ("decode", "decode_s")):
            costs = [getattr(c, attr) for c in w.layer_costs]
            first, last = getattr(w.embedding_cost, attr), getattr(w.lm_head_cost, attr)
            best = best_partition(costs, pp, first, last)
            even = even_sizes(n, pp)
            row[f"{regime}_best_imbalance"] = best.imbalance if best else None
            row[f"{regime}_best_sizes"] = list(best.sizes) if best else None
            row[f"{regime}_even_imbalance"] = evaluate(costs, even, first, last).imbalance if even else None
        rows.append(row)
    return {"layers": n, "rows": rows, "label": w.label()}


def frontier_chart(frontiers) -> dict[str, Any]:
    """Chart data of one or two designs' frontiers on one GPU (colint.analysis.frontier.Frontier)."""
    designs = []
    for f in frontiers:
        front, labelled, last = [], [], None
        for p in sorted(f.frontier, key=lambda p: p.tokens_per_s_per_user):
            row = {
                "tokens_per_s_per_user": p.tokens_per_s_per_user,
                "tokens_per_s_per_gpu": p.tokens_per_s_per_gpu,
                "deployment": p.deployment.label(),
                "concurrency": p.concurrency,
            }
            front.append(row)
            if p.deployment != last:  # the first (highest-throughput) point of each deployment on the frontier
                labelled.append(row)
                last = p.deployment
        name = f.path + (" [" + ", ".join(f"{k}={v}" for k, v in f.variant.items()) + "]" if f.variant else "")
        designs.append(
            {
                "name": name,
                "frontier": front,
                "labelled": labelled,
                "points": [(p.tokens_per_s_per_user, p.tokens_per_s_per_gpu) for p in f.points],
                "dropped": f.dropped,
            }
        )
    f0 = frontiers[0]
    return {
        "gpu": f0.gpu,
        "domain_size": f0.domain_size,
        "total_gpus": f0.total_gpus,
        "label": f0.label,
        "serving": f0.serving_label(),
        "designs": designs,
        "levels": list(INTERACTIVITY_LEVELS),
    }


def model_name(path: str, spec) -> str:
    """What the charts call the model: the file's name, or its folder's for a ``config.json`` (a Hugging Face
    repository's), with the model type."""
    import os

    base = os.path.basename(path)
    stem = os.path.splitext(base)[0]
    if stem in ("config", "params", "-") or not stem:
        stem = os.path.basename(os.path.dirname(os.path.abspath(path))) or stem
    kind = spec.model_type or spec.format
    return f"{stem} ({kind})" if kind and kind.replace("_", "-") not in stem.lower().replace("_", "-") else stem


def deployment(scenario) -> str:
    """Format and parallelism of the charted deployment: ``bf16, tp=8, ep=8`` (``bf16, 1 GPU``)."""
    par = ", ".join(f"{k}={getattr(scenario, k)}" for k in ("tp", "kvp", "ep", "pp") if getattr(scenario, k) > 1)
    return f"{scenario.gemm_format}, {par or '1 GPU'}, {scenario.name} scenario"


def report_data(path: str, spec, w, findings, compare=None) -> dict[str, Any]:
    """Everything the report shows, for one file on one GPU; ``compare``: (path, variant, spec) of a
    second design whose frontier the frontier chart draws beside this one's."""
    pc = param_counts(spec)
    title = {"model": model_name(path, spec), "gpu": w.profile.name, "deployment": deployment(w.scenario)}
    steps = {
        r: {"estimate_s": s.estimate_s, "tokens_per_s": s.tokens_per_s, "ftl_s": s.ftl_s, "tokens": s.tokens}
        for r, s in w.steps.items()
    }
    # the frontier served as `colint pareto` serves by default: aggregated, each request's prefill charged (issue 31)
    served = default_serving(w.scenario.context)
    return {
        "path": path,
        "model_type": spec.model_type,
        "format": spec.format,
        "gpu": w.profile.name,
        "gpu_name": getattr(w.profile, "display_name", w.profile.name),
        "label": w.label(),
        "params_total": pc.total,
        "params_active": pc.active_per_token,
        "layers": spec.num_layers,
        "hidden_size": spec.hidden_size,
        "steps": steps,
        "notes": list(w.notes),
        "kv_cache_bytes_per_token": w.kv_bytes_per_token,
        "model": title["model"],
        "deployment": title["deployment"],
        "roofline": {**roofline(w), **title},
        "time": {**time_breakdown(w), **title},
        "pipeline": {**pipeline_balance(w), **title},
        "frontier": {
            **frontier_chart(
                [frontier(spec, w.profile, w.scenario, path, serving=served)]
                + (
                    [frontier(compare[2], w.profile, w.scenario, compare[0], compare[1], serving=served)]
                    if compare
                    else []
                )
            ),
            **title,
        },
        "findings": [f.public() for f in findings],
    }


def report_file(
    path: str, opts: Settings, compare_path: str | None = None, variants: tuple[str, ...] = ()
) -> tuple[list[dict[str, Any]], FileResult]:
    """The sections of ``colint report`` for ``path`` (one per target GPU) and the file's check result (for the
    exit code); ``compare_path``/``variants``: the second design the frontier chart draws. Raises the file's
    ColintError, or one located at ``num_layers`` for a stack deeper than MAX_REPORT_LAYERS."""
    targets = build_targets(opts)
    result = check_file(path, targets, opts)
    if result.error is not None:
        raise result.error
    if result.spec.num_layers > MAX_REPORT_LAYERS:
        src = result.spec.sources.get("num_layers")
        raise ColintError(
            f"`colint report` charts stacks of up to {MAX_REPORT_LAYERS:,} layers; this one has "
            f"{result.spec.num_layers:,} (`colint check` reads it)",
            path=path,
            line=getattr(src, "line", None) or 1,
            column=getattr(src, "column", None) or 1,
        )
    other = None
    if compare_path or variants:
        variant = parse_variants(variants)
        other = (
            compare_path or path,
            variant,
            load_design(compare_path or path, variant, input_format=opts.input_format, vocab_size=opts.vocab_size),
        )
    sections = [
        report_data(
            path,
            result.spec,
            analyse(result.spec, t.profile, t.scenario),
            [f for f in result.findings if f.gpu in (None, t.gpu)],
            compare=other,
        )
        for t in targets
    ]
    return sections, result
