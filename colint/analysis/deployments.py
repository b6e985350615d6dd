"""Deployments a design could be served with (an ESTIMATE's search space): tp and ep within the GPU's
NVLink domain, pp over the common sizes, and the first of them whose HBM footprint fits (CL801 quotes it;
``powers_of_two`` is also the frontier's grid of parallel sizes)."""

from __future__ import annotations

from dataclasses import replace

from colint.analysis.inventory import layer_counts
from colint.analysis.memory import USABLE_HBM_SHARE
from colint.analysis.footprint import activation_floor, footprint_floor, memory_at
from colint.analysis.gemm_rows import SPEC_MEMO_MAX
from colint.memo import per_spec
from colint.analysis.workload import analyse

COMMON_PP = (1, 2, 4, 8, 16)  # pipeline stages tried for a deployment that fits, fewest first


def powers_of_two(limit: int) -> list[int]:
    """1, 2, 4, ... up to ``limit``: the parallel sizes the searches try."""
    out, v = [], 1
    while v <= limit:
        out.append(v)
        v *= 2
    return out


def _attention_tp_ok(spec, tp: int) -> bool:
    """tp splits every attention kind's query heads and does not replicate its KV heads (CL701/CL702 accept it)."""
    for k, n in zip(spec.layer_kinds, layer_counts(spec)):
        m = k.mixer
        if not n or m.kind not in ("attention", "mla", "mamba", "linear_attention"):
            continue
        heads = m.num_heads or m.num_v_heads or 1
        if heads % tp:
            return False
        if m.kind == "mla" and tp > 1:
            return False
        if m.kind == "attention" and tp > max(1, m.num_kv_heads or heads):
            return False
    return True


# deployments() memo: (id(spec), domain size) -> (spec, candidates): the same list for every search of one spec
_DEPLOYMENTS_MEMO: dict = {}


def deployments(spec, profile, scenario):
    """Candidate deployments (tp, ep, pp) in order of GPUs per replica, then fewer pipeline stages: tp and ep
    within the profile's NVLink domain, tp that CL701/CL702 accept; MoE models spread experts with ep and run
    attention data-parallel (tp=1) or with tp. (Read-only: the list is memoised per spec object and domain.)"""
    domain = max(1, getattr(profile, "domain_size", 8))
    return per_spec(_DEPLOYMENTS_MEMO, (id(spec), domain), spec, lambda: _deployments(spec, domain), SPEC_MEMO_MAX)


def _deployments(spec, dom: int) -> list[tuple[int, int, int]]:
    moe = next((k.ffn for k in spec.layer_kinds if k.ffn.kind == "moe" and k.ffn.num_experts), None)
    out = []
    for tp in powers_of_two(dom):
        if not _attention_tp_ok(spec, tp):
            continue
        eps = [1] if moe is None else [e for e in powers_of_two(dom) if e >= tp and e <= moe.num_experts] or [1]
        for ep in eps:
            for pp in COMMON_PP:
                if pp > spec.num_layers:
                    continue
                out.append((max(tp, ep) * pp, pp, tp, ep))
    return [(tp, ep, pp) for _, pp, tp, ep in sorted(set(out))]


def smallest_fitting(spec, profile, scenario, concurrency: int, limit: int = 64):
    """(tp, ep, pp, memory fit) of the first deployment (fewest GPUs) whose footprint fits ``concurrency`` sequences
    per attention group at the scenario's context; None when none of up to ``limit`` candidates does. Each
    candidate's footprint comes from memory_at (analyse's memory fields without its time model)."""
    base = analyse(spec, profile, scenario)
    # a cheap bound first: the weights spread over a deployment's GPUs (about weights x GPUs now / GPUs there);
    # a deployment whose share is well above usable memory is not analysed
    total_w = base.weight_bytes_per_gpu * max(scenario.tp, scenario.ep) * scenario.pp
    usable = USABLE_HBM_SHARE * profile.memory_gb * 1e9
    # then an exact bound: no GPU holds less than its share of the whole model's weights and KV cache
    # (FootprintFloor); a deployment whose share exceeds usable memory does not fit (margins absorb float rounding)
    floor = footprint_floor(spec, scenario)
    kvp = scenario.kvp
    act = activation_floor(spec.hidden_size, concurrency, scenario.prefill_tokens)
    for tp, ep, pp in deployments(spec, profile, scenario)[:limit]:
        if total_w / (max(tp, ep) * pp) > 1.5 * usable:
            continue
        if floor.bytes_at(tp, ep, kvp, pp, concurrency, act) * (1 - 1e-9) > usable * (1 + 1e-9):
            continue
        sc = replace(scenario, tp=tp, ep=ep, pp=pp, decode_concurrency=concurrency)
        fit = memory_at(spec, profile, sc, fits_only=True)
        if fit is not None and fit.fits:
            return tp, ep, pp, fit
    return None
