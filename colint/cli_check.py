"""`colint check` once its flags are parsed: expand the PATHs, check each group of files under its own
settings, then write a baseline, print a diff, apply fixes, or print the report; return the exit code
(0 clean, 1 findings at/above each group's fail-on, 2 an error)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

import click

from colint.cli_options import with_stdin
from colint.cli_output import (
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


def run_check(paths, flags: Mapping[str, Any], isolated: bool, run: CheckRun) -> int:
    from colint.checking import check_grouped, grouped_exit_code, summary
    from colint.errors import ColintError
    from colint.sources import expand

    fmt = run.fmt or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "full")
    if run.statistics and fmt not in ("full", "concise", "text", "json"):
        raise fail("colint: error: --statistics prints text or json; drop --output-format " + fmt)
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
        from colint.checking import fix_grouped

        unfixed = [r.error is None for r in results]
        try:
            changed = fix_grouped(results, groups, unsafe=run.unsafe_fixes)
        except (ColintError, ValueError) as exc:
            raise fail(f"colint: error: a fix could not be applied: {getattr(exc, 'message', exc)}") from None
        fix_failed = {i: r for i, r in enumerate(results) if unfixed[i] and r.error is not None}
        if run.show_diff:
            return _print_diff(results, changed, run.exit_zero)
        refused = _write_fixes(changed)
        if changed:
            results, groups = check_all(baseline_path=run.baseline)
            for i, r in fix_failed.items():  # a file whose fixing failed keeps that error in the report
                results[i] = r
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
        from colint.checking import unsafe_fixes_left

        left = unsafe_fixes_left(results)  # after the safe fixes: what --unsafe-fixes could still apply
        if left:
            click.echo(f"colint: {left} fix{'es' if left != 1 else ''} available with --unsafe-fixes", err=True)
    if refused:
        return EXIT_ERROR
    code = grouped_exit_code(results, groups)
    return EXIT_CLEAN if run.exit_zero and code == EXIT_FINDINGS else code


def _write_baseline(results, path: str) -> int:
    from colint.suppression import render_baseline

    if echo_errors(results):  # a baseline of the files that could be read would drop the others' findings
        click.echo(f"colint: {path} not written: fix the files above first", err=True)
        return EXIT_ERROR
    text, n = render_baseline(results, path)
    write_or_fail(path, text, " baseline")
    click.echo(f"colint: recorded {n} finding{'s' if n != 1 else ''} in {path}", err=True)
    return EXIT_CLEAN


def _print_diff(results, changed: list[tuple[str, str, str]], exit_zero: bool) -> int:
    from colint.fix_text import unified_diff

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
