"""`colint suggest` as text: the original, the search, and a table of the verified variants."""

from __future__ import annotations


def _fmt_params(n: int) -> str:
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.1f}M"


def _frontier_cell(ce: dict) -> str:
    t = ce.get("frontier_tokens_per_s_per_gpu")
    if t is None:
        return "out of reach"
    d = ce.get("score_delta_pct")
    return f"{t:,.0f} ({-d:+.1f}%)" if d is not None else f"{t:,.0f}"


def render(r, prefill_weight: float) -> str:
    """``r``: a colint.suggesting.search.SuggestResult; ``prefill_weight``: the objective's weight of prefill."""
    o = r.original
    e = o["estimates"]
    f = o["findings"]
    lines = [
        f"colint suggest: {r.path} ({r.label})",
        f"original: {o['params_total']:,} params; prefill {e['prefill_tokens_per_s']:,.0f} tok/s; "
        f"decode step {e['decode_step_s'] * 1e3:.2f} ms; {f['error']} errors, {f['warning']} warnings, "
        f"{f['info']} infos",
        f"searched {r.searched:,} variants of {', '.join(r.axes) or 'nothing'}: {r.within_budget:,} within "
        f"±{r.budget_pct:g}% params; verified {r.verified}, {len(r.candidates)} pass every rule with no warnings "
        f"({r.seconds:.2f} s)",
        f"ranked by estimated step time per parameter (objective {r.objective}: prefill and decode weighted "
        f"{prefill_weight:g}/{1 - prefill_weight:g}; a variant does not win by being "
        "smaller)"
        if r.objective != "frontier"
        else f"ranked by the estimated tok/s/GPU of each variant's throughput-interactivity frontier at "
        f"{r.at_interactivity:g} tok/s/user on {r.gpu} (colint pareto, aggregated serving; original: "
        + (
            f"{e['frontier_tokens_per_s_per_gpu']:,.0f} tok/s/GPU)"
            if e.get("frontier_tokens_per_s_per_gpu")
            else "out of reach)"
        ),
    ]
    for n in r.notes:
        lines.append(f"note: {n}")
    if not r.candidates:
        lines.append(
            "no variant within the budget passes every rule without warnings"
            + (" (the original's warnings may not depend on the searched dimensions)" if f["warning"] else "")
        )
        return "\n".join(lines)
    frontier_col = r.objective == "frontier"
    rows = [
        (
            "#",
            "params",
            "Δparams",
            "prefill tok/s",
            "Δ",
            "decode step",
            "Δ",
            f"tok/s/GPU@{r.at_interactivity:g}" if frontier_col else "Δscore",
            "edits",
        )
    ]
    for i, c in enumerate(r.candidates, 1):
        ce = c.estimates
        edits = ", ".join(f"{k} {o['values'].get(k, '?')}→{v}" for k, v in c.edits.items())
        rows.append(
            (
                str(i),
                _fmt_params(c.params_total),
                f"{c.params_delta_pct:+.2f}%",
                f"{ce['prefill_tokens_per_s']:,.0f}",
                f"{ce.get('prefill_tokens_per_s_delta_pct', 0):+.2f}%",
                f"{ce['decode_step_s'] * 1e3:.2f} ms",
                f"{ce.get('decode_step_s_delta_pct', 0):+.2f}%",
                _frontier_cell(ce) if frontier_col else f"{ce['score_delta_pct']:+.2f}%",
                edits,
            )
        )
    widths = [max(len(row[j]) for row in rows) for j in range(len(rows[0]))]
    lines.append("")
    for row in rows:
        lines.append(
            "  ".join(
                cell.ljust(widths[j]) if j == len(row) - 1 else cell.rjust(widths[j]) for j, cell in enumerate(row)
            ).rstrip()
        )
    lines.append("estimates: step times from colint's GEMM time model, not measurements")
    return "\n".join(lines)
