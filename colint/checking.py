"""`colint check`: files → findings, the whole flow for each file.

load → normalize → (per GPU) analyse → rules → rank. An input error ends that file with a
located error (exit 2 overall) and the other files are still checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from colint.errors import ColintError
from colint.findings import Finding, rank


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


@dataclass
class FileResult:
    path: str
    format: Optional[str] = None
    model_type: Optional[str] = None
    error: Optional[ColintError] = None
    findings: list[Finding] = field(default_factory=list)
    spec: Any = None


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


def check_spec(spec, targets: list[Target], opts: CheckOptions) -> list[Finding]:
    from colint.analysis.workload import analyse
    from colint.rules import Context, select_rules

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
    for t in targets:
        workload = analyse(spec, t.profile, t.scenario)
        ctx = Context(spec=spec, workload=workload, gpu=t.gpu, profile=t.profile, scenario=t.scenario,
                      options=opts.rule_options, tp_auto=opts.tp == "auto")
        for r in per_gpu:
            ctx.current = r
            findings.extend(r.check(ctx))
    if opts.severity_overrides:
        findings = [f.model_copy(update={"severity": opts.severity_overrides[f.code]})
                    if f.code in opts.severity_overrides else f for f in findings]
    return rank(findings)


def check_file(path: str, targets: list[Target], opts: CheckOptions) -> FileResult:
    from colint.loading import load
    from colint.spec import normalize

    result = FileResult(path=path)
    try:
        doc = load(path)
        spec = normalize(doc, input_format=opts.input_format, vocab_size=opts.vocab_size)
    except ColintError as exc:
        if exc.path is None:
            exc.path = path
        result.error = exc
        return result
    result.format, result.model_type, result.spec = spec.format, spec.model_type, spec
    result.findings = check_spec(spec, targets, opts)
    return result


def check_paths(paths: list[str], opts: CheckOptions) -> list[FileResult]:
    targets = build_targets(opts)
    return [check_file(p, targets, opts) for p in paths]


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
    order = {"error": 0, "warning": 1, "info": 2}
    return 1 if any(order[f.severity] <= threshold for r in results for f in r.findings) else 0
