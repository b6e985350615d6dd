"""How many tokens a routed expert's GEMM sees per step and what the EP layout costs (CL501, CL502; estimates of
the workload under uniform routing, colint.analysis.moe).

``expert_batching``: the tokens per expert of a decode step against M* (where the expert GEMMs turn compute-bound),
the global concurrency and the EP width that reach it, and the same for prefill. ``expert_imbalance``: what an
EP width that does not divide the experts leaves idle on the busiest rank, and its share of the decode step.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional

from colint.analysis.footprint import memory_at
from colint.analysis.inventory import layer_counts
from colint.analysis import moe
from colint.util.records import dataclass


def moe_kinds(spec) -> list:
    """(kind, layers): one representative layer kind per distinct routed-expert shape, with its layer count."""
    seen: dict = {}
    for kind, n in zip(spec.layer_kinds, layer_counts(spec)):
        f = kind.ffn
        if not n or f.kind != "moe" or not f.num_experts or not f.top_k:
            continue
        key = (f.num_experts, f.top_k, f.expert_intermediate_size)
        if key in seen:
            seen[key] = (seen[key][0], seen[key][1] + n)
        else:
            seen[key] = (kind, n)
    return list(seen.values())


def expert_gemm_rows(workload, regime: str, kind_name: str) -> list:
    """The routed-expert GEMM rows of one layer kind in one regime of ``workload``."""
    return [r for r in workload.gemms[regime] if r.kind == kind_name and r.parallel == "expert"]


@dataclass(frozen=True)
class ExpertBatching:
    """Tokens per routed expert of one MoE layer kind in the scenario (uniform routing; estimates)."""

    tokens_per_expert: float  # decode step, per expert
    m_star_tokens: float  # where the expert GEMMs turn compute-bound (decode rows)
    concurrency_needed_tokens: float  # global concurrency per EP group that reaches M*
    ep_needed: int  # the EP width that reaches it at the scenario's concurrency per attention group
    prefill_tokens_per_expert: float
    prefill_m_star_tokens: float
    experts_touched: float  # experts a decode step's tokens touch

    @property
    def memory_bound(self) -> bool:
        """Below a finite M* at decode: the expert layers stream weights for a handful of rows."""
        return math.isfinite(self.m_star_tokens) and self.tokens_per_expert < self.m_star_tokens


def expert_batching(workload, scenario, kind) -> Optional[ExpertBatching]:
    """``kind``'s routed experts in ``scenario`` (``workload`` analysed in it); None without expert GEMM rows."""
    rows = expert_gemm_rows(workload, "decode", kind.name)
    if not rows:
        return None
    e, k, sc = kind.ffn.num_experts, kind.ffn.top_k, scenario
    conc, grp = sc.decode_concurrency, sc.group_gpus  # attention-DP groups of tp x kvp GPUs in one EP domain
    m_star = max(r.time.m_star for r in rows)
    return ExpertBatching(
        tokens_per_expert=moe.tokens_per_expert(conc, sc.ep, k, e, tp=grp),
        m_star_tokens=m_star,
        concurrency_needed_tokens=moe.concurrency_for_m(m_star, k, e),
        ep_needed=moe.ep_for_m(m_star, conc, k, e, tp=grp),
        prefill_tokens_per_expert=moe.tokens_per_expert(sc.prefill_tokens, sc.ep, k, e, tp=grp),
        prefill_m_star_tokens=max(
            (r.time.m_star for r in expert_gemm_rows(workload, "prefill", kind.name)), default=m_star
        ),
        experts_touched=moe.experts_touched(conc * sc.attention_dp_groups, k, e),
    )


def concurrency_fit_at_ep(spec, profile, scenario, workload, ep: int) -> Optional[int]:
    """Sequences per attention group whose KV fits per GPU at EP width ``ep`` (the memory figures ``analyse`` would
    give there, without its time model); at the EP of ``scenario`` (``workload``'s) its figure, None where it has
    none."""
    sc = scenario
    if ep == sc.ep:
        return workload.max_decode_concurrency if workload.memory is not None else None
    return memory_at(spec, profile, replace(sc, ep=ep)).max_decode_concurrency


@dataclass(frozen=True)
class ExpertImbalance:
    """Experts over an EP width that does not divide them (estimates where they price time)."""

    slots_per_gpu: int  # experts the busiest rank holds
    mean_per_gpu: float
    redundant_to_fill: int  # redundant copies (EPLB) that fill every slot
    expert_decode_s: float  # the kind's expert GEMMs in one decode step
    decode_step_s: float

    @property
    def idle_share(self) -> float:
        """Share of the expert capacity (slots) that holds no expert."""
        return 1.0 - self.mean_per_gpu / self.slots_per_gpu

    @property
    def loss_pct(self) -> Optional[float]:
        """The idle expert time as a percent of the decode step (None without a step time)."""
        return 100.0 * self.idle_share * self.expert_decode_s / self.decode_step_s if self.decode_step_s else None


def expert_imbalance(workload, kind, ep: int) -> ExpertImbalance:
    """``kind``'s routed experts spread over ``ep`` ranks in ``workload``'s decode step."""
    e = kind.ffn.num_experts
    return ExpertImbalance(
        slots_per_gpu=moe.experts_per_gpu(e, ep),
        mean_per_gpu=e / ep,
        redundant_to_fill=moe.redundant_to_fill(e, ep),
        expert_decode_s=sum(r.total_s for r in expert_gemm_rows(workload, "decode", kind.name)),
        decode_step_s=workload.steps["decode"].estimate_s,
    )
