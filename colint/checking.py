"""`colint check`: files → findings, the whole flow for each file.

load → normalize → (per GPU) analyse → rules → rank. An input error ends that file with a
located error (exit 2 overall) and the other files are still checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from colint.errors import ColintError, ProfileError
from colint.findings import SEVERITY_ORDER, Finding, rank


@dataclass
class CheckOptions:
    gpus: list[str] = field(default_factory=lambda: ["b200"])
    scenario: str = "throughput"
    dtype: Optional[str] = None  # weights/activations format; None = the scenario's default (bf16)
    tp: Any = None  # int or "auto"
    ep: Optional[int] = None
    pp: Optional[int] = None
    context: Optional[int] = None
    concurrency: Optional[int] = None
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    severity_overrides: dict[str, str] = field(default_factory=dict)  # code -> severity
    input_format: Optional[str] = None
    vocab_size: Optional[int] = None
    # (config dir, glob, codes): findings of those codes are dropped for files matching the glob
    per_file_ignores: list[tuple[str, str, frozenset]] = field(default_factory=list)
    baseline: Any = None  # colint.suppression.Baseline: accepted findings, reported no more
    close_advice: bool = True  # re-check every fix at the state it leads to before showing it (colint.closure)


@dataclass
class FileResult:
    path: str
    format: Optional[str] = None
    model_type: Optional[str] = None
    error: Optional[ColintError] = None
    findings: list[Finding] = field(default_factory=list)
    spec: Any = None
    doc: Any = None  # the loaded Document (text + key spans), for reporters that locate fix edits
    suppressed: int = 0  # findings dropped by comments, per-file-ignores or the baseline


@dataclass
class Target:
    """One GPU + scenario the rules run against."""

    gpu: str
    profile: Any
    scenario: Any


def build_targets(opts: CheckOptions) -> list[Target]:
    """Resolve profiles and scenarios once for all files (raises UsageError/ProfileError)."""
    from colint.analysis.scenario import make_scenario
    from colint.hardware_profiles import load_profile

    targets = []
    for gpu in opts.gpus:
        profile = load_profile(gpu)
        tp = None if opts.tp == "auto" else opts.tp  # auto: analyse at tp=1, rules report the best tp
        scenario = make_scenario(opts.scenario, dtype=opts.dtype, tp=tp, ep=opts.ep, pp=opts.pp,
                                 context=opts.context, concurrency=opts.concurrency, gpu=profile.name)
        targets.append(Target(gpu=profile.name, profile=profile, scenario=scenario))
    return targets


def check_spec(spec, targets: list[Target], opts: CheckOptions, rules=None) -> list[Finding]:
    from colint.rules import Context, select_rules

    if rules is None:
        rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    findings: list[Finding] = []
    spec_only = [r for r in rules if not r.needs_workload]
    per_gpu = [r for r in rules if r.needs_workload]
    ctx = Context(spec=spec, options=opts.rule_options)
    if targets:
        ctx.gpu, ctx.profile, ctx.scenario = targets[0].gpu, targets[0].profile, targets[0].scenario
    for r in spec_only:
        ctx.current = r
        findings.extend(r.check(ctx))
    if per_gpu and targets:
        from colint.analysis.workload import analyse
    for t in targets if per_gpu else []:
        try:
            workload = analyse(spec, t.profile, t.scenario)
        except ProfileError:
            # the format is not native on this GPU: rules marked `without_workload` (CL401) report it as a
            # finding located in the file; with none of them selected it stays a run error (exit 2)
            fallback = [r for r in per_gpu if getattr(r.check, "without_workload", False)]
            if not fallback:
                raise
            ctx = Context(spec=spec, gpu=t.gpu, profile=t.profile, scenario=t.scenario, options=opts.rule_options,
                          tp_auto=opts.tp == "auto")
            reported = []
            for r in fallback:
                ctx.current = r
                reported.extend(r.check(ctx))
            if not reported:  # some other profile problem: not a format the rules can explain
                raise
            findings.extend(reported)
            continue
        ctx = Context(spec=spec, workload=workload, gpu=t.gpu, profile=t.profile, scenario=t.scenario,
                      options=opts.rule_options, tp_auto=opts.tp == "auto")
        for r in per_gpu:
            ctx.current = r
            findings.extend(r.check(ctx))
    if len(targets) > 1:
        # a finding made gpu_specific=False (it depends on the spec and the parallel layout alone) is the same on
        # every GPU: report it once
        seen: set = set()
        findings = [f for f in findings if f.gpu is not None
                    or (k := (f.code, f.key, f.message)) not in seen and not seen.add(k)]
    if opts.severity_overrides:
        findings = [f.model_copy(update={"severity": opts.severity_overrides[f.code]})
                    if f.code in opts.severity_overrides else f for f in findings]
    return rank(findings)


def check_file(path: str, targets: list[Target], opts: CheckOptions, rules=None) -> FileResult:
    from colint.loading import load
    from colint.rules import select_rules

    if rules is None:
        rules = select_rules(opts.select, opts.ignore, opts.extend_select)

    try:
        doc = load(path)
    except ColintError as exc:
        if exc.path is None:
            exc.path = path
        return FileResult(path=path, error=exc)
    return check_document(path, doc, targets, opts, rules)


def check_document(path: str, doc, targets: list[Target], opts: CheckOptions, rules=None, *,
                   close: bool = True) -> FileResult:
    """Check an already-loaded Document (``--fix`` re-checks its edited text this way, ``close=False``:
    without re-checking each fix's own state, colint.closure)."""
    from colint.rules import select_rules
    from colint.spec import normalize
    from colint.suppression import apply_suppressions

    if rules is None:
        rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    result = FileResult(path=path)
    try:
        spec = normalize(doc, input_format=opts.input_format, vocab_size=opts.vocab_size)
    except ColintError as exc:
        if exc.path is None:
            exc.path = path
        result.error = exc
        return result
    result.format, result.model_type, result.spec, result.doc = spec.format, spec.model_type, spec, doc
    findings = check_spec(spec, targets, opts, rules)
    if close and opts.close_advice:
        from colint.closure import close_advice

        findings = close_advice(path, doc, spec, findings, targets, opts, rules)
    findings = _locate_keys(doc, findings)
    result.findings, result.suppressed = apply_suppressions(path, doc, findings, {r.code for r in rules}, opts)
    return result


def _locate_keys(doc, findings: list[Finding]) -> list[Finding]:
    """A finding that names a key present in the file but has no line (a key the spec does not record as a
    source: quantization_config entries, ...) gets the key's line from the Document."""
    out = []
    for f in findings:
        if f.line is None and f.key:
            from colint.fixing import parse_key  # here: colint.fixing (difflib, tempfile) only when needed

            try:
                path = parse_key(f.key)
            except Exception:  # a key text the parser does not know: leave it unlocated
                path = None
            if path and doc.has(path):
                line, column = doc.location(path)
                f = f.model_copy(update={"line": line, "column": column})
        out.append(f)
    return out


def check_paths(paths: list[str], opts: CheckOptions) -> list[FileResult]:
    from colint.rules import select_rules

    rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    # GPU profiles and scenarios only when a selected rule needs a workload (--select CL0 skips them)
    targets = build_targets(opts) if any(r.needs_workload for r in rules) else []
    return [check_file(p, targets, opts, rules) for p in paths]


def summary(results: list[FileResult]) -> dict:
    findings = [f for r in results for f in r.findings]
    return {
        "files": len(results),
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


def check_grouped(paths: list[str], cli_overrides: dict, *, isolated: bool = False,
                  baseline_path: Optional[str] = None):
    """Check ``paths`` under the settings in force for each (nearest config file + CLI flags).

    Returns the results in input order and, parallel to them, the ``Effective`` settings each was
    checked with. Files sharing a config file are checked together (profiles resolved once)."""
    import os

    from colint.settings import find_config, resolve
    from colint.suppression import Baseline

    by_config: dict[Optional[str], list[int]] = {}
    configs: dict[Optional[str], Any] = {}
    for i, p in enumerate(paths):
        cfg = None if isolated else find_config(os.path.dirname(os.path.abspath(p)))
        key = cfg.path if cfg is not None else None
        configs[key] = cfg
        by_config.setdefault(key, []).append(i)
    results: list[Optional[FileResult]] = [None] * len(paths)
    groups: list[Any] = [None] * len(paths)
    baselines: dict[str, Any] = {}
    for key, idxs in by_config.items():
        eff = resolve(configs[key], cli_overrides)
        bpath = baseline_path or eff.values["baseline"]
        baseline = None
        if bpath:
            ab = os.path.abspath(bpath)
            if ab not in baselines:
                baselines[ab] = Baseline.load(bpath)
            baseline = baselines[ab]
        for i, r in zip(idxs, check_paths([paths[i] for i in idxs], eff.check_options(baseline))):
            results[i], groups[i] = r, eff
    return results, groups


def statistics(results: list[FileResult]) -> list[dict]:
    """Findings counted per rule, most frequent first (``--statistics``)."""
    counts: dict[str, dict] = {}
    for r in results:
        for f in r.findings:
            row = counts.setdefault(f.code, {"code": f.code, "name": f.name, "severity": f.severity, "count": 0})
            row["count"] += 1
            if SEVERITY_ORDER[f.severity] < SEVERITY_ORDER[row["severity"]]:
                row["severity"] = f.severity
    return sorted(counts.values(), key=lambda row: (-row["count"], row["code"]))


def _badness(findings: list[Finding]) -> tuple[int, int, int]:
    return (sum(f.severity == "error" for f in findings), sum(f.severity == "warning" for f in findings),
            sum(f.severity == "info" for f in findings))


def fix_grouped(results: list[FileResult], groups: list, *, unsafe: bool = False,
                max_rounds: int = 25) -> list[tuple[str, str, str]]:
    """Apply fixes (``safe`` ones; with ``unsafe`` also architecture-changing ones) one at a time, in
    rank order. A fix is kept only if the re-checked result is strictly better — fewer errors, then
    fewer warnings, then fewer infos — so a fix never trades one finding for a worse one, the loop
    always ends, and a second run finds nothing left to fix. Returns ``(path, original_text,
    fixed_text)`` for every file that changed; writes nothing."""
    from colint.fixing import fixed_text
    from colint.loading import load_text
    from colint.rules import select_rules

    allowed = {"safe", "unsafe"} if unsafe else {"safe"}
    changed = []
    cache: dict[int, tuple] = {}
    for r, eff in zip(results, groups):
        if r.error is not None or r.doc is None:
            continue
        if id(eff) not in cache:
            opts = eff.check_options(None)
            rules = select_rules(opts.select, opts.ignore, opts.extend_select)
            targets = build_targets(opts) if any(x.needs_workload for x in rules) else []
            cache[id(eff)] = (opts, rules, targets)
        opts, rules, targets = cache[id(eff)]
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
        if doc.text != r.doc.text:
            changed.append((r.path, r.doc.text, doc.text))
    return changed
