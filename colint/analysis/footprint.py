"""A deployment's HBM footprint per GPU without the time model (an estimate): ``memory_at`` gives the
MemoryFit of ``analyse(spec, profile, scenario).memory`` from the same weight shards, KV bytes per
sequence and peak activation rows, in the same order, with the formulas of colint.analysis.memory;
CL801's deployment search (colint.analysis.deployments) tries many deployments with it.
"""

from __future__ import annotations

from dataclasses import replace

from colint.analysis.inventory import is_gate, layer_counts
from colint.analysis.gemm_model import FORMATS, check_format
from colint.analysis.gemm_rows import (
    REGIMES,
    SPEC_MEMO_MAX,
    ceil_div,
    gemm_entries,
    prefill_shape,
    regime_tokens,
    kind_shards,
    routed_expert_rows,
    row_shards,
)
from colint.analysis.kv_cache import kind_mixers, mixer_kv_bytes_per_token, state_bytes_per_sequence
from colint.analysis.memory import B_ACT, USABLE_HBM_SHARE, heaviest_stage_weight_bytes, memory_fit, mtp_weight_bytes
from colint.analysis.scenario import Scenario
from colint.util.memo import per_spec
from colint.normalize.model_spec import ModelSpec
from colint.util.records import dataclass


def memory_at(spec: ModelSpec, profile, scenario: Scenario, fits_only: bool = False):
    """The memory fields of ``analyse(spec, profile, scenario).memory`` (a MemoryFit, estimates) without the time
    model: the same weight shards, KV bytes per sequence and peak activation rows, in the same order, so the
    figures are identical; CL801's deployment search tries many deployments with it. ``fits_only``: None,
    without the pipeline split, when even an even split of the weights over pp stages cannot fit."""

    check_format(profile, scenario.gemm_format)
    layer_w, sum_w, emb_w, lm_w, kv_all_stages, peak = _unsplit(spec, scenario)
    per_seq = kv_all_stages / scenario.pp
    if fits_only and scenario.pp > 1:
        # the heaviest stage holds at least the mean: a deployment that cannot fit that is not split (margins
        # absorb float rounding; a deployment near the line gets the exact split below)
        mean_w = (sum_w + emb_w + lm_w) / scenario.pp
        usable = USABLE_HBM_SHARE * profile.memory_gb * 1e9
        if mean_w * (1 - 1e-9) + scenario.decode_concurrency * per_seq + peak > usable * (1 + 1e-9):
            return None
    weights_gpu = heaviest_stage_weight_bytes(layer_w, emb_w, lm_w, scenario.pp)
    return memory_fit(weights_gpu, per_seq, peak, scenario.decode_concurrency, profile.memory_gb)


def activation_floor(hidden_size: int, decode_tokens: int, prefill_tokens: int) -> float:
    """The least peak activation bytes of a GPU: the residual stream (two copies of B_ACT bytes per element) of the
    larger regime's tokens (FootprintFloor; CL801's deployment search)."""
    return max(t * 2.0 * hidden_size * B_ACT for t in (decode_tokens, prefill_tokens))


@dataclass(frozen=True)
class FootprintFloor:
    """What one GPU holds of the whole model (tp = ep = kvp = pp = 1, the scenario's formats): all its weight
    bytes and the KV bytes of one sequence. A GPU of any deployment holds at least the share :meth:`bytes_per_gpu`
    gives: every shard rounds up (column and row splits over tp, or tp x kvp for the FFN; experts over ep; KV
    heads over tp, or replicated; the context over kvp), the heaviest pipeline stage holds at least the mean, and
    the activations hold at least the residual stream of the larger regime (colint.analysis.memory)."""

    weight_bytes: float
    kv_bytes_per_sequence: float

    def bytes_per_gpu(self, spec: ModelSpec, scenario: Scenario) -> float:
        """A lower bound of memory_at(spec, profile, scenario).total_bytes."""
        act = activation_floor(spec.hidden_size, scenario.decode_concurrency, scenario.prefill_tokens)
        return self.bytes_at(scenario.tp, scenario.ep, scenario.kvp, scenario.pp, scenario.decode_concurrency, act)

    def bytes_at(self, tp: int, ep: int, kvp: int, pp: int, concurrency: int, act: float) -> float:
        """:meth:`bytes_per_gpu` of the scenario with these parallel sizes and concurrency, whose activation
        floor is ``act`` (the same figure, without building the scenario: a search tries dozens)."""
        weights = self.weight_bytes / (max(tp * kvp, ep) * pp)
        kv = concurrency * self.kv_bytes_per_sequence / (tp * kvp * pp)
        return weights + kv + act


# footprint_floor() memo: (id(spec), the scenario at tp = ep = kvp = pp = 1) -> (spec, floor); every CL801 search of
# one spec asks for it, at each setting the advice closure re-checks that spec at
_FLOOR_MEMO: dict = {}


def footprint_floor(spec: ModelSpec, scenario: Scenario) -> FootprintFloor:
    """The model's weights and KV bytes per sequence on one GPU (FootprintFloor)."""
    one = replace(scenario, tp=1, ep=1, kvp=1, pp=1)
    return per_spec(_FLOOR_MEMO, (id(spec), one), spec, lambda: _floor(spec, one), SPEC_MEMO_MAX)


def _floor(spec: ModelSpec, one: Scenario) -> FootprintFloor:
    emb_w, lm_w = _embedding_weight_bytes(spec, one)
    layer_w = _layer_weight_bytes(spec, one)
    mtp_w = mtp_weight_bytes(layer_w, spec.mtp_layers, spec.hidden_size, FORMATS[one.gemm_format][2], 1)
    return FootprintFloor(sum(layer_w) + emb_w + lm_w + mtp_w, _kv_bytes_per_sequence(spec, one))


# _unsplit() memo: (id(spec), the scenario at pp=1) -> (spec, parts). Nothing in the parts depends on pp (nor on
# the GPU), so CL801's search prices each (tp, ep) once for all its pipeline sizes, and a re-check of the
# same spec at another setting finds the deployments it tried. The spec (lists inside: unhashable) is keyed by
# identity and kept alive beside its entry, as analyse's memo does. Oldest entries go first.
_UNSPLIT_MEMO: dict = {}
UNSPLIT_MEMO_MAX = 4 * SPEC_MEMO_MAX  # a few dozen (tp, ep) per spec searched, for the recent specs


def _unsplit(spec: ModelSpec, scenario: Scenario) -> tuple[list[float], float, float, float, float, float]:
    """The footprint's parts before the pipeline split: (per-layer weight bytes, their sum, embedding and LM
    head weight bytes, KV bytes per sequence of all stages, peak activation bytes), per GPU."""
    key = (id(spec), replace(scenario, pp=1) if scenario.pp != 1 else scenario)
    return per_spec(_UNSPLIT_MEMO, key, spec, lambda: _unsplit_parts(spec, scenario), UNSPLIT_MEMO_MAX)


def _unsplit_parts(spec: ModelSpec, scenario: Scenario) -> tuple[list[float], float, float, float, float, float]:
    h = spec.hidden_size
    entries = gemm_entries(spec)
    tokens = {r: regime_tokens(scenario, r) for r in REGIMES}
    # peak activations: activation_bytes() over the rows regime_gemm_rows would build (m, instances, n, k only), from
    # the same plan and shards (gemm_rows.row_shards: the LM head and routed experts marked in the plan)
    plan, by_kind = row_shards(entries, scenario)
    shards = []
    for (_kind_id, groups), kind_shards_ in zip(plan, by_kind):
        for group, (n, k, inst) in zip(groups, kind_shards_):
            if n > 0 and k > 0:
                shards.append((group.lm_head, group.experts, group.topk, group.first.count, n, k, inst))
    head_tokens = prefill_shape(scenario)[1]
    dp_groups = scenario.attention_dp_groups
    peak = 0.0
    for regime in REGIMES:
        gemm = 0.0
        for lm_head, experts, topk, count, n, k, inst in shards:  # each regime's rows of regime_gemm_rows (same shards)
            m_tokens = tokens[regime]
            if lm_head and regime == "prefill":
                m_tokens = head_tokens
            if experts:
                touched, m = routed_expert_rows(m_tokens * dp_groups, topk, count)
                inst = inst * touched
            else:
                m = m_tokens
            gemm = max(gemm, m * max(inst, 1.0) * (k + n) * B_ACT)
        peak = max(peak, tokens[regime] * 2.0 * h * B_ACT + gemm)
    layer_w = _layer_weight_bytes(spec, scenario)
    emb_w, lm_w = _embedding_weight_bytes(spec, scenario)
    lm_w += mtp_weight_bytes(layer_w, spec.mtp_layers, h, FORMATS[scenario.gemm_format][2], scenario.tp)
    return layer_w, sum(layer_w), emb_w, lm_w, _kv_bytes_per_sequence(spec, scenario), peak


def _kv_bytes_per_sequence(spec: ModelSpec, scenario: Scenario) -> float:
    """KV-cache (and recurrent state) bytes per GPU of one sequence at the scenario's context, all pipeline
    stages: decode's attention cores, in analyse's order."""
    counts = layer_counts(spec)
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
                attended = ceil_div(
                    int(attended), scenario.kvp
                )  # as attention_core_cost: this GPU's share of the context
            kv_seq += n * kv_gpu * attended
    return kv_seq + state_bytes_per_sequence(spec, b_kv) / scenario.tp


_LAYER_BYTES_MEMO: dict = {}


def _layer_weight_bytes(spec: ModelSpec, scenario: Scenario) -> list[float]:
    """Weight bytes per GPU of each decoder layer: the per-layer shards of analyse's layer costs (read-only: built
    once per spec object, (tp, kvp, ep, moe_tp) and weight format)."""
    entries = gemm_entries(spec)
    b_w = FORMATS[scenario.gemm_format][2]
    key = (id(spec), scenario.tp, scenario.kvp, scenario.ep, scenario.moe_tp, b_w)
    return per_spec(
        _LAYER_BYTES_MEMO,
        key,
        spec,
        lambda: _per_layer_weight_bytes(spec, kind_shards(entries, scenario), b_w),
        UNSPLIT_MEMO_MAX,
    )


def _per_layer_weight_bytes(spec: ModelSpec, used_shards, b_w: float) -> list[float]:
    wbytes_by_kind: dict[str, float] = {}
    used = iter(used_shards)  # the used kinds' GEMMs and shards, in order (the LM head's last, not read)
    for kind, n in zip(spec.layer_kinds, layer_counts(spec)):
        if not n:
            continue
        wbytes = 0.0
        for g, nn, kk, inst in next(used):
            wbytes += nn * kk * inst * (2.0 if is_gate(g.name) else b_w)
        wbytes_by_kind[kind.name] = wbytes
    names = [kind.name for kind in spec.layer_kinds]
    return [wbytes_by_kind[names[p]] for p in spec.layer_pattern[: spec.num_layers] if names[p] in wbytes_by_kind]


def _embedding_weight_bytes(spec: ModelSpec, scenario: Scenario) -> tuple[float, float]:
    """(embedding, LM head) weight bytes per GPU: BF16 embedding rows and the LM head in the GEMM format, over tp."""
    h = spec.hidden_size
    v = spec.vocab_size or 0
    emb_w = v * h * B_ACT / scenario.tp
    lm_w = 0.0 if spec.tie_word_embeddings else v * h * FORMATS[scenario.gemm_format][2] / scenario.tp
    return emb_w, lm_w
