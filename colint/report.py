"""`colint report`: the numbers behind the report's charts, computed from a Workload.

Pure data (dicts of floats and strings), no drawing: colint.reporters.report_html draws
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
"""

from __future__ import annotations

from typing import Any

PP_RANGE = range(2, 17)  # pipeline sizes charted
COMPONENTS = ("attention projections", "attention core", "FFN", "experts", "LM head", "collectives", "overheads")


def roofline(w) -> dict[str, Any]:
    p = w.profile
    points = []
    for regime in ("prefill", "decode"):
        step_s = w.steps[regime].estimate_s or 1.0
        for row in w.gemms[regime]:
            t = row.time
            points.append({
                "regime": regime, "name": row.name, "kind": row.kind or "lm_head", "dtype": row.dtype,
                "m": row.m, "n": row.n, "k": row.k,
                "arithmetic_intensity": t.arithmetic_intensity,
                "attained_flops_per_s": t.flops / t.estimate_s if t.estimate_s else 0.0,
                "sol_flops_per_s": t.flops / t.sol_s if t.sol_s else 0.0,
                "bound": t.bound, "step_share": row.total_s / step_s,
            })
    roofs = [{"format": f, "peak_flops_per_s": p.peak_flops(f), "ridge": p.ridge(f)}
             for f in sorted(p.peak_tflops, key=lambda f: p.peak_tflops[f])]
    return {"gpu": p.name, "memory_bytes_per_s": p.memory_bytes_per_s, "roofs": roofs,
            "gemm_format": w.scenario.gemm_format, "points": points, "label": w.label()}


def time_breakdown(w) -> dict[str, Any]:
    out: dict[str, Any] = {"components": list(COMPONENTS), "regimes": {}, "label": w.label()}
    for regime in ("decode", "prefill"):
        step = w.steps[regime]
        parts = dict.fromkeys(COMPONENTS, 0.0)
        for row in w.gemms[regime]:
            if row.kind == "":
                parts["LM head"] += row.total_s
            elif row.component == "attention":
                parts["attention projections"] += row.total_s
            elif row.parallel == "expert":
                parts["experts"] += row.total_s
            else:
                parts["FFN"] += row.total_s
        parts["attention core"] = step.attention_core_s
        parts["collectives"] = step.comm_s
        parts["overheads"] = max(0.0, step.estimate_s - sum(parts.values()))
        out["regimes"][regime] = {"step_s": step.estimate_s, "tokens": step.tokens, "seconds": parts,
                                  "shares": {k: (v / step.estimate_s if step.estimate_s else 0.0)
                                             for k, v in parts.items()}}
    return out


def pipeline_balance(w) -> dict[str, Any]:
    from colint.analysis.pipeline import best_partition, evaluate, even_sizes

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


def report_data(path: str, spec, w, findings) -> dict[str, Any]:
    """Everything the report shows, for one file on one GPU."""
    from colint.analysis.inventory import param_counts

    pc = param_counts(spec)
    steps = {r: {"estimate_s": s.estimate_s, "tokens_per_s": s.tokens_per_s, "ftl_s": s.ftl_s, "tokens": s.tokens}
             for r, s in w.steps.items()}
    return {
        "path": path, "model_type": spec.model_type, "format": spec.format, "gpu": w.profile.name,
        "gpu_name": getattr(w.profile, "display_name", w.profile.name), "label": w.label(),
        "params_total": pc.total, "params_active": pc.active_per_token, "layers": spec.num_layers,
        "hidden_size": spec.hidden_size, "steps": steps, "notes": list(w.notes),
        "kv_cache_bytes_per_token": w.kv_bytes_per_token,
        "roofline": roofline(w), "time": time_breakdown(w), "pipeline": pipeline_balance(w),
        "findings": [f.public() for f in findings],
    }
