"""The throughput–interactivity frontier of a design on one GPU type (issue 14; `colint pareto`).

Enumerates the deployments of one model replica inside one scale-up domain (the profile's
``domain_size``: 8 for HGX, 72 for NVL72; or within ``--total-gpus`` where that is larger, the collectives that
leave the domain priced at the link past it: PCIe within a server of NVLink-bridged cards, else the scale-out
network) — attention/dense tensor parallelism ``tp``, and for an
MoE expert parallelism ``ep`` (ep ≥ tp: ``ep / tp`` attention data-parallel groups share the
experts, colint.analysis.moe.attention_dp_groups) or experts tensor-parallel (ep = 1), and within
one HGX node the moe_tp x moe_ep mixes between them (moe_tp_mixes: each expert split moe_tp ways,
the experts over ep / moe_tp groups) — crosses each with decode concurrencies up to what fits in
memory, prices every point with the step model of ``analyse`` and keeps the non-dominated points:
the most tokens/s per GPU for each level of tokens/s per user.

Per point (deployment d, concurrency B = sequences per attention-DP group of d.tp x d.kvp GPUs):

* decode ITL = ``analyse(spec, profile, scenario(d, B)).steps["decode"].estimate_s``;
  tokens/s per user = 1 / ITL; tokens/s per GPU = B / ITL / tp (each group of tp GPUs serves B
  sequences; an EP domain of ep GPUs holds ep / tp groups);
* FTL = the prefill ``ftl_s`` of the same deployment (one prompt of ``context`` tokens,
  ``prefill_tokens`` per forward; aggregated serving: the decode GPUs prefill too); and pp for
  prefill (``frontier_pricing.pipelined_ftl``): the FTL of the same prompt through pp pipeline stages of this
  deployment (pp × its GPUs within the domain), whose chunks flow through the stages one behind
  the other — (chunks + pp − 1) × the slowest stage of the best contiguous split of analyse's
  per-layer prefill costs (colint.analysis.pipeline), + the stage-to-stage activation transfer;
  the best pp is reported beside the FTL (it pays for prompts of many chunks: long context);
* memory per GPU = ``Workload.weight_bytes_per_gpu + kv_cache_bytes_per_gpu`` + the activations
  of the larger step (``frontier_pricing.activation_bytes_per_gpu``, the one place they are counted); a point
  fits when B ≤ ``Workload.max_decode_concurrency`` and that sum is within the usable share of HBM
  (``USABLE_HBM_SHARE``, as ``Workload.memory_fits``). What does not fit is dropped and counted.

Speed: ``analyse`` costs ~1–3 ms per call, and a 1T MoE on NVL72 has ~30 deployments × ~25
concurrencies. So each deployment is analysed at two probe concurrencies and the decode step is
priced over all B at once: the weight GEMMs with ``vector_pricing.estimate_unique`` (M = B, or for
routed experts the grouped GEMM of the touched experts' rows of ``gemm_rows.routed_expert_rows``,
``grouped=True``), and the rest of the step (attention cores of ops_attention, elementwise passes,
MoE permute/finalize, TP all-reduces, EP dispatch/combine, overlapped by two micro-batches where the
scenario's ``ep_overlap`` says so) by ``overlap.layer_time`` at each B: the function analyse sums, so only the GEMM vectorization can differ. The vectorized
price must reproduce both probes; then every frontier point is priced again by ``analyse`` itself,
and a point that differs (an op model in step_extras.py that is no longer linear in B) makes the
whole GPU fall back to ``analyse`` per point, with a note. So the frontier always reports
``analyse``'s numbers, and a better op model there moves it without a change here.

KV (Helix) parallelism: where tp already reaches the KV heads (or for MLA), each tp is also tried
with kvp = 2, 4, ... within the domain (``kv_parallel_allowed``): an attention group of tp x kvp GPUs
whose kvp GPUs each hold 1/kvp of every sequence's KV cache (``Scenario.kvp``, priced by analyse).

Pipeline stages (``Deployment.pp``) only past one scale-up domain (--total-gpus): each stage a deployment within one
domain, pp micro-batches in flight, one in each stage. A point's concurrency is one micro-batch; its ITL is
``analyse``'s step at pp (the stages in sequence: what each micro-batch waits for per token; the hop between stages,
one micro-batch's activations, is not priced), a GPU holds pp micro-batches' KV cache over its stage's layers
(``analyse``'s figure x pp), and tokens/s per GPU are pp x B sequences over the stages' GPUs, B / ITL / (tp x kvp).
A disaggregated prefill pool is priced unstaged.

Not modelled (said in the output): hot experts (routing is balanced; the busiest EP rank of a step sets its MoE
time: moe.busiest_rank_factor). The KV cache's transfer between disaggregated pools is priced in the TTFT
(colint.analysis.serving.with_kv_transfer).
Every figure is an ESTIMATE of colint's step model, not a measurement. The pricing of one deployment
(vectorized decode step, memory limit, activations, pipelined FTL) is colint.analysis.frontier_pricing.
"""

from __future__ import annotations

import math
import time
from dataclasses import field, replace
from typing import Any, Optional

from colint.analysis.collectives import gbps_text, link_bytes_per_s, past_domain_link
from colint.analysis.inventory import layer_counts
from colint.analysis.deployments import powers_of_two
from colint.analysis.frontier_pricing import (
    MAX_CONCURRENCY,
    activation_bytes_per_gpu,
    decode_prices,
    max_concurrency,
    pipelined_ftl,
)
from colint.analysis.kv_cache import kind_mixers
from colint.analysis.memory import USABLE_HBM_SHARE  # the share of HBM Workload.memory_fits plans with
from colint.analysis.moe import attention_dp_groups
from colint.analysis.padding import TILE
from colint.analysis.serving import (
    Pool,
    PrefillCost,
    Serving,
    aggregated,
    choose_pools,
    chunk_tokens,
    mixed_step_s,
    prefill_cost,
    with_kv_transfer,
)
from colint.analysis.workload import analyse
from colint.util.records import dataclass

INTERACTIVITY_LEVELS = (20.0, 50.0, 100.0, 200.0)  # tok/s/user where --compare reports the gain
PROBE_CONCURRENCY = (1, 64)  # the two concurrencies each deployment is analysed at
MATCH_RTOL = 1e-6  # the vectorized price must equal analyse's within this (float-order noise only)


@dataclass(frozen=True)
class Deployment:
    tp: int  # attention (and dense FFN) tensor parallelism
    ep: int = 1  # GPUs the routed experts span (1: experts tensor-parallel over the tp x kvp GPUs)
    kvp: int = 1  # KV (Helix) parallelism: GPUs per TP rank that split each sequence's KV cache
    moe_tp: int = 1  # GPUs each routed expert is split over within ep (experts moe_tp x ep / moe_tp)
    pp: int = 1  # pipeline stages, each of tp x kvp (and ep) GPUs, with pp micro-batches in flight (past the domain)

    @property
    def group_gpus(self) -> int:
        """GPUs of one attention group (tp x kvp), which serve its ``concurrency`` sequences."""
        return self.tp * self.kvp

    @property
    def gpus(self) -> int:
        return max(self.group_gpus, self.ep) * self.pp

    @property
    def attention_dp(self) -> int:

        return attention_dp_groups(self.ep, self.group_gpus) if self.ep > 1 else 1

    @property
    def moe_ep(self) -> int:
        """Groups the experts are spread over (Scenario.moe_ep)."""
        return max(1, self.ep // self.moe_tp) if self.ep > 1 else 1

    def label(self) -> str:
        s = f"tp{self.tp}" + (f" kvp{self.kvp}" if self.kvp > 1 else "")
        if self.ep > 1:
            s += f" experts tp{self.moe_tp} x ep{self.moe_ep}" if self.moe_tp > 1 else f" ep{self.ep}"
            if self.attention_dp > 1:
                s += f" dp{self.attention_dp}"
        return s + (f" pp{self.pp}" if self.pp > 1 else "")


@dataclass
class Point:
    deployment: Deployment
    concurrency: int  # sequences per attention-DP group (tp GPUs); with pp stages, per micro-batch (pp in flight)
    itl_s: float
    ftl_s: float
    weight_bytes_per_gpu: float
    kv_cache_bytes_per_gpu: float
    activation_bytes_per_gpu: float
    bound: Optional[str] = None  # what the decode step spends most time on (frontier points)
    ftl_pipelined_s: Optional[float] = None  # the best FTL over pp stages of this deployment (pp for prefill)
    ftl_pp: int = 1  # the pp that reaches it
    kv_replication: int = 1  # TP ranks holding the same KV cache (tp > KV heads; MLA: tp)
    # serving (colint.analysis.serving): aggregated charges each decode step this much prefill time, and a
    # step carrying one prefill chunk takes mixed_s; disaggregated puts the point in a Pool
    prefill_charge_s: float = 0.0
    mixed_s: Optional[float] = None
    ttft_s: Optional[float] = None
    pool: Optional[Pool] = None

    @property
    def step_s(self) -> float:
        """The mean step of the group: the decode step plus the prefill charged to it (throughput's divisor)."""
        return self.itl_s + self.prefill_charge_s

    @property
    def tpot_s(self) -> float:
        """A sequence's time per output token after its first: the decode step plus the prefills of the other
        B − 1 sequences that ride in its steps ((B − 1) / B of the charge; its own prompt precedes its first token)."""
        b = self.concurrency
        return self.itl_s + self.prefill_charge_s * (b - 1) / b

    @property
    def tokens_per_s_per_user(self) -> float:
        return 1.0 / self.tpot_s

    @property
    def decode_tokens_per_s_per_gpu(self) -> float:
        """The decode step's own tokens/s per GPU (what decode mode reports)."""
        return self.concurrency / self.itl_s / self.deployment.group_gpus

    @property
    def tokens_per_s_per_gpu(self) -> float:
        t = self.concurrency / self.step_s / self.deployment.group_gpus
        return t * self.pool.throughput_factor if self.pool else t

    @property
    def memory_bytes_per_gpu(self) -> float:
        return self.weight_bytes_per_gpu + self.kv_cache_bytes_per_gpu + self.activation_bytes_per_gpu

    def public(self) -> dict[str, Any]:
        d = self.deployment
        return {
            "deployment": d.label(),
            "tp": d.tp,
            "ep": d.ep,
            "kvp": d.kvp,
            "pp": d.pp,
            "moe_tp": d.moe_tp if d.ep > 1 else d.group_gpus,
            "moe_ep": d.moe_ep,
            "attention_dp": d.attention_dp,
            "gpus": d.gpus,
            "concurrency": self.concurrency,
            "itl_s": self.itl_s,
            "tokens_per_s_per_user": self.tokens_per_s_per_user,
            "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
            "ftl_s": self.ftl_s,
            "ftl_pipelined_s": self.ftl_pipelined_s,
            "ftl_pp": self.ftl_pp,
            "weight_bytes_per_gpu": self.weight_bytes_per_gpu,
            "kv_cache_bytes_per_gpu": self.kv_cache_bytes_per_gpu,
            "activation_bytes_per_gpu": self.activation_bytes_per_gpu,
            "memory_bytes_per_gpu": self.memory_bytes_per_gpu,
            "bound": self.bound,
            "kv_replication": self.kv_replication,
            "decode_tokens_per_s_per_gpu": self.decode_tokens_per_s_per_gpu,
            "prefill_charge_s": self.prefill_charge_s,
            "step_s": self.step_s,
            "tpot_s": self.tpot_s,
            "mixed_step_s": self.mixed_s,
            "ttft_s": self.ttft_s,
            "pool": self.pool.public() if self.pool else None,
        }


@dataclass
class Frontier:
    """One design's frontier on one GPU type."""

    path: str
    gpu: str
    label: str  # the scenario the figures are estimates for
    domain_size: int
    hbm_bytes: float
    deployments: list[Deployment]
    points: list[Point]  # every priced point that fits
    frontier: list[Point]  # non-dominated, by falling tok/s/user
    dropped: int  # (deployment, concurrency) points of the common grid that do not fit in memory
    unfit_deployments: list[str] = field(default_factory=list)  # not even one sequence fits next to the weights
    notes: list[str] = field(default_factory=list)
    variant: dict[str, Any] = field(default_factory=dict)  # key -> value edits of the original
    seconds: float = 0.0
    serving: Serving = field(default_factory=Serving)
    total_gpus: int = 0  # the GPUs a deployment (disaggregated: both pools) may use
    dropped_ttft: int = 0  # points over the TTFT limit

    def throughput_at(self, tokens_per_s_per_user: float) -> Optional[float]:
        return throughput_at(self.frontier, tokens_per_s_per_user)

    def serving_label(self) -> str:
        """Which serving mode, how many GPUs, what each output token was charged (text, JSON and chart)."""
        sv = self.serving
        shape = f", ISL {sv.isl} / OSL {sv.osl}" if sv.isl else ""
        limit = f", TTFT <= {sv.ttft_limit_s:g} s" if sv.ttft_limit_s is not None else ""
        return f"{sv.mode} serving{shape}, up to {self.total_gpus} GPUs{limit}: {sv.charged()}"

    def public(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "variant": self.variant,
            "gpu": self.gpu,
            "label": self.label,
            "domain_size": self.domain_size,
            "hbm_bytes": self.hbm_bytes,
            "serving": {
                "mode": self.serving.mode,
                "isl": self.serving.isl or None,
                "osl": self.serving.osl or None,
                "total_gpus": self.total_gpus,
                "ttft_limit_s": self.serving.ttft_limit_s,
                "charged": self.serving.charged(),
                "label": self.serving_label(),
            },
            "points_dropped_ttft": self.dropped_ttft,
            "deployments": [d.label() for d in self.deployments],
            "unfit_deployments": self.unfit_deployments,
            "points_priced": len(self.points) + self.dropped,
            "points_dropped_not_fit": self.dropped,
            "notes": self.notes,
            "frontier": [p.public() for p in self.frontier],
            "points": [p.public() for p in self.points],
        }


# ------------------------------------------------------------------------------ enumeration
def _used_kinds(spec):
    return [k for k, n in zip(spec.layer_kinds, layer_counts(spec)) if n]


def deployments(spec, profile, max_gpus: Optional[int] = None) -> list[Deployment]:
    """Every (tp, ep) of one replica of at most ``max_gpus`` GPUs (the --total-gpus bound; None: the profile's
    scale-up domain): tp a power of two that divides the query heads of every attention layer; for an MoE, ep = 1
    (experts tensor-parallel) or ep ≥ tp, a multiple of tp (a power of two times tp, or all ``max_gpus``), at most
    the experts. A replica wider than the scale-up domain (--total-gpus past it: two HGX nodes for a model that
    one does not hold, an 8-GPU PCIe host of NVLink-bridged pairs) pays for it where analyse prices its collectives:
    what leaves the domain runs at the link past it (colint.analysis.collectives.past_domain_link). Past the domain,
    pipeline stages too (Deployment.pp), each stage within one domain."""
    domain = max_gpus or profile.domain_size  # the GPUs one replica may span
    kinds = _used_kinds(spec)
    heads = {mx.num_heads for k in kinds for mx in _mixers(k) if mx.kind in ("attention", "mla") and mx.num_heads}
    experts = [k.ffn.num_experts for k in kinds if k.ffn.kind == "moe" and k.ffn.num_experts]
    widths = [k.ffn.expert_intermediate_size for k in kinds if k.ffn.kind == "moe" and k.ffn.expert_intermediate_size]
    out: list[Deployment] = []
    for tp in powers_of_two(domain):
        if any(h % tp for h in heads):
            continue
        for kvp in powers_of_two(domain // tp) if kv_parallel_allowed(spec, tp) else [1]:
            group = tp * kvp
            out.append(Deployment(tp, 1, kvp))
            if not experts:
                continue
            eps = {group * g for g in powers_of_two(domain // group)} | ({domain} if domain % group == 0 else set())
            for ep in sorted(eps):
                if ep > 1 and ep <= min(experts):
                    out.append(Deployment(tp, ep, kvp))
                    out += [Deployment(tp, ep, kvp, m) for m in moe_tp_mixes(ep, widths)]
    # past the scale-up domain, pipeline stages too: each stage a deployment within one domain, pp of them across
    # domains (pipeline parallelism across nodes, as vLLM, SGLang and TensorRT-LLM run it); within a domain tp serves
    dom, layers = profile.domain_size, sum(layer_counts(spec))
    return out + [
        replace(d, pp=pp)
        for d in out
        if d.gpus <= dom
        for pp in powers_of_two(domain // d.gpus)
        if 1 < pp <= layers and d.gpus * pp > dom
    ]


# mixes are tried where the experts span at most one HGX node (8 GPUs), where TensorRT-LLM runs moe_tp x moe_ep and
# aiconfigurator searches them (its frontier for Qwen3-235B on 8 H100: experts tp2 x ep4); wider EP (NVL72) stays
# all-EP, as DeepSeek's and SGLang's wide-EP deployments run
MIX_MAX_SPAN = 8
MIX_MIN_WIDTH = TILE  # an expert's shard keeps at least one 128-wide GEMM tile (the tile aligned_tp keeps)


def moe_tp_mixes(ep: int, widths) -> list[int]:
    """The expert splits (moe_tp) mixed with EP over ``ep`` GPUs that the frontier tries (none past MIX_MAX_SPAN):
    powers of two from 2 up to ep / 2 (at least two expert groups; moe_tp 1 is all-EP) that leave every routed
    expert's intermediate width (``widths``) at least MIX_MIN_WIDTH per GPU."""
    if not widths or ep > MIX_MAX_SPAN:
        return []
    return [m for m in powers_of_two(ep // 2) if m > 1 and min(widths) // m >= MIX_MIN_WIDTH]


def kv_parallel_allowed(spec, tp: int) -> bool:
    """KV (Helix) parallelism pays only where tp can no longer shard the KV cache: every attention
    layer's KV heads already split over the tp GPUs (tp >= KV heads) or MLA (one latent shared by
    all heads, replicated on every tp rank); layers with a recurrent state (linear attention, Mamba)
    have no context to split, so a design with them is not enumerated with kvp > 1."""
    mixers = [mx for k in _used_kinds(spec) for mx in _mixers(k)]
    if any(mx.kind in ("linear_attention", "mamba") for mx in mixers):
        return False
    att = [mx for mx in mixers if mx.kind in ("attention", "mla")]
    return bool(att) and all(mx.kind == "mla" or tp >= max(1, mx.num_kv_heads) for mx in att)


def _mixers(kind):

    return kind_mixers(kind)


def concurrency_grid(limit: int) -> list[int]:
    """1, 2, 3, ... 8, then four steps an octave (10, 12, 14, 16, 20, 24, 28, 32, 40, ...) up to ``limit``, and
    ``limit``: an engine batches any number of sequences, and a frontier read between neighbours at most 1.25x
    apart stays within a few percent of the points between them."""
    limit = min(limit, MAX_CONCURRENCY)
    out = {v for v in range(1, min(limit, 8) + 1)}
    base = 8
    while base < limit:
        out.update(v for v in (base * 5 // 4, base * 3 // 2, base * 7 // 4, base * 2) if v <= limit)
        base *= 2
    if limit >= 1:
        out.add(limit)
    return sorted(out)


def scenario_for(base, d: Deployment, concurrency: int):
    """The scenario `inspect --gpu` prices deployment ``d`` at ``concurrency`` with."""
    return replace(
        base, tp=d.tp, ep=d.ep, moe_tp=d.moe_tp, kvp=d.kvp, pp=d.pp, dp=1, decode_concurrency=int(concurrency)
    )


def best_pipelined_ftl(w, d: Deployment, domain: int) -> tuple[float, int]:
    """(FTL, pp): the lowest :func:`colint.analysis.frontier_pricing.pipelined_ftl` over pp = 1, 2, 4, ... with pp × the deployment's
    GPUs within the domain."""
    best, best_pp = w.steps["prefill"].ftl_s, 1
    pp = 2
    while pp * d.gpus <= domain and pp <= len(w.layer_costs):
        t = pipelined_ftl(w, pp)
        if t is not None and t < best:
            best, best_pp = t, pp
        pp *= 2
    return best, best_pp


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= MATCH_RTOL * max(abs(a), abs(b), 1e-30)


def step_bound(w) -> str:
    """What the decode step of ``w`` spends most of its estimated time on."""
    s = w.steps["decode"]
    parts = {"HBM (weights)": 0.0, "compute": 0.0, "attention core (KV)": s.attention_core_s}
    for r in w.gemms["decode"]:
        parts["compute" if r.time.bound == "compute" else "HBM (weights)"] += r.total_s
    parts["overheads"] = max(0.0, s.estimate_s - sum(parts.values()))
    return max(parts, key=lambda k: parts[k])


def _point(d: Deployment, b: int, w, ftl_s: float, activation_bytes: float) -> Point:
    """Deployment ``d`` at ``b`` sequences per attention group as ``w`` (analyse at them) prices it. With pp stages
    b is one micro-batch: pp of them are in flight, one in each stage, so a GPU holds the KV cache of pp x b
    sequences over its stage's layers (analyse's figure at b, x pp); each sequence waits for all stages per token
    (analyse's step: the stages in sequence), and the stages' GPUs serve pp x b sequences, the same tokens/s per GPU
    as one stage group serving b."""
    return Point(
        d,
        b,
        w.steps["decode"].estimate_s,
        ftl_s,
        w.weight_bytes_per_gpu,
        w.kv_cache_bytes_per_gpu * d.pp,
        activation_bytes,
        step_bound(w),
        kv_replication=max((a.kv_replication for a in w.attention["decode"]), default=1),
    )


def pareto(points: list[Point]) -> list[Point]:
    """The non-dominated points (higher tok/s/user and higher tok/s/GPU are better), by falling
    tok/s/user: a point stays when no other is at least as good in both and better in one."""
    best = -math.inf
    out: list[Point] = []
    for p in sorted(points, key=lambda p: (-p.tokens_per_s_per_user, -p.tokens_per_s_per_gpu)):
        if p.tokens_per_s_per_gpu > best:
            if out and out[-1].tokens_per_s_per_user == p.tokens_per_s_per_user:
                continue  # same interactivity, less throughput: dominated by the one before
            out.append(p)
            best = p.tokens_per_s_per_gpu
    return out


def throughput_at(frontier: list[Point], tokens_per_s_per_user: float) -> Optional[float]:
    """tok/s/GPU the frontier reaches at ``tokens_per_s_per_user``: interpolated log–log between the
    two frontier points around it; below the frontier's lowest interactivity, its highest
    throughput (that deployment serves slower users too); None when out of reach (faster than its
    fastest point)."""
    if not frontier:
        return None
    pts = sorted(frontier, key=lambda p: p.tokens_per_s_per_user)
    u = tokens_per_s_per_user
    if u > pts[-1].tokens_per_s_per_user * (1 + 1e-12):
        return None
    if u <= pts[0].tokens_per_s_per_user:
        return pts[0].tokens_per_s_per_gpu
    for lo, hi in zip(pts, pts[1:]):
        if lo.tokens_per_s_per_user <= u <= hi.tokens_per_s_per_user:
            x0, x1 = math.log(lo.tokens_per_s_per_user), math.log(hi.tokens_per_s_per_user)
            y0, y1 = math.log(lo.tokens_per_s_per_gpu), math.log(hi.tokens_per_s_per_gpu)
            f = (math.log(u) - x0) / (x1 - x0) if x1 > x0 else 0.0
            return math.exp(y0 + f * (y1 - y0))
    return pts[-1].tokens_per_s_per_gpu


class _Fallback(Exception):
    """The vectorized price missed analyse's somewhere: the whole GPU is priced by analyse (``why`` says where)."""


def frontier(
    spec,
    profile,
    base,
    path: str = "",
    variant: Optional[dict] = None,
    *,
    exact: bool = False,
    serving: Optional[Serving] = None,
) -> Frontier:
    """The frontier of ``spec`` on ``profile`` for scenario ``base`` (its formats, context and
    prefill tokens; its tp/ep/pp/concurrency are what is enumerated) served as ``serving`` says
    (colint.analysis.serving; None: decode steps alone). ``exact``: price every point with ``analyse``
    (what the vectorized path must equal; tests and the fallback use it)."""
    t0 = time.perf_counter()
    serving = serving or Serving()
    total = serving.total_gpus or profile.domain_size
    hbm = profile.memory_gb * 1e9
    usable = USABLE_HBM_SHARE * hbm
    # disaggregated: a decode or prefill instance leaves room for at least one of the other pool's
    deps = deployments(spec, profile, _largest_power_of_two_below(total) if serving.mode == "disaggregated" else total)
    probes, prefills, unfit = _probe(spec, profile, base, deps, usable, serving)
    # one grid of concurrencies for every deployment, up to the largest that fits anywhere (and each
    # deployment's own limit); what a deployment cannot hold is dropped and counted, not priced
    limits = [lim for *_, lim in probes if lim]
    common = concurrency_grid(max(limits)) if limits else []
    chunk, chunks = chunk_tokens(serving, base.prefill_tokens) if serving.mode != "decode" else (0, 0)
    points: list[Point] = []
    dropped = 0
    try:
        for probe in probes:
            dropped += _price(spec, profile, base, probe, common, prefills, chunk, usable, serving, exact, points)
        points, dropped_ttft, unpooled = _serve(
            points, prefills, serving, total, chunks, kv_link_bytes_per_s(profile, total)
        )
        front = pareto(points)
        if not exact:
            front = _checked(spec, profile, base, front, prefills, chunk, serving)
    except _Fallback as why:
        return _exact(spec, profile, base, path, variant, str(why), serving)
    notes = _notes(front, unpooled, total, profile)
    label = (
        f"estimate: {profile.name}, {base.gemm_format} weights, KV cache {base.kv_cache}, context "
        f"{base.context}, prefill {base.prefill_tokens} tokens per forward"
    )
    seconds = time.perf_counter() - t0
    return Frontier(
        path, profile.name, label, profile.domain_size, hbm, deps, points, front, dropped, unfit, notes,
        dict(variant or {}), seconds, serving, total, dropped_ttft,
    )  # fmt: skip


def _probe(spec, profile, base, deps: list[Deployment], usable: float, serving: Serving):
    """Each deployment analysed at the probe concurrencies: ([(d, w1, w2, concurrency limit)], {d: the prefill of
    one request's ISL-token prompt on d, where prefill is charged}, [labels of the deployments that do not fit]).
    A moe_tp x moe_ep mix whose all-EP sibling does not fit, with the experts dividing over its ep, is not analysed:
    it holds at least the sibling's expert weights and activations per GPU (moe_tp_mixes)."""
    charge = serving.mode in ("aggregated", "disaggregated")
    probes: list[tuple[Deployment, Any, Any, int]] = []
    prefills: dict[Deployment, PrefillCost] = {}
    unfit: list[str] = []
    experts = [k.ffn.num_experts for k in _used_kinds(spec) if k.ffn.kind == "moe" and k.ffn.num_experts]
    for d in deps:
        sibling = Deployment(d.tp, d.ep, d.kvp).label()
        if d.moe_tp > 1 and sibling in unfit and all(e % d.ep == 0 for e in experts):
            unfit.append(d.label())
            probes.append((d, None, None, 0))
            continue
        w1 = analyse(spec, profile, scenario_for(base, d, PROBE_CONCURRENCY[0]))
        if w1.max_decode_concurrency < d.pp or w1.weight_bytes_per_gpu >= usable:
            unfit.append(d.label())  # the weights alone leave no room for one sequence
            probes.append((d, w1, None, 0))
            continue
        w2 = analyse(spec, profile, scenario_for(base, d, PROBE_CONCURRENCY[1]))
        limit = max_concurrency(w1, w2, usable, d.pp)
        if not limit:
            unfit.append(d.label())  # weights + activations + one sequence's KV cache do not fit
        elif charge:
            prefills[d] = prefill_cost(analyse(spec, profile, replace(scenario_for(base, d, 1), context=serving.isl)))
        probes.append((d, w1, w2, limit))
    return probes, prefills, unfit


def _price(spec, profile, base, probe, common, prefills, chunk, usable, serving, exact, points) -> int:
    """Price deployment ``probe``'s grid (the common concurrencies it holds, and its limit) into ``points``: the
    vectorized price, which must reproduce the probes (else _Fallback), or analyse per point where ``exact``.
    Returns the grid's points dropped (past its memory)."""
    d, w1, w2, limit = probe
    grid = sorted({b for b in common if b <= limit} | ({limit} if limit else set()))
    dropped = sum(1 for b in common if b > limit)
    if not grid:
        return dropped
    ftl = w1.steps["prefill"].ftl_s
    if d.pp > 1:  # the stages are the deployment's: a prompt's chunks flow through them one behind the other
        ftl_pipe, ftl_pp = pipelined_ftl(w1, d.pp) or ftl, d.pp
    else:
        ftl_pipe, ftl_pp = best_pipelined_ftl(w1, d, profile.domain_size)
    aggregated_mode = serving.mode == "aggregated"
    priced = None
    if not exact:
        # the grid, the two probes and the mixed steps in one vectorized call; the price must reproduce the probes
        mixed = [b + chunk for b in grid] if aggregated_mode else []
        priced = decode_prices(spec, profile, grid + list(PROBE_CONCURRENCY) + mixed, w1, w2)
        if priced is None or not all(
            _close(float(priced.itl_s[len(grid) + i]), w.steps["decode"].estimate_s) for i, w in enumerate((w1, w2))
        ):
            raise _Fallback(f"{d.label()}: the vectorized price does not reproduce analyse at the probe concurrencies")
    for i, b in enumerate(grid):
        if priced is None:
            w = analyse(spec, profile, scenario_for(base, d, b))
            p = _point(d, b, w, ftl, float(activation_bytes_per_gpu(w1, b)))
            if aggregated_mode:
                wc = analyse(spec, profile, scenario_for(base, d, b + chunk))
                p.mixed_s = _mixed(wc.steps["decode"], w.steps["decode"].attention_core_s, chunk, prefills[d])
        else:
            p = Point(
                d, b, float(priced.itl_s[i]), ftl, w1.weight_bytes_per_gpu, float(priced.kv_bytes[i]) * d.pp,
                float(priced.act_bytes[i]),
            )  # fmt: skip
            if aggregated_mode:
                j = len(grid) + len(PROBE_CONCURRENCY) + i
                p.mixed_s = mixed_step_s(
                    float(priced.itl_s[j]),
                    float(priced.core_s[j]),
                    float(priced.core_s[i]),
                    chunk,
                    prefills[d].attention_core_per_token_s,
                )
        if p.memory_bytes_per_gpu > usable or b * d.pp > w1.max_decode_concurrency:
            dropped += 1  # (the limit is computed to fit: a guard, not the filter)
            continue
        p.ftl_pipelined_s, p.ftl_pp = ftl_pipe, ftl_pp
        p.kv_replication = max((a.kv_replication for a in w1.attention["decode"]), default=1)
        points.append(p)
    return dropped


def _checked(spec, profile, base, front: list[Point], prefills, chunk: int, serving: Serving) -> list[Point]:
    """The frontier's points as analyse prices them (the frontier reports analyse's own numbers); a point the
    vectorized price got wrong raises _Fallback, which sends the whole GPU through analyse."""
    checked = []
    for p in front:
        w = analyse(spec, profile, scenario_for(base, p.deployment, p.concurrency))
        q = _point(p.deployment, p.concurrency, w, p.ftl_s, p.activation_bytes_per_gpu)
        q.ftl_pipelined_s, q.ftl_pp = p.ftl_pipelined_s, p.ftl_pp
        q.prefill_charge_s, q.mixed_s, q.ttft_s, q.pool = p.prefill_charge_s, p.mixed_s, p.ttft_s, p.pool
        same = _close(q.itl_s, p.itl_s) and _close(q.kv_cache_bytes_per_gpu, p.kv_cache_bytes_per_gpu)
        if same and serving.mode == "aggregated" and p.mixed_s is not None:
            wc = analyse(spec, profile, scenario_for(base, p.deployment, p.concurrency + chunk))
            same = _close(
                _mixed(wc.steps["decode"], w.steps["decode"].attention_core_s, chunk, prefills[p.deployment]),
                p.mixed_s,
            )
        if not same:
            raise _Fallback(
                f"{p.deployment.label()} at concurrency {p.concurrency}: the vectorized price differs from analyse"
            )
        checked.append(q)
    return checked


def _largest_power_of_two_below(n: int) -> int:
    """The largest power of two under ``n`` (1 for n <= 2)."""
    return max(1, 1 << max(0, (n - 1).bit_length() - 1))


def _notes(front: list[Point], unpooled: int, total: int, profile) -> list[str]:
    notes: list[str] = []
    by_link: dict[tuple[str, float, bool], int] = {}  # the link past the domain -> frontier points that cross it
    for p in front:
        if p.deployment.gpus > profile.domain_size:
            link = past_domain_link(profile, p.deployment.gpus)
            by_link[link] = by_link.get(link, 0) + 1
    for (what, gbps, stated), n in by_link.items():
        if what.startswith("PCIe"):
            source = ""
        elif stated:
            source = " (the profile's scale_out_gbps)"
        else:
            source = " (assumed: a 400 Gb/s NIC per GPU)"
        notes.append(
            f"{n} of the {len(front)} frontier points span more than one {profile.domain_size}-GPU "
            f"{profile.domain_noun}: what their collectives send past it crosses {what} at {gbps_text(gbps / 2)} "
            f"GB/s per GPU each way{source}"
        )
    if unpooled:
        notes.append(
            f"{unpooled:,} decode points have no prefill instance beside them within {total} GPUs (disaggregated)"
        )
    replicated = [p for p in front if p.kv_replication > 1]
    if replicated:
        notes.append(
            f"{len(replicated)} of the {len(front)} frontier points hold the same KV cache on up to "
            f"{max(p.kv_replication for p in replicated)} GPUs (tp above the KV heads; MLA: every tp rank)"
        )
    return notes


def _mixed(decode_c, core_b_s: float, chunk: int, prefill: PrefillCost) -> float:
    """serving.mixed_step_s of analyse's decode Step at B + chunk (``decode_c``) and its attention cores at B."""
    return mixed_step_s(
        decode_c.estimate_s, decode_c.attention_core_s, core_b_s, chunk, prefill.attention_core_per_token_s
    )


def kv_link_bytes_per_s(profile, total: int) -> float:
    """Bytes/s one way per GPU that carry a prefill instance's KV cache to the decode pool: the scale-up link where
    ``total`` GPUs fit in one domain, else the slower of it and what lies past it (colint places no pool, so they may
    sit in different domains; a PCIe card's NIC traffic crosses its own PCIe link): PCIe within a host of
    NVLink-bridged cards, the scale-out NIC beyond (collectives.link_bytes_per_s). DGX H100: NVLink 450 GB/s or a
    400 Gb/s NIC, 50 GB/s; an A10 (PCIe Gen4, no NIC stated) past its host: 31.5 GB/s, not the assumed NIC's 50."""
    return link_bytes_per_s(profile, total)


def _serve(
    points: list[Point],
    prefills: dict[Deployment, PrefillCost],
    serving: Serving,
    total: int,
    chunks: int,
    kv_link_bytes_per_s: float = 0.0,
) -> tuple[list[Point], int, int]:
    """The points as ``serving`` serves them (colint.analysis.serving): aggregated charges each its prefill
    and sets its TTFT; disaggregated gives each a prefill pool (a point with none beside it within ``total``
    GPUs is left out and counted; its prefill sends the KV cache over ``kv_link_bytes_per_s`` per GPU); decode
    reports the FTL as the TTFT. Points over the TTFT limit are left out and counted. Returns (points, over the TTFT
    limit, without a prefill pool)."""
    unpooled = 0
    if serving.mode == "disaggregated":
        best: dict[int, tuple[str, PrefillCost]] = {}  # per instance size, the most prefill tokens/s per GPU
        for d, pc0 in prefills.items():
            if d.pp > 1:
                continue  # its prompts' chunks would pipeline through the stages: a prefill pool is priced unstaged
            pc = with_kv_transfer(pc0, kv_link_bytes_per_s)
            if pc.instance_gpus not in best or pc.tokens_per_s_per_gpu > best[pc.instance_gpus][1].tokens_per_s_per_gpu:
                best[pc.instance_gpus] = (d.label(), pc)
        options = [best[g] for g in sorted(best)]
        kept = []
        for p in points:
            p.pool = choose_pools(p.decode_tokens_per_s_per_gpu, p.deployment.gpus, options, serving, total)
            if p.pool is None:
                unpooled += 1
                continue
            p.ttft_s = p.pool.ttft_s
            kept.append(p)
        points = kept
    for p in points:
        if serving.mode == "aggregated" and p.mixed_s is not None:
            p.prefill_charge_s, p.ttft_s = aggregated(p.itl_s, p.mixed_s, p.concurrency, serving, chunks)
        elif serving.mode == "decode":
            p.ttft_s = p.ftl_s
    limit = serving.ttft_limit_s
    if limit is None:
        return points, 0, unpooled
    kept = [p for p in points if p.ttft_s is None or p.ttft_s <= limit]
    return kept, len(points) - len(kept), unpooled


def _exact(spec, profile, base, path, variant, why: str, serving: Optional[Serving] = None) -> Frontier:
    """The frontier priced by analyse at every point, with a note saying why (the fast path's guard)."""
    t0 = time.perf_counter()
    f = frontier(spec, profile, base, path, variant, exact=True, serving=serving)
    f.notes.insert(
        0,
        f"every point priced by analyse (slower): {why} - the step model is no longer affine in the concurrency there",
    )
    f.seconds = time.perf_counter() - t0
    return f


def compare(a: Frontier, b: Frontier, levels=INTERACTIVITY_LEVELS) -> list[dict[str, Any]]:
    """Throughput of B against A at equal interactivity, one row per level (None: out of reach)."""
    rows = []
    for u in levels:
        ta, tb = a.throughput_at(u), b.throughput_at(u)
        rows.append(
            {
                "tokens_per_s_per_user": u,
                "a_tokens_per_s_per_gpu": ta,
                "b_tokens_per_s_per_gpu": tb,
                "gain": (tb / ta) if ta and tb else None,
            }
        )
    return rows
