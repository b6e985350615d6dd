"""MoE layer op model (issue 12): routed experts with routing imbalance, plus permute/finalize.

``moe_layer(...)`` prices ONE MoE layer call on the busiest expert-parallel rank (its time is the
layer's time: the others wait for it at the combine), as TensorRT-LLM's fused MoE runs it:

* routing: ``tokens`` tokens each pick ``topk`` of ``experts`` experts. ``balanced`` spreads the
  tokens·topk picks evenly; ``power_law_<α>`` is aiconfigurator's generator (its collector's
  ``_generate_power_law_distribution``): each expert's load drawn independently from a power law
  p(x) ∝ x^-α on [1, 0.8·tokens] ([0.01, 2] when tokens·topk ≤ experts), scaled to tokens·topk picks
  and rounded, and the EP rank (a contiguous block of E/ep experts) with the most picks measured. The
  layer's rows and touched experts are that busiest rank's, averaged over ``ROUTING_DRAWS`` seeded
  draws: the expectation of the benchmark's routing, not a ranked (Zipf) share, whose hottest expert
  is up to twice as hot and whose busiest rank at wide EP holds too few experts.
* grouped GEMMs on that rank: gate+up (N = 2·I/tp; I/tp when not gated) and down (K = I/tp), one
  grid over every touched local expert (the GEMM time model of colint.analysis.gemm_model with
  M = the mean rows of a touched expert, N × touched experts), its compute efficiencies scaled by
  ``moe_gemm_efficiency`` (a ptr-array grouped GEMM sustains less than one dense GEMM; fitted 0.6 on
  A100, H100 and B200 together); the down GEMM's K (one expert's I/tp) rounds up to a 128-byte K tile,
  which does not span experts (I/tp = 32 at tp 16 runs as 64 BF16 / 128 FP8 columns);
* permute (gather the rows in expert order), activation, finalize (un-permute and top-k weighted
  sum): HBM passes over tokens·topk·H (and the intermediate), at the streaming bandwidth, plus
  the helper kernels' time ``moe_fixed_us`` (routing, permute with a per-tensor FP8 cast, activation,
  finalize; an architecture constant read off the measurements), and ``moe_pick_ns`` per (token, top-k)
  pick of ALL the tokens: each rank sorts every pick into expert order and its finalize gathers each
  token's top-k rows, whichever rank holds the experts (what a wide-EP rank with small GEMMs and a top-k
  of 22 spends most of its time on); block-scaled formats (NVFP4, MXFP4,
  FP8 block) add their own quantize kernel and pass; ``fused`` (TensorRT-LLM's min-latency kernels)
  drops the helper kernels: those steps run inside the GEMM launches (their per-pick work stays).
* ``masked`` (DeepGEMM's FP8 block-scaled MoE, TensorRT-LLM's DEEPGEMM backend on Blackwell): the tokens are
  copied into one [local experts × padded rows] buffer and both GEMMs run DeepGEMM's masked grouped layout,
  one group per LOCAL expert, whose persistent schedulers walk every group's row count in turn, and the
  activation covers every group: ``moe_masked_group_us`` per local expert, touched or not (B200 at 1 token:
  25 µs with 1 local expert, 95 µs with 256, 171 µs with 512).

Returns ``(estimate_s, sol_s)``; sol is the roofline of the same GEMMs with uniform routing.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from functools import lru_cache

from colint.analysis.gemm_model import FORMATS, QUANT_PASS_BYTES, SCALE_BLOCK, canonical, estimate
from colint.hardware_profiles import time_model
from colint.normalize.format_reader import round_up

K_TILE_BYTES = 128  # one K tile of an expert's GEMM: 128 B of a row (CUTLASS / DeepGEMM 128 B smem swizzle)
# Measured MoE dtypes -> colint GEMM format (weight-only MXFP4 with BF16 activations: int4_wo's path)
# seeded draws of aiconfigurator's power-law routing averaged per shape (the busiest rank's rows vary ~10-20 %
# between draws; 32 draws put the mean within ~3 %)
ROUTING_DRAWS = 32
MOE_FORMATS = {"w4a16_mxfp4": "int4_wo", "w4afp8": "fp8", "int4_wo": "int4_wo", "int8_wo": "int8_wo"}


def expert_k_tile(fmt: str) -> int:
    """Elements of one K tile of a routed expert's grouped GEMM in colint format ``fmt``: 128 B of a weight row
    (64 BF16, 128 FP8, 256 FP4 elements). An expert's K (its I/tp in the down GEMM) rounds up to whole tiles,
    since a tile never spans two experts. Against the profile's own K tile (tiles.k_tile) on the MoE files: p90
    A100 0.439 against 0.443, H100 0.799 against 0.800, B200 0.704 both (calibrate_ops --wheel). The tile holds the
    packed values only: a block-scaled format's scale bytes (FORMATS' fractional part: NVFP4's 1/16, FP8
    block's 4/128²) travel in their own tensor, so NVFP4 tiles 256 elements, not 128 / 0.5625 = 227."""
    value_bytes = math.floor(FORMATS[fmt][2] * 8) / 8  # the packed value's bytes, its block scales left out
    return max(1, int(K_TILE_BYTES / value_bytes))


def expert_k_padded(k: int, fmt: str) -> int:
    """``k`` rounded up to whole expert K tiles (expert_k_tile)."""
    return round_up(k, expert_k_tile(fmt))


def routing_alpha(distribution: str) -> float:
    """α of ``power_law_<α>``; 0 for ``balanced`` / uniform."""
    d = (distribution or "").strip().lower()
    if d.startswith("power_law"):
        try:
            return float(d.rsplit("_", 1)[1])
        except (IndexError, ValueError):
            return 1.01
    return 0.0


@lru_cache(maxsize=65536)  # the full wheel's MoE files hold ~20k distinct routing shapes per GPU
def busiest_rank(tokens: int, topk: int, experts: int, ep: int, alpha: float) -> tuple[float, int]:
    """(rows on the busiest EP rank, its touched experts) for ``tokens``·``topk`` picks over
    ``experts`` experts in ``ep`` contiguous blocks."""
    topk = min(topk, experts)
    local = max(1, experts // max(ep, 1))
    picks = float(tokens * topk)
    if alpha <= 0:
        mean = picks / experts
        touched = experts * (1.0 - (1.0 - topk / experts) ** tokens) if tokens * topk < experts else float(experts)
        rows = mean * local
        return rows, max(1, min(local, round(touched * local / experts) if touched < experts else local))
    return _power_law_rank(tokens, topk, experts, max(ep, 1), local, alpha)


def _power_law_rank(tokens: int, topk: int, experts: int, ep: int, local: int, alpha: float) -> tuple[float, int]:
    """The busiest rank's (mean rows, touched experts) under aiconfigurator's power-law routing: per draw,
    E loads from p(x) ∝ x^-α on [lo, hi] by inverse CDF, scaled to tokens·topk picks and rounded; the EP
    block with the most picks; averaged over ROUTING_DRAWS draws of a generator seeded by the shape."""
    target = tokens * topk
    lo, hi = (1.0, max(tokens * 0.8, 1.0 + 1e-9)) if target > experts else (0.01, 2.0)
    ranks = max(1, min(ep, experts // local))
    rng = random.Random(f"{tokens},{topk},{experts},{ep},{alpha}")
    rows_sum = touched_sum = 0.0
    for _ in range(ROUTING_DRAWS):
        u = [rng.random() for _ in range(experts)]
        if abs(alpha - 1.0) < 1e-9:  # α = 1: log-uniform
            x = [lo * (hi / lo) ** v for v in u]
        else:
            a1 = 1.0 - alpha
            la, ha = lo**a1, hi**a1
            x = [((ha - la) * v + la) ** (1.0 / a1) for v in u]
        scale = target / sum(x)
        load = [round(v * scale) for v in x]
        best = max((load[r * local : (r + 1) * local] for r in range(ranks)), key=sum)
        rows_sum += sum(best)
        touched_sum += sum(1 for v in best if v > 0)
    return rows_sum / ROUTING_DRAWS, max(1, round(touched_sum / ROUTING_DRAWS))


_GROUPED: dict[int, tuple[object, object]] = {}


def _grouped(tmod):
    """The time model of a grouped (ptr-array) expert GEMM: the dense model with its compute
    efficiencies scaled by ``moe_gemm_efficiency`` (one scheduler over many small problems)."""
    hit = _GROUPED.get(id(tmod))
    if hit is not None and hit[0] is tmod:
        return hit[1]
    f = tmod.moe_gemm_efficiency
    g = tmod if f == 1.0 else replace(tmod, compute_efficiency={k: v * f for k, v in tmod.compute_efficiency.items()})
    _GROUPED[id(tmod)] = (tmod, g)
    return g


def grouped_model(profile):
    """The grouped expert-GEMM time model of ``profile``'s architecture (the step's routed experts)."""
    return _grouped(time_model(profile))


def moe_layer(
    tokens: int,
    hidden: int,
    inter: int,
    topk: int,
    experts: int,
    tp: int,
    ep: int,
    distribution: str,
    dtype: str,
    profile,
    gated: bool = True,
    model=None,
    fused: bool = False,
    masked: bool = False,
) -> tuple[float, float]:
    """One MoE layer (routed experts) on the busiest rank: (estimate_s, sol_s)."""
    tmod = model or time_model(profile)
    fmt = MOE_FORMATS.get(dtype.strip().lower(), canonical(dtype))
    if fmt not in FORMATS:
        fmt = "bf16"
    if not profile.has(FORMATS[fmt][0]):
        fmt = "bf16"
    i_shard = max(1, -(-inter // max(tp, 1)))
    n_up = (2 if gated else 1) * i_shard
    rows, touched = busiest_rank(int(tokens), int(topk), int(experts), int(ep), routing_alpha(distribution))
    m = max(1, math.ceil(rows / touched))
    gmod = _grouped(tmod)
    up = estimate(m, n_up * touched, hidden, fmt, profile, standalone=False, model=gmod)
    # the down GEMM's K is one expert's I/tp: a K tile does not span experts, so it rounds up to a whole
    # 128-byte K tile (the TMA / smem swizzle width: 64 BF16, 128 FP8, 256 FP4 elements); the step's rows too
    down = estimate(m, hidden * touched, expert_k_padded(i_shard, fmt), fmt, profile, standalone=False, model=gmod)
    gemm_s = up.estimate_s + down.estimate_s
    bw = profile.memory_bytes_per_s * tmod.memory_efficiency
    b_act = FORMATS[fmt][1]
    # permute: read tokens' rows, write rows·H; activation: read rows·n_up, write rows·I;
    # finalize: read rows·H (bf16 out of the down GEMM), write tokens·H
    move_b = (
        tokens * hidden * b_act
        + rows * hidden * b_act
        + rows * (n_up + i_shard) * 2.0
        + rows * hidden * 2.0
        + tokens * hidden * 2.0
    )
    # the helper kernels (routing, expand/permute, which also quantizes the activations, activation, finalize):
    # an architecture's measured time, not a count of kernel floors (B200's exceed H100's: 21 vs 17.5 us)
    fixed = tmod.moe_fixed_us * 1e-6
    if fused:
        # TensorRT-LLM's min-latency NVFP4 path (kernel_source moe_torch_flow_min_latency): routing, permute and
        # finalize run inside the two grouped GEMM launches, so the helper kernels' floors go; the data still
        # moves (B200: 19-25 us at 1 token where the helper-kernel path measures 30-45)
        fixed = 0.0
    # block-scaled formats quantize the tokens in a kernel of their own (per-block scales in the GEMM's
    # scale layout: TensorRT-LLM's fp4_quantize, DeepGEMM's per-token-group FP8 cast): one launch and a pass
    # over tokens x H; per-tensor FP8 scales inside the expand kernel (H100: FP8 layers' fixed time = BF16's)
    quant_s = 0.0
    if fmt in SCALE_BLOCK:
        quant_s = tmod.kernel_floor_us * 1e-6 + tokens * hidden * QUANT_PASS_BYTES.get(fmt, 2.0) / bw
    # the helper kernels' work per pick: every rank sorts all tokens·topk (token, expert) picks into expert order
    # and the finalize gathers each token's top-k rows, whichever rank holds the experts
    fixed += tmod.moe_pick_ns * 1e-9 * tokens * min(topk, experts)
    local = max(1, experts // max(ep, 1))
    if masked:
        fixed += tmod.moe_masked_group_us * 1e-6 * local
    est = gemm_s + move_b / bw + fixed + quant_s
    # roofline: uniform routing, every local expert's weights read once, no launch costs
    mean_rows = max(1, math.ceil(tokens * min(topk, experts) / experts))
    up0 = estimate(mean_rows, n_up * local, hidden, fmt, profile, standalone=False, model=tmod)
    dn0 = estimate(mean_rows, hidden * local, i_shard, fmt, profile, standalone=False, model=tmod)
    sol = up0.sol_s + dn0.sol_s
    return est, sol
