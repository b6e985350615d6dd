"""What crossing the NVLink domain costs a deployment (an ESTIMATE): the share of each step that the
collectives of tp or ep lose when their group is larger than the profile's scale-up domain, against
the same collectives priced as if the domain were large enough (colint.analysis.collectives prices
both). The rules CL504 (ep) and CL704 (tp) quote it. The EP exchange's loss is the step's own: analyse
at this profile against analyse with the domain widened to ep, so an exchange that two micro-batches
hide behind compute (colint.analysis.overlap) loses only what stays exposed. The widened profile differs in
its domain alone, which only the collectives read: the wide step re-prices each layer from the workload's own
GEMM rows and attention cores (workload.steps_on_domain), the figures of a second analyse at a fraction of
its cost."""

from __future__ import annotations

from dataclasses import replace

from colint.analysis.inventory import layer_counts
from colint.analysis.step_extras import (
    ep_all_to_all,
    ffn_exchange_s,
    kvp_exchange_s,
    tp_all_reduce_s,
)
from colint.analysis.workload import steps_on_domain
from colint.util.memo import keep


# the counterfactual profiles (profile, its widened copy) by (id(profile), domain size): a Profile validates
# itself when built, which costs more than the pricing, and every re-check of an EP or TP width asks again
_WIDE: dict[tuple[int, int], tuple] = {}


def _widened(p, size: int):
    """``p`` with a scale-up domain of ``size`` GPUs (``p`` itself when it is that large already)."""
    if size <= p.domain_size:
        return p
    hit = _WIDE.get((id(p), size))
    if hit is None or hit[0] is not p:
        # a run meets a few GPUs x the EP/TP widths it tries: 64 entries hold them
        hit = keep(_WIDE, (id(p), size), (p, replace(p, domain_size=size)), 64)
    return hit[1]


def scale_out_cost_pct(w, kind: str) -> dict[str, float]:
    """Per regime, the estimated share (%) of workload ``w``'s step that ``kind``'s collectives ("ep": the
    MoE dispatch/combine, "tp": the two all-reduces per layer, over the attention group's tp x kvp GPUs as the
    step prices them, and KV parallelism's decode exchange) lose by crossing the NVLink domain."""
    sc, spec, p = w.scenario, w.spec, w.profile
    group = sc.group_gpus  # tp x kvp: the all-reduces after o_proj and the FFN span them (Helix)
    if kind == "ep" and sc.ep > p.domain_size >= group:
        # the step at a domain wide enough for ep (tp fits already): what the exchange loses, hidden part excluded
        at_wide = steps_on_domain(w, _widened(p, sc.ep))
        return {
            r: 100.0 * max(0.0, w.steps[r].estimate_s - at_wide[r].estimate_s) / w.steps[r].estimate_s
            if w.steps[r].estimate_s
            else 0.0
            for r in ("decode", "prefill")
        }
    wide = _widened(p, max(group, sc.ep))  # the domain large enough
    out = {}
    for regime in ("decode", "prefill"):
        tokens = sc.decode_concurrency if regime == "decode" else sc.prefill_tokens
        lost = 0.0
        for k, n in zip(spec.layer_kinds, layer_counts(spec)):
            if not n:
                continue
            if kind == "ep" and k.ffn.kind == "moe" and ep_all_to_all(sc):
                args = (k.ffn, tokens / group, spec.hidden_size, sc)
                lost += n * (ffn_exchange_s(*args, p) - ffn_exchange_s(*args, wide))
            elif kind == "tp" and group > 1:
                lost += (
                    n
                    * 2
                    * (
                        tp_all_reduce_s(tokens, spec.hidden_size, group, p)
                        - tp_all_reduce_s(tokens, spec.hidden_size, group, wide)
                    )
                )
                if regime == "decode":  # KV parallelism's exchange (0 at kvp = 1), as the step prices it
                    lost += n * (kvp_exchange_s(k, tokens, sc, p) - kvp_exchange_s(k, tokens, sc, wide))
        step = w.steps[regime].estimate_s
        out[regime] = 100.0 * lost / step if step else 0.0
    return out
