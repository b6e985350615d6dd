"""Pricing one deployment of the frontier (colint.analysis.frontier) over a grid of concurrencies, an
ESTIMATE of colint's step model: the decode step vectorized over the grid (:func:`decode_prices`,
which must reproduce ``analyse`` at the two probe concurrencies), the largest concurrency whose weights,
KV cache and activations fit (:func:`max_concurrency`), the activations per GPU
(:func:`activation_bytes_per_gpu`, the one place the frontier counts them), and the FTL of one prompt
prefilled through pp pipeline stages (:func:`pipelined_ftl`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from colint.analysis.inventory import layer_counts
from colint.analysis.memory import B_ACT
from colint.analysis.pipeline import best_partition
from colint.analysis.vector_pricing import estimate_unique
from colint.analysis.gemm_rows import prefill_shape, routed_expert_rows
from colint.analysis.collectives import link_bytes_per_s
from colint.analysis.kv_cache import kv_sources
from colint.analysis.ops_moe import expert_k_padded
from colint.analysis.overlap import MIN_SPLIT, cores_s, half_cores_s, layer_time, overlapped_layers, overlaps
from colint.hardware_profiles import time_model
from colint.util.records import dataclass

ACTIVATION_BYTES = 2.0  # BF16 activations between kernels (as analyse's elementwise passes)
MAX_CONCURRENCY = 16384  # sequences per attention-DP group: the grid's cap when the KV cache is tiny


def activation_bytes_per_gpu(w, concurrency=None):
    """Peak activations per GPU, an ESTIMATE: :func:`colint.analysis.memory.activation_bytes` (the one
    place they are modelled: per token the residual stream and its normed copy, plus the widest GEMM's
    input and output) of the prefill step and of a decode step at ``concurrency`` (number or numpy array;
    the workload's own when None), the decode rows scaled linearly from the workload's decode step (the
    frontier always scales from its one-sequence probe, so a point's figure does not depend on how it was
    priced)."""
    h, prefill, gemm, b0 = _activation_terms(w)
    c = b0 if concurrency is None else concurrency
    decode = (c * 2.0 * h * B_ACT) + gemm * (c / b0)
    return _maximum(decode, prefill)


def _activation_terms(w) -> tuple[int, float, float, int]:
    """(hidden, prefill activation bytes, the decode step's widest GEMM input + output bytes, its
    concurrency) of ``w``, kept on it: the memory limit's bisection asks for many concurrencies."""
    cached = w.__dict__.get("_frontier_activation_terms")
    if cached is None:
        h = w.spec.hidden_size
        prefill = w.scenario.prefill_tokens * 2.0 * h * B_ACT + max(
            (r.m * max(r.instances, 1.0) * (r.k + r.n) * B_ACT for r in w.gemms["prefill"]), default=0.0
        )
        gemm = max((r.m * max(r.instances, 1.0) * (r.k + r.n) * B_ACT for r in w.gemms["decode"]), default=0.0)
        cached = w.__dict__["_frontier_activation_terms"] = (h, prefill, gemm, w.scenario.decode_concurrency)
    return cached


def _maximum(a, b):
    if isinstance(a, (int, float)):
        return max(a, b)  # one concurrency (the memory limit's bisection): no numpy call
    import numpy as np  # (transformers' dependency; imported on this path only)

    return np.maximum(a, b)


@dataclass
class Priced:
    itl_s: Any  # numpy arrays over the concurrency grid
    kv_bytes: Any
    act_bytes: Any
    core_s: Any = None  # the step's attention cores (Step.attention_core_s) at each concurrency


def decode_prices(spec, profile, grid, w1, w2):
    """Decode step estimates (s) at every concurrency of ``grid`` for w1's deployment: the weight
    GEMMs of analyse's rows vectorized over the grid (``estimate_unique``; routed experts as analyse
    prices them, a grouped GEMM of the touched experts' rows, ``routed_expert_rows``), per layer kind,
    and at each concurrency the layer time of ``overlap.layer_time``, the function analyse sums (attention
    cores of ops_attention, elementwise passes, MoE permute/finalize, TP all-reduces, EP dispatch/combine,
    the KV-parallel exchange; with the exchange overlapped by two micro-batches, whose GEMMs are priced
    over the grid's half concurrencies). ``w1``, ``w2``: analyse at the probes."""
    import numpy as np

    sc = w1.scenario
    b = np.asarray(grid, dtype=np.float64)
    b1, b2 = float(w1.scenario.decode_concurrency), float(w2.scenario.decode_concurrency)
    rows = w1.gemms["decode"]
    split = any(overlaps(k, replace(sc, decode_concurrency=MIN_SPLIT), "decode") for k in spec.layer_kinds)
    halves = [-(-int(bi) // 2) for bi in grid] if split else []
    both = _gemm_s_by_kind(rows, list(grid) + halves, sc, profile)  # one vectorized call for B and ⌈B/2⌉
    full = {key: t[: len(grid)] for key, t in both.items()}
    half = {key: t[len(grid) :] for key, t in both.items()}
    tmod = time_model(profile)
    sources = kv_sources(spec)
    h = spec.hidden_size
    total = np.zeros(b.size) + sum(t for (kind, _), t in full.items() if kind == "")  # the LM head
    core_total = np.zeros(b.size)
    for i, bi in enumerate(grid):
        sci = replace(sc, decode_concurrency=int(bi))
        fill_layers = overlapped_layers(spec, sci, "decode")
        step = 0.0
        for ki, (kind, n) in enumerate(zip(spec.layer_kinds, layer_counts(spec))):
            if not n:
                continue
            src = sources.get(ki)
            core = cores_s(spec, kind, n, profile, sci, "decode", src)
            f = tuple(float(full[(kind.name, c)][i]) if (kind.name, c) in full else 0.0 for c in ("attention", "ffn"))
            hv = None
            if overlaps(kind, sci, "decode"):
                g = tuple(
                    float(half[(kind.name, c)][i]) if (kind.name, c) in half else 0.0 for c in ("attention", "ffn")
                )
                hv = (g[0], g[1], half_cores_s(spec, kind, n, profile, sci, "decode", src, core))
            lt = layer_time(kind, h, int(bi), (f[0], f[1], core), hv, sci, profile, tmod, "decode", fill_layers)
            step += n * lt.total_s
            core_total[i] += n * lt.core_s
        total[i] += step
    kv = w1.kv_cache_bytes_per_gpu + (w2.kv_cache_bytes_per_gpu - w1.kv_cache_bytes_per_gpu) * (b - b1) / (b2 - b1)
    return Priced(total, kv, activation_bytes_per_gpu(w1, b), core_total)


def _gemm_s_by_kind(rows, grid, sc, profile) -> dict:
    """(layer kind, component) -> one layer's weight-GEMM time (s) at each concurrency of ``grid``: analyse's
    decode rows priced at M = B (routed experts: the busiest rank's touched experts' rows), vectorized.
    The LM head is kind "" (one layer)."""
    import numpy as np

    size = len(grid)
    groups = sc.attention_dp_groups
    jobs: dict[tuple[str, bool], list] = {}
    for row in rows:
        g = row.gemm
        expert = row.parallel == "expert" and bool(g.count)
        if expert:
            base_inst = float(-(-g.count // sc.moe_ep)) if sc.ep > 1 else float(g.count)  # as gemm_rows._shard
            topk = round(g.m_per_token * g.count)
            m = np.empty(size, dtype=np.int64)
            n_eff = np.empty(size, dtype=np.int64)
            for i, bi in enumerate(grid):
                touched, mi = routed_expert_rows(int(bi) * groups, topk, g.count, sc.moe_ep)
                inst = base_inst * touched
                m[i] = mi
                n_eff[i] = int(round(row.n * inst)) if inst > 1 else row.n
        else:
            m = np.asarray(grid, dtype=np.int64)
            n_eff = np.full(size, row.n, dtype=np.int64)
        key = (row.kind, row.component)
        # an expert's down GEMM runs at its K padded to whole tiles, as gemm_rows._row prices it
        k_time = expert_k_padded(row.k, row.dtype) if expert and "down" in g.name else row.k
        jobs.setdefault((row.dtype, expert), []).append((m, n_eff, np.full(size, k_time, dtype=np.int64), key))
    out: dict = {}
    for (dtype, grouped), sel in jobs.items():
        t = estimate_unique(
            np.concatenate([j[0] for j in sel]),
            np.concatenate([j[1] for j in sel]),
            np.concatenate([j[2] for j in sel]),
            dtype,
            profile,
            sc.outputs,
            grouped=grouped,
        )
        for i, j in enumerate(sel):
            out[j[3]] = out.get(j[3], 0.0) + t[i * size : (i + 1) * size]
    return out


def max_concurrency(w1, w2, usable: float, pp: int = 1) -> int:
    """The largest concurrency whose weights + KV cache + activations fit in ``usable`` bytes (at most
    ``Workload.max_decode_concurrency``, the KV-only limit): KV is affine in B (the two probes). With ``pp``
    pipeline stages B is one of the pp micro-batches in flight: a GPU holds pp x B sequences' KV cache."""
    b1, b2 = w1.scenario.decode_concurrency, w2.scenario.decode_concurrency

    def need(b: int) -> float:
        kv = w1.kv_cache_bytes_per_gpu + (w2.kv_cache_bytes_per_gpu - w1.kv_cache_bytes_per_gpu) * (b - b1) / (b2 - b1)
        return w1.weight_bytes_per_gpu + kv * pp + float(activation_bytes_per_gpu(w1, b))

    lo, hi = 0, min(w1.max_decode_concurrency // pp, MAX_CONCURRENCY)
    while lo < hi:  # need() grows with b
        mid = (lo + hi + 1) // 2
        if need(mid) <= usable:
            lo = mid
        else:
            hi = mid - 1
    return lo


def pipelined_ftl(w, stages: int) -> Optional[float]:
    """FTL (s) of one prompt of ``context`` tokens prefilled in chunks of ``prefill_tokens`` through
    ``stages`` pipeline stages (an ESTIMATE; chunked pipeline prefill): chunk c enters stage 1 while
    chunk c − 1 is in stage 2, so the prompt takes (chunks + stages − 1) stage times. A stage time is
    the slowest stage of the best contiguous split of the per-layer prefill costs of ``w``
    (``LayerCost.prefill_s``, embedding on the first stage, LM head on the last: their sum is the
    prefill step) plus sending one chunk's activations to the next stage over the scale-up link.
    ``stages`` = 1 gives analyse's ``ftl_s``. None when the layers do not split that many ways."""
    import math

    chunks = prefill_shape(w.scenario)[2]
    if stages == 1:
        return w.steps["prefill"].ftl_s
    part = best_partition(
        [c.prefill_s for c in w.layer_costs], stages, w.embedding_cost.prefill_s, w.lm_head_cost.prefill_s
    )
    if part is None:
        return None
    # one direction of the link between neighbouring stages (NVLink, or PCIe on a GPU without it)
    send_s = w.scenario.prefill_tokens * w.spec.hidden_size * ACTIVATION_BYTES / link_bytes_per_s(w.profile, 2)
    return (chunks + stages - 1) * (part.max + send_s) if math.isfinite(part.max) else None
