"""colint's Python API: the records the JSON output serialises, for notebooks and training scripts.

``import colint`` stays cheap: these functions are loaded on first use (``colint.check`` etc.).

``config`` is what a user has: a ``dict`` of config.json keys (or a transformers ``PretrainedConfig``:
what its ``save_pretrained`` would write), or a ``str``/``os.PathLike`` that ``colint check`` accepts
(a config file, a checkpoint or Hugging Face cache folder, a Hub id ``org/name[@revision]``).
``gpu`` is a profile name or YAML path, or a list of them (default b200). ``**settings`` are the
`colint check` options by their ``[tool.colint]`` names: ``scenario``, ``dtype``, ``tp`` (int or
"auto"), ``ep``, ``pp``, ``context``, ``concurrency``, ``select``, ``ignore``, ``extend_select``
(a code or a list of them), ``input_format``, ``vocab_size``, ``close_advice``. Project files ([tool.colint],
.colint.toml) apply only with ``project=True`` (looked up beside a file, or from the current
directory for a dict), so that a script's answer does not depend on where it runs.

Bad input raises :class:`colint.errors.ColintError` (``LoadError``, ``SpecError``, ``UsageError``,
...) with the same one-line message the CLI prints (``exc.located()``); a wrong keyword is a TypeError.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Union
from collections.abc import Mapping

from colint.engine.deployment import DEPLOYMENT_SETTINGS
from colint.errors import ColintError, UsageError

__all__ = ["check", "inspect", "suggest", "report_data", "chart", "SETTINGS"]

Config = Union[Mapping[str, Any], str, "os.PathLike[str]", Any]

# the keywords: the deployment settings (colint.engine.deployment, one list with the CLI and config files), then the rest
SETTINGS = tuple(s.api for s in DEPLOYMENT_SETTINGS) + (
    "select",
    "ignore",
    "extend_select",
    "input_format",
    "vocab_size",
    "close_advice",
)
_SCENARIO_SETTINGS = tuple(s.api for s in DEPLOYMENT_SETTINGS) + ("input_format", "vocab_size")
_COUNTS = tuple(s.api for s in DEPLOYMENT_SETTINGS if s.kind in ("count", "parallel")) + ("vocab_size",)
DICT_PATH = "<dict>"  # the path of a config given as a dict, in results and errors


def _flags(gpu, settings: dict, allowed=SETTINGS) -> dict:
    """The keywords as flags by Settings field name (``context`` is the field ``context_tokens``)."""
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise TypeError(
            f"unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"colint takes {', '.join(allowed)}"
        )
    from colint.engine.settings import FIELD_OF_NAME

    def codes(v):
        return [v] if isinstance(v, str) else list(v or [])

    for name in _COUNTS:
        v = settings.get(name)
        if (
            v is not None
            and not (name == "tp" and v == "auto")
            and (not isinstance(v, int) or isinstance(v, bool) or v < 1)
        ):
            raise UsageError(f"{name}={v!r}: expected a positive integer" + (" or 'auto'" if name == "tp" else ""))
    out = {FIELD_OF_NAME[name]: settings.get(name) for name in allowed}
    for name in ("select", "ignore", "extend_select"):
        if name in out:
            out[name] = codes(out[name])
    out["gpus"] = [gpu] if isinstance(gpu, str) else list(gpu or [])
    return out


def _options(gpu, settings: dict, start: str | None, project: bool, allowed=SETTINGS):
    from colint.engine.config_files import settings_for
    from colint.engine.settings import check_selectors

    opts = settings_for(start or os.getcwd() if project else None, _flags(gpu, settings, allowed))
    check_selectors(opts)  # unknown codes among the keywords
    return opts


def _as_dict(config) -> dict | None:
    """A mapping's keys, or those of a transformers config object (as its config.json would hold them)."""
    if isinstance(config, Mapping):
        return dict(config)
    to_json = getattr(config, "to_json_string", None)
    if callable(to_json) and not isinstance(config, (str, bytes, os.PathLike)):
        import json

        return json.loads(to_json())
    return None


def _document(config):
    """``(path, Document, settings dir)`` for any accepted config."""
    from colint.loading import load, load_text

    data = _as_dict(config)
    if data is not None:
        import json

        try:
            text = json.dumps(data, indent=2, allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"the config dict is not JSON data: {exc}") from None
        doc = load_text(text, DICT_PATH + ".json", syntax="json")
        doc.path = DICT_PATH
        return DICT_PATH, doc, None
    if not isinstance(config, (str, os.PathLike)):
        raise TypeError(
            f"config: expected a dict, a transformers config, a path or a Hub id, not {type(config).__name__}"
        )
    from colint.engine.sources import resolve_one

    src = resolve_one(os.fspath(config))
    try:
        doc = load(src.path)
    except ColintError as exc:
        if exc.path is None:
            exc.path = src.path
        raise
    return src.path, doc, src.settings_dir or os.path.dirname(os.path.abspath(src.path))


def _unlocated(findings, path: str):
    """Findings of a dict have no file to point into: line and column are dropped."""
    if path != DICT_PATH:
        return findings
    return [replace(f, line=None, column=None) for f in findings]


def _raise_unlocated(exc: ColintError, path: str):
    if path == DICT_PATH:
        exc.path, exc.line, exc.column = DICT_PATH, None, None
    raise exc


def check(config: Config, gpu: Union[str, list, None] = None, *, project: bool = False, **settings):
    """Lint one config; the findings, ranked (``colint.findings.Finding``; ``.public()`` is the JSON record).

    >>> import colint
    >>> cfg = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
    ...        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    ...        "vocab_size": 32000, "max_position_embeddings": 4096}
    >>> findings = colint.check(cfg, gpu="b200", tp=8)
    >>> [(f.code, f.severity, f.key) for f in findings]
    [('CL201', 'info', 'intermediate_size'), ('CL202', 'info', 'vocab_size')]
    >>> findings[0].message
    'intermediate_size 11008 is 1376 per shard at tp=8, not a multiple of 128'
    >>> [fx.edits[0].new for fx in findings[0].fixes]
    [11264, 10240]
    >>> colint.check({**cfg, "intermediate_size": 11264}, gpu="b200", tp=8, ignore="CL202")
    []
    """
    from colint.engine.checking import build_targets, check_document
    from colint.rules import select_rules

    path, doc, start = _document(config)
    opts = _options(gpu, settings, start, project)
    rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    targets = build_targets(opts) if any(r.needs_workload for r in rules) else []
    result = check_document(path, doc, targets, opts, rules)
    if result.error is not None:
        _raise_unlocated(result.error, path)
    return _unlocated(result.findings, path)


def inspect(config: Config, gpu: Union[str, None] = None, *, project: bool = False, **settings) -> dict:
    """The normalized spec, parameter counts and weight GEMMs (the ``colint inspect --format json`` record);
    with ``gpu``, ``"estimates"`` for that GPU under the scenario ``settings`` as well (and, with
    ``project=True``, the project's [tool.colint], as ``colint inspect`` reads it).

    >>> import colint
    >>> info = colint.inspect({"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
    ...                        "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000})
    >>> info["params"]["total"], info["kv_cache_bytes_per_token"]
    (6738415616, 524288)
    >>> [(g["name"], g["k"], g["n"]) for g in info["gemms"]][:2]
    [('attn.q_proj', 4096, 4096), ('attn.k_proj', 4096, 4096)]
    >>> est = colint.inspect("examples/llama-2-7b.json", gpu="h100-sxm", tp=2)["estimates"]
    >>> est["gpu"], sorted(est["steps"])
    ('h100-sxm', ['decode', 'prefill'])
    """
    from colint.design.inspecting import estimates_for, inspect_spec
    from colint.normalize import normalize

    path, doc, start = _document(config)
    opts = _options(gpu or [], settings, start, project, allowed=_SCENARIO_SETTINGS)
    try:
        spec = normalize(doc, input_format=opts.input_format, vocab_size=opts.vocab_size)
    except ColintError as exc:
        _raise_unlocated(exc, path)
    info = inspect_spec(spec, path)
    if gpu is not None:  # priced as `colint inspect --gpu` prices it: the scenario fitted to the model
        info["estimates"] = estimates_for(spec, opts)
    return info


def _with_file(config, fn):
    """Run ``fn(path, settings_dir)`` on a file: a dict is written to a temporary config.json first."""
    data = _as_dict(config)
    if data is None:
        path, _doc, start = _document(config)
        return fn(path, start)
    import json
    import tempfile

    with tempfile.TemporaryDirectory(prefix="colint-") as tmp:
        path = os.path.join(tmp, "config.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
        try:
            return fn(path, None)
        except ColintError as exc:
            _raise_unlocated(exc, DICT_PATH)


def suggest(
    config: Config,
    gpu: Union[str, list, None] = None,
    *,
    budget_pct: float = 2.0,
    objective: str = "throughput",
    top: int = 5,
    project: bool = False,
    **settings,
):
    """Variants within ``budget_pct`` % of the parameters that pass every rule, ranked by estimated speed
    (``colint.suggesting.search.SuggestResult``; ``.public()`` is the ``colint suggest --format json`` record).

    >>> import colint
    >>> result = colint.suggest("examples/llama-2-7b.json", gpu="b200", tp=8, top=3)
    >>> result.original["findings"]
    {'error': 0, 'warning': 0, 'info': 2}
    >>> best = result.candidates[0]
    >>> best.edits, round(best.params_delta_pct, 2), best.findings
    ({'num_key_value_heads': 8, 'intermediate_size': 14336, 'num_hidden_layers': 30}, 1.0, {'info': 1})
    """
    from colint.suggesting.search import suggest as run_suggest

    def run(path, start):
        result = run_suggest(
            path, _options(gpu, settings, start, project), budget_pct=budget_pct, objective=objective, top=top
        )
        if _as_dict(config) is not None:
            result.path = DICT_PATH
        return result

    return _with_file(config, run)


def report_data(config: Config, gpu: Union[str, None] = None, *, project: bool = False, **settings) -> dict:
    """What ``colint report`` draws, for one GPU: the roofline of every GEMM, the step-time breakdown,
    the pipeline balance and the findings (JSON data; :func:`chart` draws it).

    >>> import colint
    >>> data = colint.report_data("examples/llama-2-7b.json", gpu="b200", tp=8)
    >>> data["gpu"], data["layers"], sorted(data["steps"])
    ('b200', 32, ['decode', 'prefill'])
    >>> [f["code"] for f in data["findings"]]
    ['CL201', 'CL202']
    """
    from colint.analysis.workload import analyse
    from colint.engine.checking import build_targets, check_document
    from colint.design.reporting import report_data as build

    path, doc, start = _document(config)
    opts = _options(gpu, settings, start, project)
    targets = build_targets(opts)[:1]
    result = check_document(path, doc, targets, opts)
    if result.error is not None:
        _raise_unlocated(result.error, path)
    workload = analyse(result.spec, targets[0].profile, targets[0].scenario)
    return build(path, result.spec, workload, _unlocated(result.findings, path))


def chart(data: dict, name: str = "roofline", fmt: str = "png") -> bytes:
    """One chart of :func:`report_data` (``roofline``, ``time`` or ``pipeline``) as PNG or SVG bytes
    (needs matplotlib: ``pip install 'colint-llm[report]'``). In a notebook:
    ``IPython.display.Image(colint.chart(data))``.
    """
    from colint.reporters.report_charts import CHARTS

    if name not in CHARTS:
        raise UsageError(f"unknown chart {name!r}; choose from {', '.join(CHARTS)}")
    if fmt not in ("png", "svg"):
        raise UsageError(f"chart format {fmt!r}: choose png or svg")
    from colint.reporters.html_report import render_chart

    return render_chart(data, name, fmt)
