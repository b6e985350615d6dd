"""The wider/shallower what-if of guideline 3: the same design at another width and depth with the same
parameter count, its latency-scenario workload and its per-layer fixed decode cost. The width-depth
rule (CL301) judges these estimates; it does not compute them.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Optional

from colint.analysis.inventory import layer_counts, param_counts
from colint.analysis.padding import TILE
from colint.analysis.scenario import fit_to_model, make_scenario
from colint.analysis.workload import analyse, decode_step
from colint.normalize.resize import layer_pattern_for, nearest_divisor
from colint.normalize.weights import kind_params
from colint.util.records import dataclass


ALIGN = TILE  # widths of the alternative are multiples of one 128-wide tile (guideline 2)


def equivalent_layers(spec) -> float:
    """Transformer-layer equivalents: a block with only a token mixer or only an FFN (Nemotron-H,
    no-op blocks) counts as half a layer. Per kind, its layers times its halves: sums of halves are exact in
    floating point, so the figure is the layer-by-layer sum's."""
    counts = [0] * len(spec.layer_kinds)
    for i in spec.layer_pattern[: spec.num_layers]:
        counts[i] += 1
    n = 0.0
    for k, c in zip(spec.layer_kinds, counts):
        if c:
            n += c * (0.5 * (k.mixer.kind != "none") + 0.5 * (k.ffn.kind != "none"))
    return n or float(spec.num_layers)


def latency_workload(spec, workload):
    """The latency-scenario workload of ``spec`` at ``workload``'s GPU, format and parallelism."""
    sc = workload.scenario
    if sc.name == "latency":
        return workload
    dtype = sc.weights if sc.weights == sc.activations else sc.gemm_format
    lat = fit_to_model(
        make_scenario(
            "latency", dtype=dtype, tp=sc.tp, ep=sc.ep, pp=sc.pp, kv_cache=sc.kv_cache, out_dtype=sc.outputs, gpu=sc.gpu
        ),
        spec,
    )
    return analyse(spec, workload.profile, lat)


def decode_step_s(spec, profile, scenario) -> float:
    """Estimated decode step time of ``spec`` (an alternative design) in ``scenario``."""
    return decode_step(spec, profile, scenario).estimate_s


def fixed_decode_s(spec, w) -> float:
    """Per-layer fixed cost of one decode step: launches of non-GEMM kernels, collectives, and the
    fixed floor of every GEMM and attention kernel in the layers (the LM head excluded)."""
    step = w.steps["decode"]
    gemm_kernels = 0
    for kind, n in zip(spec.layer_kinds, layer_counts(spec)):
        if n:
            gemm_kernels += n * sum(1 for r in w.gemms["decode"] if r.kind == kind.name)
    cores = sum(a.layers for a in w.attention["decode"])
    return step.launch_s + step.comm_s + (gemm_kernels + cores) * w.kernel_floor_s


def _r128(x: float) -> int:
    return max(ALIGN, int(round(x / ALIGN)) * ALIGN)


def scaled_spec(spec, hidden: int, layers: int):
    """The same design at width ``hidden`` and depth ``layers``: every width scales with H (FFN and
    expert widths rounded to 128; attention keeps its head_dim, so heads = H/head_dim, KV heads the
    nearest divisor of that), the layer pattern keeps its first-k prefix and period."""
    r = hidden / spec.hidden_size
    kinds = []
    for k in spec.layer_kinds:
        m, f = k.mixer, k.ffn
        mu: dict = {}
        if m.kind == "attention" and m.num_heads and m.head_dim:
            kv = m.num_kv_heads or m.num_heads
            if m.num_heads * m.head_dim == spec.hidden_size and hidden % m.head_dim == 0:
                heads = hidden // m.head_dim  # head count tied to H: keep head_dim
                kv = nearest_divisor(heads, kv)
            else:  # head count free: scale it, keep the KV heads and whole groups
                heads = max(kv, int(round(m.num_heads * r / kv)) * kv)
            mu = {"num_heads": heads, "num_kv_heads": kv}
        elif m.kind == "mla" and m.num_heads:
            mu = {"num_heads": max(1, int(round(m.num_heads * r)))}
        elif m.kind == "mamba" and m.d_inner:
            d = _r128(m.d_inner * r)
            mu = {"d_inner": d}
            if m.num_heads and m.d_inner % m.num_heads == 0 and d % (m.d_inner // m.num_heads) == 0:
                mu["num_heads"] = d // (m.d_inner // m.num_heads)
        elif m.kind == "linear_attention" and m.num_v_heads:
            mu = {
                "num_v_heads": max(1, int(round(m.num_v_heads * r))),
                "num_k_heads": max(1, int(round((m.num_k_heads or 1) * r))),
            }
        fu: dict = {}
        if f.kind == "dense" and f.intermediate_size:
            fu["intermediate_size"] = _r128(f.intermediate_size * r)
        elif f.kind == "moe":
            fu["expert_intermediate_size"] = _r128(f.expert_intermediate_size * r)
            if f.shared_intermediate_size:
                fu["shared_intermediate_size"] = _r128(f.shared_intermediate_size * r)
            if f.latent_size:
                fu["latent_size"] = _r128(f.latent_size * r)
        kinds.append(
            replace(k, mixer=replace(m, **mu), ffn=replace(f, **fu), other_params=int(round(k.other_params * r)))
        )
    upd = {
        "hidden_size": hidden,
        "num_layers": layers,
        "layer_kinds": kinds,
        "layer_pattern": layer_pattern_for(spec.layer_pattern, layers),
    }
    if spec.intermediate_size:
        upd["intermediate_size"] = _r128(spec.intermediate_size * r)
    k0 = next((k for k in kinds if k.mixer.kind == "attention"), None)
    if k0 is not None:
        upd["num_heads"], upd["num_kv_heads"] = k0.mixer.num_heads, k0.mixer.num_kv_heads
    return replace(spec, **upd)


def wider_alternative(spec, target_layers: int, tol: float):
    """(alt_spec, params) at ``target_layers`` (or the nearest depth below L that allows one) with
    the same parameters within ``tol`` and hidden size a multiple of 128; None if none."""
    total = param_counts(spec).total
    L, H = spec.num_layers, spec.hidden_size
    params = _ScaledParams(spec)
    # the 64 depths nearest the target (all of them up to L = 129): a typo'd 7,000-layer config must not
    # make this search build thousands of scaled specs
    order = sorted(range(max(1, L // 2), L), key=lambda n: abs(n - target_layers))[:64]
    for n in order:
        guess = H * math.sqrt(L / n)
        best = None
        for h in {_r128(guess) + d * ALIGN for d in range(-3, 4)}:
            if h <= H:
                continue
            p, kv_kept = params.at(h, n)
            err = abs(p - total) / total
            score = (not kv_kept, err)
            if err <= tol and (best is None or score < best[2]):
                best = (h, p, score)
        if best:
            return scaled_spec(spec, best[0], n), best[1]
    return None


def target_layers(num_layers: int, aspect_ratio: float, target_aspect_ratio: float) -> int:
    """The depth that brings H/L to ``target_aspect_ratio`` at equal parameters (H grows as the square root of the
    layers given up, so L scales by the aspect ratios' 2/3 power), between half the layers and one layer fewer."""
    L = num_layers
    return max(math.ceil(L / 2), min(L - 1, round(L * (aspect_ratio / target_aspect_ratio) ** (2 / 3))))


@dataclass(frozen=True)
class WiderWhatIf:
    """An equal-parameter wider/shallower alternative and its one-sequence decode step (estimates)."""

    spec: Any  # the alternative's ModelSpec
    params: int
    itl_s: float  # its decode step in the latency scenario
    gain_share: float  # 1 - its ITL / the design's: the share of the decode step it saves (negative: slower)


def wider_what_if(spec, profile, workload, target_aspect_ratio: float, tol: float) -> Optional[WiderWhatIf]:
    """The equal-parameter alternative (within ``tol``) at the depth that brings H/L to ``target_aspect_ratio``,
    priced on ``profile`` in ``workload``'s scenario (the latency one, ``latency_workload``); None where no width
    fits."""
    aspect = spec.hidden_size / equivalent_layers(spec)
    alt = wider_alternative(spec, target_layers(spec.num_layers, aspect, target_aspect_ratio), tol)
    if alt is None:
        return None
    alt_spec, alt_params = alt
    alt_itl = decode_step_s(alt_spec, profile, workload.scenario)
    return WiderWhatIf(alt_spec, alt_params, alt_itl, 1.0 - alt_itl / workload.steps["decode"].estimate_s)


class _ScaledParams:
    """``param_counts(scaled_spec(spec, h, n)).total`` and whether the KV heads are kept, for the search.
    A scaled spec's layer kinds (and embedding, LM head, extras) depend on the width h alone; the depth
    only changes how many layers each kind has. So each width is built and counted once, and another
    depth adds (count change) x (that kind's parameters, spec.weights.kind_params): integer sums, the exact
    figure param_counts gives (tests/analysis/test_memo.py checks it)."""

    def __init__(self, spec):
        self.spec = spec
        self.widths: dict[int, tuple] = {}  # h -> (params, layer counts, kinds, kind params, kv kept)

    def at(self, h: int, n: int) -> tuple[int, bool]:
        got = self.widths.get(h)
        if got is None:
            alt = scaled_spec(self.spec, h, n)
            kv_kept = all(
                a.mixer.num_kv_heads == b.mixer.num_kv_heads for a, b in zip(self.spec.layer_kinds, alt.layer_kinds)
            )
            got = (param_counts(alt).total, n, alt.layer_counts(), alt.layer_kinds, {}, kv_kept)
            self.widths[h] = got
        p0, n0, counts0, kinds, kind_total, kv_kept = got
        if n == n0:
            return p0, kv_kept
        counts = [0] * len(kinds)
        for i in layer_pattern_for(self.spec.layer_pattern, n):
            counts[i] += 1
        p = p0
        for i, (c, c0) in enumerate(zip(counts, counts0)):
            if c != c0:
                if i not in kind_total:
                    kind_total[i] = kind_params(kinds[i], h)[0]
                p += (c - c0) * kind_total[i]
        return p, kv_kept
