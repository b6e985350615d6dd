"""`colint check`: files → findings, the whole flow for each file.

load → normalize → (per GPU) analyse → rules → rank. An input error ends that file with a
located error (exit 2 overall) and the other files are still checked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import field
from typing import Any, Optional, cast

from colint.analysis.checkpoint_format import checkpoint_format, native_or_weight_only
from colint.analysis.deployments import aligned_tp, automatic_deployment
from colint.analysis.scenario import fit_context, fit_to_model
from colint.analysis.workload import analyse
from colint.engine.config_files import find_config
from colint.engine.deployment import Deployment
from colint.errors import ColintError, InternalError, LoadError, ProfileError, UsageError
from colint.findings import SEVERITY_ORDER, Finding, Fix, Severity, rank
from colint.hardware_profiles import load_profile
from colint.util.fileio import read_limited
from colint.loading import MAX_BYTES, load, load_bytes, load_text
from colint.normalize import normalize
from colint.util.parallel import map_ordered, workers
from colint.rules import Context, all_rules, select_rules
from colint.rules.base import field_keys
from colint.engine.settings import Settings, resolve
from colint.engine.suppression import Baseline, apply_suppressions
from colint.triage import triage
from colint.util.records import dataclass


@dataclass
class FileResult:
    path: str
    format: Optional[str] = None
    model_type: Optional[str] = None
    error: Optional[ColintError] = None
    findings: list[Finding] = field(default_factory=list)
    spec: Any = None
    doc: Any = None  # the loaded Document (text + key spans), for reporters that locate fix edits
    max_positions: Optional[int] = None  # the spec's max_position_embeddings: the estimate labels' context limit
    suppressed: int = 0  # findings dropped by comments, per-file-ignores or the baseline
    skipped: Any = None  # colint.triage.Triage: not a decoder LLM config, so not checked
    labels: list[str] = field(default_factory=list)  # "estimate: GPU, scenario" of each target this file was checked at

    def text_edits(self, fix):
        """``fix`` resolved against this file's text (colint.fixing.fix_text.text_edits): what --fix splices,
        for reporters that show a fix in place; None when only the YAML round trip can write it."""
        from colint.fixing.fix_text import text_edits

        return text_edits(self.doc, fix)


@dataclass
class Target:
    """One GPU + scenario the rules run against. ``auto_layout`` / ``auto_concurrency``: the user named no
    tp/ep/pp/kvp (no concurrency): colint.analysis.deployments.automatic_deployment chooses them per model, and
    deployment findings on an automatic layout are advice (info)."""

    gpu: str
    profile: Any
    scenario: Any
    auto_layout: bool = False
    auto_concurrency: bool = False

    auto_dtype: bool = False  # no --dtype: the checkpoint's own format (colint.analysis.checkpoint_format)
    tp_auto: bool = False  # --tp auto: tp is the largest that aligns (colint.analysis.deployments.aligned_tp)
    max_tp: int = (
        64  # the largest tp --tp auto considers: CL204's max_tp option, so the engine prices what CL204 reports
    )
    # for_model has run: the deployment is this model's (a closure re-check of an edited state keeps it, so a fix
    # is judged at the deployment the file was checked at, and the layout search runs once per file)
    resolved: bool = False

    def for_model(self, spec) -> Target:
        """This target for one model: its checkpoint's format, its context clipped to the model's positions, its
        automatic deployment."""
        if self.resolved:
            return self
        sc = fit_to_model(self.scenario, spec)
        fmt_note = None
        if self.auto_dtype and (ck := checkpoint_format(spec)) is not None:
            weights, mapped = native_or_weight_only(self.profile, ck.weights)
            acts = "bf16" if weights in ("int8_wo", "int4_wo") else weights
            sc = dataclasses.replace(sc, weights=weights, activations=acts, kv_cache=ck.kv_cache or sc.kv_cache)
            fmt_note = f"{ck.weights} from {ck.why}" + (
                f", run weight-only ({weights}): {self.gpu} has no native {ck.weights}" if mapped else ""
            )
        fixed_tp = None
        if self.tp_auto:
            # --tp auto, decoded once per model: every rule prices the tp CL204 reports
            a = aligned_tp(spec, domain=self.profile.domain_size, kvp=sc.kvp, max_tp=self.max_tp)
            fixed_tp = max(1, a.tp) if a is not None else 1
            sc = dataclasses.replace(sc, tp=fixed_tp)
        if self.auto_layout or self.auto_concurrency:
            try:
                sc, note = automatic_deployment(
                    spec,
                    self.profile,
                    sc,
                    layout=self.auto_layout,
                    concurrency=self.auto_concurrency,
                    fixed_tp=fixed_tp,
                )
            except ProfileError:
                note = None  # a format the GPU lacks: CL401 reports it at the scenario as given
            if note:
                fmt_note = f"{fmt_note}; {note}" if fmt_note else note
        if fmt_note:
            sc = dataclasses.replace(sc, auto_note=fmt_note)
        return dataclasses.replace(self, scenario=sc, resolved=True)


def build_targets(opts: Settings) -> list[Target]:
    """Resolve profiles and scenarios once for all files (raises UsageError/ProfileError)."""
    targets = []
    dep = Deployment.from_settings(opts)
    for gpu in opts.gpus:
        profile = load_profile(gpu)
        targets.append(
            Target(
                gpu=profile.name,
                profile=profile,
                scenario=dep.scenario_for(profile.name),
                # --tp auto with nothing else named: tp is the aligned one, ep and pp are chosen around it
                auto_layout=not dep.layout_named,
                auto_concurrency=dep.concurrency is None,
                auto_dtype=dep.dtype is None,
                tp_auto=dep.tp_auto,
                max_tp=int(
                    opts.rule_options.get("CL204", {}).get("max_tp", all_rules()["CL204"].options["max_tp"].default)
                ),
            )
        )
    return targets


def check_spec(
    spec,
    targets: list[Target],
    opts: Settings,
    rules=None,
    *,
    stop: Optional[Callable[[Finding], bool]] = None,
    first: Sequence[str] = (),
    skip: Collection[str] = (),
    brief: bool = False,
    resolved: Optional[list] = None,
) -> list[Finding]:
    """The ranked findings of ``rules`` on ``spec`` at each target.

    With ``stop`` (colint.engine.closure's re-checks, which only ask whether a state raises a new finding):
    the rules whose codes are in ``first`` run first, and the check ends at the first rule that reports
    a finding ``stop`` accepts; what comes back is then the findings so far, unranked, not a full check.
    A state that raises nothing ``stop`` accepts runs every rule either way, but those in ``skip`` (rules that
    cannot emit a finding ``stop`` accepts: colint.engine.closure). ``brief``: only the findings' code, key, GPU and
    severity will be read (colint.rules.base.Context.brief)."""
    if rules is None:
        rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    position = {r.code: i for i, r in enumerate(rules)}  # the order findings are ranked from
    if skip:
        rules = [r for r in rules if r.code not in skip]
    if stop is not None and first:
        rank_of = {code: i for i, code in enumerate(first)}
        rules = sorted(rules, key=lambda r: rank_of.get(r.code, len(rank_of)))
    runs: list[tuple[int, int, list[Finding]]] = []  # (target, rule position, its findings), in the order run
    spec_only = [r for r in rules if not r.needs_workload]
    per_gpu = [r for r in rules if r.needs_workload]

    def run(r, t: Target | None, workload=None) -> list[Finding]:
        return run_rule(r, spec, t, workload, opts, brief=brief)

    def stopped(target: int, r, new: list[Finding]) -> bool:
        runs.append((target, position.get(r.code, 0), new))
        return stop is not None and any(stop(f) for f in new)

    def so_far() -> list[Finding]:
        return [f for *_, new in runs for f in new]

    if targets:
        # the scenario respects the model: a context beyond its maximum positions is clipped (the label says so), and
        # a deployment the user did not name is chosen for it (Target.for_model)
        targets = [t.for_model(spec) for t in targets]
        if resolved is not None:
            resolved.extend(targets)  # the deployment each GPU was checked at (FileResult.labels)
    for r in spec_only:  # once per file, on the first target's GPU and scenario where there is one
        if stopped(-1, r, run(r, targets[0] if targets else None)):
            return so_far()
    for i, t in enumerate(targets if per_gpu else []):
        try:
            workload = analyse(spec, t.profile, t.scenario)
        except ProfileError:
            # the format is not native on this GPU: rules marked `without_workload` (CL401) report it as a
            # finding located in the file; with none of them selected it stays a run error (exit 2)
            fallback = [r for r in per_gpu if r.without_workload]
            if not fallback:
                raise
            reported = [(r, run(r, t)) for r in fallback]
            if not any(new for _, new in reported):  # some other profile problem: not a format the rules can explain
                raise
            if any([stopped(i, r, new) for r, new in reported]):
                return so_far()
            continue
        for r in per_gpu:
            if stopped(i, r, run(r, t, workload)):
                return so_far()
    # each rule's findings in the rules' own order, whatever order they ran in (ranking keeps ties in it)
    findings = [f for *_, new in sorted(runs, key=lambda run: run[:2]) for f in new]
    return rank(_once_across_gpus(findings) if len(targets) > 1 else findings)


def run_rule(r, spec, t: Target | None, workload, opts: Settings, *, brief: bool) -> list[Finding]:
    """Rule ``r`` on its own Context (nothing one rule sees is set by another), its findings checked against what
    the rule declares, graded as advice on a deployment nobody named, and with the project's severity overrides."""
    ctx = Context(
        rule=r,
        spec=spec,
        workload=workload,
        gpu=t.gpu if t else None,
        profile=t.profile if t else None,
        scenario=t.scenario if t else None,
        options=opts.rule_options,
        # --tp auto, decoded once into the target (Deployment.from_settings): what CL204 reports, a GPU rule's business
        tp_auto=t is not None and t.tp_auto and r.needs_workload,
        brief=brief,
    )
    out = list(r.check(ctx))
    if not out:
        return out
    _check_declared(r, spec, out, ctx.gpu if r.needs_workload else None, opts)
    if r.kind == "deployment" and t is not None and t.auto_layout:
        # a deployment nobody named: its findings advise (info), they never block (issue 29)
        out = [f if f.severity == "info" else dataclasses.replace(f, severity="info") for f in out]
    overrides = opts.severity_overrides
    if overrides:
        out = [
            dataclasses.replace(f, severity=cast(Severity, overrides[f.code])) if f.code in overrides else f
            for f in out
        ]
    return out


def _check_declared(r, spec, out: list[Finding], gpu: Optional[str], opts: Settings) -> None:
    """A rule emits nothing above its most severe level, nor above its ceiling on this spec (colint.engine.closure
    skips, in warning-level re-checks, the rules that cannot warn, and those a state's spec caps at what the file
    reported), and a rule that declares fields points at them alone, on its own GPU (the closure relies on
    both): a finding that breaks either is a bug in colint, reported as one."""
    most = r.ceiling_on(spec, opts.rule_options.get(r.code))
    for f in out:
        if SEVERITY_ORDER[f.severity] < SEVERITY_ORDER[most]:
            raise RuntimeError(f"{r.code} emitted a finding at {f.severity}, above its most severe level {most}")
    if r.fields:
        keys = field_keys(spec, r.fields)
        for f in out:
            if f.key not in keys or f.gpu != gpu:
                raise RuntimeError(
                    f"{r.code} emitted a finding on {f.key} [{f.gpu}], not on its fields {', '.join(r.fields)} [{gpu}]"
                )


def _once_across_gpus(findings: list[Finding]) -> list[Finding]:
    """A finding made gpu_specific=False (it depends on the spec and the parallel layout alone) is the same on every
    GPU: reported once."""
    seen: set = set()
    kept = []
    for f in findings:
        if f.gpu is None:
            k = (f.code, f.key, f.message)
            if k in seen:
                continue
            seen.add(k)
        kept.append(f)
    return kept


def check_file(
    path: str,
    targets: list[Target],
    opts: Settings,
    rules=None,
    raw: Optional[bytes] = None,
    syntax: Optional[str] = None,
) -> FileResult:
    """Check the file at ``path``, or ``raw`` (standard input) named ``path``."""
    if rules is None:
        rules = select_rules(opts.select, opts.ignore, opts.extend_select)

    try:
        doc = load(path) if raw is None else load_bytes(raw, path, syntax)
    except ColintError as exc:
        if exc.path is None:
            exc.path = path
        return FileResult(path=path, error=exc)
    except Exception as exc:  # noqa: BLE001 - one file's bug must not abort the others (MemoryError included)
        return FileResult(path=path, error=InternalError.wrap(exc, path))
    if not opts.strict and opts.input_format is None:
        skipped = triage(doc)
        if skipped is not None:
            return FileResult(path=path, skipped=skipped)
    return check_document(path, doc, targets, opts, rules)


def check_document(
    path: str, doc, targets: list[Target], opts: Settings, rules=None, *, close: bool = True
) -> FileResult:
    """Check an already-loaded Document (``--fix`` re-checks its edited text this way, ``close=False``:
    without re-checking each fix's own state, colint.engine.closure)."""
    if rules is None:
        rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    result = FileResult(path=path)
    try:
        spec = normalize(doc, input_format=opts.input_format, vocab_size=opts.vocab_size)
        result.format, result.model_type, result.spec, result.doc = spec.format, spec.model_type, spec, doc
        result.max_positions = spec.max_position_embeddings
        resolved: list[Target] = []
        findings = check_spec(spec, targets, opts, rules, resolved=resolved)
        result.labels = [f"estimate: {t.gpu}, {t.scenario.label()}" for t in resolved]
        if close and opts.close_advice and any(fx.edits or fx.settings for f in findings for fx in f.fixes):
            # each fix is re-checked at the deployment this file was checked at (its resolved targets); a file
            # without such fixes does not import the closure (start-up)
            from colint.engine.closure import close_advice

            findings = close_advice(
                path, doc, spec, findings, resolved, opts, rules, check_spec=check_spec, build_targets=build_targets
            )
        findings = _locate_keys(doc, findings)
        result.findings, result.suppressed = apply_suppressions(path, doc, findings, {r.code for r in rules}, opts)
    except ColintError as exc:
        if exc.path is None:
            exc.path = path
        return FileResult(path=path, error=exc)
    except Exception as exc:  # noqa: BLE001 - one file's bug must not abort the others
        return FileResult(path=path, error=InternalError.wrap(exc, path))
    return result


def _locate_keys(doc, findings: list[Finding]) -> list[Finding]:
    """A finding that names a key present in the file but has no line (a key the spec does not record as a
    source: quantization_config entries, ...) gets the key's line from the Document."""
    out = []
    for f in findings:
        if f.line is None and f.key:
            from colint.fixing.fix_text import (
                parse_key,
            )  # here: colint.fixing.fix_text (difflib, tempfile) only when needed

            try:
                path = parse_key(f.key)
            except Exception:  # a key text the parser does not know: leave it unlocated
                path = None
            if path and doc.has(path):
                line, column = doc.location(path)
                f = dataclasses.replace(f, line=line, column=column)
        out.append(f)
    return out


def check_paths(
    paths: list[str], opts: Settings, stdin=None, *, parallel: bool = False, keep_docs: bool = True
) -> list[FileResult]:
    """``stdin``: (name, raw bytes, syntax or None) for the one path read from standard input. ``parallel``:
    many files are checked in worker processes (colint.util.parallel; the results are the same, in order).
    ``keep_docs=False``: the results carry no Document and no ModelSpec (only SARIF's fix regions, --fix and
    --diff read the Document, and ``colint check`` reads neither: its estimate labels take the model's maximum
    positions, which a result keeps); a worker's result then travels at a third of the size, and this process
    unpickles it in a third of the time (1,000-config large-MoE mix: 0.29 -> ~0.1 s, mostly the specs)."""
    rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    # GPU profiles and scenarios only when a selected rule needs a workload (--select CL0 skips them)
    targets = build_targets(opts) if any(r.needs_workload for r in rules) else []

    def one(p: str, *read) -> FileResult:
        r = check_file(p, targets, opts, rules, *read)
        if not keep_docs:
            r.doc = r.spec = None
        return r

    if parallel and stdin is None and workers(len(paths)) > 1:  # (a pre-commit run on a few files: no pool)
        distinct, kinds = _file_kinds(paths)
        return map_ordered(one, paths, distinct=distinct, kinds=kinds)
    return [one(p, *(stdin[1:] if stdin is not None and p == stdin[0] else ())) for p in paths]


_DIGITS = b"0123456789"  # deleted from a file's bytes for its kind (bytes.translate: ~5x faster than a regex's sub)


def _file_kinds(paths: list[str]) -> tuple[int, list]:
    """How many of ``paths`` differ in content, and a kind per path for colint.util.parallel: copies of one config
    answer from the memos once one was checked, distinct files do not; files that differ only in their numbers
    (one family's sizes, a sweep of widths) share most of what the memos hold (attention cores, GEMM shapes,
    kernel searches), so a worker takes them together. Read as the loader reads them (fileio.read_limited: a
    FIFO or /dev/zero is refused unread); one the loader would refuse counts as its own."""
    seen: set = set()
    kinds: list = []
    for p in paths:
        try:
            data = read_limited(p, MAX_BYTES, LoadError)
        except ColintError:
            seen.add(p)
            kinds.append(p)
            continue
        seen.add(hash(data))
        kinds.append(hash(data.translate(None, _DIGITS)))
    return len(seen), kinds


def summary(results: list[FileResult]) -> dict:
    findings = [f for r in results for f in r.findings]
    return {
        "files": len(results),
        "skipped": sum(r.skipped is not None for r in results),
        "errors": sum(f.severity == "error" for f in findings),
        "warnings": sum(f.severity == "warning" for f in findings),
        "infos": sum(f.severity == "info" for f in findings),
    }


FAIL_LEVELS = {"error": 0, "warning": 1, "info": 2, "never": -1}


def exit_code(results: list[FileResult], fail_on: str) -> int:
    if any(r.error is not None for r in results):
        return 2
    threshold = FAIL_LEVELS[fail_on]
    if threshold < 0:
        return 0
    return 1 if any(SEVERITY_ORDER[f.severity] <= threshold for r in results for f in r.findings) else 0


def grouped_exit_code(results: list[FileResult], groups: list) -> int:
    """The exit code of a run whose files were checked under different settings (``groups``, parallel
    to ``results``): the worst of each group's code at that group's own ``fail_on``."""
    return max(
        (
            exit_code([r for r, g in zip(results, groups) if g is eff], eff.fail_on)
            for eff in {id(g): g for g in groups}.values()
        ),
        default=0,
    )


def estimate_labels(results: list[FileResult], groups: list) -> list[str]:
    """The estimate context of each checked file's GPUs and scenario, as the rules write it into their
    details (``estimate: b200, throughput scenario: bf16, ...``, the context clipped to the model's
    maximum positions, the automatic deployment chosen for the model), in first-seen order: the text reporters print each once per run instead of once
    per finding. Only files with GPU-specific findings made estimates."""
    labels: list[str] = []
    targets_of: dict[int, list[Target]] = {}
    for r, eff in zip(results, groups):
        if eff is None or r.format is None or not any(f.gpu for f in r.findings):
            continue
        if r.labels:
            labels.extend(label for label in r.labels if label not in labels)
            continue
        if id(eff) not in targets_of:
            try:
                targets_of[id(eff)] = build_targets(eff)
            except ColintError:
                targets_of[id(eff)] = []
        for t in targets_of[id(eff)]:
            label = f"estimate: {t.gpu}, {fit_context(t.scenario, r.max_positions).label()}"
            if label not in labels:
                labels.append(label)
    return labels


def check_grouped(
    paths: list[str],
    flags: Mapping[str, Any],
    *,
    isolated: bool = False,
    baseline_path: Optional[str] = None,
    settings_dirs: Optional[dict[str, str]] = None,
    strict: bool = False,
    stdin=None,
    use_baseline: bool = True,
    parallel: bool = False,
    keep_docs: bool = True,
):
    """Check ``paths`` under the settings in force for each (nearest config file + CLI flags; the
    config file is looked up from ``settings_dirs[path]`` when given, else beside the file).

    Returns the results in input order and, parallel to them, the ``Settings`` each was
    checked with. Files sharing a config file are checked together (profiles resolved once).
    ``use_baseline=False`` applies no baseline at all, not even the config's ``baseline =`` (``--write-baseline``
    records every current finding, and the file it names may not exist yet). ``parallel``: many files are
    checked in worker processes (colint.util.parallel). ``keep_docs``: see check_paths."""
    import os

    by_config: dict[Optional[str], list[int]] = {}
    configs: dict[Optional[str], Any] = {}
    results: list[Optional[FileResult]] = [None] * len(paths)
    groups: list[Any] = [None] * len(paths)
    broken: list[int] = []
    found: dict[str, Any] = {}  # start directory -> its config: a run's files mostly share a few directories
    for i, p in enumerate(paths):
        start = (settings_dirs or {}).get(p) or os.path.dirname(os.path.abspath(p))
        try:
            if not isolated and start not in found:
                found[start] = find_config(start)
            cfg = None if isolated else found[start]
        except ColintError as exc:  # a broken settings file (a pull request's) ends the files it governs only
            where = exc.located().rsplit(": error: ", 1)[0]
            results[i] = FileResult(
                path=p, error=UsageError(f"not checked: its settings file {where} is invalid: {exc.message}", path=p)
            )
            broken.append(i)
            continue
        key = cfg.path if cfg is not None else None
        configs[key] = cfg
        by_config.setdefault(key, []).append(i)
    baselines: dict[str, Any] = {}
    for key, idxs in by_config.items():
        opts = resolve(configs[key], flags, strict=strict)
        bpath = (baseline_path or opts.baseline) if use_baseline else None
        if bpath:
            ab = os.path.abspath(bpath)
            if ab not in baselines:
                baselines[ab] = Baseline.load(bpath)
            opts = dataclasses.replace(opts, loaded_baseline=baselines[ab])
        for i, r in zip(
            idxs, check_paths([paths[i] for i in idxs], opts, stdin, parallel=parallel, keep_docs=keep_docs)
        ):
            results[i], groups[i] = r, opts
    if broken:  # the files without settings are reported under the CLI's own (for fail_on, contexts)
        plain = next((g for g in groups if g is not None), None) or resolve(None, flags)
        for i in broken:
            groups[i] = plain
    return results, groups


def statistics(results: list[FileResult]) -> list[dict]:
    """Findings counted per rule and severity (one rule's findings can differ in severity: a row each),
    most frequent first, then by code and severity, worst first (``--statistics``)."""
    counts: dict[tuple[str, str], dict] = {}
    for r in results:
        for f in r.findings:
            key = (f.code, f.severity)
            row = counts.setdefault(key, {"code": f.code, "name": f.name, "severity": f.severity, "count": 0})
            row["count"] += 1
    return sorted(counts.values(), key=lambda row: (-row["count"], row["code"], SEVERITY_ORDER[row["severity"]]))


def unsafe_fixes_left(results: list[FileResult]) -> int:
    """The fixes with edits that --fix leaves for --unsafe-fixes (display-only advice is not a fix)."""
    return sum(fx.safety == "unsafe" and bool(fx.edits) for r in results for f in r.findings for fx in f.fixes)


def _badness(findings: list[Finding]) -> tuple[int, int, int]:
    return (
        sum(f.severity == "error" for f in findings),
        sum(f.severity == "warning" for f in findings),
        sum(f.severity == "info" for f in findings),
    )


def _fix_one(r: FileResult, opts, rules, targets, allowed: set, max_rounds: int):
    """The Document of ``r`` with every accepted fix applied (see fix_grouped)."""
    from colint.fixing.fix_text import fixed_text

    doc, findings = r.doc, r.findings
    tried: set[str] = set()
    for _ in range(max_rounds):
        accepted = False
        for fx in (x for f in findings for x in f.fixes if x.safety in allowed and x.edits):
            key = repr([(e.key, e.new) for e in fx.edits]) + doc.text
            if key in tried:
                continue
            tried.add(key)
            try:
                text = fixed_text(doc, [fx])
            except (ColintError, ValueError):
                continue
            if text == doc.text:
                continue
            new_doc = load_text(text, r.path, syntax=doc.syntax)
            again = check_document(r.path, new_doc, targets, opts, rules, close=False)
            if again.error is None and _badness(again.findings) < _badness(findings):
                doc, findings, accepted = new_doc, again.findings, True
                break
        if not accepted:
            break
    return doc


def fix_grouped(
    results: list[FileResult], groups: list, *, unsafe: bool = False, max_rounds: int = 25
) -> list[tuple[str, str, str]]:
    """Apply fixes (``safe`` ones; with ``unsafe`` also architecture-changing ones) one at a time, in
    rank order. A fix is kept only if the re-checked result is strictly better — fewer errors, then
    fewer warnings, then fewer infos — so a fix never trades one finding for a worse one, the loop
    always ends, and a second run finds nothing left to fix. Returns ``(path, original_text,
    fixed_text)`` for every file that changed (a UTF-8 BOM the file began with leads both: encoded, they are
    the file's bytes before and after); writes nothing. A file whose fixing fails unexpectedly gets
    that as its error in ``results`` (replaced in place) and the other files are still fixed."""
    allowed = {"safe", "unsafe"} if unsafe else {"safe"}
    changed = []
    cache: dict[int, tuple] = {}
    for i, (r, eff) in enumerate(zip(results, groups)):
        if r.error is not None or r.doc is None:
            continue
        if id(eff) not in cache:  # a ColintError here is a run-level problem (profiles, rules): the caller's
            opts = dataclasses.replace(eff, loaded_baseline=None)
            rules = select_rules(opts.select, opts.ignore, opts.extend_select)
            targets = build_targets(opts) if any(x.needs_workload for x in rules) else []
            cache[id(eff)] = (opts, rules, targets)
        opts, rules, targets = cache[id(eff)]
        try:
            doc = _fix_one(r, opts, rules, targets, allowed, max_rounds)
        except ColintError as exc:
            if exc.path is None:
                exc.path = r.path
            results[i] = FileResult(path=r.path, error=exc)
            continue
        except Exception as exc:  # noqa: BLE001 - one file's bug must not abort the others
            results[i] = FileResult(path=r.path, error=InternalError.wrap(exc, r.path))
            continue
        if doc.text != r.doc.text:
            bom = "\ufeff" if getattr(r.doc, "bom", False) else ""  # the file's bytes, BOM included, both sides
            changed.append((r.path, bom + r.doc.text, bom + doc.text))
    return changed


def verify_fixes(result, targets, opts, rules) -> list[tuple[Finding, Fix, list[Finding], Optional[str]]]:
    """Apply every fix of a checked file that edits it or names a setting, re-check, and return
    ``(finding, fix, new findings at warning or above, load error)`` per fix tried (the corpus closure
    test and ``scripts/closure_sweep.py``). Independent of colint.engine.closure.Closure: it re-applies, re-loads and
    re-checks from the file's text."""
    from colint.engine.closure import SETTINGS, WARNING

    out: list[tuple[Any, Any, list[Finding], Optional[str]]] = []
    if result.error is not None or result.doc is None:
        return out
    before = {(f.code, f.key, f.gpu): SEVERITY_ORDER[f.severity] for f in result.findings}
    targets_by: dict = {}
    for f in result.findings:
        for fx in f.fixes:
            if not (fx.edits or fx.settings):
                continue
            settings = {k: v for k, v in fx.settings.items() if k in SETTINGS}
            key = tuple(sorted(settings.items()))
            if key not in targets_by:
                o = opts.with_keys(settings)
                targets_by[key] = (o, build_targets(o) if settings else targets)
            o, t = targets_by[key]
            doc = result.doc
            if fx.edits:
                from colint.fixing.fix_text import apply_edits

                try:
                    doc = load_text(apply_edits(doc, fx.edits), result.path, syntax=doc.syntax)
                except ColintError as exc:
                    out.append((f, fx, [], exc.message))
                    continue
            again = check_document(result.path, doc, t, o, rules, close=False)
            if again.error is not None:
                out.append((f, fx, [], again.error.message))
                continue
            new = [
                g
                for g in again.findings
                if SEVERITY_ORDER[g.severity] <= WARNING
                and before.get((g.code, g.key, g.gpu), 99) > SEVERITY_ORDER[g.severity]
            ]
            out.append((f, fx, new, None))
    return out
