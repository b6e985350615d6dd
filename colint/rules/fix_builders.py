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

from dataclasses import dataclass, replace
from typing import Any, Optional

from colint.analysis.inventory import kind_ffn_params, param_counts
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec
from colint.normalize.resize import divisors, layer_pattern_for, nearest_divisor  # noqa: F401 - used by rules


def aligned_neighbours(value: int, multiple: int) -> tuple[Optional[int], Optional[int]]:
    """The nearest multiples of ``multiple`` strictly below and strictly above ``value``
    (below is None when it would be 0). An aligned value returns (None, None)."""
    if multiple <= 0 or value % multiple == 0:
        return None, None
    below = value // multiple * multiple
    return (below if below > 0 else None), below + multiple


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


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


def with_field(spec: ModelSpec, field: str, new: Any, old: Any = None) -> ModelSpec:
    """A copy of ``spec`` with one field changed and the layer kinds rebuilt to match.

    ``old`` defaults to the spec's top-level value of that field; per-kind values equal to it
    change, others (a different first-k-dense width, say) stay."""
    top = {
        "moe_intermediate_size": None,
        "shared_expert_intermediate_size": None,
        "num_experts": None,
        "kv_lora_rank": None,
    }
    if old is None:
        if field in top:
            old = _kind_value(spec, field)
        else:
            old = getattr(spec, field)
    update: dict = {}
    if hasattr(spec, field) and field not in top:
        update[field] = new
    # hidden_size: per-kind widths stay; head_dim derived from H / heads follows H when it was derived
    kinds = [
        LayerKind(
            name=k.name,
            mixer=_mixer(k.mixer, field, old, new),
            ffn=_ffn(k.ffn, field, old, new),
            other_params=_other_params(k, spec, field, old, new),
        )
        for k in spec.layer_kinds
    ]
    update["layer_kinds"] = kinds
    return replace(spec, **update)


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
    return sum(n * kind_ffn_params(k, h) for k, n in zip(spec.layer_kinds, spec.layer_counts()) if n)


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


def param_delta(spec: ModelSpec, field: str, new: Any, old: Any = None) -> ParamDelta:
    """Parameter change of setting ``field`` to ``new`` (exact, via param_counts on the rebuilt spec)."""
    changed = with_field(spec, field, new, old)
    before, after = param_counts(spec).total, param_counts(changed).total
    f_before, f_after = ffn_params(spec), ffn_params(changed)
    old_val = (
        old if old is not None else (getattr(spec, field, None) if hasattr(spec, field) else _kind_value(spec, field))
    )
    return ParamDelta(
        field,
        old_val,
        new,
        after - before,
        100.0 * (after - before) / before if before else 0.0,
        100.0 * (f_after - f_before) / f_before if f_before else None,
    )


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
    before = param_counts(spec).total
    after = param_counts(changed).total
    return 100.0 * (after - before) / before if before else 0.0


def param_delta_layers(spec: ModelSpec, n: int) -> float:
    """Parameter change (% of the total) of resizing the stack to ``n`` layers."""
    return param_pct_change(spec, with_num_layers(spec, n))
