"""The formats of `colint diff` and `colint check --base`: text, Markdown (a job's step summary) and JSON (the shape
``colint schema diff`` describes, docs/diff.schema.json). They format colint.design.diffing's figures and never compute:
the deltas, their percentages and the regressions come with the data."""

from __future__ import annotations

import json
from typing import Any, Optional

from colint.util.escape import control
from colint.reporters.markdown import cell, code
from colint.reporters.sarif import display_path


def count(n: Optional[float]) -> str:
    """A parameter count: 69.233B, 124.4M, 900."""
    if n is None:
        return "-"
    if abs(n) >= 1e9:
        return f"{n / 1e9:.3f}B"
    if abs(n) >= 1e6:
        return f"{n / 1e6:.1f}M"
    return f"{n:,.0f}"


def size(n: Optional[float]) -> str:
    """Bytes in decimal units: 138.5 GB, 327.7 kB."""
    if n is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n:.0f} B"


def seconds(s: Optional[float]) -> str:
    """A step time: 28.04 ms, 1.234 s, 512.3 µs."""
    if s is None:
        return "-"
    if abs(s) >= 1:
        return f"{s:.4g} s"
    if abs(s) >= 1e-3:
        return f"{s * 1e3:.4g} ms"
    return f"{s * 1e6:.4g} µs"


def throughput(t: Optional[float]) -> str:
    return "out of reach" if t is None else f"{t:,.0f}"


def pct(d) -> str:
    p = d.pct
    if p is None:
        return "new" if d.before is None and d.after is not None else ("removed" if d.after is None else "")
    return "=" if p == 0 else f"{p:+.2f}%"


def change(d, fmt, arrow: str = "->") -> str:
    """``before -> after (+x.xx%)``; a side that does not exist shows as -. Digits, units and signs only: safe as
    Markdown without escaping."""
    if d.before is None and d.after is None:
        return fmt(None)
    if d.before == d.after:
        return f"{fmt(d.after)} (=)"
    return f"{fmt(d.before)} {arrow} {fmt(d.after)} ({pct(d)})"


def md_change(d, fmt) -> str:
    return change(d, fmt, "→")


def _title(c, cwd: Optional[str]) -> str:
    where = display_path(c.path, cwd)
    base = f"; base {c.base_name}" if c.base_name and c.status != "added" else ""
    return f"{where} ({c.status}{base})"


# ------------------------------------------------------------------------------------------------ text


def render_text(run, *, threshold_pct: float, cwd: Optional[str] = None) -> str:
    out: list[str] = []
    labels: list[str] = []
    for c in run.configs:
        out.append(control(f"colint: {_title(c, cwd)}"))
        if c.head_error is not None:
            out.append(control(f"  not checked: {c.head_error.located(display_path(c.path, cwd))}"))
            continue
        if c.skipped:
            out.append(control(f"  not checked: {c.skipped}"))
            continue
        if c.base_error:
            out.append(control(f"  base not read: {c.base_error}"))
        out.append(f"  parameters           {change(c.params_total, count)}")
        if c.params_active != c.params_total:
            out.append(f"  active per token     {change(c.params_active, count)}")
        out.append(f"  KV cache per token   {change(c.kv_cache_bytes_per_token, size)} (bf16)")
        for s in c.steps:
            out.append(f"  {s.gpu} at {s.deployment}:")
            for name, d in (("decode", s.decode_s), ("prefill", s.prefill_s)):
                slower = d.pct is not None and d.pct > threshold_pct
                out.append(f"    {name + ' step':<18} {change(d, seconds)}" + ("  <- slower" if slower else ""))
            out.append(f"    {'weights per GPU':<18} {change(s.weight_bytes_per_gpu, size)}")
            if s.note:
                out.append(control(f"    note: {s.note}"))
            if s.label not in labels:
                labels.append(s.label)
        for f in c.frontier or []:
            levels = " / ".join(f"{u:g}" for u, _ in f.levels)
            out.append(f"  frontier on {f.gpu}: tokens/s per GPU at {levels} tokens/s per user")
            out.append("    " + " | ".join(change(d, throughput) for _, d in f.levels))
        out.append(
            f"  findings: {len(c.new)} new, {len(c.fixed)} fixed, {len(c.unchanged)} unchanged"
            + (f" (present at {run.base}: existing, never blocking)" if c.unchanged else "")
        )
        for f in c.fixed:
            out.append(control(f"    fixed: {f.code} {f.message}" + (f" [{f.gpu}]" if f.gpu else "")))
    if run.unchanged_files:
        n = run.unchanged_files
        out.append(f"colint: {n} config{'s' if n != 1 else ''} unchanged since {run.base}: not checked")
    if not run.configs and not run.unchanged_files:
        out.append(f"colint: no model config changed since {run.base}")
    for label in labels:
        out.append(control(f"{label} (colint's step model: estimates, not measurements)"))
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------ markdown


def _md_step(d, threshold_pct: float) -> str:
    text = md_change(d, seconds)
    return f"**{text}**" if d.pct is not None and d.pct > threshold_pct else text


def render_markdown(run, *, threshold_pct: float, cwd: Optional[str] = None) -> str:
    """One table row per config and target GPU; a step slower by more than ``threshold_pct`` is bold."""
    n = len(run.configs)
    slower = run.regressions(threshold_pct)
    out = [
        f"### colint: {n} config{'s' if n != 1 else ''} changed since `{code(run.base)}`"
        + (
            f" ({len(slower)} step{'s' if len(slower) != 1 else ''} slower by more than {threshold_pct:g}%)"
            if slower
            else ""
        ),
        "",
    ]
    rows = []
    notes: list[str] = []
    labels: list[str] = []
    for c in run.configs:
        where = f"`{code(display_path(c.path, cwd))}` ({c.status})"
        found = f"{len(c.new)} / {len(c.fixed)} / {len(c.unchanged)}"
        if c.head_error is not None or c.skipped:
            why = c.head_error.located(display_path(c.path, cwd)) if c.head_error is not None else c.skipped
            rows.append(f"| {where} | | | not checked: {cell(why)} | | | | | |")
            continue
        if c.base_error:
            notes.append(f"- {where}: base not read: {cell(c.base_error)}; every finding counts as new")
        params = md_change(c.params_total, count)
        kv = md_change(c.kv_cache_bytes_per_token, size)
        for s in c.steps or [None]:
            if s is None:
                rows.append(f"| {where} | | | {params} | | {kv} | | | {found} |")
                continue
            rows.append(
                f"| {where} | {cell(s.gpu)} | {cell(s.deployment)} | {params} | "
                f"{md_change(s.weight_bytes_per_gpu, size)} | {kv} | {_md_step(s.decode_s, threshold_pct)} | "
                f"{_md_step(s.prefill_s, threshold_pct)} | {found} |"
            )
            if s.note:
                notes.append(f"- {where} on {cell(s.gpu)}: {cell(s.note)}")
            if s.label not in labels:
                labels.append(s.label)
    if rows:
        out += [
            "| config | GPU | deployment | parameters | weights per GPU | KV cache per token (bf16) | decode step "
            "| prefill step | findings new / fixed / existing |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
    else:
        out += ["No model config changed.", ""]
    frontiers = [(c, f) for c in run.configs for f in c.frontier or []]
    if frontiers:
        levels = [u for u, _ in frontiers[0][1].levels]
        out += [
            "| config | GPU | " + " | ".join(f"tokens/s per GPU at {u:g} tokens/s per user" for u in levels) + " |",
            "|---|---|" + "---|" * len(levels),
        ]
        for c, f in frontiers:
            cells = " | ".join(md_change(d, throughput) for _, d in f.levels)
            out.append(f"| `{code(display_path(c.path, cwd))}` | {cell(f.gpu)} | {cells} |")
        out.append("")
    out += notes + ([""] if notes else [])
    if run.unchanged_files:
        u = run.unchanged_files
        out += [f"{u} config{'s' if u != 1 else ''} unchanged since `{code(run.base)}`: not checked.", ""]
    out += [f"<sub>{cell(label)} (colint's step model: estimates, not measurements)</sub>" for label in labels]
    return "\n".join(out).rstrip("\n") + "\n"


# ------------------------------------------------------------------------------------------------ json


def render_json(data: dict[str, Any]) -> str:
    """``data``: colint.design.diffing.run_public's dict."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
