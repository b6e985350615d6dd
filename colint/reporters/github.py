"""`--format github`: GitHub Actions workflow commands, one annotation per finding.

``::error file=config.json,line=8,col=3,title=colint CL002 (kv-heads-not-divisor)::CL002 message``
with the actions/toolkit escaping (``escapeData`` for the message, ``escapeProperty`` for
property values), 1-based lines and columns, findings grouped per file with ``::group::``.
Severity: error → ``error``, warning → ``warning``, info → ``notice``. GitHub shows at most
10 error and 10 warning annotations per step (50 per job); upload SARIF for the rest.
"""

from __future__ import annotations

from colint.util.escape import control
from colint.reporters.sarif import display_path
from colint.reporters.text import fix_line

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}
PER_STEP_LIMIT = 10  # annotations of one level GitHub displays per step (https://github.com/actions/toolkit/blob/main/docs/problem-matchers.md)


def escape_data(s: str) -> str:
    """actions/toolkit command.ts escapeData: '%' first, then CR and LF."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    """actions/toolkit command.ts escapeProperty: escapeData plus ':' and ','."""
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, **props) -> str:
    """``::level k=v,...::message``; properties that are None are skipped (toolkit toCommandValue)."""
    names = {
        "file": "file",
        "line": "line",
        "end_line": "endLine",
        "col": "col",
        "end_column": "endColumn",
        "title": "title",
    }
    parts = [f"{names[k]}={escape_property(str(v))}" for k, v in props.items() if v is not None and v != ""]
    return f"::{level}{' ' + ','.join(parts) if parts else ''}::{escape_data(message)}"


def _body(f) -> str:
    lines = [control(f"{f.code} {f.message}" + (f" [{f.gpu}]" if f.gpu else ""))]
    lines += [f"  {control(d)}" for d in f.details]
    lines += [f"  {fix_line(fx)}" for fx in f.fixes]
    return "\n".join(lines)


def render(results, summary: dict, *, cwd: str | None = None) -> str:
    out: list[str] = []
    counts = {"error": 0, "warning": 0, "notice": 0}
    for r in results:
        path = control(display_path(r.path, cwd))
        if r.error is not None:
            e = r.error
            counts["error"] += 1
            msg = control(e.message_with_key())
            out.append(
                command(
                    "error", f"error: {msg}", file=path, line=e.line, col=e.column, title="colint: file not checked"
                )
            )
            continue
        skipped = getattr(r, "skipped", None)
        if skipped is not None:
            if skipped.kind == "out-of-scope":  # a model colint does not price: say so on the file, never fail
                out.append(command("notice", skipped.message(), file=path, title="colint: not checked"))
            continue
        if not r.findings:
            continue
        out.append(f"::group::{escape_data('colint: ' + path)}")
        for f in r.findings:
            level = LEVELS[f.severity]
            counts[level] += 1
            out.append(
                command(
                    level,
                    _body(f),
                    file=path,
                    line=f.line,
                    col=f.column if f.line else None,
                    title=f"colint {f.code} ({f.name})",
                )
            )
        out.append("::endgroup::")
    n = summary["errors"] + summary["warnings"] + summary["infos"]
    out.append(
        f"colint: {n} finding{'s' if n != 1 else ''}: {summary['errors']} error(s), "
        f"{summary['warnings']} warning(s), {summary['infos']} info(s)"
    )
    if counts["error"] > PER_STEP_LIMIT or counts["warning"] > PER_STEP_LIMIT:
        out.append(
            f"colint: GitHub shows only {PER_STEP_LIMIT} error and {PER_STEP_LIMIT} warning annotations "
            "per step; upload `--format sarif` to code scanning to see every finding"
        )
    return "\n".join(out)
