"""Findings, fixes and their ranking — the one model every reporter formats."""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal, Optional

from colint.util.records import dataclass

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
Safety = Literal["safe", "unsafe", "display"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Edit:
    """A change to one key of the file: ``old`` -> ``new``."""

    key: str  # dotted key path in the file
    old: Any = None
    new: Any = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Fix:
    """A fix a finding offers: edits to the file, or advice to display (``safety``)."""

    title: str
    safety: Safety
    edits: list[Edit] = field(default_factory=list)
    # deployment settings the advice names ({"ep": 64}, {"tp": 8}): colint.engine.closure re-checks the
    # finding's file at them before the advice is shown (not part of the JSON contract)
    settings: dict[str, Any] = field(default_factory=dict)
    # fixes to offer instead, in order, when this one's state raises a new finding (colint.engine.closure)
    alternatives: list[Any] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True, slots=True)
class Impact:
    """What a finding costs, as an estimate."""

    estimated_loss_pct: Optional[float] = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """One finding of one rule on one file (and GPU), as every reporter formats it."""

    code: str  # "CL201"
    name: str  # kebab-case rule name
    rule: str  # family: "alignment", "near-square", ...
    severity: Severity
    message: str  # one line
    key: Optional[str] = None  # dotted key path the finding points at
    line: Optional[int] = None
    column: Optional[int] = None
    gpu: Optional[str] = None
    impact: Impact = field(default_factory=Impact)
    evidence: dict[str, Any] = field(default_factory=dict)  # numbers with units in their names
    fixes: list[Fix] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # extra lines for the text reporter
    # "architecture": what the config's shapes cost on the GPU; "deployment": what a deployment does (issue 29)
    kind: str = "architecture"

    def sort_key(self) -> tuple:
        loss = self.impact.estimated_loss_pct
        return (
            SEVERITY_ORDER[self.severity],
            -(loss if loss is not None else -1.0),
            self.line or 0,
            self.code,
            self.key or "",
        )

    def public(self) -> dict:
        """The JSON shape of docs/output.md (docs/check-report.schema.json)."""
        return {
            "code": self.code,
            "name": self.name,
            "rule": self.rule,
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "key": self.key,
            "line": self.line,
            "column": self.column,
            "gpu": self.gpu,
            "impact": {"estimated_loss_pct": self.impact.estimated_loss_pct},
            "evidence": self.evidence,
            "fixes": [
                {
                    "title": f.title,
                    "safety": f.safety,
                    "edits": [{"key": e.key, "old": e.old, "new": e.new} for e in f.edits],
                }
                for f in self.fixes
            ],
        }


def rank(findings: list[Finding]) -> list[Finding]:
    """Severity first (error > warning > info), then estimated loss, then position. With several GPUs the
    same finding (severity, code, key) on each reads as one block where its costliest instance ranks, the
    GPUs in the order they came in (the --gpu order)."""
    ordered = sorted(findings, key=Finding.sort_key)
    gpu_pos: dict = {}
    for f in findings:
        gpu_pos.setdefault(f.gpu, len(gpu_pos))
    if sum(g is not None for g in gpu_pos) <= 1:
        return ordered  # one GPU (spec-only findings have none): the plain ranking
    first: dict = {}
    for i, f in enumerate(ordered):
        first.setdefault((f.severity, f.code, f.key), i)
    return sorted(ordered, key=lambda f: (first[(f.severity, f.code, f.key)], gpu_pos[f.gpu]))
