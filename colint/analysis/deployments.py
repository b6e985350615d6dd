"""Deployments a design could be served with (an ESTIMATE's search space): tp and ep within the GPU's
NVLink domain, pp over the common sizes, and the first of them whose HBM footprint fits (CL801 quotes it;
``powers_of_two`` is also the frontier's grid of parallel sizes)."""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple, Optional

from colint.analysis.inventory import layer_counts
from colint.analysis.memory import USABLE_HBM_SHARE
from colint.analysis.moe import attention_dp_groups
from colint.analysis.footprint import activation_floor, footprint_floor, memory_at
from colint.analysis.gemm_rows import SPEC_MEMO_MAX
from colint.analysis.padding import TILE
from colint.util.memo import per_spec
from colint.analysis.workload import analyse

COMMON_PP = (1, 2, 4, 8, 16)  # pipeline stages tried for a deployment that fits, fewest first


def powers_of_two(limit: int) -> list[int]:
    """1, 2, 4, ... up to ``limit``: the parallel sizes the searches try."""
    out, v = [], 1
    while v <= limit:
        out.append(v)
        v *= 2
    return out


def kv_tp_cap(m) -> int:
    """The largest tp at which attention mixer ``m`` keeps its KV heads unreplicated (CL701): its KV heads; MLA's
    latent cache is one head."""
    return 1 if m.kind == "mla" else max(1, m.num_kv_heads or m.num_heads or 1)


def _attention_tp_ok(spec, tp: int) -> bool:
    """tp splits every attention kind's query heads and does not replicate its KV heads (CL701/CL702 accept it)."""
    for k, n in zip(spec.layer_kinds, layer_counts(spec)):
        m = k.mixer
        if not n or m.kind not in ("attention", "mla", "mamba", "linear_attention"):
            continue
        heads = m.num_heads or m.num_v_heads or 1
        if heads % tp:
            return False
        if m.kind in ("attention", "mla") and tp > kv_tp_cap(m):
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


def replica_sequences(scenario, concurrency: Optional[int] = None) -> int:
    """Sequences a replica of ``scenario``'s deployment serves: ``concurrency`` (default the scenario's) per attention
    group times its attention data-parallel groups."""
    per_group = scenario.decode_concurrency if concurrency is None else concurrency
    return per_group * scenario.attention_dp_groups


def per_group_at(total: int, tp: int, ep: int, kvp: int = 1) -> int:
    """Sequences per attention group when ``total`` sequences per replica run at tp/ep/kvp (rounded up)."""
    return -(-total // attention_dp_groups(ep, tp * kvp))


def smallest_fitting(spec, profile, scenario, concurrency: int, limit: int = 64):
    """(tp, ep, pp, memory fit) of the first deployment (fewest GPUs) whose footprint fits the same sequences per
    replica as ``concurrency`` per attention group at the scenario's layout (replica_sequences: a layout with fewer
    attention groups holds more per group), at the scenario's context; None when none of up to ``limit``
    candidates does. Each candidate's footprint comes from memory_at (analyse's memory fields without its time
    model)."""
    base = analyse(spec, profile, scenario)
    # a cheap bound first: the weights spread over a deployment's GPUs (about weights x GPUs now / GPUs there);
    # a deployment whose share is well above usable memory is not analysed
    total_w = base.weight_bytes_per_gpu * max(scenario.tp, scenario.ep) * scenario.pp
    usable = USABLE_HBM_SHARE * profile.memory_gb * 1e9
    # then an exact bound: no GPU holds less than its share of the whole model's weights and KV cache
    # (FootprintFloor); a deployment whose share exceeds usable memory does not fit (margins absorb float rounding)
    floor = footprint_floor(spec, scenario)
    kvp = scenario.kvp
    total = replica_sequences(scenario, concurrency)
    for tp, ep, pp in deployments(spec, profile, scenario)[:limit]:
        if total_w / (max(tp, ep) * pp) > 1.5 * usable:
            continue
        conc = per_group_at(total, tp, ep, kvp)
        act = activation_floor(spec.hidden_size, conc, scenario.prefill_tokens)
        if floor.bytes_at(tp, ep, kvp, pp, conc, act) * (1 - 1e-9) > usable * (1 + 1e-9):
            continue
        sc = replace(scenario, tp=tp, ep=ep, pp=pp, decode_concurrency=conc)
        fit = memory_at(spec, profile, sc, fits_only=True)
        if fit is not None and fit.fits:
            return tp, ep, pp, fit
    return None


def automatic_deployment(spec, profile, scenario, *, layout: bool, concurrency: bool, fixed_tp: Optional[int] = None):
    """The deployment colint checks a model at where the user named none (an ESTIMATE; issue 29): ``scenario`` with
    its layout and concurrency chosen, and a note saying what was chosen and why (None: nothing chosen).

    ``layout``: choose tp/ep/pp (the user named none of them): the fewest GPUs of one NVLink domain (pp = 1) where
    the weights, in the scenario's format, and the KV cache fit (one sequence at least; the scenario's concurrency
    when the user set it); else, beyond one domain, the fewest GPUs with pipeline stages (the note says how many
    domains). ``concurrency``: the user named none, so it is what fits in the memory left at that layout, capped at
    the scenario's. ``fixed_tp``: tp is given (``--tp auto`` decoded by aligned_tp), ep and pp are chosen around it.
    Concurrency counts sequences per attention group (tp GPUs), as everywhere in colint (colint.analysis.scenario).
    """
    want = scenario.decode_concurrency
    domain = max(1, getattr(profile, "domain_size", 8))
    if layout:
        cands = [c for c in deployments(spec, profile, scenario) if fixed_tp is None or c[0] == fixed_tp]
        if fixed_tp is not None and not cands:
            cands = [(fixed_tp, 1, 1)]
        # one NVLink domain first (pp = 1, fewest GPUs first), then pipeline stages over several domains
        ordered = [c for c in cands if c[2] == 1 and max(c[0], c[1]) <= domain] + [c for c in cands if c[2] > 1]
        # no GPU holds less than its share of the weights and of one sequence's KV cache (the scenario's sequences
        # when the user set them) and the residual stream (FootprintFloor): a layout above usable memory by that
        # bound is not priced (margins absorb float rounding)
        floor = footprint_floor(spec, scenario)
        usable = USABLE_HBM_SHARE * profile.memory_gb * 1e9
        act = activation_floor(spec.hidden_size, want, scenario.prefill_tokens)
        kvp, least = scenario.kvp, 1 if concurrency else want
        for tp, ep, pp in ordered:
            if floor.bytes_at(tp, ep, kvp, pp, least, act) * (1 - 1e-9) > usable * (1 + 1e-9):
                continue
            # (fits_only prunes a deployment that cannot hold the scenario's concurrency: only where that is asked)
            fit = memory_at(spec, profile, replace(scenario, tp=tp, ep=ep, pp=pp), fits_only=not concurrency)
            if fit is not None and (fit.fits or (concurrency and fit.max_decode_concurrency >= 1)):
                scenario = replace(scenario, tp=tp, ep=ep, pp=pp)
                break
    fit = memory_at(spec, profile, scenario) if (layout or concurrency) else None
    if fit is not None and concurrency and not fit.fits and fit.max_decode_concurrency >= 1:
        scenario = replace(scenario, decode_concurrency=min(want, fit.max_decode_concurrency))
    if not layout and scenario.decode_concurrency == want:
        return scenario, None
    parts = []
    if layout:
        gpus = max(scenario.tp, scenario.ep) * scenario.pp
        lay = ", ".join(
            [f"tp={scenario.tp}"]
            + ([f"ep={scenario.ep}"] if scenario.ep > 1 else [])
            + ([f"pp={scenario.pp}"] if scenario.pp > 1 else [])
        )
        domains = -(-gpus // domain)
        parts.append(
            f"{lay} ({gpus} GPU{'s' if gpus > 1 else ''}"
            + (f", {domains} {getattr(profile, 'domain_noun', 'NVLink domain')}s of {domain}" if domains > 1 else "")
            + ")"
        )
    seqs, groups = scenario.decode_concurrency, scenario.attention_dp_groups
    parts.append(
        f"{seqs} sequence{'s' if seqs != 1 else ''}"
        + (f" per attention group x {groups}" if groups > 1 else "")
        + f" of {scenario.context:,} tokens"
        + (" fit" if seqs < want else "")
        + (f" (of {want})" if seqs < want else "")
    )
    why = "smallest that fits" if layout else "what fits"
    return scenario, f"auto: {', '.join(parts)} on {profile.name}, {why}"


class AlignedTp(NamedTuple):
    """The largest power-of-two tp that keeps every tensor-parallel width a multiple of ``tile`` (``--tp auto``;
    CL204 reports it and every rule prices it). ``tp`` 0: no tp does, not even 1."""

    tp: int
    limit_field: str  # the width that limits it ("num_heads": the query projection, heads x head_dim)
    widths: dict[str, int]  # each tensor-parallel width, unsplit
    per_width: dict[str, int]  # the largest aligned tp of each width
    vocab_tp: Optional[int]  # the vocabulary's, reported apart (engines pad it)
    kv_cap: Optional[int]  # tp above this replicates the KV cache (KV heads; MLA: 1)
    domain_cap: Optional[int]  # tp above this takes the attention group (tp x kvp) out of the NVLink domain
    capped_by: Optional[str]  # "kv_heads" or "domain" where a cap lowered tp


def tensor_parallel_widths(spec) -> dict[str, int]:
    """The widths tensor parallelism splits, by the field that owns each: the dense FFN (where a layer has one),
    routed and shared expert widths (under expert TP), the query projection (heads x head_dim)."""
    widths: dict[str, int] = {}
    if spec.intermediate_size and any(k.ffn.kind == "dense" for k in spec.layer_kinds):
        widths["intermediate_size"] = spec.intermediate_size
    moe = next((k.ffn for k in spec.layer_kinds if k.ffn.kind == "moe"), None)
    if moe is not None and moe.expert_intermediate_size:
        widths["moe_intermediate_size"] = moe.expert_intermediate_size
    if moe is not None and moe.shared_intermediate_size:
        widths["shared_expert_intermediate_size"] = moe.num_shared_experts * moe.shared_intermediate_size
    if spec.num_heads and spec.head_dim:
        widths["num_heads"] = spec.num_heads * spec.head_dim
    return widths


def aligned_tp(spec, *, domain: Optional[int], kvp: int = 1, max_tp: int = 64, tile: int = TILE) -> Optional[AlignedTp]:
    """``--tp auto`` decoded (an ESTIMATE's input, decided once per model): the largest power-of-two tp keeping each
    width of ``tensor_parallel_widths`` a multiple of ``tile`` per shard (FFN widths split over tp x kvp GPUs, the
    heads over tp), then capped where more tp replicates the KV cache (CL701) or leaves the NVLink domain (CL704).
    None: the model has no tensor-parallel width."""
    widths = tensor_parallel_widths(spec)
    if not widths:
        return None
    best: dict[str, int] = {}
    for f, v in widths.items():
        tp, t = 0, 1
        while t <= max_tp:
            split = t if f == "num_heads" else t * kvp
            ok = v % split == 0 and (v // split) % tile == 0
            if f == "num_heads":
                ok = ok and spec.num_heads % t == 0
            if not ok:
                break
            tp, t = t, t * 2
        best[f] = tp
    vocab_tp = None
    if spec.vocab_size:
        vocab_tp, t = 0, 1
        while t <= max_tp and spec.vocab_size % t == 0 and (spec.vocab_size // t) % tile == 0:
            vocab_tp, t = t, t * 2
    limit_field = min(best, key=lambda f: best[f])
    tp = best[limit_field]
    kv_cap = min(
        (
            kv_tp_cap(k.mixer)
            for k, n in zip(spec.layer_kinds, layer_counts(spec))
            if n and k.mixer.kind in ("attention", "mla")
        ),
        default=None,
    )
    domain_cap = max(1, domain // kvp) if domain else None
    capped_by = None
    for cap, why in ((kv_cap, "kv_heads"), (domain_cap, "domain")):
        if cap and tp > cap:
            tp, capped_by = powers_of_two(cap)[-1], why
    return AlignedTp(tp, limit_field, widths, best, vocab_tp, kv_cap, domain_cap, capped_by)
