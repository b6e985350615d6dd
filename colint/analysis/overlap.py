"""One layer's time, with the EP exchange overlapped by two micro-batches where the deployment does so
(issue 12 item 5; ``Scenario.ep_overlap``). Every time is an ESTIMATE.

Wide-EP serving does not wait for its all-to-all. It splits each forward's batch in two micro-batches
and runs one's dispatch/combine while the other computes: DeepSeek-V3 technical report §3.4 (two
micro-batches of similar load, "the attention and MoE of one micro-batch with the dispatch and combine
of another"; prefill and decode), DeepSeek's inference-system overview (2025: dual micro-batch
overlap, a 5-stage pipeline in decode), SGLang's two-batch overlap (LMSYS, May 2025) and vLLM's
dual-batch overlap (vLLM blog, December 2025, wide-EP serving). Per layer of a MoE kind, with C½ the compute stream of ONE micro-batch
of ⌈B/2⌉ sequences (decode) or ⌈T/2⌉ tokens (prefill): its GEMMs, attention core, elementwise passes,
launches and its other collectives (TP all-reduces, the KV-parallel exchange), and X½ its EP
dispatch + combine (colint.analysis.collectives):

    layer = max(2·C½ + S, 2·X½) + fill = 2·C½ + S + exposed,
    exposed = min(2·X½, max(0, 2·X½ − 2·C½ − S) + fill),   S = min(2·C½, 2·X½)·(sm / (sm − sm_copy) − 1)

The SMs run both halves' compute and the links both halves' exchanges; the busier one sets the pace
(one micro-batch's own chain, C½ + X½, fits within it). S: while DeepEP's high-throughput kernels
copy (above LL_MAX_TOKENS per rank) they hold ``a2a_ht_sms`` of the GPU's SMs, and the compute beside
them runs on the rest (DeepSeek-V3 §3.4 gives 20 of the H800's 132 SMs to communication); the
low-latency kernels receive through hooks and hold none while compute runs. ``fill``: per forward, the first
micro-batch's first dispatch and the last one's final combine have nothing to hide behind, about one
half's exchange, spread over the forward's overlapped layers. The exchange the layer runs, 2·X½,
is ``exposed`` plus ``hidden`` (not a part: it costs no time); the layer's ``collectives`` part is its
serial collectives + ``exposed`` + S (the SMs the exchange takes from compute). The split is not free, and the parts price what it costs: each half re-reads
the weights (decode GEMMs at small M are weight-bound, so half the rows take about as long: the GEMM
model prices M = ⌈B/2⌉), launches its own kernels and pays its own collective latencies. Prefill's
attention core is split, not repriced: the halves' causal attention sums to the whole prompt's
(2·C½ holds the full core).

When: a MoE layer with ep > 1 whose batch splits (``MIN_SPLIT`` sequences per attention group in
decode, tokens in prefill); ``ep_overlap`` "auto" uses the split where it makes the layer faster (an
operator enables two-batch overlap for a deployment that gains from it: it pays at large batches,
where compute can hide the exchange, and loses at small ones, where each half re-reads the weights),
"on" wherever the batch splits, "off" never. Not modelled: single-batch overlap (the shared expert
under the dispatch, the down projection streamed into the combine: SGLang's SBO), which needs no split.
"""

from __future__ import annotations

from dataclasses import replace

from colint.analysis.inventory import layer_counts
from colint.analysis.gemm_rows import SPEC_MEMO_MAX, ceil_div, regime_tokens
from colint.analysis.kv_cache import kind_mixers
from colint.analysis.scenario import Scenario
from colint.analysis.step_extras import (
    LL_MAX_TOKENS,
    attention_core_cost,
    layer_extras,
    ep_all_to_all,
    ffn_exchange_s,
)
from colint.normalize.model_spec import LayerKind, ModelSpec
from colint.util.memo import per_spec
from colint.util.records import dataclass

MIN_SPLIT = 2  # sequences (decode) / tokens (prefill) per attention group: each micro-batch needs one


@dataclass(frozen=True)
class LayerTime:
    """One layer of a kind in one regime on one GPU (s): its parts sum to its time."""

    attention_gemms_s: float
    ffn_gemms_s: float
    core_s: float
    elem_s: float  # elementwise passes, MoE permute/finalize and launches
    launch_s: float  # of which launches
    coll_s: float  # serial collectives + the exposed part of the EP exchange
    micro_batches: int  # 2: the EP exchange overlapped with the other half's compute
    exchange_s: float  # EP dispatch + combine the layer runs (both micro-batches)
    hidden_s: float  # of which overlapped with compute: in no part, it costs no time
    n_other: int  # non-GEMM kernels of ONE micro-batch (launched micro_batches times)
    n_coll: int  # collectives of ONE micro-batch
    act_bytes: float  # elementwise bytes of the whole batch

    @property
    def total_s(self) -> float:
        return self.attention_gemms_s + self.ffn_gemms_s + self.core_s + self.elem_s + self.coll_s

    @property
    def parts(self) -> dict[str, float]:
        """``Workload.layer_parts``' entry, which sums to :attr:`total_s`."""
        return {
            "attention_gemms": self.attention_gemms_s,
            "attention_core": self.core_s,
            "ffn_gemms": self.ffn_gemms_s,
            "elementwise": self.elem_s - self.launch_s,
            "launches": self.launch_s,
            "collectives": self.coll_s,
        }


def exchange_splits(scenario: Scenario, regime: str) -> bool:
    """Whether the scenario lets an MoE layer's EP exchange run under two micro-batches in ``regime``: an
    ``ep_overlap`` other than "off", an EP exchange, and a batch that splits (every MoE kind alike)."""
    return scenario.ep_overlap != "off" and ep_all_to_all(scenario) and regime_tokens(scenario, regime) >= MIN_SPLIT


def overlaps(kind: LayerKind, scenario: Scenario, regime: str) -> bool:
    """Whether ``kind``'s layers may run as two micro-batches: an MoE layer where the scenario splits its
    exchange (:func:`exchange_splits`)."""
    return kind.ffn.kind == "moe" and exchange_splits(scenario, regime)


# half_scenario's memo: (id(scenario), regime) -> (scenario, its half) (colint.util.memo.per_spec). Every analysis of
# an EP-overlapped model asks it per regime (and the advice closure's re-checks at the same settings); scenarios are
# frozen, so the entry keeps its scenario alive beside the id. Bounded like the analyses that ask
# (gemm_rows.SPEC_MEMO_MAX).
_HALVES: dict = {}


def half_scenario(scenario: Scenario, regime: str) -> Scenario:
    """The scenario of one micro-batch: ⌈B/2⌉ sequences (decode) or ⌈T/2⌉ tokens (prefill)."""
    return per_spec(_HALVES, (id(scenario), regime), scenario, lambda: _half(scenario, regime), SPEC_MEMO_MAX)


def _half(scenario: Scenario, regime: str) -> Scenario:
    if regime == "decode":
        return replace(scenario, decode_concurrency=ceil_div(scenario.decode_concurrency, 2))
    return replace(scenario, prefill_tokens=ceil_div(scenario.prefill_tokens, 2))


def overlapped_layers(spec: ModelSpec, scenario: Scenario, regime: str, counts: list[int] | None = None) -> int:
    """Layers of the kinds that may overlap (the fill of one forward is spread over them); ``counts``:
    ``spec.layer_counts()`` when the caller has them."""
    if not exchange_splits(scenario, regime):  # asked once: the scenario decides for every kind alike (overlaps)
        return 0
    if counts is None:
        counts = layer_counts(spec)
    return sum(n for k, n in zip(spec.layer_kinds, counts) if n and k.ffn.kind == "moe")


def exchange_s(kind: LayerKind, tokens: float, h: int, scenario: Scenario, profile) -> float:
    """The EP dispatch + combine of one layer at ``tokens`` per attention group, as layer_extras adds it."""
    if kind.ffn.kind != "moe" or not ep_all_to_all(scenario):
        return 0.0
    return ffn_exchange_s(kind.ffn, tokens / scenario.group_gpus, h, scenario, profile)


def cores_s(spec: ModelSpec, kind: LayerKind, n: int, profile, scenario: Scenario, regime: str, source) -> float:
    """The attention (or recurrent-state) cores of one layer of ``kind`` (``source``: the mixer whose
    KV cache a KV-sharing layer reads), as analyse prices them."""
    return sum(
        attention_core_cost(spec, kind, n, profile, scenario, regime, source if j == 0 else None, mx).estimate_s
        for j, mx in enumerate(kind_mixers(kind))
        if mx.kind not in ("none", "linear")
    )


def half_cores_s(spec, kind, n, profile, scenario: Scenario, regime: str, source, full_core_s: float) -> float:
    """One micro-batch's cores: decode prices ⌈B/2⌉ sequences (each half reads its own sequences' KV
    cache, with its own kernel floor); prefill splits the prompt's causal attention, whose two halves sum
    to the whole (the second half attends to the first's keys): half of it each."""
    if regime == "decode":
        return cores_s(spec, kind, n, profile, half_scenario(scenario, regime), regime, source)
    return full_core_s / 2.0


def _sm_slowdown(kind: LayerKind, tokens: int, scenario: Scenario, profile, tmod) -> float:
    """The extra time (a fraction) compute takes while the exchange's kernels hold SMs: DeepEP's
    high-throughput kernels (above LL_MAX_TOKENS per rank) copy on ``a2a_ht_sms`` of the ``sm_count`` SMs
    (DeepSeek-V3 report §3.4: 20 of the H800's 132 SMs for communication in prefill); the low-latency
    kernels receive through hooks and hold none while compute runs (0)."""
    if kind.ffn.kind != "moe" or tokens / scenario.group_gpus <= LL_MAX_TOKENS:
        return 0.0
    free = profile.sm_count - tmod.a2a_ht_sms
    return profile.sm_count / free - 1.0 if free > 0 else 0.0


def _serial(kind, tokens, h, full, scenario, profile, tmod, regime) -> LayerTime:
    n_other, n_coll, act_bytes, elem_s, coll_s = layer_extras(kind, tokens, h, scenario, profile, tmod, regime)
    x = exchange_s(kind, tokens, h, scenario, profile)
    launches = n_other * profile.launch_overhead_us * 1e-6
    return LayerTime(full[0], full[1], full[2], elem_s, launches, coll_s, 1, x, 0.0, n_other, n_coll, act_bytes)


def layer_time(
    kind: LayerKind,
    h: int,
    tokens: int,
    full: tuple[float, float, float],
    half: tuple[float, float, float] | None,
    scenario: Scenario,
    profile,
    tmod,
    regime: str,
    fill_layers: int = 1,
) -> LayerTime:
    """One layer of ``kind`` at ``tokens`` per attention group: ``full`` = (attention GEMMs, FFN GEMMs,
    cores) of the whole batch, ``half`` = the same of one micro-batch of ⌈tokens/2⌉ (None: not split;
    see :func:`overlaps`). ``fill_layers``: the overlapped layers of one forward (:func:`overlapped_layers`)."""
    serial = _serial(kind, tokens, h, full, scenario, profile, tmod, regime)
    if half is None or scenario.ep_overlap == "off":
        return serial
    th = ceil_div(tokens, 2)
    one = _serial(kind, th, h, half, scenario, profile, tmod, regime)
    xh = one.exchange_s
    compute_h = one.total_s - xh  # the compute stream of one half, its other collectives included
    fill = xh / max(1, fill_layers)
    # DeepEP's high-throughput kernels copy on a2a_ht_sms SMs: the compute beside them runs on the rest
    contention = min(2.0 * compute_h, 2.0 * xh) * _sm_slowdown(kind, th, scenario, profile, tmod)
    exposed = min(2.0 * xh, max(0.0, 2.0 * xh - 2.0 * compute_h - contention) + fill)
    split = LayerTime(
        2.0 * one.attention_gemms_s,
        2.0 * one.ffn_gemms_s,
        2.0 * one.core_s,
        2.0 * one.elem_s,
        2.0 * one.launch_s,
        2.0 * (one.coll_s - xh) + exposed + contention,
        2,
        2.0 * xh,
        2.0 * xh - exposed,
        one.n_other,
        one.n_coll,
        serial.act_bytes,
    )
    if scenario.ep_overlap == "on" or split.total_s < serial.total_s:
        return split
    return serial
