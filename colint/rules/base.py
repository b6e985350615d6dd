"""What a rule is, and the context it runs in.

A rule is a function ``check(ctx) -> Iterable[Finding]`` registered with :func:`rule`, which
carries its code (``CL201``), kebab-case name, family, default severity, named thresholds
(``options``: name -> (default, description)) and its documentation (what, why, example,
fix, sources). Rules read only ``ctx.spec`` (ModelSpec) and ``ctx.workload`` (analysis
results on one GPU and scenario); they never parse files. ``ctx.finding(...)`` fills in the
location from ``spec.sources`` and the GPU name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from colint.findings import Edit, Finding, Fix, Impact, Severity
from colint.spec.model import ModelSpec, Source


@dataclass(frozen=True)
class RuleDoc:
    what: str
    why: str
    example: str
    fix: str
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    family: str
    severity: Severity  # the most severe level it emits
    summary: str
    doc: RuleDoc
    options: dict[str, tuple[Any, str]]
    check: Callable[["Context"], Iterable[Finding]]
    needs_workload: bool = True  # False: depends on the spec alone (runs once per file, not per GPU)

    def render_doc(self) -> str:
        lines = [f"{self.code} {self.name} ({self.family}, up to {self.severity})", "", self.summary, "",
                 "What:", f"  {self.doc.what}", "", "Why:", f"  {self.doc.why}", "", "Example:",
                 f"  {self.doc.example}", "", "Fix:", f"  {self.doc.fix}"]
        if self.options:
            lines += ["", "Options (thresholds; set in [tool.colint.rules." + self.code + "]):"]
            for k, (default, desc) in self.options.items():
                lines.append(f"  {k} = {default!r}: {desc}")
        if self.doc.sources:
            lines += ["", "Sources:"] + [f"  - {s}" for s in self.doc.sources]
        return "\n".join(lines)


_REGISTRY: dict[str, Rule] = {}


def rule(code: str, name: str, family: str, severity: Severity, summary: str, doc: RuleDoc,
         options: Optional[dict[str, tuple[Any, str]]] = None, needs_workload: bool = True):
    """Register ``check`` as rule ``code``."""

    def deco(fn: Callable[["Context"], Iterable[Finding]]):
        if code in _REGISTRY:
            raise ValueError(f"duplicate rule code {code}")
        _REGISTRY[code] = Rule(code, name, family, severity, summary, doc, dict(options or {}), fn,
                               needs_workload)
        return fn

    return deco


@dataclass
class Context:
    spec: ModelSpec
    workload: Any = None  # colint.analysis.workload.Workload on ctx.gpu, or None for spec-only rules
    gpu: Optional[str] = None  # profile name
    profile: Any = None  # colint.hardware_profiles.Profile
    scenario: Any = None  # colint.analysis.scenario.Scenario
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # code -> {option: value}
    current: Optional[Rule] = None
    tp_auto: bool = False  # --tp auto: alignment rules report the largest power-of-two tp that aligns

    def option(self, name: str) -> Any:
        assert self.current is not None
        over = self.options.get(self.current.code, {})
        if name in over:
            return over[name]
        return self.current.options[name][0]

    def source(self, field_name: str | None) -> Source | None:
        if field_name is None:
            return None
        return self.spec.sources.get(field_name)

    def finding(self, severity: Severity, message: str, *, field: str | None = None, key: str | None = None,
                source: Source | None = None, evidence: dict | None = None, loss_pct: float | None = None,
                fixes: list[Fix] | None = None, details: list[str] | None = None,
                gpu_specific: bool | None = None) -> Finding:
        r = self.current
        assert r is not None
        src = source or self.source(field)
        if key is None and src is not None:
            key = src.key
        gpu_specific = r.needs_workload if gpu_specific is None else gpu_specific
        derived = {s.key for s in self.spec.sources.values() if s.derived}
        if derived and fixes:  # a key a value is computed from does not hold it: never write the value there
            fixes = [fx for fx in fixes if not any(e.key in derived for e in fx.edits)]
        return Finding(
            code=r.code, name=r.name, rule=r.family, severity=severity, message=message, key=key,
            line=src.line if src else None, column=src.column if src else None,
            gpu=self.gpu if gpu_specific else None,
            impact=Impact(estimated_loss_pct=None if loss_pct is None else round(loss_pct, 2)),
            evidence=evidence or {}, fixes=fixes or [], details=details or [],
        )


def edit(key: str, old: Any, new: Any) -> Edit:
    return Edit(key=key, old=old, new=new)


def fix(title: str, safety: str, *edits: Edit, settings: dict | None = None,
        alternatives: list[Fix] | None = None) -> Fix:
    """A fix: ``edits`` to the file, or display advice; ``settings`` names the deployment the advice
    leads to ({"ep": 64}) so that colint.closure can re-check the file there."""
    return Fix(title=title, safety=safety, edits=list(edits), settings=dict(settings or {}),
               alternatives=list(alternatives or []))
