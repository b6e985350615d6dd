"""The settings every command runs with: one frozen :class:`Settings`, and where each value came from.

Defaults are the fields' defaults; a project's ``[tool.colint]`` in ``pyproject.toml`` or a
``.colint.toml`` (found and validated by :mod:`colint.engine.config_files`) overrides them, and flags override
the file: ``--select`` replaces ``select``, ``--ignore`` and ``--extend-select`` add to theirs.
:func:`resolve` does that merge for check, inspect, suggest, report, pareto, lsp, ``colint config`` and
the Python API alike, and records each value's source (``Settings.sources``) for ``colint config``.

Keys (kebab-case, like ruff)::

    [tool.colint]
    gpu = "b200"                  # or gpus = ["b200", "h100-sxm"]
    scenario = "throughput"       # throughput | latency | long-context
    dtype = "bf16"
    tp = 8                        # or "auto"; also ep, pp, kvp, context, concurrency, kv-dtype, out-dtype
    select = ["CL0", "CL2"]       # codes, prefixes, names or families
    ignore = ["CL009"]
    extend-select = []
    fail-on = "warning"           # error | warning | info | never
    baseline = "colint-baseline.json"   # relative to this file
    input-format = "hf"           # force the input format
    vocab-size = 32000            # for formats whose vocab lives in a tokenizer
    close-advice = true           # re-check every fix at the state it leads to before showing it

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
from collections.abc import Mapping
from dataclasses import field, fields, replace
from functools import cached_property
from typing import Any, Literal, Optional, Union

from colint.analysis.gemm_model import OUT_BYTES, canonical
from colint.analysis.scenario import KV_BYTES, EP_OVERLAP_MODES
from colint.errors import UsageError
from colint.findings import Severity
from colint.rules import find_rule, select_rules
from colint.util.records import dataclass

FailOn = Literal["error", "warning", "info", "never"]
ScenarioName = Literal["throughput", "latency", "long-context"]

MAX_PARALLEL = 1 << 20  # colint.analysis.scenario.MAX_PARALLEL (not imported: `colint config` needs no analysis)
MAX_TOKENS = 1 << 40  # colint.analysis.scenario.MAX_TOKENS


def _tp_positive(v: Any) -> Any:
    if isinstance(v, int) and v < 1:
        raise ValueError("must be at least 1 or 'auto'")
    if isinstance(v, int) and v > MAX_PARALLEL:
        raise ValueError(f"must be at most {MAX_PARALLEL:,} or 'auto'")
    return v


def _kv_format(v: Any) -> Any:

    if v is not None and v not in KV_BYTES:
        raise ValueError(f"unknown KV-cache format; known: {', '.join(KV_BYTES)}")
    return v


def _out_format(v: Any) -> Any:

    if v is not None and canonical(v) not in OUT_BYTES:
        raise ValueError(f"unknown output format; known: {', '.join(OUT_BYTES)}")
    return v


def _ep_overlap(v: Any) -> Any:
    if v is not None and v not in EP_OVERLAP_MODES:
        raise ValueError(f"unknown EP overlap; known: {', '.join(EP_OVERLAP_MODES)}")
    return v


def _key(key: str, *, ge: Optional[int] = None, le: Optional[int] = None, check: Any = None) -> dict:
    """A field's facts for the config file: its TOML key, bounds and a check raising ValueError(message)."""
    return {"key": key, "ge": ge, "le": le, "check": check}


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The settings in force for one group of files. Fields with a TOML key (``metadata["key"]``) can be
    set in ``[tool.colint]`` and are shown by ``colint config``, in this order; the others come from flags
    (``strict``) or from the run (``loaded_baseline``, ``config``, ``sources``)."""

    gpus: tuple[str, ...] = field(default=("b200",), metadata=_key("gpus"))  # profile names or YAML paths
    scenario: ScenarioName = field(default="throughput", metadata=_key("scenario"))
    dtype: Optional[str] = field(default=None, metadata=_key("dtype"))  # weights/activations; None: bf16
    tp: Union[int, Literal["auto"], None] = field(default=None, metadata=_key("tp", check=_tp_positive))
    ep: Optional[int] = field(default=None, metadata=_key("ep", ge=1, le=MAX_PARALLEL))
    pp: Optional[int] = field(default=None, metadata=_key("pp", ge=1, le=MAX_PARALLEL))
    context_tokens: Optional[int] = field(default=None, metadata=_key("context", ge=1, le=MAX_TOKENS))
    concurrency: Optional[int] = field(default=None, metadata=_key("concurrency", ge=1, le=MAX_TOKENS))  # sequences
    select: tuple[str, ...] = field(default=(), metadata=_key("select"))
    ignore: tuple[str, ...] = field(default=(), metadata=_key("ignore"))
    extend_select: tuple[str, ...] = field(default=(), metadata=_key("extend-select"))
    # glob (relative to the config file's directory) -> rule selectors dropped for the files it matches
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict, metadata=_key("per-file-ignores"))
    severity: Mapping[str, Severity] = field(default_factory=dict, metadata=_key("severity"))  # selector -> severity
    rules: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, metadata=_key("rules"))  # code/name -> options
    fail_on: FailOn = field(default="warning", metadata=_key("fail-on"))
    baseline: Optional[str] = field(default=None, metadata=_key("baseline"))  # a path (a config's: made absolute)
    input_format: Optional[str] = field(default=None, metadata=_key("input-format"))
    vocab_size: Optional[int] = field(default=None, metadata=_key("vocab-size", ge=1, le=MAX_TOKENS))
    kv_dtype: Optional[str] = field(default=None, metadata=_key("kv-dtype", check=_kv_format))  # None: bf16
    out_dtype: Optional[str] = field(default=None, metadata=_key("out-dtype", check=_out_format))  # None: bf16
    kvp: Optional[int] = field(default=None, metadata=_key("kvp", ge=1, le=MAX_PARALLEL))  # KV (Helix) parallel
    # EP dispatch/combine overlapped by two micro-batches (colint.analysis.overlap): auto | on | off
    ep_overlap: Optional[str] = field(default=None, metadata=_key("ep-overlap", check=_ep_overlap))  # None: off
    close_advice: bool = field(default=True, metadata=_key("close-advice"))  # re-check fixes (colint.engine.closure)

    strict: bool = False  # check every file; False: skip what colint.triage recognises as not a decoder LLM
    # the run's state, not settings: left out of equality and repr (colint.engine.closure keys its cache by repr)
    loaded_baseline: Any = field(default=None, compare=False, repr=False)  # colint.engine.suppression.Baseline (above)
    config: Optional[ConfigFile] = field(default=None, compare=False, repr=False)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)  # field -> source

    def __post_init__(self) -> None:
        for name in ("gpus", "select", "ignore", "extend_select"):  # a list given by a caller: kept immutable
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple([value] if isinstance(value, str) else value))

    # -- derived once, from the fields above ------------------------------------------------------------
    @cached_property
    def rule_options(self) -> dict[str, dict[str, Any]]:
        """``rules`` by code, each threshold checked against the rule's declared options."""
        return resolve_rule_options(self.rules) if self.rules else {}

    @cached_property
    def severity_overrides(self) -> dict[str, str]:
        """``severity`` by code (a selector such as ``CL0`` names several)."""
        return {code: sev for sel, sev in self.severity.items() for code in sorted(_codes_for(sel))}

    @cached_property
    def per_file_ignore_codes(self) -> tuple[tuple[str, str, frozenset], ...]:
        """``(base directory, glob, codes)`` for colint.util.globs.per_file_ignored_codes."""
        base = self.config.dir if self.config is not None else os.getcwd()
        return tuple(
            (base, glob, frozenset().union(*(_codes_for(c) for c in codes)) if codes else frozenset())
            for glob, codes in sorted(self.per_file_ignores.items())
        )

    def with_keys(self, values: Mapping[str, Any]) -> Settings:
        """A copy with ``values`` given by TOML key (``{"context": 4096}``: a fix's ``settings``)."""
        return replace(self, **{FIELD_OF_KEY[k]: v for k, v in values.items()})

    def as_dict(self) -> dict:
        """``{key: {"value", "source"}}`` for every settable field (``colint config --format json``)."""
        return {
            key: {"value": _plain(getattr(self, name)), "source": self.sources.get(name, "default")}
            for name, key in KEYS.items()
        }


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


KEYS: dict[str, str] = {f.name: f.metadata["key"] for f in fields(Settings) if f.metadata.get("key")}  # field -> key
FIELD_OF_KEY: dict[str, str] = {key: name for name, key in KEYS.items()}
# a key's snake_case spelling (``fail_on``, also the Python API's keyword) -> field
FIELD_OF_NAME: dict[str, str] = {key.replace("-", "_"): name for name, key in KEYS.items()}


@dataclass(frozen=True)
class ConfigFile:
    """One project settings file, read and validated (colint.engine.config_files.parse_config)."""

    path: str  # absolute
    kind: str  # "pyproject" | "colint"
    text: str
    values: Mapping[str, Any]  # field name -> validated value, for the keys the file sets

    @property
    def label(self) -> str:
        return self.path + (" [tool.colint]" if self.kind == "pyproject" else "")

    @property
    def dir(self) -> str:
        return os.path.dirname(self.path)


def _codes_for(selector: str) -> frozenset:

    return frozenset(r.code for r in select_rules([selector]))


def _coerce_option(rule, name: str, value: Any) -> Any:
    return rule.options[name].coerce(value)  # colint.rules.base.Option: its declared type


def resolve_rule_options(table: Mapping[str, Mapping[str, Any]], located=None) -> dict[str, dict]:
    """``{code or name: {option: value}}`` → ``{code: {option: value}}``, validated against each rule.
    ``located(message, key)`` makes the error (a config file's, with its line); else a plain UsageError."""
    out: dict[str, dict] = {}
    for ident, opts in table.items():
        r = find_rule(ident)

        def err(msg: str, key: str = ident) -> UsageError:
            return UsageError(msg) if located is None else located(msg, key)

        if r is None:
            raise err(f"rules: unknown rule {ident!r} (see `colint rules`)")
        if not isinstance(opts, Mapping):
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


ADDED_BY_FLAGS = ("ignore", "extend_select")  # a flag adds to the file's list; every other flag replaces


def resolve(cfg: Optional[ConfigFile], flags: Mapping[str, Any], **run: Any) -> Settings:
    """Defaults ← config file ← ``flags`` (by field name; only those given: not None, not empty).
    ``run``: fields that are not settings (``strict``, ``loaded_baseline``)."""
    values: dict[str, Any] = {}
    sources = {name: "default" for name in KEYS}
    if cfg is not None:
        for name, val in cfg.values.items():
            values[name] = val
            sources[name] = cfg.label
        if "baseline" in values:
            values["baseline"] = os.path.normpath(os.path.join(cfg.dir, values["baseline"]))
    for name, val in flags.items():
        if val is None or (isinstance(val, (list, tuple)) and not val):
            continue
        if name not in KEYS:
            raise KeyError(name)
        if isinstance(val, list):
            val = tuple(val)
        if name in ADDED_BY_FLAGS:
            had = sources[name] != "default"
            values[name] = tuple(values.get(name, ())) + val
            sources[name] = "config + command line" if had else "command line"
        else:
            values[name] = val
            sources[name] = "command line"
    return Settings(**values, **run, config=cfg, sources=sources)


def check_selectors(settings: Settings) -> None:
    """Raise UsageError for an unknown rule selector among select/ignore/extend-select (the flags' ones: a
    config file's are checked, located, when it is read)."""
    if settings.select or settings.ignore or settings.extend_select:
        select_rules(settings.select, settings.ignore, settings.extend_select)


def render(settings: Settings, path: str) -> str:
    """``colint config``'s text: every settable value and where it came from."""
    import json

    cfg = settings.config
    lines = [
        f"# effective colint settings for {path}",
        f"# config file: {cfg.label if cfg else 'none found (defaults)'}",
    ]
    rows = settings.as_dict()
    width = max(len(k) for k in rows)
    for key, item in rows.items():
        lines.append(f"{key:<{width}} = {json.dumps(item['value'])}  # {item['source']}")
    return "\n".join(lines)
