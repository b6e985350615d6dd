"""Text output of `colint pareto`: one frontier table per design and GPU, then the comparison.

Formats only: the numbers come from colint.analysis.frontier (via colint.design.pareto.ParetoResult).
"""

from __future__ import annotations

from colint.analysis.memory import USABLE_HBM_SHARE


def _gb(b: float) -> str:
    return f"{b / 1e9:,.1f} GB"


def _ms(s: float) -> str:
    return f"{s * 1e3:,.0f} ms" if s >= 0.1 else f"{s * 1e3:,.1f} ms"


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    left = {0, len(rows[0]) - 1}  # deployment and bound read left-aligned
    return [
        "  ".join(c.ljust(widths[j]) if j in left else c.rjust(widths[j]) for j, c in enumerate(r)).rstrip()
        for r in rows
    ]


def render_frontier(f, name: str) -> list[str]:
    lines = [
        f"{name} on {f.gpu} (one scale-up domain of {f.domain_size} GPUs, {f.hbm_bytes / 1e9:g} GB each)",
        f"  {f.serving_label()}",
        f"  {len(f.deployments)} deployments x concurrencies: {len(f.points):,} points fit, {f.dropped:,} "
        f"dropped (do not fit in memory); {len(f.frontier)} on the frontier ({f.seconds:.2f} s)",
    ]
    if f.dropped_ttft:
        lines.append(f"  {f.dropped_ttft:,} points left out: TTFT above {f.serving.ttft_limit_s:g} s")
    if f.unfit_deployments:
        lines.append(f"  no room for one sequence next to the weights: {', '.join(f.unfit_deployments)}")
    for n in f.notes:
        lines.append(f"  note: {n}")
    if not f.frontier:
        if f.total_gpus and f.total_gpus != f.domain_size:
            where = f"of up to {f.total_gpus} GPUs (--total-gpus)"
        else:
            where = f"within one {f.domain_size}-GPU domain"
        lines.append(
            f"  no deployment {where} holds the weights and one sequence"
            + (", or serves within the TTFT limit" if f.dropped_ttft else "")
            + (", or leaves room for a prefill pool" if f.serving.mode == "disaggregated" else "")
            + ": no frontier (a narrower format, --dtype fp8 or nvfp4, or more --total-gpus may)"
        )
        return lines
    mode = f.serving.mode
    piped = mode == "decode" and any(p.ftl_pp > 1 for p in f.frontier)
    rows = [
        (
            "deployment",
            "GPUs",
            "concurrency",
            "tok/s/user",
            "tok/s/GPU",
            "ITL",
            *(("+prefill", "TPOT", "TTFT") if mode == "aggregated" else ()),
            *(("prefill pool", "P:D GPUs", "TTFT") if mode == "disaggregated" else ()),
            *(("FTL",) if mode == "decode" else ()),
            *(("FTL with pp",) if piped else ()),
            "memory/GPU",
            "bound",
        )
    ]
    for p in f.frontier:
        if mode == "aggregated":
            served: tuple[str, ...] = (
                _ms(p.prefill_charge_s),
                _ms(p.tpot_s),
                _ms(p.ttft_s) if p.ttft_s is not None else "-",
            )
        elif mode == "disaggregated" and p.pool:
            pool = p.pool
            served = (
                f"{pool.prefill_instances} x {pool.prefill}",
                f"{pool.prefill_gpus}:{pool.decode_gpus}" + (f" +{pool.idle_gpus} idle" if pool.idle_gpus else ""),
                _ms(p.ttft_s) if p.ttft_s is not None else "-",
            )
        else:
            served = (_ms(p.ftl_s),)
        rows.append(
            (
                p.deployment.label(),
                str(p.deployment.gpus),
                f"{p.concurrency:,}",
                f"{p.tokens_per_s_per_user:,.1f}",
                f"{p.tokens_per_s_per_gpu:,.1f}",
                _ms(p.itl_s),
                *served,
                *((f"{_ms(p.ftl_pipelined_s)} (pp{p.ftl_pp})" if p.ftl_pp > 1 else "-",) if piped else ()),
                _gb(p.memory_bytes_per_gpu),
                p.bound or "",
            )
        )
    lines += ["  " + line for line in _table(rows)]
    return lines


def render_comparison(c: dict) -> list[str]:
    lines = [f"at equal interactivity on {c['gpu']}: B = {c['b']}  vs  A = {c['a']}"]
    rows = [("tok/s/user", "A tok/s/GPU", "B tok/s/GPU", "B / A")]
    for lv in c["levels"]:
        a, b = lv["a_tokens_per_s_per_gpu"], lv["b_tokens_per_s_per_gpu"]
        gain = (
            f"{lv['gain']:.2f}x" if lv["gain"] else ("out of reach" if (a is None) != (b is None) or a is None else "")
        )
        rows.append(
            (
                f"{lv['tokens_per_s_per_user']:g}",
                f"{a:,.0f}" if a is not None else "out of reach",
                f"{b:,.0f}" if b is not None else "out of reach",
                gain,
            )
        )
    widths = [max(len(r[j]) for r in rows) for j in range(4)]
    lines += ["  " + "  ".join(cell.rjust(widths[j]) for j, cell in enumerate(r)) for r in rows]
    return lines


def render(result) -> str:
    lines: list[str] = []
    for name, frs in zip(result.designs, result.frontiers):
        for f in frs:
            if lines:
                lines.append("")
            lines += render_frontier(f, name)
    for c in result.comparisons:
        lines.append("")
        lines += render_comparison(c)
    first = result.frontiers[0][0]
    mode = first.serving.mode
    lines += (
        [""]
        + {
            "decode": [
                "tok/s/user = 1 / decode ITL at that concurrency (sequences per attention-DP group of tp x kvp GPUs); "
                "tok/s/GPU = concurrency x tok/s/user / (tp x kvp); FTL = prefill of one prompt on the same GPUs "
                "(decode serving: never charged to throughput);",
            ],
            "aggregated": [
                "+prefill = the prefill time each decode step carries on average (concurrency / OSL prompts start "
                "per step, each in ceil(ISL / prefill tokens) chunks riding in decode steps: the step at concurrency "
                "+ chunk tokens); tok/s/GPU = concurrency / (ITL + prefill) / (tp x kvp);",
                "tok/s/user = 1 / TPOT, TPOT = ITL + (concurrency - 1) / concurrency x prefill (a sequence's own "
                "prompt rides before its first token); TTFT = the steps a prompt's chunks ride in (no queueing);",
            ],
            "disaggregated": [
                "tok/s/user = 1 / decode ITL; tok/s/GPU = the tokens/s the pools serve / all --total-gpus GPUs, "
                "idle ones too (P:D = prefill:decode GPUs, the prefill pool sized to prefill ISL tokens per OSL "
                "decoded; the pool that falls short sets the pace); TTFT = the prefill deployment's FTL + its KV "
                "cache's transfer to the decode pool (NVLink within one domain; past it, PCIe inside a server of "
                "NVLink-bridged cards, else the scale-out NIC);",
            ],
        }[mode]
        + [
            "kvp = KV (Helix) parallelism: each sequence's KV cache split over kvp GPUs per TP rank (enumerated "
            "where tp reaches the KV heads, or for MLA);",
            *(
                (
                    "FTL with pp (shown when it is lower) = the prompt's chunks pipelined through pp copies of the "
                    "deployment's GPUs in the domain;",
                )
                if mode == "decode"
                else ()
            ),
            f"memory/GPU = weights + KV cache + activations (fits within {USABLE_HBM_SHARE:.0%} of HBM);",
            "ppN = N pipeline stages, each within one scale-up domain, N micro-batches in flight (concurrency = one "
            "micro-batch's sequences; ITL = the stages in sequence): tried where --total-gpus passes one domain.",
            f"every figure is an estimate of colint's step model ({first.label.replace('estimate: ', '', 1)}; "
            "MoE routing balanced, the busiest EP rank sets the step), not a measurement",
        ]
    )
    if any(p.deployment.ep > 1 for frs in result.frontiers for f in frs for p in f.frontier):
        lines.append(
            "EP dispatch/combine: in series with compute (ep_overlap off, the default, as engines run it unless "
            "two-batch overlap is on); --ep-overlap auto overlaps it by two micro-batches where that is faster"
        )
    if any(p.deployment.moe_tp > 1 for frs in result.frontiers for f in frs for p in f.frontier):
        lines.append(
            "experts tpA x epB = each routed expert split over A GPUs (gate/up on N, down on K), the experts spread "
            "over B groups of them (TensorRT-LLM's moe_tp x moe_ep)"
        )
    return "\n".join(lines)
