"""`--output-format markdown`: a GitHub-flavoured Markdown table, for a job's step summary.

GitHub renders ``$GITHUB_STEP_SUMMARY`` as Markdown; annotations stop at 10 errors and 10 warnings
per step, so the summary is where every finding of a run is listed::

    ### colint: 3 findings (0 errors, 2 warnings, 1 info)

    | | code | location | finding |
    |---|---|---|---|
    | ⚠️ warning | [CL201](https://.../docs/rules.md#cl201) | `config.json:12:3` `intermediate_size` | intermediate_size 11008 is ... [b200] |

then the files that could not be checked, those not checked (not decoder LLMs), and the run's
estimate context once. Every value from a config file is shown as text (``cell``: markup escaped;
``code``: inside a code span), never as markup of its own.
"""

from __future__ import annotations

from colint.util.escape import control, md_inline
from colint.reporters.sarif import display_path, help_uri
from colint.reporters.text import summary_line

ICONS = {"error": "❌ error", "warning": "⚠️ warning", "info": "ℹ️ info"}


def code(text: str) -> str:
    """Text for a code span in a table cell: one line, control characters escaped, ``|`` escaped (the
    table's own syntax), no backtick (it would close the span)."""
    return " ".join(control(str(text)).split()).replace("|", "\\|").replace("`", "'")


def cell(text: str) -> str:
    """Plain text in a table cell: every character Markdown or HTML would read as markup escaped
    (colint.util.escape.md_inline), so a key or value from a config cannot open a link, a tag or
    a code block in the summary."""
    return md_inline(str(text))


def render(results, summary: dict, *, labels=(), cwd: str | None = None) -> str:
    n = summary["errors"] + summary["warnings"] + summary["infos"]
    out = [
        f"### colint: {n} finding{'s' if n != 1 else ''} ({summary['errors']} error"
        f"{'s' if summary['errors'] != 1 else ''}, {summary['warnings']} warning"
        f"{'s' if summary['warnings'] != 1 else ''}, {summary['infos']} info{'s' if summary['infos'] != 1 else ''})",
        "",
    ]
    rows = []
    for r in results:
        if r.error is not None or getattr(r, "skipped", None) is not None:
            continue
        path = display_path(r.path, cwd)
        for f in r.findings:
            where = path + (f":{f.line}:{f.column or 1}" if f.line is not None else "")
            key = f" `{code(f.key)}`" if f.key else ""
            gpu = f" [{f.gpu}]" if f.gpu else ""
            rows.append(
                f"| {ICONS[f.severity]} | [{f.code}]({help_uri(f.code)}) | `{code(where)}`{key} "
                f"| {cell(f.message + gpu)} |"
            )
    if rows:
        out += ["| | code | location | finding |", "|---|---|---|---|", *rows, ""]
    else:
        out += ["No findings.", ""]
    errors = [r for r in results if r.error is not None]
    if errors:
        out += ["**Not checked (errors):**", ""]
        out += [
            f"- `{code(display_path(r.path, cwd))}`: {cell(r.error.located(display_path(r.path, cwd)))}" for r in errors
        ]
        out.append("")
    skipped = [r for r in results if getattr(r, "skipped", None) is not None]
    if skipped:
        out += [
            "<details><summary>"
            + cell(f"{len(skipped)} file{'s' if len(skipped) != 1 else ''} not checked (not decoder LLM configs)")
            + "</summary>",
            "",
        ]
        out += [f"- `{code(display_path(r.path, cwd))}`: {cell(r.skipped.message())}" for r in skipped]
        out += ["", "</details>", ""]
    out.append(cell(summary_line(results, summary)))
    out += [
        f"<sub>{cell(label)} (colint's GEMM time model: estimates, not measurements)</sub>"
        for label in labels
        if any(f.gpu for r in results for f in r.findings)
    ]
    return "\n".join(out)
