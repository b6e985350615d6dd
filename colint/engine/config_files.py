"""Project settings files: found beside each linted file, read, and validated without pydantic.

Discovery: for each linted file, the nearest directory at or above it holding a ``.colint.toml``
(top-level keys) or a ``pyproject.toml`` with a ``[tool.colint]`` table wins (``.colint.toml``
first in the same directory); there is no merging across files. The keys are the TOML keys of
:class:`colint.engine.settings.Settings` (kebab-case, or their snake_case spelling) plus ``gpu`` (a name or a
list: ``gpus``), each checked against its field's type (:mod:`colint.util.typed_table`) and its bounds and
checks; selectors, severities and rule thresholds are checked against the rules. Every error is one
located line (``path:line:col: error: key: ...``, exit 2).
"""

from __future__ import annotations

import os
import re
import sys
import typing
from collections.abc import Mapping
from dataclasses import fields
from functools import cache
from typing import Any, Optional, Union

from colint.errors import UsageError
from colint.util.fileio import read_limited
from colint.rules import select_rules
from colint.engine.settings import KEYS, ConfigFile, Settings, resolve, resolve_rule_options
from colint.util.typed_table import TableError, conform, within

MAX_CONFIG_BYTES = 1024 * 1024  # a pyproject.toml is a few KiB; refused unread beyond 1 MiB
_NESTED = ("per-file-ignores", "severity", "rules")  # tables whose errors point at the inner key's line


@cache
def _table() -> list[tuple[str, str, Any, dict]]:
    """``(key, field, annotation, metadata)`` in the order errors are reported: ``gpu`` first, then the
    fields (built on first use: a run without a config file never evaluates the annotations)."""
    hints = typing.get_type_hints(Settings)
    rows: list[tuple[str, str, Any, dict]] = [("gpu", "gpus", Union[str, tuple[str, ...]], {})]
    for f in fields(Settings):
        if f.name in KEYS:
            rows.append((KEYS[f.name], f.name, hints[f.name], dict(f.metadata)))
    return rows


def _key_position(text: str, key: str, kind: str) -> tuple[Optional[int], Optional[int]]:
    """Line/column of ``key = `` in a TOML text (a best effort: tomllib keeps no positions)."""
    pattern = re.compile(r'^\s*(?:"%s"|\'%s\'|%s)\s*=' % ((re.escape(key),) * 3))
    table = re.compile(r"^\s*\[+\s*(.*?)\s*\]+\s*(?:#.*)?$")
    in_colint = kind == "colint"
    first_header = None
    for i, line in enumerate(text.splitlines(), 1):
        t = table.match(line)
        if t:
            name = t.group(1)
            in_colint = kind == "colint" or name == "tool.colint" or name.startswith("tool.colint.")
            if in_colint and first_header is None:
                first_header = i
            if in_colint and (name.endswith("." + key) or name == key):
                return i, 1
            continue
        if in_colint:
            m = pattern.match(line)
            if m:
                return i, len(line) - len(line.lstrip()) + 1
    return (first_header, 1) if first_header else (None, None)


def _error(path: str, text: str, kind: str, key: str, message: str) -> UsageError:
    line, col = _key_position(text, key, kind) if key else (None, None)
    return UsageError(message, path=path, line=line, column=col)


def _got(value: Any) -> str:
    got = repr(value) if not isinstance(value, int) or abs(value) < 10**30 else "a huge number"
    return got if len(got) <= 60 else got[:57] + "..."


def _typed_values(table: Mapping[str, Any], path: str, text: str, kind: str) -> dict[str, Any]:
    """The table's values by field name, each checked against its field (the first error raised, located)."""
    values: dict[str, Any] = {}
    used = set()
    for key, name, annotation, meta in _table():
        snake = key.replace("-", "_")
        given = key if key in table else snake if snake in table else None
        if given is None:
            continue
        used.add(given)
        raw = table[given]
        try:
            value = conform(raw, annotation)
            if value is not None and meta:
                within(value, meta["ge"], meta["le"])
                if meta["check"] is not None:
                    try:
                        meta["check"](value)
                    except ValueError as exc:
                        raise TableError(str(exc), value) from None
        except TableError as exc:
            loc = [key, *map(str, exc.loc)]
            at = loc[1] if len(loc) > 1 and key in _NESTED else key
            raise _error(path, text, kind, at, f"{'.'.join(loc)}: {exc.message} (got {_got(exc.value)})") from None
        if key == "gpu":
            if "gpus" in table:
                raise _error(path, text, kind, "gpus", "give either gpu or gpus, not both")
            value = (value,) if isinstance(value, str) else value
        values[name] = value
    unknown = [k for k in table if k not in used]
    if unknown:
        known = ", ".join(sorted(["gpu", *KEYS.values()]))
        where = "[tool.colint]" if kind == "pyproject" else "the config"
        raise _error(path, text, kind, unknown[0], f"unknown key {unknown[0]!r} in {where} (known: {known})")
    return values


def _check_rules(values: Mapping[str, Any], path: str, text: str, kind: str) -> None:
    """Semantic checks beyond types: selectors and codes exist, thresholds are declared."""

    def selectors(codes, where: str, key: str) -> None:
        for v in codes:
            try:
                select_rules([v])
            except UsageError as exc:
                raise _error(path, text, kind, key, f"{where}: {exc.message}") from None

    for name in ("select", "ignore", "extend_select"):
        if values.get(name):
            selectors(values[name], KEYS[name], KEYS[name])
    for glob, codes in values.get("per_file_ignores", {}).items():
        selectors(codes, f"per-file-ignores {glob!r}", glob)
    for code in values.get("severity", {}):
        selectors([code], "severity", code)
    if values.get("rules"):
        resolve_rule_options(values["rules"], lambda msg, key: _error(path, text, kind, key, msg))


def parse_config(path: str) -> Optional[ConfigFile]:
    """Read and validate one config file; None for a pyproject.toml without [tool.colint]."""
    path = os.path.abspath(path)
    kind = "colint" if os.path.basename(path) != "pyproject.toml" else "pyproject"

    raw_bytes = read_limited(path, MAX_CONFIG_BYTES, UsageError, limit_for=" for a settings file")
    text = raw_bytes.decode("utf-8", errors="replace")
    if sys.version_info >= (3, 11):  # imported here: a run without a config file needs no TOML parser
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise UsageError(
            f"invalid TOML: {msg}",
            path=path,
            line=int(m.group(1)) if m else None,
            column=int(m.group(2)) if m else None,
        ) from None
    if kind == "pyproject":
        table = data.get("tool", {}).get("colint")
        if table is None:
            return None
        if not isinstance(table, dict):
            raise UsageError("[tool.colint] must be a table", path=path)
    else:
        table = data
    values = _typed_values(table, path, text, kind)
    _check_rules(values, path, text, kind)
    return ConfigFile(path=path, kind=kind, text=text, values=values)


# A pyproject.toml worth parsing names tool.colint outside a comment (a line's text before any '#'): a table
# header [tool.colint...] or a dotted key tool.colint.x. One that mentions it only in comments (colint's own) is
# not read with the TOML parser at all; one whose table is elsewhere (an inline `tool = {colint = ...}`) was
# never found by this filter.
_NAMES_TOOL_COLINT = re.compile(rb"(?m)^[^#\n]*\btool\s*\.\s*[\"']?colint\b")


@cache
def _config_in_dir(directory: str) -> Optional[str]:
    dot = os.path.join(directory, ".colint.toml")
    if os.path.isfile(dot):
        return dot
    py = os.path.join(directory, "pyproject.toml")
    if os.path.isfile(py):
        try:
            if _NAMES_TOOL_COLINT.search(read_limited(py, MAX_CONFIG_BYTES, UsageError)):  # cheap pre-filter
                return py
        except UsageError:
            return py  # too large or unreadable: parse_config says so, located
    return None


def find_config_path(start: str) -> Optional[str]:
    """The nearest .colint.toml / pyproject.toml with [tool.colint] at or above ``start``."""
    d = os.path.abspath(start)
    if not os.path.isdir(d):
        d = os.path.dirname(d)
    while True:
        found = _config_in_dir(d)
        if found is not None:
            return found
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


_PARSED: dict[str, Optional[ConfigFile]] = {}


def find_config(start: str) -> Optional[ConfigFile]:
    """The parsed nearest config (a pyproject.toml whose text mentions tool.colint only in a comment is
    skipped and the search goes on above it)."""
    d = os.path.abspath(start)
    while True:
        p = find_config_path(d)
        if p is None:
            return None
        if p not in _PARSED:
            _PARSED[p] = parse_config(p)
        if _PARSED[p] is not None:
            return _PARSED[p]
        parent = os.path.dirname(os.path.dirname(p))
        if parent == os.path.dirname(p):
            return None
        d = parent


def settings_for(start: Optional[str], flags: Mapping[str, Any], *, isolated: bool = False, **run: Any) -> Settings:
    """The settings in force at ``start`` (a directory, or a file: its directory; None: no project file):
    its nearest [tool.colint] / .colint.toml unless ``isolated``, then ``flags`` (by field name)."""
    cfg = None if isolated or start is None else find_config(start)
    return resolve(cfg, flags, **run)
