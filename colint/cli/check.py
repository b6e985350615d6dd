"""`colint check` once its flags are parsed: expand the PATHs, check each group of files under its own
settings, then write a baseline, print a diff, apply fixes, or print the report; return the exit code
(0 clean, 1 findings at/above each group's fail-on, 2 an error)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, Optional

import click

from colint.cli.options import with_stdin
from colint.cli.output import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    echo_errors,
    emit,
    escape,
    fail,
    fail_with,
    render_report,
    write_atomic,
    write_or_fail,
)
from colint.util.records import dataclass


@dataclass(frozen=True, kw_only=True)
class CheckRun:
    """The flags of `colint check` that are not settings: what to read, what to write, how to print."""

    fmt: Optional[str] = None  # None: github under GitHub Actions, else full
    output: Optional[str] = None
    quiet: bool = False
    verbose: bool = False
    show_fixes: bool = False
    color: str = "auto"
    stdin_filename: Optional[str] = None
    strict: bool = False
    statistics: bool = False
    exit_zero: bool = False
    baseline: Optional[str] = None
    write_baseline: Optional[str] = None
    apply_fix: bool = False
    unsafe_fixes: bool = False
    show_diff: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    base: Optional[str] = None  # a git revision: review the change since it (colint.design.diffing)
    frontier: bool = False  # with base: the frontier's throughput before and after
    fail_on_regression: Optional[float] = None  # with base: exit 1 when a step gets slower by more (percent)


def run_check(paths, flags: Mapping[str, Any], isolated: bool, run: CheckRun) -> int:
    from colint.engine.checking import check_grouped, grouped_exit_code
    from colint.errors import ColintError

    fmt = run.fmt or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "full")
    if run.base is None and (run.frontier or run.fail_on_regression is not None):
        raise fail("colint: error: --frontier and --fail-on-regression compare with a base; add --base REF")
    if run.base is not None:
        return _run_base(paths, flags, isolated, run, fmt)
    if run.statistics and fmt not in ("full", "concise", "text", "json"):
        raise fail("colint: error: --statistics prints text or json; drop --output-format " + fmt)
    paths, stdin, settings_dirs = _sources(paths, run)

    def check_all(keep_docs: bool = fmt == "sarif", **kw):
        # a file's Document is read by SARIF (fix regions), --fix and --diff only
        try:
            return check_grouped(
                paths,
                flags,
                isolated=isolated,
                settings_dirs=settings_dirs,
                strict=run.strict,
                parallel=True,
                keep_docs=keep_docs,
                **kw,
            )
        except ColintError as exc:
            raise fail_with(exc) from None

    if run.write_baseline:
        results, _groups = check_all(stdin=stdin, use_baseline=False)
        return _write_baseline(results, run.write_baseline)
    results, groups = check_all(
        fmt == "sarif" or bool(run.apply_fix or run.show_diff), baseline_path=run.baseline, stdin=stdin
    )
    if run.unsafe_fixes and not (run.apply_fix or run.show_diff):
        click.echo("colint: --unsafe-fixes does nothing without --fix or --diff; nothing was changed", err=True)
    refused = False
    if run.apply_fix or run.show_diff:
        changed, fix_failed = _fix(results, groups, run)
        if run.show_diff:
            return _print_diff(results, changed, run.exit_zero)
        refused = _write_fixes(changed)
        if changed:
            results, groups = check_all(baseline_path=run.baseline)
            for i, r in fix_failed.items():  # a file whose fixing failed keeps that error in the report
                results[i] = r
    _report(fmt, results, groups, run)
    if refused:
        return EXIT_ERROR
    code = grouped_exit_code(results, groups)
    return EXIT_CLEAN if run.exit_zero and code == EXIT_FINDINGS else code


def _sources(paths, run: CheckRun) -> tuple[list[str], Any, dict[str, str]]:
    """(the files to check, standard input's text or None, the settings folder of each): the PATHs expanded
    (warnings printed), refused where --fix would rewrite the HF cache or standard input."""
    from colint.engine.sources import expand
    from colint.errors import ColintError

    try:
        found = expand(paths, include=run.include, exclude=run.exclude)
    except ColintError as exc:
        raise fail_with(exc) from None
    for warning in found.warnings:
        click.echo(f"colint: warning: {warning}", err=True)
    if run.apply_fix and any(s.read_only for s in found.sources):
        src = next(s for s in found.sources if s.read_only)
        raise fail(
            f"colint: error: {src.origin}: --fix does not rewrite the Hugging Face cache; copy "
            f"{src.path} out of it, or use --diff"
        )
    settings_dirs = found.settings_dirs()
    paths, stdin = with_stdin(list(found.paths), run.stdin_filename)
    if stdin is not None and (run.apply_fix or run.write_baseline):
        raise fail("colint: error: --fix and --write-baseline need files, not standard input")
    return paths, stdin, settings_dirs


def _fix(results: list, groups: list, run: CheckRun) -> tuple[list[tuple[str, str, str]], dict[int, Any]]:
    """Apply the fixes to the checked files in memory: (what changed, the files whose fixing failed by index)."""
    from colint.engine.checking import fix_grouped
    from colint.errors import ColintError

    unfixed = [r.error is None for r in results]
    try:
        changed = fix_grouped(results, groups, unsafe=run.unsafe_fixes)
    except (ColintError, ValueError) as exc:
        raise fail(f"colint: error: a fix could not be applied: {getattr(exc, 'message', exc)}") from None
    return changed, {i: r for i, r in enumerate(results) if unfixed[i] and r.error is not None}


def _report(fmt: str, results: list, groups: list, run: CheckRun) -> None:
    """Print (or write to --output) the report in ``fmt``; after --fix, say how many unsafe fixes are left."""
    from colint.engine.checking import summary
    from colint.reporters.console import use_colour

    colour = run.output is None and use_colour(run.color, sys.stdout.isatty())
    report = render_report(
        fmt,
        results,
        summary(results),
        groups,
        statistics=run.statistics,
        quiet=run.quiet,
        verbose=run.verbose,
        show_fixes=run.show_fixes,
        colour=colour,
    )
    if run.statistics:  # the counts name no file: the files that could not be checked are told apart
        echo_errors(results)
    emit(report, run.output, colour)
    if run.apply_fix and not run.unsafe_fixes and not run.quiet:
        from colint.engine.checking import unsafe_fixes_left

        left = unsafe_fixes_left(results)  # after the safe fixes: what --unsafe-fixes could still apply
        if left:
            click.echo(f"colint: {left} fix{'es' if left != 1 else ''} available with --unsafe-fixes", err=True)


def _run_base(paths, flags: Mapping[str, Any], isolated: bool, run: CheckRun, fmt: str) -> int:
    """`colint check --base REF`: the change since REF (colint.design.diffing.diff_revision), reported in ``fmt``."""
    assert run.base is not None
    from colint.design.diffing import diff_revision
    from colint.errors import ColintError
    from colint.engine.sources import expand

    for flag, given in (
        ("--fix", run.apply_fix),
        ("--diff", run.show_diff),
        ("--write-baseline", run.write_baseline),
        ("--statistics", run.statistics),
        ("--baseline", run.baseline),
    ):
        if given:
            raise fail(f"colint: error: --base reviews a change; drop {flag}")
    if "-" in paths:
        raise fail("colint: error: --base reads files at a git revision, not standard input")
    try:
        found = expand(paths, include=run.include, exclude=run.exclude) if paths else None
        diff = diff_revision(
            run.base,
            list(found.paths) if found is not None else [],
            flags,
            args=tuple(paths),
            isolated=isolated,
            strict=run.strict,
            settings_dirs=found.settings_dirs() if found is not None else None,
            frontier=run.frontier,
        )
    except ColintError as exc:
        raise fail_with(exc) from None
    if found is not None:
        for warning in found.warnings:
            click.echo(f"colint: warning: {warning}", err=True)
    return report_diff(
        diff, fmt, run.output, fail_on_regression=run.fail_on_regression, exit_zero=run.exit_zero, quiet=run.quiet
    )


def report_diff(
    diff,
    fmt: str,
    output: Optional[str],
    *,
    fail_on_regression: Optional[float],
    exit_zero: bool = False,
    quiet: bool = False,
) -> int:
    """Print a colint.design.diffing.DiffRun in ``fmt`` and return the exit code: text, concise, markdown (the deltas, then
    the new findings), json (``colint schema diff``), github, sarif, gitlab (the new findings alone). Every base that
    could not be read and every step slower than ``fail_on_regression`` is one line on stderr."""
    from colint.engine.checking import summary
    from colint.design.diffing import HIGHLIGHT_SLOWER_PCT, exit_code, run_public
    from colint.reporters import diff_report

    threshold = HIGHLIGHT_SLOWER_PCT if fail_on_regression is None else fail_on_regression
    results = diff.head_results
    if fmt == "json":
        report = diff_report.render_json(run_public(diff, threshold))
    else:
        # the deltas print the estimate context of the same targets: the findings below do not repeat it
        deltas_first = fmt in ("full", "text", "concise", "markdown")
        findings = render_report(
            fmt,
            results,
            summary(results),
            diff.groups[: len(results)],
            statistics=False,
            colour=False,
            quiet=quiet,
            labels=not deltas_first,
        )
        if fmt in ("full", "text", "concise"):
            report = diff_report.render_text(diff, threshold_pct=threshold) + ("\n\n" + findings if results else "")
        elif fmt == "markdown":
            report = diff_report.render_markdown(diff, threshold_pct=threshold) + (
                "\n#### New findings\n\n" + findings if results else ""
            )
        else:
            report = findings
    emit(report, output)
    for c in diff.configs:
        if c.base_error:
            click.echo(
                escape(f"colint: base not read, every finding of {c.path} counts as new: {c.base_error}"), err=True
            )
    code = exit_code(diff, fail_on_regression=fail_on_regression)
    if fail_on_regression is not None:
        for r in diff.regressions(fail_on_regression):
            click.echo(
                escape(
                    f"colint: {r.path}: the {r.step} step on {r.gpu} is {r.pct:.2f}% slower "
                    f"(more than --fail-on-regression {fail_on_regression:g}%)"
                ),
                err=True,
            )
    return EXIT_CLEAN if exit_zero and code == EXIT_FINDINGS else code


def _write_baseline(results, path: str) -> int:
    from colint.engine.suppression import render_baseline

    if echo_errors(results):  # a baseline of the files that could be read would drop the others' findings
        click.echo(f"colint: {path} not written: fix the files above first", err=True)
        return EXIT_ERROR
    text, n = render_baseline(results, path)
    write_or_fail(path, text, " baseline")
    click.echo(f"colint: recorded {n} finding{'s' if n != 1 else ''} in {path}", err=True)
    return EXIT_CLEAN


def _print_diff(results, changed: list[tuple[str, str, str]], exit_zero: bool) -> int:
    from colint.fixing.fix_text import unified_diff

    text = "".join(unified_diff(p, old, new) for p, old, new in changed)
    if text:
        click.echo(text, nl=False)
    if echo_errors(results):
        return EXIT_ERROR
    return EXIT_FINDINGS if changed and not exit_zero else EXIT_CLEAN


def _write_fixes(changed: list[tuple[str, str, str]]) -> bool:
    """Write each fixed file (only if it still holds the text that was checked); True when one was refused."""
    written, refused, done = 0, False, set()
    for p, old, new in changed:
        if os.path.realpath(p) in done:  # the same file named twice (or through a symlink): fixed once
            continue
        done.add(os.path.realpath(p))
        try:
            write_atomic(p, new, expect=old.encode("utf-8"))
            written += 1
        except OSError as exc:
            click.echo(f"{escape(p)}: error: fixed file not written: {escape(exc.strerror or str(exc))}", err=True)
            refused = True
    if written:
        click.echo(f"colint: fixed {written} file{'s' if written != 1 else ''}", err=True)
    return refused
