"""`--format text`: one line per finding, its details and fixes indented, then a summary.

``path:line:col: CODE severity message`` — the shape editors and terminals link to.
Colour only when writing to a terminal. Text from the file (keys, values, the path) goes through
:mod:`colint.reporters.escape`: control characters escaped, no line a GitHub workflow command.
"""

from __future__ import annotations

from colint.reporters.escape import control, workflow_safe

_COLOURS = {"error": "red", "warning": "yellow", "info": "cyan"}


def fix_line(fx) -> str:
    """``fix (safety): title [key old → new, ...]`` (the edits left out when the title already says them)."""
    edits = ", ".join(f"{e.key} {e.old} → {e.new}" for e in fx.edits)
    return control(f"fix ({fx.safety}): {fx.title}" + (f" [{edits}]" if edits and edits not in fx.title else ""))


def render(results, summary: dict, *, colour: bool = False, context_line: str | None = None) -> str:
    import click

    def style(text: str, **kw) -> str:
        return click.style(text, **kw) if colour else text

    out: list[str] = []
    for r in results:
        if r.error is not None:
            out.append(style(control(r.error.located(r.path)), fg="red", bold=True))
            continue
        path = control(r.path)
        for f in r.findings:
            where = path
            if f.line is not None:
                where += f":{f.line}:{f.column or 1}"
            gpu = f" [{control(f.gpu)}]" if f.gpu else ""
            out.append(f"{style(where, bold=True)}: {style(f.code, bold=True)} "
                       f"{style(f.severity, fg=_COLOURS[f.severity])} {control(f.message)}{gpu}")
            for d in f.details:
                out.append(f"    {control(d)}")
            for fx in f.fixes:
                out.append(f"    {fix_line(fx)}")
    n = summary["errors"] + summary["warnings"] + summary["infos"]
    line = (f"{n} finding{'s' if n != 1 else ''}: {summary['errors']} error{'s' if summary['errors'] != 1 else ''}, "
            f"{summary['warnings']} warning{'s' if summary['warnings'] != 1 else ''}, "
            f"{summary['infos']} info{'s' if summary['infos'] != 1 else ''}")
    failed = sum(r.error is not None for r in results)
    if failed:
        line += f"; {failed} file{'s' if failed != 1 else ''} could not be checked"
    if context_line:
        line += f" ({control(context_line)})"
    out.append(line)
    return "\n".join(workflow_safe(x) for x in out)
