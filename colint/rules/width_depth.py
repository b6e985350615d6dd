"""CL3xx width vs depth (guideline 3): for a fixed parameter budget, wider and shallower decodes
faster — fewer sequential layers, so fewer per-layer fixed costs (kernel launches, GEMM floors,
collectives) on the critical path, and wider GEMMs with more weight reuse.

The rule reads the latency scenario (one sequence): that is where per-layer fixed costs show.
When the user checks another scenario, it builds the latency workload itself. Below about 1B
parameters deep-and-thin is a known good choice for quality (MobileLLM), so it only advises.
"""

from __future__ import annotations

import math

from colint.rules._fixes import edit_key, layer_pattern_for, nearest_divisor
from colint.rules.base import Context, RuleDoc, edit, fix, rule

FAMILY = "width-depth"
SOURCES = (
    "NVIDIA blog 'AI Model Co-Design', Guideline 3 (wider models: higher arithmetic intensity, shorter critical path)",
    "Kaplan et al. 2020 (arXiv 2001.08361) Fig. 5: aspect ratio d_model/n_layer can vary ~40x at small loss cost",
    "MobileLLM (Liu et al., ICML 2024, arXiv 2402.14905): below 1B parameters deeper beats wider",
    "Hazy Research 'Look Ma, No Bubbles' (2025): ~1.3-2.1 us launch per kernel, per-kernel stalls in decode",
)
ALIGN = 128  # widths of the alternative are multiples of one 128-wide tile (guideline 2)


def equivalent_layers(spec) -> float:
    """Transformer-layer equivalents: a block with only a token mixer or only an FFN (Nemotron-H,
    no-op blocks) counts as half a layer."""
    n = 0.0
    for i in range(spec.num_layers):
        k = spec.kind_of(i)
        n += 0.5 * (k.mixer.kind != "none") + 0.5 * (k.ffn.kind != "none")
    return n or float(spec.num_layers)


def latency_workload(ctx: Context):
    """The latency-scenario workload at the user's GPU, format and parallelism."""
    from colint.analysis.scenario import make_scenario
    from colint.analysis.workload import analyse

    sc = ctx.scenario
    if sc.name == "latency":
        return ctx.workload
    dtype = sc.weights if sc.weights == sc.activations else sc.gemm_format
    lat = make_scenario("latency", dtype=dtype, tp=sc.tp, ep=sc.ep, pp=sc.pp, kv_cache=sc.kv_cache,
                        out_dtype=sc.outputs, gpu=sc.gpu)
    return analyse(ctx.spec, ctx.profile, lat)


def fixed_decode_s(spec, w) -> float:
    """Per-layer fixed cost of one decode step: launches of non-GEMM kernels, collectives, and the
    fixed floor of every GEMM and attention kernel in the layers (the LM head excluded)."""
    step = w.steps["decode"]
    gemm_kernels = 0
    for kind, n in zip(spec.layer_kinds, spec.layer_counts()):
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
            mu = {"num_v_heads": max(1, int(round(m.num_v_heads * r))),
                  "num_k_heads": max(1, int(round((m.num_k_heads or 1) * r)))}
        fu: dict = {}
        if f.kind == "dense" and f.intermediate_size:
            fu["intermediate_size"] = _r128(f.intermediate_size * r)
        elif f.kind == "moe":
            fu["expert_intermediate_size"] = _r128(f.expert_intermediate_size * r)
            if f.shared_intermediate_size:
                fu["shared_intermediate_size"] = _r128(f.shared_intermediate_size * r)
            if f.latent_size:
                fu["latent_size"] = _r128(f.latent_size * r)
        kinds.append(k.model_copy(update={"mixer": m.model_copy(update=mu), "ffn": f.model_copy(update=fu),
                                          "other_params": int(round(k.other_params * r))}))
    upd = {"hidden_size": hidden, "num_layers": layers, "layer_kinds": kinds,
           "layer_pattern": layer_pattern_for(spec.layer_pattern, layers)}
    if spec.intermediate_size:
        upd["intermediate_size"] = _r128(spec.intermediate_size * r)
    k0 = next((k for k in kinds if k.mixer.kind == "attention"), None)
    if k0 is not None:
        upd["num_heads"], upd["num_kv_heads"] = k0.mixer.num_heads, k0.mixer.num_kv_heads
    return spec.model_copy(update=upd)


def wider_alternative(spec, target_layers: int, tol: float):
    """(alt_spec, params) at ``target_layers`` (or the nearest depth below L that allows one) with
    the same parameters within ``tol`` and hidden size a multiple of 128; None if none."""
    from colint.analysis.inventory import param_counts

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


class _ScaledParams:
    """``param_counts(scaled_spec(spec, h, n)).total`` and whether the KV heads are kept, for the search.
    A scaled spec's layer kinds (and embedding, LM head, extras) depend on the width h alone; the depth
    only changes how many layers each kind has. So each width is built and counted once, and another
    depth adds (count change) x (that kind's parameters, inventory.kind_params): integer sums, the exact
    figure param_counts gives (tests/test_memo.py checks it)."""

    def __init__(self, spec):
        self.spec = spec
        self.widths: dict[int, tuple] = {}  # h -> (params, layer counts, kinds, kind params, kv kept)

    def at(self, h: int, n: int) -> tuple[int, bool]:
        from colint.analysis.inventory import kind_params, param_counts

        got = self.widths.get(h)
        if got is None:
            alt = scaled_spec(self.spec, h, n)
            kv_kept = all(a.mixer.num_kv_heads == b.mixer.num_kv_heads
                          for a, b in zip(self.spec.layer_kinds, alt.layer_kinds))
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


@rule("CL301", "deep-narrow-stack", FAMILY, "info",
      "Deep and narrow for its size: per-layer fixed costs take a large share of interactive decode time.",
      RuleDoc(
          what="The aspect ratio H/L (hidden size per transformer-layer equivalent) below the band of shipped "
               "designs, the share of a one-sequence decode step spent in per-layer fixed costs (kernel launches, "
               "GEMM floors, collectives) on the target, and an equal-parameter wider/shallower alternative (same "
               "parameters within 2%, widths multiples of 128) with its estimated ITL gain.",
          why="Each layer adds a sequential chain of small kernels; at one sequence the weights stream in the "
              "same time either way, so fewer, wider layers cut the fixed part. Quality is roughly shape-neutral "
              "over a wide band (Kaplan) but below ~1B parameters depth wins (MobileLLM): there it only advises.",
          example="Qwen3-30B-A3B: H=2048 over 48 layers (H/L 43); about half of its one-sequence decode step on "
                  "B200 is per-layer fixed cost.",
          fix="At design time, trade layers for width at equal parameters (the alternative shown), or serve with "
              "CUDA graphs / fused (mega)kernels that hide per-kernel costs.",
          sources=SOURCES),
      options={"min_aspect_ratio": (64.0, "report below this H/L (shipped designs: ~80-130; GPT-2 XL 33)"),
               "min_fixed_share": (0.25, "and only when per-layer fixed costs are at least this share of the "
                                         "latency-scenario decode step (models of 1B parameters and more)"),
               "small_model_params": (1.0e9, "below this many parameters deep-and-thin is a known good choice "
                                             "(MobileLLM): advise only"),
               "param_tolerance": (0.02, "the alternative keeps the parameter count within this fraction"),
               "min_itl_gain": (0.05, "models of 1B parameters and more: report only when the equal-parameter "
                                      "alternative cuts the estimated ITL by at least this fraction")})
def deep_narrow_stack(ctx: Context):
    from colint.analysis.inventory import param_counts
    from colint.analysis.workload import analyse

    spec = ctx.spec
    L = spec.num_layers
    l_eq = equivalent_layers(spec)
    aspect = spec.hidden_size / l_eq
    if L < 2 or aspect >= ctx.option("min_aspect_ratio"):
        return
    params = param_counts(spec).total
    small = params < ctx.option("small_model_params")
    w = latency_workload(ctx)
    step = w.steps["decode"]
    fixed_s = fixed_decode_s(spec, w)
    share = fixed_s / step.estimate_s if step.estimate_s else 0.0
    if not small and share < ctx.option("min_fixed_share"):
        return
    # the alternative: the depth that brings H/L to the band (at most halving the layers)
    target_aspect = ctx.option("min_aspect_ratio")
    target = max(math.ceil(L / 2), min(L - 1, round(L * (aspect / target_aspect) ** (2 / 3))))
    alt = wider_alternative(spec, target, ctx.option("param_tolerance"))
    gain = None
    details = [f"per-layer fixed costs: est. {fixed_s * 1e3:.2f} ms of a {step.estimate_s * 1e3:.2f} ms decode step "
               f"({fixed_s / L * 1e6:.1f} us per layer; {w.label()})"]
    fixes = []
    ev = {"hidden_size": spec.hidden_size, "num_layers": L, "layer_equivalents": l_eq,
          "aspect_ratio": round(aspect, 1), "params": params, "est_fixed_share": round(share, 4),
          "est_fixed_s": fixed_s, "est_itl_s": step.estimate_s, "gpu": ctx.gpu}
    if alt is not None:
        alt_spec, alt_params = alt
        alt_w = analyse(alt_spec, ctx.profile, w.scenario)
        alt_itl = alt_w.steps["decode"].estimate_s
        gain = 1.0 - alt_itl / step.estimate_s
        if not small and gain < ctx.option("min_itl_gain"):
            return
        d_pct = 100.0 * (alt_params - params) / params
        desc = (f"H={alt_spec.hidden_size} x {alt_spec.num_layers} layers"
                + (f", intermediate {alt_spec.intermediate_size}" if alt_spec.intermediate_size else ""))
        details.append(f"equal-parameter alternative {desc} ({d_pct:+.1f}% params): est. ITL {alt_itl * 1e3:.2f} ms "
                       f"({gain:.0%} lower)")
        ev.update({"alt_hidden_size": alt_spec.hidden_size, "alt_num_layers": alt_spec.num_layers,
                   "alt_params": alt_params, "est_alt_itl_s": alt_itl,
                   "est_alt_itl_gain_share": round(gain, 4)})
        edits = [edit(edit_key(spec, "hidden_size", "hidden_size"), spec.hidden_size, alt_spec.hidden_size),
                 edit(edit_key(spec, "num_layers", "num_hidden_layers"), L, alt_spec.num_layers)]
        if spec.intermediate_size and alt_spec.intermediate_size != spec.intermediate_size \
                and spec.sources.get("intermediate_size"):
            edits.append(edit(edit_key(spec, "intermediate_size"), spec.intermediate_size, alt_spec.intermediate_size))
        moe0 = next((k.ffn for k in spec.layer_kinds if k.ffn.kind == "moe"), None)
        moe1 = next((k.ffn for k in alt_spec.layer_kinds if k.ffn.kind == "moe"), None)
        if moe0 and moe1 and spec.sources.get("moe_intermediate_size") and \
                moe1.expert_intermediate_size != moe0.expert_intermediate_size:
            edits.append(edit(edit_key(spec, "moe_intermediate_size"), moe0.expert_intermediate_size,
                              moe1.expert_intermediate_size))
        first_edit: dict = {}
        for e in edits:
            first_edit.setdefault(e.key, e)
        edits = list(first_edit.values())
        for fld in ("num_heads", "num_kv_heads"):
            old, new = getattr(spec, fld), getattr(alt_spec, fld)
            if old and new != old and spec.sources.get(fld) and not spec.sources[fld].default:
                edits.append(edit(edit_key(spec, fld), old, new))
        fixes.append(fix(f"wider and shallower at equal parameters: {desc} (est. {gain:.0%} lower ITL; "
                         "changes the architecture, retrain)", "display" if small else "unsafe", *edits))
    if small:
        msg = (f"H/L = {aspect:.1f} ({spec.hidden_size} over {l_eq:g} layers) is deep and thin: below 1B parameters "
               f"that is a known good choice (MobileLLM); per-layer fixed costs are est. {share:.0%} of one-sequence "
               f"decode time on {ctx.gpu}")
    else:
        msg = (f"H/L = {aspect:.1f} ({spec.hidden_size} over {l_eq:g} layers) is deep and narrow: per-layer fixed "
               f"costs are est. {share:.0%} of one-sequence decode time on {ctx.gpu}")
        if gain is not None and gain > 0:
            msg += f"; an equal-parameter wider stack is est. {gain:.0%} faster"
    yield ctx.finding("info", msg, field="num_layers", evidence=ev, fixes=fixes, details=details)
