"""A weight GEMM's shape on the roofline (estimates of the GEMM time model, colint.analysis.gemm_model), for the
near-square rules (CL1xx): the limit intensity I∞ as M grows, the M at which a large square GEMM turns
compute-bound, the thin side at which I∞ would reach the ridge, the aligned near-square references of equal work
and the step time a thin shape loses against them, and a routed expert's GEMM before expert TP split it.
"""

from __future__ import annotations

import math
from typing import Optional

from colint.analysis.gemm_model import FORMATS, OUT_BYTES, estimate
from colint.analysis.padding import TILE


def limit_intensity(n: int, k: int, dtype: str, out_dtype: str) -> float:
    """I∞ = 2NK / (K·b_a + N·b_out), FLOP/B: the intensity as M → ∞ (weight bytes amortised away)."""
    _, b_a, _ = FORMATS[dtype]
    return 2.0 * n * k / (k * b_a + n * OUT_BYTES[out_dtype])


def square_m_star(dtype: str, ridge: float) -> float:
    """M at which a very large square GEMM turns compute-bound: ridge·b_w/2 (the floor of M*)."""
    return ridge * FORMATS[dtype][2] / 2.0


def thin_side_for_ridge(n: int, k: int, dtype: str, out_dtype: str, ridge: float) -> Optional[tuple[str, int]]:
    """(``"K"`` or ``"N"``, the smallest width) of the thin side at which I∞ rises above ``ridge`` FLOP/B, the
    other side held; None where no width up to 2^20 does (the other side caps I∞ below the ridge)."""
    lo, hi = 1, 1 << 20
    thin_is_k = k <= n
    other = n if thin_is_k else k

    def ok(x: int) -> bool:
        return limit_intensity(other if thin_is_k else x, x if thin_is_k else other, dtype, out_dtype) > ridge

    if not ok(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return ("K" if thin_is_k else "N"), lo


def reference_shapes(n: int, k: int, tile: int = TILE) -> list[tuple[int, int]]:
    """Aligned near-square references of a GEMM's N x K: sides multiples of ``tile`` around sqrt(N·K) (the
    nearest and one tile either way, the other side making up the same N·K), so that each does about the
    same work per token. Several, so that one reference's wave quantization does not pass for a shape cost."""
    base = max(tile, int(round(math.sqrt(n * k) / tile)) * tile)
    out = []
    for a in (base - tile, base, base + tile):
        if a < tile:
            continue
        b = max(tile, int(round(n * k / a / tile)) * tile)
        if (a, b) == (base, base) or max(a, b) / min(a, b) < max(n, k) / min(n, k):
            out.append((a, b))  # only shapes squarer than the GEMM itself
    return out


def reference_shape(n: int, k: int, tile: int = TILE) -> tuple[int, int]:
    """The square reference quoted in messages: sqrt(N·K) rounded to a multiple of ``tile``."""
    side = max(tile, int(round(math.sqrt(n * k) / tile)) * tile)
    return side, side


def thin_shape_loss_s(row, profile, out_dtype: str, kernel_floor_s: float) -> float:
    """Estimated seconds per step that GEMM ``row`` loses to its SHAPE: its time minus the time of the same
    GEMM at the best aligned near-square reference of equal FLOPs (same M, format, output format,
    library path and kernel floor; ``reference_shapes``), scaled back to the row's work. The format's
    library efficiency and the kernel floor are in both, so they cancel: what remains is what N and K cost."""
    t = row.time.estimate_s
    best = t
    for n_ref, k_ref in reference_shapes(row.n, row.k):
        t_ref = estimate(row.m, n_ref, k_ref, row.dtype, profile, out_dtype, standalone=False).estimate_s
        best = min(best, kernel_floor_s + max(0.0, t_ref - kernel_floor_s) * (row.n * row.k) / (n_ref * k_ref))
    share = max(0.0, (t - best) / t) if t > 0 else 0.0
    return row.total_s * share


def whole_expert_shape(row, scenario) -> Optional[tuple[int, int, float]]:
    """(N, K, I∞) of a routed-expert GEMM unsplit, when expert TP (over tp x kvp, no EP) split it; else None."""
    split = scenario.tp_of("ffn")
    if row.parallel != "expert" or scenario.ep > 1 or split <= 1:
        return None
    n, k = (row.n, row.k * split) if "down" in row.name else (row.n * split, row.k)
    return n, k, limit_intensity(n, k, row.dtype, scenario.outputs)
