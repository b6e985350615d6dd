"""Shared fix helpers for the rule families: nearest aligned values and their parameter cost.

A fix for a dimension offers the nearest value on each side that satisfies a constraint
(a multiple of 128 per shard, say), each with its parameter delta computed by
``colint.analysis.inventory.param_counts`` on a modified spec — exact for every family the
inventory knows, since the layer kinds are rebuilt with the new value.

    below, above = aligned_neighbours(11008, 1024)            # (10240, 11264)
    d = param_delta(spec, "intermediate_size", 11264)           # ParamDelta(total=..., ffn_pct=2.33, ...)

Fields ``with_field`` understands (ModelSpec field names, as in ``spec.sources``):
hidden_size, intermediate_size, moe_intermediate_size, shared_expert_intermediate_size,
vocab_size, num_heads, num_kv_heads, head_dim, num_experts, kv_lora_rank.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from colint.analysis.inventory import kind_ffn_params, kind_params, layer_counts, param_counts
from colint.util.memo import per_spec
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec
from colint.normalize.format_reader import round_up  # noqa: F401 - used by rules
from colint.normalize.resize import divisors, layer_pattern_for, nearest_divisor  # noqa: F401 - used by rules
from colint.util.records import dataclass


def aligned_neighbours(value: int, multiple: int) -> tuple[Optional[int], Optional[int]]:
    """The nearest multiples of ``multiple`` strictly below and strictly above ``value``
    (below is None when it would be 0). An aligned value returns (None, None)."""
    if multiple <= 0 or value % multiple == 0:
        return None, None
    below = value // multiple * multiple
    return (below if below > 0 else None), below + multiple


def _mixer(m: Mixer, field: str, old: Any, new: Any) -> Mixer:
    upd: dict = {}
    if field == "num_heads" and m.num_heads == old:
        upd["num_heads"] = new
    elif field == "num_kv_heads" and m.num_kv_heads == old:
        upd["num_kv_heads"] = new
    elif field == "head_dim" and m.head_dim == old:
        upd["head_dim"] = new
        if m.v_head_dim == old:
            upd["v_head_dim"] = new
    elif field == "kv_lora_rank" and m.kv_lora_rank == old:
        upd["kv_lora_rank"] = new
    return replace(m, **upd) if upd else m


def _ffn(f: FFN, field: str, old: Any, new: Any) -> FFN:
    upd: dict = {}
    if field == "intermediate_size" and f.kind == "dense" and f.intermediate_size == old:
        upd["intermediate_size"] = new
    elif field == "moe_intermediate_size" and f.kind == "moe":
        if f.expert_intermediate_size == old:
            upd["expert_intermediate_size"] = new
        # DeepSeek-style shared experts are num_shared x moe_intermediate_size wide
        if f.num_shared_experts and f.shared_intermediate_size == old:
            upd["shared_intermediate_size"] = new
    elif field == "shared_expert_intermediate_size" and f.kind == "moe" and f.shared_intermediate_size == old:
        upd["shared_intermediate_size"] = new
    elif field == "num_experts" and f.kind == "moe" and f.num_experts == old:
        upd["num_experts"] = new
    return replace(f, **upd) if upd else f


# fields held per layer kind, not on the spec itself (with_field finds their old value in the kinds)
_KIND_FIELDS = ("moe_intermediate_size", "shared_expert_intermediate_size", "num_experts", "kv_lora_rank")


def with_field(spec: ModelSpec, field: str, new: Any, old: Any = None) -> ModelSpec:
    """A copy of ``spec`` with one field changed and the layer kinds rebuilt to match.

    ``old`` defaults to the spec's top-level value of that field; per-kind values equal to it
    change, others (a different first-k-dense width, say) stay."""
    if old is None:
        if field in _KIND_FIELDS:
            old = _kind_value(spec, field)
        else:
            old = getattr(spec, field)
    update: dict = {}
    if hasattr(spec, field) and field not in _KIND_FIELDS:
        update[field] = new
    # hidden_size: per-kind widths stay; head_dim derived from H / heads follows H when it was derived
    update["layer_kinds"] = [_rebuilt_kind(k, spec, field, old, new) for k in spec.layer_kinds]
    return replace(spec, **update)


def _rebuilt_kind(k: LayerKind, spec: ModelSpec, field: str, old: Any, new: Any) -> LayerKind:
    """``k`` with ``field`` changed from ``old`` to ``new`` where its mixer, FFN or norms hold it (``k`` itself where
    nothing changes). A parallel mixer (Falcon-H1's Mamba-2 beside attention) stays as it is: the rules edit
    ``mixer``."""
    mixer, ffn = _mixer(k.mixer, field, old, new), _ffn(k.ffn, field, old, new)
    other = _other_params(k, spec, field, old, new)
    if mixer is k.mixer and ffn is k.ffn and other == k.other_params:
        return k
    return replace(k, mixer=mixer, ffn=ffn, other_params=other)


def _other_params(k: LayerKind, spec: ModelSpec, field: str, old: Any, new: Any) -> int:
    """Norm weights scale with H (an estimate: every H-wide norm vector follows H)."""
    if field == "hidden_size" and old:
        return int(round(k.other_params * new / old))
    return k.other_params


def _kind_value(spec: ModelSpec, field: str) -> Any:
    for k in spec.layer_kinds:
        f, m = k.ffn, k.mixer
        if field == "moe_intermediate_size" and f.kind == "moe":
            return f.expert_intermediate_size
        if field == "shared_expert_intermediate_size" and f.kind == "moe" and f.shared_intermediate_size:
            return f.shared_intermediate_size
        if field == "num_experts" and f.kind == "moe":
            return f.num_experts
        if field == "kv_lora_rank" and m.kv_lora_rank:
            return m.kv_lora_rank
    return None


def ffn_params(spec: ModelSpec) -> int:
    """Parameters of the FFN / MoE weight GEMMs (all layers, routed experts counted E times): per layer
    kind, its layers x one layer's (memoised by value, so a fix's variant recounts only the kinds it changes)."""
    h = spec.hidden_size
    return sum(n * kind_ffn_params(k, h) for k, n in zip(spec.layer_kinds, layer_counts(spec)) if n)


@dataclass(frozen=True)
class ParamDelta:
    field: str
    old: Any
    new: Any
    total: int  # parameters added (negative: removed), whole model
    total_pct: float  # of the model's parameters
    ffn_pct: Optional[float]  # of the FFN/MoE parameters (None when the model has none)

    def label(self, scope: str = "total") -> str:
        """'+2.3% FFN params' / '-7.0% params' (one decimal, signed)."""
        if scope == "ffn" and self.ffn_pct is not None:
            return f"{self.ffn_pct:+.1f}% FFN params"
        return f"{self.total_pct:+.1f}% params"


# The counts of a spec every fix of it starts from, by spec identity (the spec, unhashable, is kept alive beside
# its entry; oldest entries go first): a rule prices several fixes of one spec.
_COUNTS_MEMO: dict[int, tuple[ModelSpec, int, int]] = {}  # id(spec) -> (spec, total params, FFN params)
_COUNTS_MEMO_MAX = 256


def _counts(spec: ModelSpec) -> tuple[int, int]:
    """(param_counts(spec).total, ffn_params(spec)), once per spec object."""
    return per_spec(
        _COUNTS_MEMO, id(spec), spec, lambda: (param_counts(spec).total, ffn_params(spec)), _COUNTS_MEMO_MAX
    )


def param_delta(spec: ModelSpec, field: str, new: Any, old: Any = None) -> ParamDelta:
    """Parameter change of setting ``field`` to ``new`` (exact: param_counts on the rebuilt spec)."""
    (before, f_before), (d_total, d_ffn) = _counts(spec), _kinds_delta(spec, field, new, old)
    old_val = (
        old if old is not None else (getattr(spec, field, None) if hasattr(spec, field) else _kind_value(spec, field))
    )
    return ParamDelta(
        field,
        old_val,
        new,
        d_total,
        100.0 * d_total / before if before else 0.0,
        100.0 * d_ffn / f_before if f_before else None,
    )


def _kinds_delta(spec: ModelSpec, field: str, new: Any, old: Any) -> tuple[int, int]:
    """(total, FFN) parameters that ``with_field(spec, field, new, old)`` adds (integers). A field other than
    hidden_size and vocab_size changes the layer kinds alone (param_counts reads nothing else it sets), so the
    delta is the rebuilt kinds' minus the old ones', layers times one layer's: exactly param_counts' difference,
    without rebuilding and recounting the spec."""
    if field in ("hidden_size", "vocab_size"):
        changed = with_field(spec, field, new, old)
        before, f_before = _counts(spec)
        return param_counts(changed).total - before, ffn_params(changed) - f_before
    if old is None:  # as with_field resolves it
        old = _kind_value(spec, field) if field in _KIND_FIELDS else getattr(spec, field)
    h = spec.hidden_size
    d_total = d_ffn = 0
    for k, n in zip(spec.layer_kinds, layer_counts(spec)):
        rebuilt = _rebuilt_kind(k, spec, field, old, new)
        if not n or rebuilt is k:
            continue
        d_total += n * (kind_params(rebuilt, h)[0] - kind_params(k, h)[0])
        d_ffn += n * (kind_ffn_params(rebuilt, h) - kind_ffn_params(k, h))
    return d_total, d_ffn


def edit_key(spec: ModelSpec, field: str, fallback: Optional[str] = None) -> str:
    """The file key a fix edits for ``field`` (the adapter's source key; else ``fallback`` or the field)."""
    src = spec.sources.get(field)
    if src is not None:
        return src.key
    return spec.key_prefix + (fallback or field)


def with_num_layers(spec: ModelSpec, n: int) -> ModelSpec:
    """A copy of ``spec`` with ``n`` layers (pattern resized by ``layer_pattern_for``)."""
    return replace(spec, num_layers=n, layer_pattern=layer_pattern_for(spec.layer_pattern, n))


def param_pct_change(spec: ModelSpec, changed: ModelSpec) -> float:
    """Parameter change (% of ``spec``'s total) from ``spec`` to ``changed`` (exact, via param_counts)."""
    before = _counts(spec)[0]
    after = param_counts(changed).total
    return 100.0 * (after - before) / before if before else 0.0


def param_delta_layers(spec: ModelSpec, n: int) -> float:
    """Parameter change (% of the total) of resizing the stack to ``n`` layers."""
    return param_pct_change(spec, with_num_layers(spec, n))
