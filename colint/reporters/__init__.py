"""Reporters: format findings and inspections. They never compute.

``REPORTERS`` maps each ``colint check --format`` to the function that renders it; every renderer
takes ``(results, summary, report_input)`` and imports its module only when called, so a text run
never loads the SARIF code. Adding an output format: a module here with a ``render`` function, one
row in ``REPORTERS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from colint.util.records import dataclass


@dataclass(frozen=True, kw_only=True)
class ReportInput:
    """What some formats need beside the results: the rule table (SARIF), colour and the estimates'
    context line (text)."""

    rules: Callable[[], dict] = dict  # called only by the formats that list rules
    colour: bool = False
    labels: tuple[str, ...] = ()  # the estimate contexts (``estimate: b200, ...``), printed once per run
    quiet: bool = False  # findings and errors only
    show_fixes: bool = False  # concise: the fixes too
    verbose: bool = False  # also the files skipped as not decoder LLM configs


def _text(results, summ: dict, ri: ReportInput, concise: bool = False) -> str:
    from colint.reporters.text import render

    return render(
        results,
        summ,
        colour=ri.colour,
        labels=ri.labels,
        concise=concise,
        quiet=ri.quiet,
        show_fixes=ri.show_fixes,
        verbose=ri.verbose,
    )


def _concise(results, summ: dict, ri: ReportInput) -> str:
    return _text(results, summ, ri, concise=True)


def _markdown(results, summ: dict, ri: ReportInput) -> str:
    from colint.reporters.markdown import render

    return render(results, summ, labels=ri.labels)


def _json(results, summ: dict, ri: ReportInput) -> str:
    from colint.reporters.json_report import render

    return render(results, summ)


def _github(results, summ: dict, ri: ReportInput) -> str:
    from colint.reporters.github import render

    return render(results, summ)


def _sarif(results, summ: dict, ri: ReportInput) -> str:
    from colint.reporters.sarif import render

    return render(results, ri.rules())


def _gitlab(results, summ: dict, ri: ReportInput) -> str:
    from colint.reporters.gitlab import render

    return render(results)


REPORTERS: dict[str, Callable[[Any, dict, ReportInput], str]] = {
    "full": _text,
    "concise": _concise,
    "text": _text,  # the old name of "full"
    "json": _json,
    "github": _github,
    "sarif": _sarif,
    "gitlab": _gitlab,
    "markdown": _markdown,
}
