"""What a KV cache too small for the scenario's concurrency costs (CL801; estimates of the time model).

When the weights fit but fewer sequences than planned do (``Workload.max_decode_concurrency`` below the
scenario's), the replica decodes at the concurrency that fits: ``decode_at_fit`` prices that step and gives the
tokens/s lost against the plan.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from colint.analysis.workload import decode_step
from colint.util.records import dataclass


@dataclass(frozen=True)
class DecodeAtFit:
    """Decode throughput per replica at the planned concurrency and at the concurrency that fits (estimates)."""

    concurrency_fit: int  # sequences per attention group whose KV fits
    tokens_per_s: float  # as planned (0 where the step gives none)
    tokens_per_s_at_fit: float

    @property
    def loss_pct(self) -> Optional[float]:
        """Percent of the planned decode tokens/s lost at the concurrency that fits (None without a plan figure)."""
        return 100.0 * (1.0 - self.tokens_per_s_at_fit / self.tokens_per_s) if self.tokens_per_s else None


def decode_at_fit(spec, profile, scenario, workload) -> DecodeAtFit:
    """The decode step at ``workload``'s ``max_decode_concurrency`` against the scenario's (``workload`` analysed
    for ``scenario`` with its memory figures)."""
    cap = workload.memory.max_decode_concurrency
    capped = decode_step(spec, profile, replace(scenario, decode_concurrency=cap))
    return DecodeAtFit(cap, workload.steps["decode"].tokens_per_s or 0.0, capped.tokens_per_s or 0.0)
