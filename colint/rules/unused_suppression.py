"""CL000 unused-suppression: declared here with the other rules; emitted by the engine
(``colint.engine.suppression.apply_suppressions``), the only stage that sees the comments and the baseline."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from colint.findings import Finding
from colint.rules.base import Family, RuleDoc, rule

UNUSED_CODE = "CL000"
NAME = "unused-suppression"
FAMILY = Family(name="suppression", number=0)


@rule(
    code=UNUSED_CODE,
    name=NAME,
    severity="warning",
    summary="A suppression comment or baseline entry that suppresses nothing.",
    doc=RuleDoc(
        what="A `# colint: ignore[...]` comment with no matching finding on its line, naming a code that does "
        "not exist, or a baseline entry whose finding has gone.",
        why="Stale suppressions hide the next real finding at the same place and make a reviewer believe a "
        "problem still exists.",
        example="# colint: ignore[CL002] on a line whose KV head count was fixed since",
        fix="Delete the comment (or the code from it); rewrite the baseline with --write-baseline.",
        sources=("ruff RUF100 unused-noqa; sqlfluff --warn-unused-ignores",),
    ),
    needs_workload=False,
)
def _unused_suppression(ctx) -> Iterable[Finding]:
    return ()  # emitted by apply_suppressions, which sees the comments and the baseline


def unused_finding(message: str, line, column, **evidence: Any) -> Finding:
    """A CL000 finding at (line, column)."""
    return Finding(
        code=UNUSED_CODE,
        name=NAME,
        rule=FAMILY.name,
        severity="warning",
        message=message,
        line=line,
        column=column,
        evidence=evidence,
    )
