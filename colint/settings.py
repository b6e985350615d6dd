"""Project settings: ``[tool.colint]`` in ``pyproject.toml`` or a ``.colint.toml``, plus CLI flags.

Discovery: for each linted file, the nearest directory at or above it holding a ``.colint.toml``
(top-level keys) or a ``pyproject.toml`` with a ``[tool.colint]`` table wins (``.colint.toml``
first in the same directory); there is no merging across files. CLI flags override the file:
``--select`` replaces ``select``, ``--ignore`` and ``--extend-select`` add to theirs.

Keys (kebab-case, like ruff)::

    [tool.colint]
    gpu = "b200"                  # or gpus = ["b200", "h100-sxm"]
    scenario = "throughput"       # throughput | latency | long-context
    dtype = "bf16"
    tp = 8                        # or "auto"; also ep, pp, context, concurrency, kv-dtype, out-dtype
    select = ["CL0", "CL2"]       # codes, prefixes, names or families
    ignore = ["CL009"]
    extend-select = []
    fail-on = "warning"           # error | warning | info | never
    baseline = "colint-baseline.json"   # relative to this file
    input-format = "hf"           # force the input format
    vocab-size = 32000            # for formats whose vocab lives in a tokenizer

    [tool.colint.per-file-ignores]      # globs relative to this file; a glob without "/" matches names
    "checkpoints/released/**" = ["CL2"]

    [tool.colint.severity]              # per-code severity overrides
    CL009 = "warning"

    [tool.colint.rules.CL201]           # a rule's named thresholds (see `colint rule CL201`)
    some_threshold = 0.05

Unknown keys, unknown codes, unknown thresholds and values of the wrong type are errors
(``path:line:col: error: ...``, exit 2).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import lru_cache, cache
from typing import Any, Literal, Optional, Union

from colint.errors import UsageError
from colint.findings import Severity
from colint.records import Record, field

FailOn = Literal["error", "warning", "info", "never"]
Scenario = Literal["throughput", "latency", "long-context"]

DEFAULTS: dict[str, Any] = {
    "gpus": ["b200"],
    "scenario": "throughput",
    "dtype": None,
    "tp": None,
    "ep": None,
    "pp": None,
    "context": None,
    "concurrency": None,
    "select": [],
    "ignore": [],
    "extend_select": [],
    "per_file_ignores": {},
    "severity": {},
    "rules": {},
    "fail_on": "warning",
    "baseline": None,
    "input_format": None,
    "vocab_size": None,
    "kv_dtype": None,
    "out_dtype": None,
    "kvp": None,
}


_MAX_PARALLEL = 1 << 20  # colint.analysis.scenario.MAX_PARALLEL (not imported: settings load first)
_MAX_TOKENS = 1 << 40  # colint.analysis.scenario.MAX_TOKENS


def _tp_positive(v: Any) -> Any:
    if isinstance(v, int) and v < 1:
        raise ValueError("must be at least 1 or 'auto'")
    if isinstance(v, int) and v > _MAX_PARALLEL:
        raise ValueError(f"must be at most {_MAX_PARALLEL:,} or 'auto'")
    return v


def _kv_format(v: Any) -> Any:
    from colint.analysis.scenario import KV_BYTES

    if v is not None and v not in KV_BYTES:
        raise ValueError(f"unknown KV-cache format; known: {', '.join(KV_BYTES)}")
    return v


def _out_format(v: Any) -> Any:
    from colint.analysis.gemm_model import OUT_BYTES, canonical

    if v is not None and canonical(v) not in OUT_BYTES:
        raise ValueError(f"unknown output format; known: {', '.join(OUT_BYTES)}")
    return v


class FileSettings(Record, extra="forbid"):
    """What one config file may say (every field optional; unknown keys are errors). Validated by
    ``model_validate``: keys as written (kebab-case aliases) or as field names."""

    gpu: Optional[Union[str, list[str]]] = None
    gpus: Optional[list[str]] = None
    scenario: Optional[Scenario] = None
    dtype: Optional[str] = None
    tp: Optional[Union[int, Literal["auto"]]] = field(None, check=_tp_positive)
    ep: Optional[int] = field(None, ge=1, le=_MAX_PARALLEL)
    pp: Optional[int] = field(None, ge=1, le=_MAX_PARALLEL)
    context: Optional[int] = field(None, ge=1, le=_MAX_TOKENS)
    concurrency: Optional[int] = field(None, ge=1, le=_MAX_TOKENS)
    select: Optional[list[str]] = None
    ignore: Optional[list[str]] = None
    extend_select: Optional[list[str]] = field(None, alias="extend-select")
    per_file_ignores: Optional[dict[str, list[str]]] = field(None, alias="per-file-ignores")
    severity: Optional[dict[str, Severity]] = None
    rules: Optional[dict[str, dict[str, Any]]] = None
    fail_on: Optional[FailOn] = field(None, alias="fail-on")
    baseline: Optional[str] = None
    input_format: Optional[str] = field(None, alias="input-format")
    vocab_size: Optional[int] = field(None, alias="vocab-size", ge=1, le=1 << 40)
    kv_dtype: Optional[str] = field(None, alias="kv-dtype", check=_kv_format)  # KV-cache format (bf16, fp8, ...)
    out_dtype: Optional[str] = field(None, alias="out-dtype", check=_out_format)  # GEMM output format
    kvp: Optional[int] = field(None, ge=1, le=_MAX_PARALLEL)  # KV (Helix) parallel size


# TOML key (as written) for each field, for messages and `colint config`
KEY_NAMES = {name: (f.alias or name) for name, f in FileSettings.__record_fields__.items()}


@dataclass
class ConfigFile:
    path: str  # absolute
    kind: str  # "pyproject" | "colint"
    text: str
    raw: dict  # the [tool.colint] table (or the whole .colint.toml)
    settings: FileSettings

    @property
    def label(self) -> str:
        return self.path + (" [tool.colint]" if self.kind == "pyproject" else "")

    @property
    def dir(self) -> str:
        return os.path.dirname(self.path)


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


def _error(cfg_path: str, text: str, kind: str, key: str, message: str) -> UsageError:
    line, col = _key_position(text, key, kind) if key else (None, None)
    return UsageError(message, path=cfg_path, line=line, column=col)


def _check_selectors(values: list[str], where: str, cfg: ConfigFile | None = None, key: str = "") -> None:
    from colint.rules import select_rules

    for v in values:
        try:
            select_rules([v])
        except UsageError as exc:
            if cfg is None:
                raise
            raise _error(cfg.path, cfg.text, cfg.kind, key, f"{where}: {exc.message}") from None


def _codes_for(selector: str) -> frozenset:
    from colint.rules import select_rules

    return frozenset(r.code for r in select_rules([selector]))


def _coerce_option(rule, name: str, value: Any) -> Any:
    return rule.options[name].coerce(value)  # colint.rules.base.Option: its declared type


def resolve_rule_options(table: dict[str, dict[str, Any]], cfg: ConfigFile | None = None) -> dict[str, dict]:
    """``{code or name: {option: value}}`` → ``{code: {option: value}}``, validated against each rule."""
    from colint.rules import all_rules

    rules = all_rules()
    out: dict[str, dict] = {}
    for ident, opts in table.items():
        r = rules.get(ident.upper()) or next((x for x in rules.values() if x.name == ident), None)

        def err(msg: str, key: str = ident) -> UsageError:
            if cfg is None:
                return UsageError(msg)
            return _error(cfg.path, cfg.text, cfg.kind, key, msg)

        if r is None:
            raise err(f"rules: unknown rule {ident!r} (see `colint rules`)")
        if not isinstance(opts, dict):
            raise err(f"rules.{ident}: expected a table of thresholds")
        for name, value in opts.items():
            if name not in r.options:
                known = ", ".join(sorted(r.options)) or "none"
                raise err(f"rules.{ident}: unknown threshold {name!r} for {r.code} {r.name} (known: {known})", name)
            try:
                out.setdefault(r.code, {})[name] = _coerce_option(r, name, value)
            except ValueError as exc:
                raise err(f"rules.{ident}.{name}: {exc}", name) from None
    return out


def validate(cfg: ConfigFile) -> None:
    """Semantic checks beyond types: selectors and codes exist, thresholds are declared."""
    s = cfg.settings
    if s.gpu is not None and s.gpus is not None:
        raise _error(cfg.path, cfg.text, cfg.kind, "gpus", "give either gpu or gpus, not both")
    for fname in ("select", "ignore", "extend_select"):
        vals = getattr(s, fname)
        if vals:
            _check_selectors(vals, KEY_NAMES[fname], cfg, KEY_NAMES[fname])
    for glob, codes in (s.per_file_ignores or {}).items():
        _check_selectors(codes, f"per-file-ignores {glob!r}", cfg, glob)
    for code in s.severity or {}:
        _check_selectors([code], "severity", cfg, code)
    if s.rules:
        resolve_rule_options(s.rules, cfg)


def parse_config(path: str) -> Optional[ConfigFile]:
    """Read and validate one config file; None for a pyproject.toml without [tool.colint]."""
    path = os.path.abspath(path)
    kind = "colint" if os.path.basename(path) != "pyproject.toml" else "pyproject"
    from colint.fileio import read_limited

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
    try:
        settings = FileSettings.model_validate(table)
    except ValueError as exc:  # pydantic's ValidationError (imported only when validation needs pydantic)
        if not hasattr(exc, "errors"):
            raise
        e = exc.errors()[0]
        loc = [str(p) for p in e["loc"]]
        key = loc[0] if loc else ""
        dotted = ".".join(loc)
        if e["type"] == "extra_forbidden":
            known = ", ".join(sorted(KEY_NAMES.values()))
            msg = (
                f"unknown key {dotted!r} in {'[tool.colint]' if kind == 'pyproject' else 'the config'} (known: {known})"
            )
        else:
            got = (
                repr(e.get("input"))
                if not isinstance(e.get("input"), int) or abs(e["input"]) < 10**30
                else "a huge number"
            )
            got = got if len(got) <= 60 else got[:57] + "..."
            msg = f"{dotted}: {e['msg'].removeprefix('Value error, ')} (got {got})"
        key_for_pos = loc[1] if len(loc) > 1 and key in ("per-file-ignores", "severity", "rules") else key
        raise _error(path, text, kind, key_for_pos, msg) from None
    cfg = ConfigFile(path=path, kind=kind, text=text, raw=table, settings=settings)
    validate(cfg)
    return cfg


MAX_CONFIG_BYTES = 1024 * 1024  # a pyproject.toml is a few KiB; refused unread beyond 1 MiB


@cache
def _config_in_dir(directory: str) -> Optional[str]:
    dot = os.path.join(directory, ".colint.toml")
    if os.path.isfile(dot):
        return dot
    py = os.path.join(directory, "pyproject.toml")
    if os.path.isfile(py):
        from colint.errors import UsageError
        from colint.fileio import read_limited

        try:
            if b"tool.colint" in read_limited(py, MAX_CONFIG_BYTES, UsageError):  # cheap pre-filter
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


# ---------------------------------------------------------------- effective settings


@dataclass
class CheckOptions:
    gpus: list[str] = dc_field(default_factory=lambda: ["b200"])
    scenario: str = "throughput"
    dtype: Optional[str] = None  # weights/activations format; None = the scenario's default (bf16)
    tp: Any = None  # int or "auto"
    ep: Optional[int] = None
    pp: Optional[int] = None
    context: Optional[int] = None
    concurrency: Optional[int] = None
    select: list[str] = dc_field(default_factory=list)
    ignore: list[str] = dc_field(default_factory=list)
    extend_select: list[str] = dc_field(default_factory=list)
    rule_options: dict[str, dict[str, Any]] = dc_field(default_factory=dict)
    severity_overrides: dict[str, str] = dc_field(default_factory=dict)  # code -> severity
    input_format: Optional[str] = None
    vocab_size: Optional[int] = None
    # (config dir, glob, codes): findings of those codes are dropped for files matching the glob
    per_file_ignores: list[tuple[str, str, frozenset]] = dc_field(default_factory=list)
    baseline: Any = None  # colint.suppression.Baseline: accepted findings, reported no more
    strict: bool = False  # check every file; False: skip what colint.triage recognises as not a decoder LLM
    kv_dtype: Optional[str] = None  # KV-cache format; None = the scenario's (bf16)
    out_dtype: Optional[str] = None  # GEMM output format; None = bf16
    close_advice: bool = True  # re-check every fix at the state it leads to before showing it (colint.closure)
    kvp: Optional[int] = None  # KV (Helix) parallel size; None = 1


@dataclass
class Effective:
    """The settings in force for one group of files, each with where it came from."""

    values: dict[str, Any]
    sources: dict[str, str]  # field -> "default" | config label | "command line" | "config + command line"
    config: Optional[ConfigFile] = None
    per_file_ignores: list[tuple[str, str, frozenset]] = dc_field(default_factory=list)
    rule_options: dict[str, dict] = dc_field(default_factory=dict)
    severity_overrides: dict[str, str] = dc_field(default_factory=dict)

    def check_options(self, baseline=None) -> CheckOptions:
        v = self.values
        return CheckOptions(
            gpus=list(v["gpus"]),
            scenario=v["scenario"],
            dtype=v["dtype"],
            tp=v["tp"],
            ep=v["ep"],
            pp=v["pp"],
            context=v["context"],
            concurrency=v["concurrency"],
            select=list(v["select"]),
            ignore=list(v["ignore"]),
            extend_select=list(v["extend_select"]),
            rule_options=self.rule_options,
            severity_overrides=self.severity_overrides,
            input_format=v["input_format"],
            vocab_size=v["vocab_size"],
            per_file_ignores=self.per_file_ignores,
            baseline=baseline,
            kv_dtype=v["kv_dtype"],
            out_dtype=v["out_dtype"],
            kvp=v["kvp"],
        )

    def as_dict(self) -> dict:
        out = {}
        for name in DEFAULTS:
            out[KEY_NAMES[name]] = {"value": self.values[name], "source": self.sources[name]}
        return out


def resolve(cfg: Optional[ConfigFile], cli: dict[str, Any]) -> Effective:
    """Defaults ← config file ← CLI flags (only those given: values that are not None/empty)."""
    values: dict[str, Any] = {
        k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v) for k, v in DEFAULTS.items()
    }
    sources = {k: "default" for k in DEFAULTS}
    if cfg is not None:
        s = cfg.settings
        for name in DEFAULTS:
            val = getattr(s, name, None)
            if name == "gpus":
                val = s.gpus if s.gpus is not None else ([s.gpu] if isinstance(s.gpu, str) else s.gpu)
            if val is not None:
                values[name] = val
                sources[name] = cfg.label
        if s.baseline is not None:
            values["baseline"] = os.path.normpath(os.path.join(cfg.dir, s.baseline))
    for name, val in cli.items():
        if val is None or (isinstance(val, (list, tuple)) and not val):
            continue
        if name in ("ignore", "extend_select"):
            had = sources[name] != "default"
            values[name] = list(values[name]) + list(val)
            sources[name] = "config + command line" if had else "command line"
        elif name in DEFAULTS:
            values[name] = list(val) if isinstance(val, tuple) else val
            sources[name] = "command line"
        else:
            raise KeyError(name)
    eff = Effective(values=values, sources=sources, config=cfg)
    if cfg is not None:
        base = cfg.dir
        eff.per_file_ignores = [
            (base, glob, frozenset().union(*(_codes_for(c) for c in codes)) if codes else frozenset())
            for glob, codes in sorted(values["per_file_ignores"].items())
        ]
        eff.rule_options = resolve_rule_options(values["rules"], cfg) if values["rules"] else {}
        for sel, sev in values["severity"].items():
            for code in _codes_for(sel):
                eff.severity_overrides[code] = sev
    return eff


# ---------------------------------------------------------------- per-file-ignores globs


_LIT, _ONE, _STAR, _ANY, _DIRS = range(5)  # a character, ?, * (within a name), ** (anything), **/ (any dirs)


@lru_cache(maxsize=256)
def _glob_tokens(glob: str) -> tuple:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append((_DIRS, ""))
            i += 3
        elif glob.startswith("**", i):
            out.append((_ANY, ""))
            i += 2
        elif glob[i] == "*":
            out.append((_STAR, ""))
            i += 1
        elif glob[i] == "?":
            out.append((_ONE, ""))
            i += 1
        else:
            out.append((_LIT, glob[i]))
            i += 1
    # repeated wildcards match what one does: drop them (keeps the state sets small)
    merged: list = []
    for t in out:
        if merged and t[0] in (_STAR, _ANY, _DIRS) and merged[-1] == t:
            continue
        merged.append(t)
    return tuple(merged)


def _glob_match(tokens: tuple, text: str) -> bool:
    """Whether ``text`` matches the glob ``tokens`` in its entirety: a simulation of the pattern's automaton
    over the set of states it can be in, so time is len(text) x len(tokens) whatever the pattern (a regex
    with 30 ``**`` backtracked for minutes on a pull request's per-file-ignores)."""
    n = len(tokens)

    def closure(states: set) -> set:
        todo = list(states)
        while todo:
            i = todo.pop()
            if i < n and tokens[i][0] in (_STAR, _ANY, _DIRS) and i + 1 not in states:
                states.add(i + 1)
                todo.append(i + 1)
        return states

    states = closure({0})
    for c in text:
        nxt: set = set()
        for i in states:
            if i >= n:
                continue
            kind, lit = tokens[i]
            if kind == _LIT:
                if c == lit:
                    nxt.add(i + 1)
            elif kind == _ONE:
                if c != "/":
                    nxt.add(i + 1)
            elif kind == _STAR:
                if c != "/":
                    nxt.add(i)
            elif kind == _ANY:
                nxt.add(i)
            else:  # _DIRS: any characters up to and including a "/"
                nxt.add(i)
                if c == "/":
                    nxt.add(i + 1)
        if not nxt:
            return False
        states = closure(nxt)
    return n in states


def glob_matches(glob: str, path: str, base_dir: str) -> bool:
    """``glob`` relative to ``base_dir`` (``**`` spans directories); one without '/' matches a file name."""
    absolute = os.path.abspath(path)
    if "/" not in glob:
        return _glob_match(_glob_tokens(glob), os.path.basename(absolute))
    rel = os.path.relpath(absolute, base_dir).replace(os.sep, "/")
    if rel.startswith("../"):
        return False
    return _glob_match(_glob_tokens(glob[2:] if glob.startswith("./") else glob), rel)


def per_file_ignored_codes(path: str, per_file_ignores) -> frozenset:
    codes: frozenset = frozenset()
    for base, glob, cs in per_file_ignores:
        if glob_matches(glob, path, base):
            codes = codes | cs
    return codes


# ---------------------------------------------------------------- `colint config`


def render_effective(eff: Effective, path: str) -> str:
    import json

    lines = [
        f"# effective colint settings for {path}",
        f"# config file: {eff.config.label if eff.config else 'none found (defaults)'}",
    ]
    rows = eff.as_dict()
    width = max(len(k) for k in rows)
    for key, item in rows.items():
        lines.append(f"{key:<{width}} = {json.dumps(item['value'])}  # {item['source']}")
    return "\n".join(lines)
