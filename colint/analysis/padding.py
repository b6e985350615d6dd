"""What padding a GEMM dimension costs: the estimated step time lost because a dimension (per shard)
is not a multiple of a tile, by the GEMM time model itself (rules judge the figures; they do not
re-estimate). Used by the alignment (CL2xx) and MoE (CL5xx) rules.

Each affected GEMM is re-estimated with the dimension padded to the aligned value and charged for
the part of its time that the padding does not buy; the sum over a regime's rows, as a share of that
regime's step, is the step-time effect. All figures are estimates of ``colint.analysis.gemm_model``.
"""

from __future__ import annotations

from dataclasses import field

from colint.analysis.gemm_model import QUANT_PASS_BYTES, estimate_s
from colint.analysis.ops_moe import grouped_model
from colint.hardware_profiles import time_model
from colint.normalize.format_reader import round_up
from colint.util.records import dataclass

# the portable GEMM tile width (elements) widths are judged on (NVIDIA co-design blog guideline 2: "safe, portable floor")
TILE = 128


@dataclass
class Dim:
    """One affected GEMM dimension: a workload row and which of its dims (n or k)."""

    name: str  # GEMM name ("mlp.gate_up")
    axis: str  # "n" | "k"
    value: int  # per shard
    rows: list = field(default_factory=list)  # WorkloadGemm rows (one per regime / kind)


def fixed_s(profile, row) -> float:
    """The part of a GEMM estimate that does not depend on N (kernel floor, the format's quantize
    pass); the same terms as colint.analysis.gemm_model's estimate."""
    tm = time_model(profile)
    bw = profile.memory_bytes_per_s * tm.memory_efficiency
    fmt = row.dtype
    return (tm.kernel_floor_us + tm.format_overhead_us.get(fmt, 0.0)) * 1e-6 + row.m * row.k * QUANT_PASS_BYTES.get(
        fmt, 0.0
    ) / bw


def padding_loss_s(workload, row, axis: str, value: int, multiple: int) -> float:
    """Estimated seconds per step that ``row`` loses because its ``axis`` dim (``value`` per shard)
    is not a multiple of ``multiple``: the GEMM's time minus the time of the padded GEMM scaled
    back to the real work, applied to the row's share of the step."""
    profile = workload.profile
    n = value if axis == "n" else row.n
    k = value if axis == "k" else row.k
    n_up = round_up(n, multiple) if axis == "n" else n
    k_up = round_up(k, multiple) if axis == "k" else k
    if (n_up, k_up) == (n, k):
        return 0.0
    out = workload.scenario.outputs
    # the time model the row was priced with: routed experts run as the MoE's grouped GEMM (ops_moe)
    model = grouped_model(profile) if row.parallel == "expert" and row.gemm.count else None
    t = (
        row.time.estimate_s
        if (n, k) == (row.n, row.k)
        else estimate_s(row.m, n, k, row.dtype, profile, out, model=model)
    )
    t_up = estimate_s(row.m, n_up, k_up, row.dtype, profile, out, model=model)
    fixed = fixed_s(profile, row)
    work = (n * k) / (n_up * k_up)
    aligned_equiv = fixed + max(0.0, t_up - fixed) * work
    share = max(0.0, (t - aligned_equiv) / t) if t > 0 else 0.0
    return row.total_s * share


def step_effect_pct(workload, dims: list[Dim], multiple: int) -> dict[str, float]:
    """Estimated step-time effect (percent of the step) per regime of padding ``dims``."""
    out = {}
    for regime in ("decode", "prefill"):
        lost = sum(
            padding_loss_s(workload, r, d.axis, d.value, multiple) for d in dims for r in d.rows if r.regime == regime
        )
        step = workload.steps[regime].estimate_s
        out[regime] = 100.0 * lost / step if step else 0.0
    return out
