"""Workload: what one ModelSpec costs on one GPU profile in one scenario (docs/design.md §5).

``analyse(spec, profile, scenario) -> Workload``: the per-GEMM table per regime (per-shard
M/N/K, roofline and estimate), attention per layer kind (prefill FLOPs, decode KV/state reads),
KV bytes per token, step estimates (decode ITL, prefill step and FTL) with attention / FFN /
other shares, and per-layer cost vectors for pipeline partitioning. Every time here is an
ESTIMATE of the GEMM time model (colint.analysis.gemm_model) unless its name says ``sol``.
The parts it sums: the GEMM rows per shard (colint.analysis.gemm_rows) and the rest of each layer,
attention cores, elementwise passes, MoE permute/finalize and collectives (colint.analysis.step_extras).
docs/analysis.md says what a Workload gives rules (its fields and methods, with units).
"""

from __future__ import annotations

import math
from dataclasses import field
from typing import TYPE_CHECKING, Any

from colint.analysis.inventory import is_gate, layer_counts
from colint.analysis.gemm_model import FORMATS, check_format
from colint.analysis.gemm_rows import (
    REGIMES,
    SPEC_MEMO_MAX,
    GemmRows,
    WorkloadGemm,
    ceil_div,
    gemm_entries,
    regime_gemm_rows,
    prefill_shape,
    regime_tokens,
    kind_shards,
)
from colint.analysis.kv_cache import kind_mixers, kv_cache_bytes_per_token, kv_sources, state_bytes_per_sequence
from colint.analysis.memory import activation_bytes, heaviest_stage_weight_bytes, memory_fit, mtp_weight_bytes
from colint.analysis.scenario import Scenario
from colint.analysis.overlap import half_cores_s, half_scenario, layer_time, overlapped_layers, overlaps
from colint.analysis.step_extras import AttentionCost, attention_core_cost
from colint.hardware_profiles import time_model
from colint.normalize.model_spec import ModelSpec
from colint.util.plain_data import dump
from colint.util.records import dataclass

if TYPE_CHECKING:
    from colint.hardware_profiles import Profile


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
    comm_s: (
        float  # collectives: TP all-reduces + EP dispatch/combine, its exposed part when overlapped (part of other_s)
    )
    launch_s: float  # launches of non-GEMM kernels (part of other_s)
    kernels: int  # kernels per forward
    ftl_s: float | None = None  # prefill: time to first token for one `context` prompt
    tokens_per_s: float | None = None  # per replica
    comm_hidden_s: float = 0.0  # EP dispatch/combine hidden behind the other micro-batch's compute (not in comm_s)

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
    gemms: dict[str, GemmRows]  # regime -> rows (with their per-kind sums)
    attention: dict[str, list[AttentionCost]]  # regime -> one per layer kind with a mixer
    steps: dict[str, Step]  # "decode", "prefill"
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
    # layer kind name -> one layer's LayerCost fields after index and kind; layer_costs lists them per layer
    kind_costs: dict[str, tuple] = field(default_factory=dict)
    _layer_costs: list[LayerCost] | None = field(default=None, repr=False, compare=False)
    _label: str | None = field(default=None, repr=False, compare=False)

    @property
    def layer_costs(self) -> list[LayerCost]:
        """One LayerCost per decoder layer (the embedding and LM head apart), built on first use: the pipeline
        rules and reports read them, most checks never do (tens of records per analysis otherwise)."""
        if self._layer_costs is None:
            self._layer_costs = [LayerCost(i, name, *st) for i, name, st in _layer_stats(self.spec, self.kind_costs)]
        return self._layer_costs

    def layer_stats(self) -> list[tuple]:
        """Each decoder layer's costs in layer order, as LayerCost's fields after index and kind (``kind_costs``
        walked as layer_costs walks it), without building a LayerCost per layer (read-only)."""
        return [st for _i, _name, st in _layer_stats(self.spec, self.kind_costs)]

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
        return 2.0 * self.scenario.prefill_tokens * self.spec.hidden_size * ceil_div(v, self.scenario.tp)

    def label(self) -> str:
        """'estimate: GPU, scenario' (built once: the rules quote it in most findings)."""
        if self._label is None:
            self._label = f"estimate: {self.profile.name}, {self.scenario.label()}"
        return self._label


# analyse() memo: (id(spec), id(profile), scenario) -> (spec, profile, workload). One check asks for the same
# workload many times (the rules' context, CL801's deployment search, the advice closure's re-checks at other
# settings); a spec holds lists and dicts (unhashable), so it is keyed by identity and kept alive beside its
# entry. Bounded by gemm_rows.SPEC_MEMO_MAX, like the GEMM entries of the same specs.
_ANALYSE_MEMO: dict = {}


def analyse(spec: ModelSpec, profile, scenario: Scenario) -> Workload:
    """The full analysis of one spec on one GPU in one scenario (raises ProfileError when the
    scenario's format is not native on the GPU). Memoised per (spec object, profile object, scenario):
    callers treat the Workload as read-only."""
    key = (id(spec), id(profile), scenario)
    hit = _ANALYSE_MEMO.get(key)
    if hit is not None and hit[0] is spec and hit[1] is profile:
        return hit[2]
    w = _analyse(spec, profile, scenario)
    if len(_ANALYSE_MEMO) >= SPEC_MEMO_MAX:
        del _ANALYSE_MEMO[next(iter(_ANALYSE_MEMO))]  # oldest first
    _ANALYSE_MEMO[key] = (spec, profile, w)
    return w


def _analyse(spec: ModelSpec, profile, scenario: Scenario) -> Workload:
    check_format(profile, scenario.gemm_format)
    tmod = time_model(profile)
    counts = layer_counts(spec)
    entries = gemm_entries(spec)
    rows = {r: regime_gemm_rows(spec, profile, scenario, r, entries) for r in REGIMES}
    sources = kv_sources(spec)
    attn = {r: _regime_attention(spec, profile, scenario, r, counts, sources) for r in REGIMES}
    steps: dict[str, Step] = {}
    per_kind_s: dict[str, dict[str, float]] = {}
    parts: dict[str, dict[str, dict[str, float]]] = {}
    for regime in REGIMES:
        steps[regime], per_kind_s[regime], parts[regime] = _regime_step(
            spec, profile, scenario, regime, rows[regime], attn[regime], counts, tmod, entries, sources
        )
    kind_stats = _kind_stats(spec, scenario, entries, counts, attn, per_kind_s)
    emb, lm = _head_costs(spec, scenario, rows)
    notes = []
    if any(a.kv_replication > 1 for a in attn["decode"]):
        notes.append(f"tp={scenario.tp} exceeds the KV heads of some layers: their KV cache is replicated")
    state_seq = state_bytes_per_sequence(spec, scenario.kv_bytes_per_elem)
    weights_gpu, act, mem = _memory(spec, profile, scenario, rows, attn, kind_stats, emb, lm, state_seq, notes)
    return Workload(
        spec,
        profile,
        scenario,
        rows,
        attn,
        steps,
        emb,
        lm,
        kv_cache_bytes_per_token(spec, scenario.kv_bytes_per_elem),
        sum(a.kv_bytes_per_token * a.layers for a in attn["decode"]),
        state_seq,
        profile.launch_overhead_us * 1e-6,
        tmod.kernel_floor_us * 1e-6,
        notes,
        weights_gpu,
        mem.kv_cache_bytes_per_gpu,
        mem.hbm_bytes,
        mem.max_decode_concurrency,
        act,
        mem,
        parts,
        kind_stats,
    )


def _kind_stats(spec: ModelSpec, scenario: Scenario, entries, counts, attn, per_kind_s) -> dict[str, tuple]:
    """Workload.kind_stats: one layer's (parameters, weight bytes per GPU, KV bytes per token per GPU, prefill
    FLOPs, decode s, prefill s) for each kind the model uses."""
    b_w = FORMATS[scenario.gemm_format][2]
    kind_stats: dict[str, tuple] = {}
    used_gemms = iter(kind_shards(entries, scenario))  # the used kinds' GEMMs and shards, in order
    for kind, n in zip(spec.layer_kinds, counts):
        if not n:
            continue
        params = wbytes = pflops = 0.0
        for g, nn, kk, inst in next(used_gemms):  # kind_gemms(kind, h, n): what follows reads no layer count
            params += g.weight_params
            wbytes += nn * kk * inst * (2.0 if is_gate(g.name) else b_w)
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
    return kind_stats


def _head_costs(spec: ModelSpec, scenario: Scenario, rows) -> tuple[LayerCost, LayerCost]:
    """The embedding's and the LM head's LayerCost (the head's GEMM row is the one of kind "")."""
    b_act = 2.0  # BF16 activations between kernels
    b_w = FORMATS[scenario.gemm_format][2]
    h, v = spec.hidden_size, spec.vocab_size or 0
    emb = LayerCost(-1, "embedding", v * h, v * h * b_act / scenario.tp, 0.0, 0.0, 0.0, 0.0)
    head_rows = {r: next((row for row in rows[r] if row.kind == ""), None) for r in REGIMES}
    hr_p = head_rows["prefill"]
    lm = LayerCost(
        spec.num_layers,
        "lm_head",
        0 if spec.tie_word_embeddings else v * h,
        0.0 if spec.tie_word_embeddings else v * h * b_w / scenario.tp,
        0.0,
        hr_p.time.flops if hr_p else 0.0,
        head_rows["decode"].layer_s if head_rows["decode"] else 0.0,
        hr_p.layer_s if hr_p else 0.0,
    )
    return emb, lm


def _memory(spec: ModelSpec, profile, scenario: Scenario, rows, attn, kind_stats, emb, lm, state_seq, notes):
    """(weight bytes on the heaviest stage's GPU, activation bytes, the MemoryFit of the scenario's sequences);
    a note in ``notes`` when they do not fit."""
    h, pp = spec.hidden_size, scenario.pp
    layer_w = _layer_weight_bytes(spec, kind_stats)
    mtp_w = mtp_weight_bytes(layer_w, spec.mtp_layers, h, FORMATS[scenario.gemm_format][2], scenario.tp)
    weights_gpu = heaviest_stage_weight_bytes(layer_w, emb.weight_bytes, lm.weight_bytes + mtp_w, pp)
    # sliding/chunked layers keep only their window: decode's attended tokens per layer
    per_seq = (
        sum(a.layers * a.kv_bytes_per_token * a.attended_tokens for a in attn["decode"]) + state_seq / scenario.tp
    ) / pp
    act = activation_bytes(h, rows, {r: regime_tokens(scenario, r) for r in REGIMES})
    mem = memory_fit(weights_gpu, per_seq, act, scenario.decode_concurrency, profile.memory_gb)
    if not mem.fits:
        notes.append(
            f"does not fit: {weights_gpu / 1e9:.1f} GB weights + {mem.kv_cache_bytes_per_gpu / 1e9:.1f} GB KV "
            f"cache + {act / 1e9:.1f} GB activations per GPU > {mem.usable_bytes / 1e9:.0f} GB usable of "
            f"{profile.memory_gb:g} GB; at most {mem.max_decode_concurrency} sequences of {scenario.context} "
            "tokens fit"
        )
    return weights_gpu, act, mem


def steps_on_domain(w: Workload, profile) -> dict[str, Step]:
    """``analyse(w.spec, profile, w.scenario).steps`` for a ``profile`` that differs from ``w.profile`` in its
    scale-up domain only (CL504/CL704's counterfactual, colint.analysis.scale_out). Only the collectives read the
    domain (colint.analysis.collectives): the GEMM rows and attention cores of each regime are ``w``'s, so only
    the step's sum over its layers, with their collectives and what overlap hides of them, is taken again: the
    same figures, without re-estimating every GEMM of the model."""
    spec, sc = w.spec, w.scenario
    counts, entries, sources, tmod = layer_counts(spec), gemm_entries(spec), kv_sources(spec), time_model(profile)
    return {
        r: _regime_step(spec, profile, sc, r, w.gemms[r], w.attention[r], counts, tmod, entries, sources, w.profile)[0]
        for r in REGIMES
    }


def decode_step(spec: ModelSpec, profile, scenario: Scenario) -> Step:
    """``analyse(spec, profile, scenario).steps["decode"]``, the same figures, without the prefill regime, the
    layer costs and the footprint: what a rule that reads one decode step needs (CL801's throughput at the
    concurrency that fits, CL301's alternative designs). Taken from analyse's memo when that has it."""
    hit = _ANALYSE_MEMO.get((id(spec), id(profile), scenario))
    if hit is not None and hit[0] is spec and hit[1] is profile:
        return hit[2].steps["decode"]
    check_format(profile, scenario.gemm_format)
    counts = layer_counts(spec)
    entries, sources = gemm_entries(spec), kv_sources(spec)
    rows = regime_gemm_rows(spec, profile, scenario, "decode", entries)
    attn = _regime_attention(spec, profile, scenario, "decode", counts, sources)
    return _regime_step(spec, profile, scenario, "decode", rows, attn, counts, time_model(profile), entries, sources)[0]


def _regime_attention(
    spec: ModelSpec, profile, scenario: Scenario, regime: str, counts, sources
) -> list[AttentionCost]:
    """One attention core per used layer kind with a mixer (two with a parallel mixer: same kind name)."""
    out = []
    for ki, (kind, n) in enumerate(zip(spec.layer_kinds, counts)):
        for j, mx in enumerate(kind_mixers(kind) if n else []):
            if mx.kind not in ("none", "linear"):  # a parallel mixer adds its own core (same kind name)
                out.append(
                    attention_core_cost(
                        spec, kind, n, profile, scenario, regime, sources.get(ki) if j == 0 else None, mx
                    )
                )
    return out


def _kind_times(rows: GemmRows, attn: list[AttentionCost]):
    """Per-kind sums of one regime (kept with each kind's rows: gemm_rows.GemmRows): (GEMM times by component,
    GEMM rows, attention cores) per kind name."""
    times = {name: kt for name, (kt, _count) in rows.kind_sums.items()}
    n_rows = {name: count for name, (_kt, count) in rows.kind_sums.items()}
    cores_by_kind: dict[str, list] = {}
    for a in attn:
        cores_by_kind.setdefault(a.kind, []).append(a)
    return times, n_rows, cores_by_kind


def _regime_step(
    spec: ModelSpec,
    profile,
    scenario: Scenario,
    regime: str,
    rows: GemmRows,
    attn,
    counts,
    tmod,
    entries,
    sources,
    gemm_profile=None,
) -> tuple[Step, dict[str, float], dict[str, dict[str, float]]]:
    """One regime's Step, with its per-kind layer time and the parts of that time (Workload.layer_parts). A
    layer whose EP exchange two micro-batches overlap is priced through colint.analysis.overlap.
    ``gemm_profile``: a profile the half batch's GEMM rows are priced on instead of ``profile``, one that differs
    from it in the scale-up domain alone (steps_on_domain: the rows' memos keep the workload's profile)."""
    h = spec.hidden_size
    per_kind_s: dict[str, float] = {}
    parts: dict[str, dict[str, float]] = {}
    tokens = regime_tokens(scenario, regime)
    sums = _StepSums(profile.launch_overhead_us * 1e-6, profile.memory_bytes_per_s)
    times, n_rows, cores_by_kind = _kind_times(rows, attn)
    fill_layers = overlapped_layers(spec, scenario, regime, counts)
    half_times: dict[str, dict[str, float]] | None = None  # one micro-batch's GEMMs (colint.analysis.overlap)
    for ki, (kind, n) in enumerate(zip(spec.layer_kinds, counts)):
        if not n:
            continue
        kt = times.get(kind.name) or {"attention": 0.0, "ffn": 0.0, "gemm_sol": 0.0}
        cores = cores_by_kind.get(kind.name, [])  # two with a parallel mixer: a sum
        core_s = sum(a.estimate_s for a in cores)
        half = None
        if overlaps(kind, scenario, regime):
            if half_times is None:  # the rows of the kinds that overlap: the others' half-batch rows are not read
                split = {k.name for k, c in zip(spec.layer_kinds, counts) if c and overlaps(k, scenario, regime)}
                half_sc = half_scenario(scenario, regime)
                half_rows = regime_gemm_rows(spec, gemm_profile or profile, half_sc, regime, entries, kinds=split)
                half_times = _kind_gemm_s(half_rows)
            ht = half_times.get(kind.name) or {"attention": 0.0, "ffn": 0.0}
            half_core = half_cores_s(spec, kind, n, profile, scenario, regime, sources.get(ki), core_s)
            half = (ht["attention"], ht["ffn"], half_core)
        lt = layer_time(
            kind, h, tokens, (kt["attention"], kt["ffn"], core_s), half, scenario, profile, tmod, regime, fill_layers
        )
        per_kind_s[kind.name] = lt.total_s
        parts[kind.name] = lt.parts
        sums.add_layers(n, lt, kt["gemm_sol"] + sum(a.sol_s for a in cores), n_rows.get(kind.name, 0) + len(cores))
    for row in rows:
        if row.kind == "":
            sums.add_head(row)
    return sums.step(regime, tokens, scenario), per_kind_s, parts


class _StepSums:
    """The running sums of one regime's step over its layers (colint.analysis.workload._regime_step), in the
    order the step adds them."""

    __slots__ = (
        "launch_s",
        "bw",
        "gemm_s",
        "attn_core",
        "attn_total",
        "ffn",
        "other",
        "comm",
        "hidden",
        "launches",
        "sol",
        "kernels",
    )

    def __init__(self, launch_s: float, memory_bytes_per_s: float) -> None:
        self.launch_s, self.bw = launch_s, memory_bytes_per_s
        self.gemm_s = self.attn_core = self.attn_total = self.ffn = self.other = self.comm = self.hidden = 0.0
        self.launches = self.sol = 0.0
        self.kernels = 0

    def add_layers(self, n: int, lt, sol_s: float, gemm_and_core_kernels: int) -> None:
        """``n`` layers of one kind at layer time ``lt`` (colint.analysis.overlap.layer_time), whose GEMMs and
        attention cores have ``sol_s`` speed of light and ``gemm_and_core_kernels`` kernels."""
        self.gemm_s += n * (lt.attention_gemms_s + lt.ffn_gemms_s)
        self.attn_core += n * lt.core_s
        self.attn_total += n * (lt.attention_gemms_s + lt.core_s)
        self.ffn += n * lt.ffn_gemms_s
        self.other += n * (lt.elem_s + lt.coll_s)
        self.comm += n * lt.coll_s
        self.hidden += n * lt.hidden_s
        self.launches += n * (lt.micro_batches * lt.n_other) * self.launch_s
        self.sol += n * (sol_s + lt.act_bytes / self.bw)
        self.kernels += n * lt.micro_batches * (lt.n_other + lt.n_coll + gemm_and_core_kernels)

    def add_head(self, row) -> None:
        """The LM head's GEMM row (kind "")."""
        self.gemm_s += row.layer_s
        self.other += row.layer_s
        self.sol += row.time.sol_s
        self.kernels += 1

    def step(self, regime: str, tokens: int, scenario: Scenario) -> Step:
        total = self.attn_total + self.ffn + self.other
        ftl = None
        if regime == "prefill":
            _, _, chunks = prefill_shape(scenario)
            ftl = total * chunks
        tps = tokens / total if total else None
        return Step(
            regime,
            tokens,
            total,
            self.sol,
            self.gemm_s,
            self.attn_core,
            self.attn_total,
            self.ffn,
            self.other,
            self.comm,
            self.launches,
            self.kernels,
            ftl,
            tps,
            self.hidden,
        )


def _kind_gemm_s(rows: GemmRows) -> dict[str, dict[str, float]]:
    """GEMM time per kind name and component (attention, ffn; and gemm_sol) of one regime's rows (read-only)."""
    return {name: kt for name, (kt, _count) in rows.kind_sums.items()}


def _layer_weight_bytes(spec: ModelSpec, kind_stats: dict[str, tuple]) -> list[float]:
    """Each decoder layer's weight bytes per GPU (``_layer_stats``' second cost), in layer order."""
    by_index = [kind_stats.get(kind.name) for kind in spec.layer_kinds]
    return [st[1] for st in (by_index[k] for k in spec.layer_pattern[: spec.num_layers]) if st]


def _layer_stats(spec: ModelSpec, kind_stats: dict[str, tuple]):
    """(index, kind name, one layer's costs) of each decoder layer whose kind has costs (``kind_stats``, by
    kind name), in layer order: the stack Workload.layer_costs lists."""
    names = [kind.name for kind in spec.layer_kinds]
    for i, kind_index in zip(range(spec.num_layers), spec.layer_pattern):  # spec.kind_of(i), without its call
        name = names[kind_index]
        st = kind_stats.get(name)
        if st:
            yield i, name, st


def summary(w: Workload) -> dict:
    """The JSON-able view of a workload (``colint inspect --gpu ... --format json``: "estimates")."""
    return {
        "label": w.label(),
        "gpu": w.profile.name,
        "scenario": dump(w.scenario, json=True),
        "kv_cache_bytes_per_token": w.kv_bytes_per_token,
        "kv_cache_bytes_per_token_per_gpu": w.kv_bytes_per_token_per_gpu,
        "state_bytes_per_sequence": w.state_bytes_per_sequence,
        "weight_bytes_per_gpu": w.weight_bytes_per_gpu,
        "kv_cache_bytes_per_gpu": w.kv_cache_bytes_per_gpu,
        "activation_bytes_per_gpu": w.activation_bytes_per_gpu,
        "memory_fits": w.memory_fits,
        "max_decode_concurrency": w.max_decode_concurrency,
        "steps": {r: _step_json(s) for r, s in w.steps.items()},
        "gemms": {r: [_gemm_json(g) for g in rows] for r, rows in w.gemms.items()},
        "attention": {r: [_attention_json(a) for a in rows] for r, rows in w.attention.items()},
        "notes": list(w.notes),
    }


def _gemm_json(r: WorkloadGemm) -> dict:
    """One GEMM row of summary()."""
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


def _step_json(s: Step) -> dict:
    """One regime's step of summary()."""
    return {
        "tokens": s.tokens,
        "estimate_s": s.estimate_s,
        "sol_s": s.sol_s,
        "attention_s": s.attention_s,
        "attention_core_s": s.attention_core_s,
        "ffn_s": s.ffn_s,
        "other_s": s.other_s,
        "comm_s": s.comm_s,
        "comm_hidden_s": s.comm_hidden_s,
        "attention_share": s.attention_share,
        "ffn_share": s.ffn_share,
        "other_share": s.other_share,
        "collective_share": s.collective_share,
        "kernels": s.kernels,
        "ftl_s": s.ftl_s,
        "tokens_per_s": s.tokens_per_s,
    }


def _attention_json(a) -> dict:
    """One attention row of summary()."""
    return {
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
