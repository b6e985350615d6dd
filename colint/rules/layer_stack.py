"""A layer stack as pipeline stages see it, for the CL6xx layer-pattern rules (colint.rules.layer_pattern):
per-layer prefill FLOPs and weight bytes per GPU with the embedding on the first stage and the LM head
and MTP layers on the last (:class:`StackCosts`, whose best splits are colint.analysis.pipeline's), the
pattern the stack repeats (:func:`period`), what makes it irregular, and Megatron-Core's layout string for
given stage sizes.
"""

from __future__ import annotations

from dataclasses import fields
from functools import lru_cache

from colint.analysis.inventory import layer_counts
from colint.analysis.workload import LayerCost
from colint.analysis.pipeline import Partition, best_partition, best_partition_two, crossing_split, evaluate
from colint.rules.fix_builders import layer_pattern_for
from colint.util.records import dataclass


@dataclass
class StackCosts:
    flops: list[float]
    weights: list[float]
    first_flops: float
    first_weights: float
    last_flops: float
    last_weights: float
    mtp: int

    def best(self, pp: int) -> Partition | None:
        return best_partition_two(
            self.flops, self.weights, pp, self.first_flops, self.last_flops, self.first_weights, self.last_weights
        )

    def may_idle(self, pp: int, share: float) -> bool:
        """False when ``best(pp)`` surely idles less than ``share`` (or is None), from the FLOPs-optimal split
        alone: ``best`` only re-picks among splits whose largest FLOPs stage stays within that optimum
        (best_partition's tolerance, 1e-9), so its idle share cannot exceed this bound (margins 1e-6).
        Spares the weight-balanced second search for a split no finding reports, and the exact program too where
        a split cut at the running sum's crossings (pipeline.crossing_split, a feasible split: its largest stage
        bounds the optimum's; margin 1e-7 over best_partition's tolerance) already shows it idles less."""
        cut = crossing_split(self.flops, pp, self.first_flops, self.last_flops)
        if cut is None:
            return False
        hi = cut.max * (1 + 1e-7) + 1e-7
        if 1.0 - cut.mean * (1 - 1e-9) * (1 - 1e-6) / (hi * (1 + 1e-6) + 1e-6) < share:
            return False
        first = best_partition(self.flops, pp, self.first_flops, self.last_flops)
        if first is None:
            return False
        hi = first.max * (1 + 1e-6) + 1e-6
        return 1.0 - first.mean * (1 - 1e-6) / hi >= share

    def best_weights(self, pp: int) -> Partition | None:
        return best_partition(self.weights, pp, self.first_weights, self.last_weights)

    def flops_of(self, sizes) -> Partition:
        return evaluate(self.flops, sizes, self.first_flops, self.last_flops)

    def weights_of(self, sizes) -> Partition:
        return evaluate(self.weights, sizes, self.first_weights, self.last_weights)

    def resized(self, pattern: list[int], n: int) -> StackCosts:
        """The same stack at ``n`` layers: per-layer costs depend on the layer kind only, so the
        cost vectors follow the resized pattern (first-k prefix and period kept)."""
        by_kind: dict[int, tuple[float, float]] = {}
        for k, f, w in zip(pattern, self.flops, self.weights):
            by_kind.setdefault(k, (f, w))
        new = layer_pattern_for(pattern, n)
        return StackCosts(
            [by_kind[k][0] for k in new],
            [by_kind[k][1] for k in new],
            self.first_flops,
            self.first_weights,
            self.last_flops,
            self.last_weights,
            self.mtp,
        )


_KIND_COST_FIELDS = [f.name for f in fields(LayerCost)][2:]  # a w.kind_costs entry: LayerCost's after index, kind
_PARAMS, _WEIGHTS, _FLOPS = (_KIND_COST_FIELDS.index(n) for n in ("params", "weight_bytes", "prefill_flops"))


def stack_costs(spec, w) -> StackCosts:
    """Per-layer prefill FLOPs and weight bytes per GPU; the embedding on the first stage, the LM head
    and the MTP layers on the last (MTP estimated as the last layer's cost scaled by MTP params)."""
    stack = w.layer_stats()  # w.layer_costs' fields after index and kind, without a LayerCost per layer
    flops = [st[_FLOPS] for st in stack]
    weights = [st[_WEIGHTS] for st in stack]
    last_f = w.lm_head_cost.prefill_flops
    last_w = w.lm_head_cost.weight_bytes
    if spec.mtp_layers and stack:
        ref = stack[-1]
        params = ref[_PARAMS]
        scale = spec.mtp_params / params if params and spec.mtp_params else float(spec.mtp_layers)
        last_f += ref[_FLOPS] * spec.mtp_layers
        last_w += ref[_WEIGHTS] * scale
    return StackCosts(
        flops, weights, w.embedding_cost.prefill_flops, w.embedding_cost.weight_bytes, last_f, last_w, spec.mtp_layers
    )


MAX_PERIOD = 8  # a repeating unit longer than this is not a "pattern" a stage split can follow


def period(pattern: list[int]) -> tuple[int, int | None]:
    """(prefix, period): the shortest prefix after which the layer pattern repeats with a period of
    at most MAX_PERIOD layers (DeepSeek first-3-dense: (3, 1); Jamba: (0, 8); uniform: (0, 1));
    (0, None) when no such pattern exists (Nemotron-H, Nemotron-NAS block lists).

    Candidates are prefixes f up to max(1, n // 2) and periods p up to min(MAX_PERIOD, n - f); the answer
    is the smallest f, then the smallest p. pattern[f:] has period p exactly when no i >= f has
    pattern[i] != pattern[i + p], i.e. when f is past the last such mismatch: one backward scan per p,
    O(n x MAX_PERIOD) in all (the scan of every f and p was quadratic on long near-periodic stacks); memoised
    on the pattern's values (the files of one family share it, and every check asks)."""
    return _period(tuple(pattern))


@lru_cache(maxsize=1024)
def _period(pattern: tuple[int, ...]) -> tuple[int, int | None]:
    n = len(pattern)
    max_prefix = max(1, n // 2)
    best: tuple[int, int] | None = None
    for p in range(1, min(MAX_PERIOD, n) + 1):
        last_bad = next((i for i in range(n - p - 1, -1, -1) if pattern[i] != pattern[i + p]), -1)
        f = last_bad + 1  # the shortest prefix after which period p holds (f <= n - p: p fits the rest)
        if f <= max_prefix and (best is None or f < best[0]):
            best = (f, p)  # p rises: a tie in f keeps the smaller p found first
    return best if best is not None else (0, None)


def irregularities(spec) -> dict[str, str]:
    """What makes the stack irregular: tag -> words. Tags: prefix, period, irregular, noop, hybrid, mtp."""
    out: dict[str, str] = {}
    used = [k for k, n in zip(spec.layer_kinds, layer_counts(spec)) if n]
    prefix, per = period(spec.layer_pattern)
    if per is None:
        out["irregular"] = f"an irregular sequence of {len(used)} layer kinds"
    else:
        if prefix:
            first = spec.kind_of(0)
            what = first.ffn.kind if first.ffn.kind not in ("none",) else first.mixer.kind
            out["prefix"] = f"first {prefix} layer{'s' if prefix > 1 else ''} {what}"
        if per > 1:
            out["period"] = f"a {per}-layer pattern"
    whole = [k for k in used if k.mixer.kind != "none" and k.ffn.kind != "none"]
    if whole and any(k.mixer.kind == "none" or k.ffn.kind == "none" for k in used):
        out["noop"] = "no-op blocks"
    mixers = {k.mixer.kind for k in used} - {"none"}
    if len(mixers) > 1:
        out["hybrid"] = "hybrid " + "/".join(sorted(mixers))
    if spec.mtp_layers:
        out["mtp"] = f"{spec.mtp_layers} MTP layer{'s' if spec.mtp_layers > 1 else ''}"
    return out


STRUCTURAL = ("prefix", "irregular", "noop", "mtp")  # irregular parts no choice of pp makes regular


def megatron_layout(sizes, mtp: int) -> str:
    """Megatron-Core --pipeline-model-parallel-layout for these stage sizes: E embedding, t decoder
    layer, m MTP layer, L loss; stages split by '|', 't*3' repeats, commas cosmetic."""
    stages = []
    for j, n in enumerate(sizes):
        parts = (["E"] if j == 0 else []) + ([f"t*{n}" if n > 1 else "t"] if n else [])
        if j == len(sizes) - 1:
            parts += ["m"] * mtp + ["L"]
        stages.append(",".join(parts))
    return "|".join(stages)
