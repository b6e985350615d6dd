"""What a command writes: one-line errors and their exit code, text made safe for a terminal or CI log,
reports to stdout or a file (atomically, never half-written), and the report of ``colint check`` picked
from ``reporters.REPORTERS``. colint.cli.main's commands call these; nothing here computes a finding."""

from __future__ import annotations

from collections.abc import Callable

import click

from colint.reporters import REPORTERS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def escape(text: str) -> str:
    from colint.util.escape import control, workflow_safe

    return workflow_safe(control(text))


def escape_lines(text: str) -> str:
    """A multi-line text report with what came from files made safe for a terminal or CI log."""
    from colint.util.escape import log_lines

    return log_lines(text)


def fail(message: str) -> click.exceptions.Exit:
    """Print ``message`` (one line, stderr) and return the exit (2) for the caller to raise."""
    click.echo(escape(message), err=True)
    return click.exceptions.Exit(EXIT_ERROR)


def fail_with(exc) -> click.exceptions.Exit:
    """fail for a ColintError: located when it names a file, else ``colint: error: message``."""
    return fail(f"colint: error: {exc.message}" if exc.path is None else exc.located())


def echo_errors(results) -> int:
    """Print the located error of every file that could not be checked (stderr), as plain `check` reports them;
    return how many. For the modes whose output is not a report (--diff, --write-baseline, --statistics)."""
    failed = [r for r in results if r.error is not None]
    for r in failed:
        click.echo(escape(r.error.located(r.path)), err=True)
    return len(failed)


def write_atomic(path: str, text: str | bytes, expect: bytes | None = None) -> None:
    from colint.util.fileio import write_atomic as write

    write(path, text, expect=expect)


def write_or_fail(path: str, text: str | bytes, what: str = "") -> None:
    """Write ``path`` atomically, or end the command with ``path: error: cannot write{what}: reason``."""
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise fail(f"{path}: error: cannot write{what}: {exc.strerror or exc}") from None


def write_or_echo(text: str, output: str | None) -> None:
    """A CSV result (gemm/ops --from-csv): to ``output`` atomically, else to stdout as it is."""
    if output:
        write_or_fail(output, text)
    else:
        click.echo(text, nl=False)


def emit(report: str, output, colour: bool = False) -> None:
    if output:
        write_or_fail(output, report + "\n", " report")
    elif report:
        click.echo(report, color=colour or None)  # None: click strips escapes off a non-terminal


def render_report(
    fmt: str,
    results,
    summ: dict,
    groups,
    *,
    statistics: bool,
    colour: bool,
    quiet: bool = False,
    verbose: bool = False,
    show_fixes: bool = False,
    labels: bool = True,
) -> str:
    """The report of ``results`` in ``fmt``; ``labels``: with the estimate context of their GPUs (a caller that prints
    it already, `check --base`'s deltas, passes False)."""
    if statistics:
        from colint.engine.checking import statistics as stats

        rows = stats(results)
        if fmt == "json":
            import json

            return json.dumps(rows, indent=2)
        return (
            "\n".join(f"{r['count']:>5}  {r['code']}  {r['severity']:<7}  {r['name']}" for r in rows) or "no findings"
        )
    from colint.engine.checking import estimate_labels
    from colint.reporters import ReportInput
    from colint.rules import all_rules

    context = tuple(estimate_labels(results, groups)) if labels else ()
    ri = ReportInput(
        rules=all_rules, colour=colour, labels=context, quiet=quiet, show_fixes=show_fixes, verbose=verbose
    )
    return REPORTERS[fmt](results, summ, ri)


def write_report(output: str, sections: list[dict], chart: str | None) -> None:
    """`colint report`'s files: the HTML report of every section, or one chart (.png/.svg) per section
    (with several GPUs, one file each: x-b200.png, x-h100-sxm.png). Each written atomically, then named."""
    import os
    from functools import partial

    try:
        from colint.reporters.html_report import render_chart, render_html
    except ImportError as exc:
        raise fail(
            f"colint: error: `colint report` needs matplotlib ({exc}): pip install 'colint-llm[report]'"
        ) from None
    stem, ext = os.path.splitext(output)
    outputs: list[tuple[str, Callable[[], str | bytes]]]
    if ext.lower() in (".png", ".svg"):
        outputs = [
            (
                output if len(sections) == 1 else f"{stem}-{d['gpu']}{ext.lower()}",
                partial(render_chart, d, chart or "roofline", ext.lower()[1:]),
            )
            for d in sections
        ]
    else:
        outputs = [(output, partial(render_html, sections))]
    for out_path, render in outputs:
        write_or_fail(out_path, render())
        click.echo(f"colint: wrote {out_path}", err=True)
