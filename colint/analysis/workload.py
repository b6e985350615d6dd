"""Workload: what one ModelSpec costs on one GPU profile in one scenario (DESIGN.md §5).

``analyse(spec, profile, scenario) -> Workload``: the per-GEMM table per regime (per-shard
M/N/K, roofline and estimate), attention per layer kind (prefill FLOPs, decode KV/state reads),
KV bytes per token, step estimates (decode ITL, prefill step and FTL) with attention / FFN /
other shares, and per-layer cost vectors for pipeline partitioning. Every time here is an
ESTIMATE of the GEMM time model (colint.analysis.gemm_model) unless its name says ``sol``.
See /work/notes/ANALYSIS_API.md for the contract rules rely on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from colint.analysis import ops_attention as ops
from colint.analysis.collectives import collective, moe_dispatch_combine
from colint.analysis.gemm_model import FORMATS, GemmTime, check_format, estimate
from colint.analysis.inventory import Gemm, gemms, kind_gemms
from colint.analysis.kv_cache import (
    kind_mixers,
    kv_cache_bytes_per_token,
    kv_sources,
    mixer_kv_bytes_per_token,
    mixer_kv_read_bytes_per_token,
    mixer_state_bytes,
    state_bytes_per_sequence,
)
from colint.analysis.memory import B_ACT, USABLE_HBM_SHARE, activation_bytes, heaviest_stage_weight_bytes, memory_fit
from colint.analysis.moe import busiest_rank_factor, touched_share
from colint.analysis.ops_moe import grouped_model
from colint.analysis.scenario import Scenario
from colint.hardware_profiles import time_model
from colint.normalize.model_spec import LayerKind, Mixer, ModelSpec
from colint.plain_data import dump

if TYPE_CHECKING:
    from colint.hardware_profiles import Profile

REGIMES = ("decode", "prefill")
ROUTER_FORMAT = "bf16"  # routers stay in high precision (domain.md crib: NVFP4 readiness)
ATTN_FORMAT = "bf16"  # attention core math (FlashAttention/FlashMLA BF16 path)
ELEMENTWISE_PASSES = 6  # norm, residual, activation, rope...: activation-sized HBM passes per layer (estimate)
ATTN_EFFICIENCY_FALLBACK = 0.7  # attention core's share of peak FLOP/s when the time model has no bf16 entry (estimate)


@dataclass(frozen=True)
class WorkloadGemm:
    """One weight GEMM (or fused group) of one layer kind in one regime, per GPU shard."""

    name: str  # "attn.qkv_proj" for a fused q/k/v group, else the inventory name
    members: tuple[str, ...]  # inventory names fused into it
    kind: str  # LayerKind name ("" for the LM head)
    regime: str  # "decode" | "prefill"
    layers: int  # layers of this kind
    parallel: str  # column | row | expert | replicated
    component: str  # "attention" | "ffn" | "other" (LM head)
    m: int  # rows per GEMM instance (tokens; per expert for routed experts)
    n: int  # per shard
    k: int  # per shard
    instances: float  # GEMM instances per layer per GPU (routed experts touched per GPU; else 1)
    dtype: str
    time: GemmTime  # roofline + estimate of ONE instance (AI, bound, ridge, m_star, efficiencies)
    layer_s: float  # estimate for all instances in one layer (a grouped GEMM for experts)
    gemm: Gemm  # the (first) inventory entry

    @property
    def total_s(self) -> float:
        return self.layer_s * self.layers

    @property
    def bound(self) -> str:
        return self.time.bound

    @property
    def arithmetic_intensity(self) -> float:
        return self.time.arithmetic_intensity

    @property
    def m_star(self) -> float:
        return self.time.m_star


@dataclass(frozen=True)
class AttentionCost:
    """The attention core (or recurrent-state update) of one layer kind in one regime, per GPU."""

    kind: str
    regime: str
    layers: int
    mixer: str  # attention | mla | linear_attention | mamba | linear | none
    flops: float  # per layer per step
    bytes: float  # KV-cache / state bytes read (+ written) per layer per step
    sol_s: float
    estimate_s: float  # per layer per step
    kv_bytes_per_token: float  # STORED per layer per token, this GPU's shard, scenario KV format (0: KV-sharing)
    kv_replication: int  # TP ranks holding the same KV (tp > KV heads; MLA: every rank)
    attended_tokens: float  # mean keys per query (sliding windows cap it)


@dataclass(frozen=True)
class Step:
    """One regime's step estimate for the whole model on one GPU (all pp stages in sequence)."""

    regime: str
    tokens: int  # tokens per forward (decode: sequences)
    estimate_s: float  # total
    sol_s: float  # plain roofline sum (no efficiencies, no launch costs)
    gemm_s: float
    attention_core_s: float
    attention_s: float  # token mixer: projections + attention core
    ffn_s: float  # FFN / MoE GEMMs (incl. router)
    other_s: float  # LM head, elementwise, launches, collectives
    comm_s: float  # collectives: TP all-reduces + EP dispatch/combine (colint.analysis.collectives; part of other_s)
    launch_s: float  # launches of non-GEMM kernels (part of other_s)
    kernels: int  # kernels per forward
    ftl_s: float | None = None  # prefill: time to first token for one `context` prompt
    tokens_per_s: float | None = None  # per replica

    @property
    def attention_share(self) -> float:
        return self.attention_s / self.estimate_s if self.estimate_s else 0.0

    @property
    def ffn_share(self) -> float:
        return self.ffn_s / self.estimate_s if self.estimate_s else 0.0

    @property
    def other_share(self) -> float:
        return self.other_s / self.estimate_s if self.estimate_s else 0.0

    @property
    def collective_share(self) -> float:
        """TP all-reduces and EP dispatch/combine (``comm_s``, a part of ``other_s``) over the step."""
        return self.comm_s / self.estimate_s if self.estimate_s else 0.0


@dataclass(frozen=True)
class LayerCost:
    """Cost of one layer (index i) for pipeline partitioning; embedding/LM head are separate.

    The costs are those of INFERENCE: ``prefill_flops``/``prefill_s`` are one forward of
    ``prefill_tokens`` (no backward pass). For the LM head (``Workload.lm_head_cost``, index
    num_layers) that forward computes logits only for each sequence's LAST token (what a serving
    prefill needs), so its ``prefill_flops`` = 2·sequences·H·V/tp, not 2·prefill_tokens·H·V/tp:
    a training step (or prompt log-probs) computes every token's logits and needs
    ``Workload.lm_head_all_tokens_prefill_flops`` instead (x3 with the backward pass)."""

    index: int
    kind: str
    params: int
    weight_bytes: float  # per GPU shard, scenario formats
    kv_bytes_per_token: float  # per GPU shard
    prefill_flops: float  # per prefill step (inference forward; LM head: last token of each sequence only)
    decode_s: float  # estimate per decode step
    prefill_s: float  # estimate per prefill step


@dataclass
class Workload:
    spec: ModelSpec
    profile: Profile
    scenario: Scenario
    gemms: dict[str, list[WorkloadGemm]]  # regime -> rows
    attention: dict[str, list[AttentionCost]]  # regime -> one per layer kind with a mixer
    steps: dict[str, Step]  # "decode", "prefill"
    layer_costs: list[LayerCost]
    embedding_cost: LayerCost  # index -1
    lm_head_cost: LayerCost  # index num_layers
    kv_bytes_per_token: int  # whole model, one replica (no sharding), scenario KV format
    kv_bytes_per_token_per_gpu: float  # after tp sharding / replication
    state_bytes_per_sequence: int  # linear-attention / Mamba state, scenario KV format
    launch_overhead_s: float  # per kernel, from the profile
    kernel_floor_s: float  # per GEMM kernel, from the time model
    notes: list[str] = field(default_factory=list)
    # HBM footprint per GPU (estimates): weights of this GPU's pp stage and shards, and the KV cache
    # of decode_concurrency sequences at `context` tokens (+ recurrent state).
    weight_bytes_per_gpu: float = 0.0
    kv_cache_bytes_per_gpu: float = 0.0  # sliding-window layers hold only their window
    hbm_bytes: float = 0.0  # the profile's memory
    max_decode_concurrency: int = 0  # sequences per GPU whose KV fits next to weights + activations (usable HBM)
    activation_bytes_per_gpu: float = 0.0  # peak working set of one forward (colint.analysis.memory)
    memory: Any = None  # colint.analysis.memory.MemoryFit: the whole footprint and usable memory
    # regime -> layer kind -> the parts of ONE layer's estimate (s): attention_gemms, attention_core,
    # ffn_gemms, elementwise, launches, collectives; they sum to that kind's LayerCost decode_s/prefill_s
    layer_parts: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    @property
    def memory_fits(self) -> bool:
        """Weights + KV cache + activations per GPU within usable HBM (colint.analysis.memory)."""
        if self.memory is not None:
            return self.memory.fits
        return self.weight_bytes_per_gpu + self.kv_cache_bytes_per_gpu <= 0.9 * self.hbm_bytes

    def rows(self, regime: str) -> list[WorkloadGemm]:
        return self.gemms[regime]

    @property
    def lm_head_all_tokens_prefill_flops(self) -> float:
        """LM-head forward FLOPs per prefill step per GPU when EVERY token gets logits (training, prompt
        log-probs): 2·prefill_tokens·H·⌈V/tp⌉. ``lm_head_cost.prefill_flops`` counts last tokens only."""
        v = self.spec.vocab_size or 0
        return 2.0 * self.scenario.prefill_tokens * self.spec.hidden_size * _ceil_div(v, self.scenario.tp)

    def label(self) -> str:
        return f"estimate: {self.profile.name}, {self.scenario.label()}"


# --------------------------------------------------------------------------- helpers
def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _component(g: Gemm) -> str:
    if g.name == "lm_head":
        return "other"
    if g.name.startswith(("attn.", "mla.", "linear_attn.", "mamba.")):
        return "attention"
    return "ffn"


def _fuse(rows: list[Gemm]) -> list[tuple[str, tuple[str, ...], Gemm, int]]:
    """Fuse q/k/v and gate/up groups as serving engines do: (name, members, first, N total)."""
    out: list[tuple[str, tuple[str, ...], Gemm, int]] = []
    groups: dict[tuple, int] = {}
    for g in rows:
        if g.group and g.count == 1:
            key = (g.group, g.k, g.parallel)
            if key in groups:
                i = groups[key]
                name, members, first, n = out[i]
                out[i] = (name, members + (g.name,), first, n + g.n)
                continue
            groups[key] = len(out)
            prefix = g.name.rsplit(".", 1)[0]
            name = f"{prefix}.qkv_proj" if g.group == "qkv" else f"{prefix}.gate_up"
            out.append((name, (g.name,), g, g.n))
        else:
            out.append((g.name, (g.name,), g, g.n))
    return [(name if len(m) > 1 else m[0], m, f, n) for name, m, f, n in out]


def _shard(g: Gemm, n: int, sc: Scenario) -> tuple[int, int, float]:
    """(n, k, GEMM instances per GPU) of one layer's copy of g under the scenario's parallelism."""
    k = g.k
    tp = sc.tp if _component(g) != "ffn" else sc.group_gpus  # Helix: the FFN over tp x kvp GPUs
    if g.parallel == "column":
        return _ceil_div(n, tp), k, 1.0
    if g.parallel == "row":
        return n, _ceil_div(k, tp), 1.0
    if g.parallel == "expert":
        if sc.ep > 1:
            return n, k, float(_ceil_div(g.count, sc.ep))
        # experts tensor-parallel (moe_tp = tp): gate/up split N, down split K
        if "down" in g.name:
            return n, _ceil_div(k, tp), float(g.count)
        return _ceil_div(n, tp), k, float(g.count)
    return n, k, 1.0


def _tokens(sc: Scenario, regime: str) -> int:
    return sc.decode_concurrency if regime == "decode" else sc.prefill_tokens


def _prefill_shape(sc: Scenario) -> tuple[int, int, int]:
    """(sequence chunk length S, sequences per step, chunks per prompt)."""
    s = min(sc.context, sc.prefill_tokens)
    return s, max(1, sc.prefill_tokens // s), _ceil_div(sc.context, sc.prefill_tokens)


def routed_expert_rows(t_global: int, topk: int, experts: int, ep: int = 1) -> tuple[float, int]:
    """(share of the ``experts`` that get >= 1 of ``t_global`` tokens' top-``topk`` picks, rows of a
    touched expert's GEMM: the mean, or with ``ep`` > 1 on the busiest of the ``ep`` ranks, which sets
    the layer's time) under balanced routing (an estimate: colint.analysis.moe.busiest_rank_factor);
    suggest's search and the frontier price with it too."""
    touched = touched_share(t_global, topk, experts)
    busiest = busiest_rank_factor(t_global, topk, experts, ep)
    # round() drops float noise (32.00000000000024 is 32)
    return touched, max(1, math.ceil(round(t_global * topk / experts / max(touched, 1e-12) * busiest, 6)))


_ENTRIES_MEMO: dict = {}  # id(spec) -> (spec, entries): analyse and memory_at of one spec at many scenarios


def _gemm_entries(spec: ModelSpec) -> list[tuple[str, list[Gemm], int, list]]:
    """(kind name, its GEMMs, layers, the fused groups) per used layer kind, then the LM head (kind "");
    the same for every regime and scenario, so it is built once per spec object (read-only)."""
    hit = _ENTRIES_MEMO.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    entries = _build_gemm_entries(spec)
    if len(_ENTRIES_MEMO) >= ANALYSE_MEMO_MAX:
        del _ENTRIES_MEMO[next(iter(_ENTRIES_MEMO))]
    _ENTRIES_MEMO[id(spec)] = (spec, entries)
    return entries


def _build_gemm_entries(spec: ModelSpec) -> list[tuple[str, list[Gemm], int, list]]:
    entries: list[tuple[str, list[Gemm], int, list]] = []
    for kind, n_layers in zip(spec.layer_kinds, spec.layer_counts()):
        if n_layers:
            kg = kind_gemms(kind, spec.hidden_size, n_layers)
            entries.append((kind.name, kg, n_layers, _fuse(kg)))
    if spec.vocab_size:
        head = [g for g in gemms(spec, merge=False) if g.name == "lm_head"]
        entries.append(("", head, 1, _fuse(head)))
    return entries


def _gemm_rows(spec: ModelSpec, profile, sc: Scenario, regime: str, entries=None) -> list[WorkloadGemm]:
    fmt = sc.gemm_format
    out_fmt = sc.outputs
    tokens = _tokens(sc, regime)
    rows: list[WorkloadGemm] = []
    if entries is None:
        entries = _gemm_entries(spec)
    for kind_name, _kgemms, n_layers, fused in entries:
        for name, members, g, n_total in fused:
            n, k, inst = _shard(g, n_total, sc)
            if n <= 0 or k <= 0:
                continue
            dtype = ROUTER_FORMAT if g.name.endswith("router") or g.name.endswith("gate") and g.n == 1 else fmt
            m_tokens = tokens
            if g.name == "lm_head" and regime == "prefill":
                m_tokens = _prefill_shape(sc)[1]  # logits only for each sequence's last token
            if g.parallel == "expert" and g.count:
                t_global = m_tokens * sc.attention_dp_groups  # tokens of the EP domain's attention groups
                topk = round(g.m_per_token * g.count)
                touched, m = routed_expert_rows(t_global, topk, g.count)
                # the layer waits for the busiest EP rank: its experts' rows set the grouped GEMM's time
                m_step = routed_expert_rows(t_global, topk, g.count, sc.ep)[1]
                inst = inst * touched
            else:
                m = m_step = m_tokens
            # routed experts run in the fused MoE's grouped GEMM (ops_moe: moe_gemm_efficiency)
            gmod = grouped_model(profile) if g.parallel == "expert" and g.count else None
            t = estimate(m, n, k, dtype, profile, out_fmt, standalone=False, model=gmod)
            if inst > 1:
                # a grouped GEMM: one kernel, every touched expert's tiles in one grid
                grouped = estimate(
                    m_step, int(round(n * inst)), k, dtype, profile, out_fmt, standalone=False, model=gmod
                )
                layer_s = grouped.estimate_s
            elif m_step != m:
                layer_s = estimate(m_step, n, k, dtype, profile, out_fmt, standalone=False, model=gmod).estimate_s
            else:
                layer_s = t.estimate_s  # one GEMM (a GPU holding one expert waits for it when touched)
            rows.append(
                WorkloadGemm(
                    name,
                    members,
                    kind_name,
                    regime,
                    n_layers,
                    g.parallel,
                    _component(g),
                    m,
                    n,
                    k,
                    inst,
                    dtype,
                    t,
                    layer_s,
                    g,
                )
            )
    return rows


class AttentionRoof(NamedTuple):
    """The roofs an attention (or recurrent-state) core runs under on one profile; analyse's
    _attention and the vectorized search of colint.suggesting both price cores with it."""

    peak_flops_per_s: float  # the ATTN_FORMAT peak (or the profile's first format's)
    compute_efficiency: float
    memory_bytes_per_s: float
    memory_efficiency: float
    kernel_floor_s: float

    def estimate_s(self, flops, bytes_, maximum=max):
        """A core's ESTIMATED time (s): the slower of its derated compute and memory times plus one
        kernel floor. ``maximum=numpy.maximum`` prices arrays with the same float operations."""
        return (
            maximum(
                flops / (self.peak_flops_per_s * self.compute_efficiency),
                bytes_ / (self.memory_bytes_per_s * self.memory_efficiency),
            )
            + self.kernel_floor_s
        )


def attention_roof(profile) -> AttentionRoof:

    tmod = time_model(profile)
    peak = profile.peak_flops(ATTN_FORMAT if profile.has(ATTN_FORMAT) else next(iter(profile.peak_tflops)))
    return AttentionRoof(
        peak,
        tmod.compute_efficiency.get(ATTN_FORMAT, ATTN_EFFICIENCY_FALLBACK),
        profile.memory_bytes_per_s,
        tmod.memory_efficiency,
        tmod.kernel_floor_us * 1e-6,
    )


def _attended(s: int, window: int | None) -> float:
    """Mean keys per query over a causal sequence of s tokens with an optional window."""
    if not window or window >= s:
        return (s + 1) / 2.0
    w = window
    return (w * (w + 1) / 2.0 + (s - w) * w) / s


def _attention(
    spec: ModelSpec,
    kind: LayerKind,
    n_layers: int,
    profile,
    sc: Scenario,
    regime: str,
    source: Mixer | None = None,
    mixer: Mixer | None = None,
) -> AttentionCost:
    """The core of ``kind``'s mixer (or of ``mixer``: its parallel mixer). ``source``: for a
    KV-sharing layer (Gemma-4), the mixer whose cache it reads (it stores nothing, but reads that
    cache like any attention layer)."""
    mx: Mixer = mixer if mixer is not None else kind.mixer
    roof = attention_roof(profile)
    b_kv = sc.kv_bytes_per_elem
    tp = sc.tp
    kv_layer = mixer_kv_bytes_per_token(mx, b_kv)  # stored (0 for a KV-sharing layer)
    kv_read_layer = mixer_kv_read_bytes_per_token(mx, b_kv, source)  # read per cached token
    replication = 1
    heads_q = mx.num_heads
    if mx.kind == "attention":
        shard = min(tp, max(1, mx.num_kv_heads))
        replication = max(1, tp // max(1, mx.num_kv_heads)) if tp > mx.num_kv_heads else 1
        kv_gpu = kv_layer / shard
        kv_read_gpu = kv_read_layer / shard
        q_per_gpu = _ceil_div(heads_q, tp)
    elif mx.kind == "mla":
        replication = tp
        kv_gpu = kv_read_gpu = kv_layer
        q_per_gpu = _ceil_div(heads_q, tp)
    else:
        kv_gpu = kv_read_gpu = 0.0
        q_per_gpu = 0
    window = mx.window if mx.attention in ("sliding", "chunked") else None
    flops = bytes_ = 0.0
    attended = 0.0
    if regime == "decode":
        b = sc.decode_concurrency
        ctx = sc.context
        attended = min(ctx, window) if window else ctx
        if mx.kind in ("attention", "mla") and sc.kvp > 1:
            attended = _ceil_div(int(attended), sc.kvp)  # KV parallelism: this GPU's share of the context
        if mx.kind == "attention":
            d_v = mx.v_head_dim or mx.head_dim
            flops = 2.0 * b * attended * q_per_gpu * (mx.head_dim + d_v)
            bytes_ = b * attended * kv_read_gpu
        elif mx.kind == "mla":
            lat = (mx.kv_lora_rank or 0) + (mx.qk_rope_head_dim or 0)
            flops = 2.0 * b * attended * q_per_gpu * (lat + (mx.kv_lora_rank or 0))  # absorbed MLA
            bytes_ = b * attended * kv_gpu
        elif mx.kind in ("linear_attention", "mamba"):
            state = mixer_state_bytes(mx, b_kv) / tp
            bytes_ = 2.0 * b * state  # read and write the state
            flops = 4.0 * b * state / b_kv
    else:
        s, n_seq, chunks = _prefill_shape(sc)
        ctx = sc.context
        attended = _attended(ctx, window)
        # keys attended per query over the whole prompt; a step holds prefill_tokens queries
        q_tokens = n_seq * s
        if mx.kind == "attention":
            d_v = mx.v_head_dim or mx.head_dim
            flops = 2.0 * q_tokens * attended * q_per_gpu * (mx.head_dim + d_v)
            # write this chunk's K/V (none on a KV-sharing layer), read it and the earlier chunks' cache
            bytes_ = q_tokens * (kv_gpu + kv_read_gpu) + (chunks - 1) / max(chunks, 1) * n_seq * ctx / 2 * kv_read_gpu
        elif mx.kind == "mla":
            nope, rope = mx.qk_nope_head_dim or 0, mx.qk_rope_head_dim or 0
            d_v = mx.v_head_dim or nope
            flops = 2.0 * q_tokens * attended * q_per_gpu * (nope + rope + d_v)
            bytes_ = q_tokens * kv_gpu * 2
        elif mx.kind in ("linear_attention", "mamba"):
            state = mixer_state_bytes(mx, b_kv) / tp
            flops = 4.0 * q_tokens * state / b_kv
            bytes_ = 2.0 * n_seq * state
    if mx.kind not in ("attention", "mla"):
        attended = 0.0
    sol = max(flops / roof.peak_flops_per_s, bytes_ / roof.memory_bytes_per_s) if (flops or bytes_) else 0.0
    if mx.kind in ("attention", "mla") and (flops or bytes_):
        est = _core_estimate_s(mx, sc, profile, regime, q_per_gpu, attended, window, flops)
    else:  # linear attention / Mamba state update: a streaming kernel on the roofline's terms
        est = roof.estimate_s(flops, bytes_) if (flops or bytes_) else 0.0
    return AttentionCost(kind.name, regime, n_layers, mx.kind, flops, bytes_, sol, est, kv_gpu, replication, attended)


def _kv_dtype(b_kv: float) -> str:
    """The measured kernels' name of a KV-cache element size (2 B bf16, 1 B fp8, 0.5625 B nvfp4)."""
    return "bfloat16" if b_kv >= 2 else ("fp8" if b_kv >= 1 else "nvfp4")


def _core_estimate_s(
    mx: Mixer, sc: Scenario, profile, regime: str, q_per_gpu: int, attended: float, window: int | None, flops: float
) -> float:
    """An attention / MLA core's ESTIMATE from the op models (colint.analysis.ops_attention), checked
    against measured TensorRT-LLM kernels (README "Op model accuracy")."""

    kv = _kv_dtype(sc.kv_bytes_per_elem)
    tp = sc.tp
    if regime == "decode":
        ctx = max(1, int(round(attended)))
        if mx.kind == "mla":
            return ops.mla_decode(
                sc.decode_concurrency, ctx, q_per_gpu, mx.kv_lora_rank or 0, mx.qk_rope_head_dim or 0, kv, profile
            )[0]
        kv_heads = _ceil_div(max(1, mx.num_kv_heads), min(tp, max(1, mx.num_kv_heads)))
        return ops.decode_attention(sc.decode_concurrency, ctx, q_per_gpu, kv_heads, mx.head_dim, 0, kv, profile)[0]
    s, n_seq, _chunks = _prefill_shape(sc)
    if mx.kind == "mla":
        nope, rope = mx.qk_nope_head_dim or 0, mx.qk_rope_head_dim or 0
        est, _ = ops.mla_prefill(n_seq, s, q_per_gpu, nope + rope, mx.v_head_dim or nope, kv, profile)
        model_flops = 2.0 * n_seq * q_per_gpu * s * (s + 1) / 2.0 * (nope + rope + (mx.v_head_dim or nope))
    else:
        kv_heads = _ceil_div(max(1, mx.num_kv_heads), min(tp, max(1, mx.num_kv_heads)))
        d_v = mx.v_head_dim or mx.head_dim
        est, _ = ops.context_attention(
            n_seq, s, q_per_gpu, kv_heads, mx.head_dim, window or 0, "bf16", kv, profile, v_head_dim=d_v
        )
        w = window if window and window < s else s
        model_flops = 2.0 * n_seq * q_per_gpu * (w * (w + 1) / 2.0 + (s - w) * w) * (mx.head_dim + d_v)
    # a chunk of a longer prompt also attends to the earlier chunks' cache: the same kernel, more keys
    return est * max(1.0, flops / model_flops) if model_flops > 0 else est


def expert_all_to_all_s(tokens: float, top_k: int, hidden: int, sc: Scenario, profile) -> float:
    """EP dispatch + combine of one MoE layer for ``tokens`` dispatched by one GPU (analyse passes
    its attention group's tokens / tp: the group's ranks split them, as DeepSeek's TP+SP attention
    and SGLang's DeepEP path do): the DeepEP op model of colint.analysis.collectives (an ESTIMATE;
    dispatch in the GEMM format (FP8 or narrower: FP8; NVFP4 as NVFP4; else BF16), combine in BF16;
    the low-latency kernels for decode-sized batches (<= 128 tokens per rank), else high-throughput)."""

    fmt = sc.gemm_format
    wire = (
        "nvfp4"
        if fmt in ("nvfp4", "mxfp4")
        else ("fp8" if FORMATS.get(fmt, ("bf16", 2.0, 2.0))[1] <= 1.1 else "bfloat16")
    )
    backend = "deepep_ll" if tokens <= 128 else "deepep_ht"
    d = moe_dispatch_combine("dispatch", tokens, hidden, top_k, sc.ep, wire, profile, backend=backend)[0]
    c = moe_dispatch_combine("combine", tokens, hidden, top_k, sc.ep, wire, profile, backend=backend)[0]
    return d + c


def tp_all_reduce_s(tokens: int, hidden: int, tp: int, profile) -> float:
    """One TP all-reduce of ``tokens`` x ``hidden`` BF16 activations (TensorRT-LLM's custom
    one-shot/two-shot kernel; colint.analysis.collectives; an ESTIMATE)."""

    return collective("all_reduce", tokens * hidden * 2.0, tp, profile, implementation="custom")[0]


def _kernels_per_layer(kind: LayerKind, gemm_rows: int, tp: int) -> tuple[int, int]:
    """(non-GEMM kernels, collectives) per layer: norms, rope/attention, activation, MoE routing."""
    other = 2  # two norms (residual add fused)
    for mx in kind_mixers(kind):  # Falcon-H1: attention and Mamba-2 side by side
        if mx.kind in ("attention", "mla", "linear_attention", "mamba"):
            other += 2  # rope/conv + attention/scan core
    if kind.ffn.kind == "dense":
        other += 1  # activation (SiLU·mul)
    elif kind.ffn.kind == "moe":
        other += 4  # top-k, permute, activation, finalize/unpermute
    collectives = 2 if tp > 1 else 0
    return other, collectives


def _layer_extras(kind: LayerKind, tokens: int, h: int, scenario: Scenario, profile, tmod, regime: str = "decode"):
    """(non-GEMM kernels, collectives, elementwise bytes, elementwise + launch + MoE permute/finalize s,
    collective s) of one layer of ``kind`` at ``tokens`` per forward: analyse's per-layer extras, and
    the frontier's per-concurrency price (colint.analysis.frontier) through :func:`decode_extras_s`."""
    b_act = 2.0  # BF16 activations between kernels
    bw = profile.memory_bytes_per_s
    launch_s = profile.launch_overhead_us * 1e-6
    group = scenario.group_gpus  # tp x kvp: the all-reduces after o_proj and the FFN span them (Helix)
    n_other, n_coll = _kernels_per_layer(kind, 0, group)
    act_bytes = ELEMENTWISE_PASSES * tokens * h * b_act
    elem_s = act_bytes / (bw * tmod.memory_efficiency) + n_other * launch_s
    coll_s = 0.0
    if n_coll:
        coll_s = n_coll * tp_all_reduce_s(tokens, h, group, profile)
    if kind.ffn.kind == "moe" and scenario.ep > 1:
        # each GPU dispatches its share of its attention group's tokens (split over its tp x kvp ranks)
        coll_s += expert_all_to_all_s(tokens / group, kind.ffn.top_k, h, scenario, profile)
        n_coll += 2
    if regime == "decode":
        coll_s += kvp_exchange_s(kind, tokens, scenario, profile)
    moe_move_s = 0.0
    if kind.ffn.kind == "moe":
        # permute + finalize (ops_moe): tokens·top-k rows of H gathered and scattered back, BF16
        t_global = tokens * scenario.attention_dp_groups
        busiest = busiest_rank_factor(t_global, kind.ffn.top_k, kind.ffn.num_experts or 1, scenario.ep)
        rows_gpu = t_global * kind.ffn.top_k / max(scenario.ep, 1) * busiest
        moe_move_s = (4.0 * rows_gpu * h * b_act) / (bw * tmod.memory_efficiency)
    elem_s += moe_move_s
    return n_other, n_coll, act_bytes, elem_s, coll_s


def decode_extras_s(spec: ModelSpec, profile, scenario: Scenario) -> float:
    """The decode step's estimate (s) less its weight GEMMs: attention cores, elementwise passes,
    launches, MoE permute/finalize and collectives, with the very functions analyse sums
    (colint.analysis.frontier prices the GEMMs over all concurrencies at once and adds this)."""

    tmod = time_model(profile)
    sources = kv_sources(spec)
    total = 0.0
    tokens = scenario.decode_concurrency
    for ki, (kind, n) in enumerate(zip(spec.layer_kinds, spec.layer_counts())):
        if not n:
            continue
        core_s = sum(
            _attention(spec, kind, n, profile, scenario, "decode", sources.get(ki) if j == 0 else None, mx).estimate_s
            for j, mx in enumerate(kind_mixers(kind))
            if mx.kind not in ("none", "linear")
        )
        _, _, _, elem_s, coll_s = _layer_extras(kind, tokens, spec.hidden_size, scenario, profile, tmod)
        total += n * (core_s + elem_s + coll_s)
    return total


def kvp_exchange_s(kind: LayerKind, tokens: int, scenario: Scenario, profile) -> float:
    """KV (Helix) parallelism's one exchange per attention layer (s; an ESTIMATE): the kvp GPUs of a
    KV-parallel group each hold 1/kvp of every sequence's context and attend to it; their partial
    outputs (BF16, ``tokens`` x the layer's query heads on this TP rank x d_v, plus a log-sum-exp per
    head) meet in one all-to-all over the kvp GPUs (Helix, NVIDIA 2025), then each rank combines its
    heads. 0 with kvp = 1 or for a layer without attention."""

    kvp = scenario.kvp
    if kvp <= 1 or not tokens:
        return 0.0
    total = 0.0
    for mx in kind_mixers(kind):
        if mx.kind == "attention":
            d_v = mx.v_head_dim or mx.head_dim
        elif mx.kind == "mla":
            d_v = mx.kv_lora_rank or 0  # absorbed: the latent output, up-projected after the exchange
        else:
            continue
        heads = _ceil_div(mx.num_heads, scenario.tp)
        msg = tokens * heads * (d_v * 2.0 + 4.0)
        total += collective("alltoall", msg, kvp, profile)[0]
    return total


# analyse() memo: (id(spec), id(profile), scenario) -> (spec, profile, workload). One check asks for the same
# workload many times (the rules' context, CL801's deployment search, the advice closure's re-checks at other
# settings); a spec is a plain (unhashable) record, so it is keyed by identity and kept alive beside its entry.
_ANALYSE_MEMO: dict = {}
ANALYSE_MEMO_MAX = 512


def analyse(spec: ModelSpec, profile, scenario: Scenario) -> Workload:
    """The full analysis of one spec on one GPU in one scenario (raises ProfileError when the
    scenario's format is not native on the GPU). Memoised per (spec object, profile object, scenario):
    callers treat the Workload as read-only."""
    key = (id(spec), id(profile), scenario)
    hit = _ANALYSE_MEMO.get(key)
    if hit is not None and hit[0] is spec and hit[1] is profile:
        return hit[2]
    w = _analyse(spec, profile, scenario)
    if len(_ANALYSE_MEMO) >= ANALYSE_MEMO_MAX:
        del _ANALYSE_MEMO[next(iter(_ANALYSE_MEMO))]  # oldest first
    _ANALYSE_MEMO[key] = (spec, profile, w)
    return w


def memory_at(spec: ModelSpec, profile, scenario: Scenario, fits_only: bool = False):
    """The memory fields of ``analyse(spec, profile, scenario).memory`` (a MemoryFit, estimates) without the time
    model: the same weight shards, KV bytes per sequence and peak activation rows, in the same order, so the
    figures are identical; CL801's deployment search tries many deployments with it. ``fits_only``: None,
    without the pipeline split, when even an even split of the weights over pp stages cannot fit."""

    check_format(profile, scenario.gemm_format)
    h = spec.hidden_size
    counts = spec.layer_counts()
    entries = _gemm_entries(spec)
    b_w = FORMATS[scenario.gemm_format][2]
    tokens = {r: _tokens(scenario, r) for r in REGIMES}
    # peak activations: activation_bytes() over the rows _gemm_rows would build (m, instances, n, k only)
    shards = []
    for _kind_name, _kg, _n_layers, fused in entries:
        for _name, _members, g, n_total in fused:
            n, k, inst = _shard(g, n_total, scenario)
            if n > 0 and k > 0:
                shards.append((g, n, k, inst))
    peak = 0.0
    for regime in REGIMES:
        gemm = 0.0
        for g, n, k, inst in shards:  # each regime's rows of _gemm_rows (the shards are the same)
            m_tokens = tokens[regime]
            if g.name == "lm_head" and regime == "prefill":
                m_tokens = _prefill_shape(scenario)[1]
            if g.parallel == "expert" and g.count:
                touched, m = routed_expert_rows(
                    m_tokens * scenario.attention_dp_groups, round(g.m_per_token * g.count), g.count
                )
                inst = inst * touched
            else:
                m = m_tokens
            gemm = max(gemm, m * max(inst, 1.0) * (k + n) * B_ACT)
        peak = max(peak, tokens[regime] * 2.0 * h * B_ACT + gemm)
    # weights: the per-layer shards of analyse's layer costs
    wbytes_by_kind: dict[str, float] = {}
    used = iter([e[1] for e in entries[: sum(1 for n in counts if n)]])
    for kind, n in zip(spec.layer_kinds, counts):
        if not n:
            continue
        wbytes = 0.0
        for g in next(used):
            nn, kk, inst = _shard(g, g.n, scenario)
            wbytes += nn * kk * inst * (2.0 if g.name.endswith("router") else b_w)
        wbytes_by_kind[kind.name] = wbytes
    names = [kind.name for kind in spec.layer_kinds]
    layer_w = [wbytes_by_kind[names[p]] for p in spec.layer_pattern[: spec.num_layers] if names[p] in wbytes_by_kind]
    v = spec.vocab_size or 0
    emb_w = v * h * B_ACT / scenario.tp
    lm_w = 0.0 if spec.tie_word_embeddings else v * h * b_w / scenario.tp
    # KV bytes per sequence: decode's attention cores, in analyse's order
    b_kv = scenario.kv_bytes_per_elem
    kv_seq = 0.0
    for kind, n in zip(spec.layer_kinds, counts):
        for mx in kind_mixers(kind) if n else []:
            if mx.kind in ("none", "linear"):
                continue
            kv_layer = mixer_kv_bytes_per_token(mx, b_kv)
            if mx.kind == "attention":
                kv_gpu = kv_layer / min(scenario.tp, max(1, mx.num_kv_heads))
            elif mx.kind == "mla":
                kv_gpu = kv_layer
            else:
                kv_gpu = 0.0
            window = mx.window if mx.attention in ("sliding", "chunked") else None
            attended = (
                (min(scenario.context, window) if window else scenario.context)
                if mx.kind in ("attention", "mla")
                else 0.0
            )
            if mx.kind in ("attention", "mla") and scenario.kvp > 1:
                attended = _ceil_div(int(attended), scenario.kvp)  # as _attention: this GPU's share of the context
            kv_seq += n * kv_gpu * attended
    per_seq = (kv_seq + state_bytes_per_sequence(spec, b_kv) / scenario.tp) / scenario.pp
    if fits_only and scenario.pp > 1:
        # the heaviest stage holds at least the mean: a deployment that cannot fit that is not split (margins
        # absorb float rounding; a deployment near the line gets the exact split below)
        mean_w = (sum(layer_w) + emb_w + lm_w) / scenario.pp
        usable = USABLE_HBM_SHARE * profile.memory_gb * 1e9
        if mean_w * (1 - 1e-9) + scenario.decode_concurrency * per_seq + peak > usable * (1 + 1e-9):
            return None
    weights_gpu = heaviest_stage_weight_bytes(layer_w, emb_w, lm_w, scenario.pp)
    return memory_fit(weights_gpu, per_seq, peak, scenario.decode_concurrency, profile.memory_gb)


def _analyse(spec: ModelSpec, profile, scenario: Scenario) -> Workload:

    check_format(profile, scenario.gemm_format)
    tmod = time_model(profile)
    launch_s = profile.launch_overhead_us * 1e-6
    floor_s = tmod.kernel_floor_us * 1e-6
    bw = profile.memory_bytes_per_s
    counts = spec.layer_counts()
    b_act = 2.0  # BF16 activations between kernels
    h = spec.hidden_size

    entries = _gemm_entries(spec)
    rows = {r: _gemm_rows(spec, profile, scenario, r, entries) for r in REGIMES}
    attn: dict[str, list[AttentionCost]] = {r: [] for r in REGIMES}
    sources = kv_sources(spec)
    for r in REGIMES:
        for ki, (kind, n) in enumerate(zip(spec.layer_kinds, counts)):
            for j, mx in enumerate(kind_mixers(kind) if n else []):
                if mx.kind not in ("none", "linear"):  # a parallel mixer adds its own core (same kind name)
                    attn[r].append(
                        _attention(spec, kind, n, profile, scenario, r, sources.get(ki) if j == 0 else None, mx)
                    )

    # per-kind per-regime sums, one pass over the rows (each kind's sums add its rows in row order)
    def kind_times(regime: str) -> tuple[dict[str, dict[str, float]], dict[str, int], dict[str, list]]:
        times: dict[str, dict[str, float]] = {}
        n_rows: dict[str, int] = {}
        for row in rows[regime]:
            out = times.get(row.kind)
            if out is None:
                out = times[row.kind] = {"attention": 0.0, "ffn": 0.0, "gemm_sol": 0.0}
            out[row.component] = out.get(row.component, 0.0) + row.layer_s
            out["gemm_sol"] += row.time.sol_s * max(row.instances, 1.0 if row.instances >= 1 else row.instances)
            n_rows[row.kind] = n_rows.get(row.kind, 0) + 1
        cores_by_kind: dict[str, list] = {}
        for a in attn[regime]:
            cores_by_kind.setdefault(a.kind, []).append(a)
        return times, n_rows, cores_by_kind

    steps: dict[str, Step] = {}
    per_kind_s: dict[str, dict[str, float]] = {r: {} for r in REGIMES}
    parts: dict[str, dict[str, dict[str, float]]] = {r: {} for r in REGIMES}
    for regime in REGIMES:
        tokens = _tokens(scenario, regime)
        gemm_s = attn_core = attn_total = ffn = other = comm = launches = sol = 0.0
        kernels = 0
        times, n_rows, cores_by_kind = kind_times(regime)
        for kind, n in zip(spec.layer_kinds, counts):
            if not n:
                continue
            kt = times.get(kind.name) or {"attention": 0.0, "ffn": 0.0, "gemm_sol": 0.0}
            cores = cores_by_kind.get(kind.name, [])  # two with a parallel mixer: a sum
            core_s = sum(a.estimate_s for a in cores)
            n_other, n_coll, act_bytes, elem_s, coll_s = _layer_extras(kind, tokens, h, scenario, profile, tmod, regime)
            layer_s = kt["attention"] + kt["ffn"] + core_s + elem_s + coll_s
            per_kind_s[regime][kind.name] = layer_s
            parts[regime][kind.name] = {
                "attention_gemms": kt["attention"],
                "attention_core": core_s,
                "ffn_gemms": kt["ffn"],
                "elementwise": elem_s - n_other * launch_s,
                "launches": n_other * launch_s,
                "collectives": coll_s,
            }
            gemm_s += n * (kt["attention"] + kt["ffn"])
            attn_core += n * core_s
            attn_total += n * (kt["attention"] + core_s)
            ffn += n * kt["ffn"]
            other += n * (elem_s + coll_s)
            comm += n * coll_s
            launches += n * n_other * launch_s
            sol += n * (kt["gemm_sol"] + sum(a.sol_s for a in cores) + act_bytes / bw)
            n_gemm_kernels = n_rows.get(kind.name, 0)
            kernels += n * (n_other + n_coll + n_gemm_kernels + len(cores))
        for row in rows[regime]:
            if row.kind == "":
                gemm_s += row.layer_s
                other += row.layer_s
                sol += row.time.sol_s
                kernels += 1
        total = attn_total + ffn + other
        ftl = tps = None
        if regime == "prefill":
            _, _, chunks = _prefill_shape(scenario)
            ftl = total * chunks
            tps = tokens / total if total else None
        else:
            tps = tokens / total if total else None
        steps[regime] = Step(
            regime, tokens, total, sol, gemm_s, attn_core, attn_total, ffn, other, comm, launches, kernels, ftl, tps
        )

    # per-layer cost vectors
    b_w = FORMATS[scenario.gemm_format][2]
    layer_costs: list[LayerCost] = []
    kind_stats: dict[str, tuple] = {}
    used_gemms = iter([e[1] for e in entries[: sum(1 for n in counts if n)]])  # the used kinds', in order
    for kind, n in zip(spec.layer_kinds, counts):
        if not n:
            continue
        params = wbytes = pflops = 0.0
        for g in next(used_gemms):  # kind_gemms(kind, h, n): what follows reads no layer count
            nn, kk, inst = _shard(g, g.n, scenario)
            params += g.weight_params
            wbytes += nn * kk * inst * (2.0 if g.name.endswith("router") else b_w)
            if g.parallel == "expert":
                pflops += 2.0 * scenario.prefill_tokens * scenario.attention_dp_groups * g.m_per_token * nn * kk * inst
            else:
                pflops += 2.0 * scenario.prefill_tokens * nn * kk
        pflops += sum(a.flops for a in attn["prefill"] if a.kind == kind.name)
        kv_tok = sum(a.kv_bytes_per_token for a in attn["decode"] if a.kind == kind.name)
        kind_stats[kind.name] = (
            int(params + kind.other_params),
            wbytes,
            kv_tok,
            pflops,
            per_kind_s["decode"].get(kind.name, 0.0),
            per_kind_s["prefill"].get(kind.name, 0.0),
        )
    for i in range(spec.num_layers):
        kind = spec.kind_of(i)
        st = kind_stats.get(kind.name)
        if st:
            layer_costs.append(LayerCost(i, kind.name, *st))
    v = spec.vocab_size or 0
    emb = LayerCost(-1, "embedding", v * h, v * h * b_act / scenario.tp, 0.0, 0.0, 0.0, 0.0)
    head_rows = {r: next((row for row in rows[r] if row.kind == ""), None) for r in REGIMES}
    head_params = 0 if spec.tie_word_embeddings else v * h
    hr_p = head_rows["prefill"]
    lm_bytes = 0.0 if spec.tie_word_embeddings else v * h * b_w / scenario.tp
    lm = LayerCost(
        spec.num_layers,
        "lm_head",
        head_params,
        lm_bytes,
        0.0,
        hr_p.time.flops if hr_p else 0.0,
        head_rows["decode"].layer_s if head_rows["decode"] else 0.0,
        hr_p.layer_s if hr_p else 0.0,
    )

    kv_model = kv_cache_bytes_per_token(spec, scenario.kv_bytes_per_elem)
    kv_gpu = sum(a.kv_bytes_per_token * a.layers for a in attn["decode"])
    notes = []
    if any(a.kv_replication > 1 for a in attn["decode"]):
        notes.append(f"tp={scenario.tp} exceeds the KV heads of some layers: their KV cache is replicated")
    state_seq = state_bytes_per_sequence(spec, scenario.kv_bytes_per_elem)
    pp = scenario.pp

    weights_gpu = heaviest_stage_weight_bytes(
        [c.weight_bytes for c in layer_costs], emb.weight_bytes, lm.weight_bytes, pp
    )
    # sliding/chunked layers keep only their window: decode's attended tokens per layer
    per_seq = (
        sum(a.layers * a.kv_bytes_per_token * a.attended_tokens for a in attn["decode"]) + state_seq / scenario.tp
    ) / pp
    act = activation_bytes(h, rows, {r: _tokens(scenario, r) for r in REGIMES})
    mem = memory_fit(weights_gpu, per_seq, act, scenario.decode_concurrency, profile.memory_gb)
    if not mem.fits:
        notes.append(
            f"does not fit: {weights_gpu / 1e9:.1f} GB weights + {mem.kv_cache_bytes_per_gpu / 1e9:.1f} GB KV "
            f"cache + {act / 1e9:.1f} GB activations per GPU > {mem.usable_bytes / 1e9:.0f} GB usable of "
            f"{profile.memory_gb:g} GB; at most {mem.max_decode_concurrency} sequences of {scenario.context} "
            "tokens fit"
        )
    return Workload(
        spec,
        profile,
        scenario,
        rows,
        attn,
        steps,
        layer_costs,
        emb,
        lm,
        kv_model,
        kv_gpu,
        state_seq,
        launch_s,
        floor_s,
        notes,
        weights_gpu,
        mem.kv_cache_bytes_per_gpu,
        mem.hbm_bytes,
        mem.max_decode_concurrency,
        act,
        mem,
        parts,
    )


def summary(w: Workload) -> dict:
    """The JSON-able view of a workload (``colint inspect --gpu ... --format json``: "estimates")."""
    sc = w.scenario

    def gemm_row(r: WorkloadGemm) -> dict:
        t = r.time
        return {
            "name": r.name,
            "kind": r.kind,
            "layers": r.layers,
            "m": r.m,
            "n": r.n,
            "k": r.k,
            "instances": round(r.instances, 4),
            "dtype": r.dtype,
            "flops": t.flops,
            "bytes": t.bytes,
            "arithmetic_intensity": t.arithmetic_intensity,
            "ridge": t.ridge,
            "bound": t.bound,
            "m_star": None if math.isinf(t.m_star) else t.m_star,
            "sol_s": t.sol_s,
            "estimate_s": t.estimate_s,
            "tile": [t.tile_m, t.tile_n],
            "tile_efficiency": t.tile_efficiency,
            "wave_efficiency": t.wave_efficiency,
            "layer_estimate_s": r.layer_s,
            "total_estimate_s": r.total_s,
        }

    def step(s: Step) -> dict:
        return {
            "tokens": s.tokens,
            "estimate_s": s.estimate_s,
            "sol_s": s.sol_s,
            "attention_s": s.attention_s,
            "attention_core_s": s.attention_core_s,
            "ffn_s": s.ffn_s,
            "other_s": s.other_s,
            "comm_s": s.comm_s,
            "attention_share": s.attention_share,
            "ffn_share": s.ffn_share,
            "other_share": s.other_share,
            "collective_share": s.collective_share,
            "kernels": s.kernels,
            "ftl_s": s.ftl_s,
            "tokens_per_s": s.tokens_per_s,
        }

    return {
        "label": w.label(),
        "gpu": w.profile.name,
        "scenario": dump(sc, json=True),
        "kv_cache_bytes_per_token": w.kv_bytes_per_token,
        "kv_cache_bytes_per_token_per_gpu": w.kv_bytes_per_token_per_gpu,
        "state_bytes_per_sequence": w.state_bytes_per_sequence,
        "weight_bytes_per_gpu": w.weight_bytes_per_gpu,
        "kv_cache_bytes_per_gpu": w.kv_cache_bytes_per_gpu,
        "activation_bytes_per_gpu": w.activation_bytes_per_gpu,
        "memory_fits": w.memory_fits,
        "max_decode_concurrency": w.max_decode_concurrency,
        "steps": {r: step(s) for r, s in w.steps.items()},
        "gemms": {r: [gemm_row(g) for g in rows] for r, rows in w.gemms.items()},
        "attention": {
            r: [
                {
                    "kind": a.kind,
                    "layers": a.layers,
                    "mixer": a.mixer,
                    "flops": a.flops,
                    "bytes": a.bytes,
                    "sol_s": a.sol_s,
                    "estimate_s": a.estimate_s,
                    "kv_replication": a.kv_replication,
                    "attended_tokens": a.attended_tokens,
                }
                for a in rows
            ]
            for r, rows in w.attention.items()
        },
        "notes": list(w.notes),
    }
