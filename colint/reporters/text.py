"""The human formats, ruff's conventions: ``full`` (alias ``text``) and ``concise``.

Both start each finding with ``path:line:col: CODE severity message`` — the shape editors and
terminals link to. ``full`` adds the finding's details and fixes, indented; ``concise`` is one line
per finding (``--show-fixes`` adds the fix lines). The estimate context (GPU, scenario, format,
parallelism) that the rules write into their details is printed once per run, after the summary,
not once per finding. Files that are not decoder LLM configs (colint.triage): an out-of-scope
model is noted on one line; a skipped file only with ``verbose``. ``quiet`` prints the findings and
the errors only. Colour only when asked (colint.reporters.console.use_colour). Text from the file
(keys, values, the path) goes through :mod:`colint.util.escape`: control characters escaped, no
line a GitHub workflow command.
"""

from __future__ import annotations

from colint.util.escape import control, workflow_safe

_COLOURS = {"error": "red", "warning": "yellow", "info": "cyan"}


def fix_line(fx) -> str:
    """``fix (safety): title [key old → new, ...]`` (the edits left out when the title already says them)."""
    edits = ", ".join(f"{e.key} {e.old} → {e.new}" for e in fx.edits)
    return control(f"fix ({fx.safety}): {fx.title}" + (f" [{edits}]" if edits and edits not in fx.title else ""))


def strip_labels(text: str, labels) -> str:
    """Drop the run's estimate context from one detail line: ``(LABEL)`` goes, ``(LABEL, extra)`` keeps
    ``(extra)``."""
    for label in labels:
        if label in text:
            text = text.replace(f" ({label})", "").replace(f"({label}, ", "(").replace(f"({label})", "")
    return text


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def summary_line(results, summary: dict) -> str:
    n = summary["errors"] + summary["warnings"] + summary["infos"]
    line = (
        f"{_plural(n, 'finding')}: {_plural(summary['errors'], 'error')}, "
        f"{_plural(summary['warnings'], 'warning')}, {_plural(summary['infos'], 'info')}"
    )
    failed = sum(r.error is not None for r in results)
    if failed:
        line += f"; {_plural(failed, 'file')} could not be checked"
    out_of_scope = sum(r.skipped is not None and r.skipped.kind == "out-of-scope" for r in results)
    skipped = sum(r.skipped is not None and r.skipped.kind == "skip" for r in results)
    if out_of_scope:
        line += f"; {out_of_scope} out of scope (not decoder LLMs)"
    if skipped:
        line += f"; {skipped} skipped (not LLM architecture configs)"
    return line


def render(
    results,
    summary: dict,
    *,
    colour: bool = False,
    labels=(),
    concise: bool = False,
    quiet: bool = False,
    show_fixes: bool = False,
    verbose: bool = False,
) -> str:
    import click

    def style(text: str, **kw) -> str:
        return click.style(text, **kw) if colour else text

    out: list[str] = []
    used_estimates = False
    for r in results:
        if r.error is not None:
            out.append(style(control(r.error.located(r.path)), fg="red", bold=True))
            continue
        path = control(r.path)
        skipped = getattr(r, "skipped", None)
        if skipped is not None:
            if not quiet and (verbose or skipped.kind == "out-of-scope"):
                out.append(f"{style(path, bold=True)}: {style('note', fg='blue')}: {control(skipped.message())}")
            continue
        for f in r.findings:
            used_estimates = used_estimates or f.gpu is not None
            where = path
            if f.line is not None:
                where += f":{f.line}:{f.column or 1}"
            gpu = f" [{control(f.gpu)}]" if f.gpu else ""
            out.append(
                f"{style(where, bold=True)}: {style(f.code, bold=True)} "
                f"{style(f.severity, fg=_COLOURS[f.severity])} {control(f.message)}{gpu}"
            )
            if not concise:
                out.extend(f"    {control(strip_labels(d, labels))}" for d in f.details)
            if not concise or show_fixes:
                out.extend(f"    {fix_line(fx)}" for fx in f.fixes)
    if not quiet:
        out.append(summary_line(results, summary))
        if used_estimates and labels:
            out.extend(
                f"{control(label)} (colint's GEMM time model; every est. figure is an estimate, not a measurement)"
                if i == 0
                else control(label)
                for i, label in enumerate(labels)
            )
    return "\n".join(workflow_safe(x) for x in out)
