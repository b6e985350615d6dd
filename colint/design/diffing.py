"""What a change to a config does (`colint diff BASE HEAD`, `colint check --base REF`): the parameter, memory, KV and
step-time deltas on each target GPU, optionally the frontier's throughput at three interactivity levels, and the
findings new, fixed and unchanged.

Both sides are checked under the same settings (the head's: its [tool.colint] and the flags) and located at the
head's path, so a per-file-ignore or a suppression comment applies alike. Findings are matched by the fingerprint
SARIF gives them (colint.reporters.sarif.fingerprints: path + code + key + GPU + the GEMMs named, an occurrence
number for repeats), computed for both sides at the head's path: a finding the base had is *unchanged* (it never
blocks), one it lacks is *new*, one the head lacks is *fixed*.

Step times: each target GPU's scenario is resolved for each side as `colint check` resolves it (Target.for_model:
the checkpoint's format, the context clipped to the model's positions, the automatic deployment). The base is
then priced at the head's layout and concurrency (tp, ep, pp, kvp, decode sequences), so a delta compares the two
models on one deployment; where the base cannot run at it (a layout its shapes do not divide), at its own, said in
a note. Every step time is an ESTIMATE of colint's step model (colint.analysis.workload.analyse), not a
measurement. The frontier (colint.analysis.frontier, as `colint pareto` prices it) costs 0.2 s to a few seconds
per design and GPU, so it is opt-in (``frontier=True``; `--frontier`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import field
from typing import Any, Optional

from colint.engine.deployment import Deployment
from colint.analysis.frontier import frontier as price_frontier
from colint.analysis.serving import default_serving
from colint.analysis.inventory import param_counts
from colint.analysis.kv_cache import kv_cache_bytes_per_token
from colint.analysis.workload import analyse
from colint.engine.checking import FileResult, Target, build_targets, check_document, check_file, check_grouped
from colint.engine.config_files import settings_for
from colint.errors import ColintError
from colint.findings import Finding
from colint.reporters.sarif import display_path, fingerprints
from colint.loading import load
from colint.engine.revisions import Change, changed_files, classify, relative, repo_root, resolve_revision, show
from colint.rules import select_rules
from colint.engine.settings import Settings
from colint.util.records import dataclass

FRONTIER_LEVELS = (20.0, 50.0, 100.0)  # tokens/s per user: a batch reader, a chat reader, an agent loop
# Where the Markdown summary bolds a slower step when no --fail-on-regression is given: a policy default (2% is
# above the step model's float noise and below any change a reviewer would wave through), not a measured figure.
HIGHLIGHT_SLOWER_PCT = 2.0
STEPS = ("decode", "prefill")
LAYOUT = ("tp", "ep", "pp", "kvp", "decode_concurrency")  # what the base borrows from the head's scenario


@dataclass(frozen=True)
class Delta:
    """One figure before and after (None: that side has none)."""

    before: Optional[float]
    after: Optional[float]

    @property
    def delta(self) -> Optional[float]:
        return None if self.before is None or self.after is None else self.after - self.before

    @property
    def pct(self) -> Optional[float]:
        """The change in percent of the base (None without both sides or from zero)."""
        d = self.delta
        return None if d is None or not self.before else 100.0 * d / self.before

    def public(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "delta": self.delta, "delta_pct": self.pct}


@dataclass
class StepDelta:
    """One target GPU: the step estimates of both sides at one deployment."""

    gpu: str
    deployment: str  # the layout both sides were priced at: "tp=1, 7 seq"
    label: str  # the head's estimate context ("estimate: b200, throughput scenario: ...")
    decode_s: Delta
    prefill_s: Delta
    ftl_s: Delta
    weight_bytes_per_gpu: Delta
    kv_cache_bytes_per_token: Delta  # in the scenario's KV format, one replica
    note: Optional[str] = None  # the base priced elsewhere, or a side not priced on this GPU

    def step(self, name: str) -> Delta:
        return self.decode_s if name == "decode" else self.prefill_s

    def public(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "deployment": self.deployment,
            "label": self.label,
            "decode_s": self.decode_s.public(),
            "prefill_s": self.prefill_s.public(),
            "ftl_s": self.ftl_s.public(),
            "weight_bytes_per_gpu": self.weight_bytes_per_gpu.public(),
            "kv_cache_bytes_per_token": self.kv_cache_bytes_per_token.public(),
            "note": self.note,
        }


@dataclass
class FrontierDelta:
    """One GPU's frontier, both sides: tokens/s per GPU at each of FRONTIER_LEVELS tokens/s per user (None: out of
    reach)."""

    gpu: str
    levels: list[tuple[float, Delta]]

    def public(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "levels": [{"tokens_per_s_per_user": u, "tokens_per_s_per_gpu": d.public()} for u, d in self.levels],
        }


@dataclass(frozen=True)
class Regression:
    path: str
    gpu: str
    step: str
    pct: float


@dataclass
class ConfigDiff:
    """One config's change."""

    path: str  # the head's path (removed: the base's name)
    base_name: Optional[str]  # the base as named: another file, or REF:path
    status: str  # modified, renamed, added, removed (colint diff: modified)
    head: Optional[FileResult] = None  # the head checked (None: removed)
    base_error: Optional[str] = None  # the base could not be read or checked: one line
    params_total: Delta = Delta(None, None)
    params_active: Delta = Delta(None, None)
    kv_cache_bytes_per_token: Delta = Delta(None, None)  # bf16 (2 bytes per element), as `colint inspect`
    steps: list[StepDelta] = field(default_factory=list)
    frontier: Optional[list[FrontierDelta]] = None  # None: not asked for
    new: list[Finding] = field(default_factory=list)
    fixed: list[Finding] = field(default_factory=list)
    unchanged: list[Finding] = field(default_factory=list)
    skipped: Optional[str] = None  # the head is not a decoder LLM config (colint.triage): why

    @property
    def head_error(self) -> Optional[ColintError]:
        return self.head.error if self.head is not None else None

    def regressions(self, threshold_pct: float) -> list[Regression]:
        """Each step on each GPU that got slower by more than ``threshold_pct`` percent."""
        return [
            Regression(self.path, s.gpu, name, pct)
            for s in self.steps
            for name in STEPS
            if (pct := s.step(name).pct) is not None and pct > threshold_pct
        ]


@dataclass
class DiffRun:
    """Every config of one comparison, and what the report says beside them."""

    base: str  # REF (check --base) or the base file (diff)
    commit: Optional[str]  # the commit REF names
    configs: list[ConfigDiff]
    unchanged_files: int = 0  # configs given but identical at REF: not checked
    groups: list[Settings] = field(default_factory=list)  # the settings of each head result, for exit codes

    @property
    def head_results(self) -> list[FileResult]:
        """The head's results with only their new findings: what annotations and the exit code read."""
        out = []
        for c in self.configs:
            if c.head is not None:
                out.append(dataclasses.replace(c.head, findings=list(c.new)))
        return out

    def regressions(self, threshold_pct: float) -> list[Regression]:
        return [r for c in self.configs for r in c.regressions(threshold_pct)]


# ------------------------------------------------------------------------------------------------ one config


def _layout(sc) -> str:
    par = ", ".join(f"{k}={getattr(sc, k)}" for k in ("tp", "ep", "pp", "kvp") if getattr(sc, k) > 1) or "tp=1"
    return f"{par}, {sc.decode_concurrency} seq"


def _step_delta(target: Target, base_spec, head_spec) -> StepDelta:
    """The step estimates of both specs on ``target``'s GPU, the base at the head's layout where it can run."""
    none = Delta(None, None)
    head_t = target.for_model(head_spec)
    label = f"estimate: {target.gpu}, {head_t.scenario.label()}"
    try:
        hw = analyse(head_spec, head_t.profile, head_t.scenario)
    except ColintError as exc:
        return StepDelta(
            target.gpu, _layout(head_t.scenario), label, none, none, none, none, none, note=f"head: {exc.message}"
        )
    note = None
    bw = None
    base_t: Optional[Target] = None
    if base_spec is not None:
        try:
            base_t = target.for_model(base_spec)
        except ColintError as exc:  # (for_model reports a format the GPU lacks itself: a guard)
            base_t, note = None, f"base: {exc.message}"
    if base_spec is not None and base_t is not None:
        own = base_t.scenario
        borrowed = dataclasses.replace(own, **{k: getattr(head_t.scenario, k) for k in LAYOUT})
        if _layout(own) != _layout(borrowed):
            note = f"the base's own deployment is {_layout(own)}; both priced at the head's"
        try:
            bw = analyse(base_spec, base_t.profile, borrowed)
        except ColintError as exc:
            note = f"the base priced at its own deployment {_layout(own)} (the head's: {exc.message})"
            try:
                bw = analyse(base_spec, base_t.profile, own)
            except ColintError as exc2:
                note = f"base: {exc2.message}"
        if bw is not None and not bw.memory_fits and note is not None:
            note += " (where the base does not fit in memory)"

    def pair(get) -> Delta:
        def value(w) -> Optional[float]:
            v = None if w is None else get(w)
            return None if v is None else float(v)  # no figure stays no figure (a missing FTL is not 0 s)

        return Delta(value(bw), value(hw))

    return StepDelta(
        target.gpu,
        _layout(head_t.scenario),
        label,
        pair(lambda w: w.steps["decode"].estimate_s),
        pair(lambda w: w.steps["prefill"].estimate_s),
        pair(lambda w: w.steps["prefill"].ftl_s),
        pair(lambda w: w.weight_bytes_per_gpu),
        pair(lambda w: w.kv_bytes_per_token),
        note,
    )


def _frontier_scenario(opts: Settings, target: Target, spec):
    """The scenario `colint pareto` prices (its formats and context; the deployment is what the frontier
    enumerates), in the checkpoint's own format when no --dtype was given, as `colint check` does."""
    sc = Deployment.from_settings(opts).frontier_scenario(target.profile.name)
    if opts.dtype is None:
        own = target.for_model(spec).scenario
        sc = dataclasses.replace(
            sc,
            weights=own.weights,
            activations=own.activations,
            kv_cache=sc.kv_cache if opts.kv_dtype else own.kv_cache,
        )
    return sc


def _frontier_delta(target: Target, opts: Settings, base_spec, head_spec) -> FrontierDelta:
    def throughputs(spec) -> list[Optional[float]]:
        if spec is None:
            return [None] * len(FRONTIER_LEVELS)
        try:
            sc = _frontier_scenario(opts, target, spec)
            # served as `colint pareto` serves by default: aggregated, each request's prefill charged (issue 31)
            f = price_frontier(spec, target.profile, sc, serving=default_serving(sc.context))
        except ColintError:
            return [None] * len(FRONTIER_LEVELS)
        return [f.throughput_at(u) for u in FRONTIER_LEVELS]

    before, after = throughputs(base_spec), throughputs(head_spec)
    return FrontierDelta(target.gpu, [(u, Delta(b, a)) for u, b, a in zip(FRONTIER_LEVELS, before, after)])


def _matched(base: list[Finding], head: list[Finding], path: str, cwd: Optional[str]):
    """(new, fixed, unchanged): the findings told apart by their SARIF fingerprints, both at ``path``."""
    fb = fingerprints(path, base, cwd)
    fh = fingerprints(path, head, cwd)
    at_base, at_head = set(fb), set(fh)
    new = [f for f, k in zip(head, fh) if k not in at_base]
    unchanged = [f for f, k in zip(head, fh) if k in at_base]
    fixed = [f for f, k in zip(base, fb) if k not in at_head]
    return new, fixed, unchanged


def compare(
    head: Optional[FileResult],
    base: Optional[FileResult],
    opts: Settings,
    targets: list[Target],
    *,
    status: str,
    base_name: Optional[str],
    path: Optional[str] = None,
    base_error: Optional[str] = None,
    frontier: bool = False,
    cwd: Optional[str] = None,
) -> ConfigDiff:
    """The change from ``base`` to ``head`` (either None: added, removed; a result with an error: that side has
    no figures). ``path``: where a removed config was."""
    if base is not None and base.error is not None and base_error is None:
        base_error = base.error.located(base_name)
    where = head.path if head is not None else (path or (base.path if base is not None else ""))
    out = ConfigDiff(path=where, base_name=base_name, status=status, head=head, base_error=base_error)
    if head is not None and head.skipped is not None:
        out.skipped = head.skipped.message()
        return out
    if head is not None and head.error is not None:
        return out  # the head could not be checked: its error is the report
    head_spec = head.spec if head is not None else None
    base_ok = base is not None and base.error is None and base.skipped is None
    base_spec = base.spec if base_ok and base is not None else None
    head_findings = head.findings if head_spec is not None and head is not None else []
    base_findings = base.findings if base_ok and base is not None else []
    out.new, out.fixed, out.unchanged = _matched(base_findings, head_findings, where, cwd)
    pb = param_counts(base_spec) if base_spec is not None else None
    ph = param_counts(head_spec) if head_spec is not None else None
    out.params_total = Delta(None if pb is None else pb.total, None if ph is None else ph.total)
    out.params_active = Delta(None if pb is None else pb.active_per_token, None if ph is None else ph.active_per_token)
    out.kv_cache_bytes_per_token = Delta(
        None if base_spec is None else kv_cache_bytes_per_token(base_spec),
        None if head_spec is None else kv_cache_bytes_per_token(head_spec),
    )
    if head_spec is not None:
        out.steps = [_step_delta(t, base_spec, head_spec) for t in targets]
        if frontier:
            out.frontier = [_frontier_delta(t, opts, base_spec, head_spec) for t in targets]
    elif base_spec is not None:  # removed: the base's own figures, nothing after
        out.steps = [_step_delta_removed(t, base_spec) for t in targets]
        if frontier:
            out.frontier = [_frontier_delta(t, opts, base_spec, None) for t in targets]
    return out


def _step_delta_removed(target: Target, spec) -> StepDelta:
    t = target.for_model(spec)
    label = f"estimate: {target.gpu}, {t.scenario.label()}"
    try:
        w = analyse(spec, t.profile, t.scenario)
    except ColintError as exc:
        none = Delta(None, None)
        return StepDelta(target.gpu, _layout(t.scenario), label, none, none, none, none, none, note=exc.message)
    return StepDelta(
        target.gpu,
        _layout(t.scenario),
        label,
        Delta(w.steps["decode"].estimate_s, None),
        Delta(w.steps["prefill"].estimate_s, None),
        Delta(w.steps["prefill"].ftl_s, None),
        Delta(w.weight_bytes_per_gpu, None),
        Delta(w.kv_bytes_per_token, None),
    )


# ------------------------------------------------------------------------------------------------ commands


def _targets_for(opts: Settings, cache: dict[int, tuple]) -> tuple[list, list[Target]]:
    if id(opts) not in cache:
        rules = select_rules(opts.select, opts.ignore, opts.extend_select)
        cache[id(opts)] = (rules, build_targets(opts))
    rules, targets = cache[id(opts)]
    return rules, targets


def diff_files(
    base_path: str, head_path: str, flags: Mapping[str, Any], *, isolated: bool = False, frontier: bool = False
) -> DiffRun:
    """`colint diff BASE HEAD`: both files checked under the head's settings."""
    results, groups = check_grouped([head_path], flags, isolated=isolated)
    head, opts = results[0], groups[0]
    rules, targets = _targets_for(opts, {})
    base, base_error = None, None
    if head.error is None and head.skipped is None:
        try:  # read as a file, checked at the head's path: suppressions and per-file-ignores apply alike
            base = check_document(head.path, load(base_path), targets, opts, rules)
        except ColintError as exc:
            base_error = exc.located(base_path)
        if base is not None and base.error is not None:
            base_error, base = base.error.located(base_path), None
    diff = compare(
        head, base, opts, targets, status="modified", base_name=base_path, base_error=base_error, frontier=frontier
    )
    return DiffRun(base=base_path, commit=None, configs=[diff], groups=[opts])


def _under(rel: str, prefixes: list[str]) -> bool:
    return any(p in ("", ".") or rel == p or rel.startswith(p.rstrip("/") + "/") for p in prefixes)


def diff_revision(
    ref: str,
    paths: list[str],
    flags: Mapping[str, Any],
    *,
    args: tuple[str, ...] = (),
    isolated: bool = False,
    strict: bool = False,
    settings_dirs: Optional[dict[str, str]] = None,
    frontier: bool = False,
) -> DiffRun:
    """`colint check --base REF`: ``paths`` (the files the PATH arguments expanded to; none: every config git sees
    changed since REF) compared with their version at REF, renames followed; configs removed since REF under the
    PATH arguments ``args`` (or anywhere, with none) are reported as removed. Files identical at REF are counted,
    not checked: none of their findings is new. Raises UsageError when not in a git work tree or REF is unknown."""
    here = os.getcwd()
    root = repo_root(here)
    commit = resolve_revision(root, ref)
    checked, unchanged, removed = _revision_changes(root, commit, paths, args, here)
    head_paths = [c.new for c in checked if c.new is not None]
    results, groups = check_grouped(
        head_paths, flags, isolated=isolated, strict=strict, settings_dirs=settings_dirs, parallel=True
    )
    cache: dict[int, tuple] = {}
    out: list[ConfigDiff] = []
    for c, head, opts in zip(checked, results, groups):
        rules, targets = _targets_for(opts, cache)
        base, base_error = None, None
        base_name = f"{ref}:{c.old}" if c.old else None
        if c.old is not None and head.error is None and head.skipped is None:
            try:
                raw = show(root, commit, c.old)
            except ColintError as exc:
                base_error = f"{base_name}: error: {exc.message}"
            else:
                base = check_file(head.path, targets, opts, rules, raw=raw, syntax=_syntax(c.old))
                if base.error is not None:
                    base_error = base.error.located(base_name)
                    base = None
        out.append(
            compare(
                head,
                base,
                opts,
                targets,
                status=c.status,
                base_name=base_name,
                base_error=base_error,
                frontier=frontier,
                cwd=here,
            )
        )
    for c in removed:
        assert c.old is not None
        opts = _settings_where(os.path.join(root, c.old), flags, isolated, strict)
        gone = _removed_diff(root, commit, ref, c.old, opts, cache, frontier, here)
        if gone is not None:
            out.append(gone)
    return DiffRun(base=ref, commit=commit, configs=out, unchanged_files=unchanged, groups=list(groups))


def _syntax(path: str) -> str:
    """The loader a config's text at a revision takes, by its name."""
    return "json" if path.lower().endswith(".json") else "yaml"


def _revision_changes(root: str, commit: str, paths: list[str], args: tuple[str, ...], here: str):
    """(changed configs to check, how many are unchanged, configs removed since ``commit``): under the PATH
    arguments ``args`` (``paths``, what they expanded to), or every config git sees changed."""
    configs = changed_files(root, commit, configs_only=True)
    if args:
        prefixes = [relative(root, a) for a in args]
        changes = classify(root, commit, paths)
        removed = [c for c in configs if c.status == "removed" and c.old and _under(c.old, prefixes)]
    else:
        changes = [
            Change(c.status, c.old, display_path(os.path.join(root, c.new), here)) for c in configs if c.new is not None
        ]
        removed = [c for c in configs if c.status == "removed"]
    checked = [c for c in changes if c.status != "unchanged"]
    return checked, len(changes) - len(checked), removed


def _settings_where(where: str, flags: Mapping[str, Any], isolated: bool, strict: bool) -> Settings:
    """The settings a removed config at ``where`` would have been checked with (from the nearest folder left)."""
    start = os.path.dirname(where)
    while not os.path.isdir(start):  # the folder may have gone with the file
        start = os.path.dirname(start)
    return settings_for(start, flags, isolated=isolated, strict=strict)


def _removed_diff(
    root: str, commit: str, ref: str, old: str, opts: Settings, cache: dict, frontier: bool, here: str
) -> Optional[ConfigDiff]:
    """A config removed since ``ref``: its findings at the revision, all fixed; None where it was no decoder
    LLM config then either."""
    where = os.path.join(root, old)
    rules, targets = _targets_for(opts, cache)
    base_name = f"{ref}:{old}"
    try:
        raw = show(root, commit, old)
    except ColintError as exc:
        return ConfigDiff(
            path=display_path(where, here),
            base_name=base_name,
            status="removed",
            base_error=f"{base_name}: error: {exc.message}",
        )
    base = check_file(where, targets, opts, rules, raw=raw, syntax=_syntax(old))
    if base.skipped is not None:
        return None  # not a decoder LLM config then either
    return compare(
        None,
        base,
        opts,
        targets,
        status="removed",
        base_name=base_name,
        path=display_path(where, here),
        frontier=frontier,
        cwd=here,
    )


def exit_code(run: DiffRun, *, fail_on_regression: Optional[float] = None) -> int:
    """2 when a head could not be checked; 1 when a new finding is at or above its group's fail-on, or a step got
    slower than ``fail_on_regression`` percent on a target GPU; else 0. Findings present at the base never
    count."""
    from colint.engine.checking import grouped_exit_code

    results = run.head_results
    code = grouped_exit_code(results, run.groups[: len(results)]) if results else 0
    if code == 0 and fail_on_regression is not None and run.regressions(fail_on_regression):
        return 1
    return code


# ------------------------------------------------------------------------------------------------ plain data


def config_public(c: ConfigDiff, threshold_pct: float) -> dict[str, Any]:
    """One config's change in the JSON shape of ``colint schema diff`` (docs/diff.schema.json)."""
    err = c.head_error
    return {
        "path": c.path,
        "base": c.base_name,
        "status": c.status,
        "base_error": c.base_error,
        "head_error": err.located(c.path) if err is not None else None,
        "skipped": c.skipped,
        "params_total": c.params_total.public(),
        "params_active_per_token": c.params_active.public(),
        "kv_cache_bytes_per_token_bf16": c.kv_cache_bytes_per_token.public(),
        "steps": [s.public() for s in c.steps],
        "frontier": None if c.frontier is None else [f.public() for f in c.frontier],
        "findings": {
            "new": [f.public() for f in c.new],
            "fixed": [f.public() for f in c.fixed],
            "unchanged": [f.public() for f in c.unchanged],
        },
        "regressions": [{"gpu": r.gpu, "step": r.step, "delta_pct": r.pct} for r in c.regressions(threshold_pct)],
    }


def run_public(run: DiffRun, threshold_pct: float) -> dict[str, Any]:
    """A whole comparison in the JSON shape of ``colint schema diff``."""
    from colint.util.version import __version__

    return {
        "version": __version__,
        "estimate": "step times, memory and throughput are estimates of colint's step model, not measurements",
        "base": run.base,
        "commit": run.commit,
        "regression_threshold_pct": threshold_pct,
        "frontier_levels_tokens_per_s_per_user": list(FRONTIER_LEVELS),
        "unchanged_files": run.unchanged_files,
        "configs": [config_public(c, threshold_pct) for c in run.configs],
        "summary": {
            "configs": len(run.configs),
            "new": sum(len(c.new) for c in run.configs),
            "fixed": sum(len(c.fixed) for c in run.configs),
            "unchanged": sum(len(c.unchanged) for c in run.configs),
            "regressions": len(run.regressions(threshold_pct)),
        },
    }
