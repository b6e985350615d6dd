"""What a command line asks for: the settings flags (one click option per Settings field, turned into
the ``flags`` mapping colint.engine.settings.resolve takes) and the PATH arguments (a config file, a checkpoint
or cache folder, a Hub id, standard input). Used by colint.cli.main's commands; never computes."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

import click

from colint.engine.deployment import DEPLOYMENT_SETTINGS, DeploymentSetting
from colint.cli.output import fail, fail_with
from colint.engine.settings import Settings


def _deployment_option(s: DeploymentSetting) -> Callable:
    """The click option of one deployment setting: its flag and earlier spellings, help, and value kind."""
    kinds: dict[str, Any] = {
        "count": {"type": click.IntRange(min=1)},
        "choice": {"type": click.Choice(s.choices)},
        "parallel": {},  # an integer or 'auto': parsed by flags_of
        "str": {},
    }
    return click.option(s.flag, *s.aliases, s.field, default=None, help=s.help, **kinds[s.kind])


# Settings field -> its flag. The option's destination is the field's name, so a new setting is one line here.
OPTIONS: dict[str, Callable] = {
    "gpus": click.option(
        "--gpu",
        "gpus",
        multiple=True,
        help="Target GPU: a profile name, an alias (h200-sxm, 'RTX 4090') or a YAML path; repeat to lint for a fleet. [default: b200]",
    ),
    # the deployment settings: one click option per colint.engine.deployment record (flag, help, old spellings)
    **{s.field: _deployment_option(s) for s in DEPLOYMENT_SETTINGS},
    "select": click.option(
        "--select",
        multiple=True,
        help="Rule codes, prefixes, names or families to run (repeatable; replaces the config's select).",
    ),
    "ignore": click.option(
        "--ignore",
        multiple=True,
        help="Rule codes, prefixes, names or families to skip (repeatable; adds to the config's ignore).",
    ),
    "extend_select": click.option(
        "--extend-select", multiple=True, help="Rules to run in addition to select (repeatable)."
    ),
    "fail_on": click.option(
        "--fail-on",
        type=click.Choice(["error", "warning", "info", "never"]),
        default=None,
        help="Exit 1 when a finding at or above this severity is reported. [default: warning]",
    ),
    "input_format": click.option(
        "--input-format", default=None, help="Force the input format instead of detecting it."
    ),
    "vocab_size": click.option(
        "--vocab-size",
        type=click.IntRange(min=1),
        default=None,
        help="Vocabulary size for formats whose vocab comes from a tokenizer.",
    ),
    "close_advice": click.option(
        "--close-advice/--no-close-advice",
        default=None,
        help="Re-check every fix at the state it leads to before showing it. [default: on]",
    ),
}
SCENARIO = tuple(s.field for s in DEPLOYMENT_SETTINGS)
INPUT = ("input_format", "vocab_size")
ISOLATED = click.option("--isolated", is_flag=True, help="Ignore pyproject.toml / .colint.toml files.")


def settings_options(*names: str) -> Callable:
    """The flags of ``names`` (default: every setting) and ``--isolated``. The command receives them as
    ``flags`` (by Settings field name; see :func:`flags_of`) and ``isolated``."""
    chosen = names or tuple(OPTIONS)

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def with_flags(**kw: Any) -> Any:
            return fn(flags=flags_of({name: kw.pop(name) for name in chosen}), **kw)

        for name in reversed(chosen + ("isolated",)):
            with_flags = (ISOLATED if name == "isolated" else OPTIONS[name])(with_flags)
        return with_flags

    return decorate


def _parallel(value: str | None, name: str) -> int | str | None:
    if value is None or value == "auto":
        return value
    try:
        n = int(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a positive integer or 'auto'", param_hint=f"--{name}") from None
    if n < 1:
        raise click.BadParameter(f"{value!r} must be at least 1", param_hint=f"--{name}")
    return n


def percent(value: str | None) -> float | None:
    """A ``--fail-on-regression`` threshold: ``2%``, ``2`` or ``0.5%`` -> percent (None: not given)."""
    if value is None:
        return None
    try:
        pct = float(value.strip().removesuffix("%"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a percentage (e.g. 2%)") from None
    if not pct >= 0 or pct == float("inf"):
        raise click.BadParameter(f"{value!r} must be a finite percentage of at least 0")
    return pct


def review_options(when: str = "") -> Callable:
    """``--frontier`` and ``--fail-on-regression``, the options of a change's review (``check --base`` and
    ``diff``); ``when`` starts their help ("With --base: ")."""

    def lead(word: str) -> str:
        return f"{when}{word}" if when else word.capitalize()

    def decorate(f: Callable) -> Callable:
        f = click.option(
            "--fail-on-regression",
            metavar="PCT",
            default=None,
            callback=lambda _ctx, _param, value: percent(value),
            help=lead("exit")
            + " 1 when a decode or prefill step gets slower by more than PCT percent (e.g. 2%) on a target GPU.",
        )(f)
        return click.option(
            "--frontier",
            is_flag=True,
            help=lead("also") + " the frontier's tokens/s per GPU at 20, 50 and 100 tokens/s per user, before and "
            "after (0.2 s to seconds per config and GPU).",
        )(f)

    return decorate


def flags_of(given: Mapping[str, Any]) -> dict[str, Any]:
    """click's values by field name → the ``flags`` resolve takes: lists for the repeatable options (a
    comma-separated item split), ``tp`` parsed (an integer or 'auto')."""

    def csv(values):
        return [v.strip() for item in values for v in item.split(",") if v.strip()]

    out = dict(given)
    for name in ("select", "ignore", "extend_select"):
        if name in out:
            out[name] = csv(out[name])
    if "gpus" in out:
        out["gpus"] = list(out["gpus"])
    if "tp" in out:
        out["tp"] = _parallel(out["tp"], "tp")
    return out


def settings_at(path: str, flags: Mapping[str, Any], isolated: bool, **run: Any) -> Settings:
    """The settings in force for the file ``path`` (its nearest [tool.colint] / .colint.toml, then ``flags``);
    a broken settings file ends the command with its located error."""
    from colint.engine.config_files import settings_for
    from colint.errors import ColintError

    try:
        return settings_for(os.path.dirname(os.path.abspath(path)), flags, isolated=isolated, **run)
    except ColintError as exc:
        raise fail_with(exc) from None


def one_path(arg: str) -> str:
    """The config file a one-config command reads: a file, a checkpoint or HF cache folder, or a Hub id."""
    from colint.errors import ColintError
    from colint.engine.sources import resolve_one

    try:
        return resolve_one(arg).path
    except ColintError as exc:
        raise fail_with(exc) from None


def with_stdin(paths: list[str], stdin_filename: str | None):
    """Replace PATH '-' by the --stdin-filename (or '-') and read standard input once:
    ``(paths, (name, bytes, syntax) | None)``."""
    if "-" not in paths:
        if stdin_filename is not None:
            raise fail("colint: error: --stdin-filename names standard input; pass '-' as the PATH")
        return paths, None
    if paths.count("-") > 1:
        raise fail("colint: error: '-' (standard input) can be given once")
    from colint.loading import MAX_BYTES
    from colint.reporters.console import stdin_syntax

    raw = sys.stdin.buffer.read(MAX_BYTES + 1)
    name = stdin_filename or "-"
    return [name if p == "-" else p for p in paths], (name, raw, stdin_syntax(stdin_filename, raw))
