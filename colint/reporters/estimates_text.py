"""Text for the time model's outputs: `colint gemm` (and its JSON record), `colint profiles`, and the estimates
section of `colint inspect --gpu` (the dict built by colint.analysis.workload.summary)."""

from __future__ import annotations

import json
import math


def _t(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def _b(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def _public(g) -> dict:
    """The estimate's public record, an infinite value (m_star of a GEMM that never turns compute-bound) as None."""
    return {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in g.public().items()}


def gemm_json(g) -> str:
    """`colint gemm --format json`: the estimate's public record (infinite values null)."""
    return json.dumps(_public(g), indent=2)


def gemm_text(g, gpu: str) -> str:
    """`colint gemm`: one GEMM's estimate (colint.analysis.gemm_model.estimate) on ``gpu``."""
    return render_gemm(_public(g), gpu)


def render_gemm(d: dict, gpu: str) -> str:
    lines = [
        f"GEMM M={d['m']} N={d['n']} K={d['k']}, {d['dtype']} in, {d['out_dtype']} out, on {gpu}",
        f"  FLOPs {d['flops']:.4g}, bytes {_b(d['bytes'])} (read {_b(d['read_bytes'])}, write {_b(d['write_bytes'])})",
        f"  arithmetic intensity {d['arithmetic_intensity']:.1f} FLOP/B, ridge {d['ridge']:.0f} FLOP/B: "
        f"{d['bound']}-bound",
        f"  math {_t(d['math_s'])}, memory {_t(d['memory_s'])} (read {_t(d['read_s'])}, write {_t(d['write_s'])})",
        f"  speed of light (roofline max): {_t(d['sol_s'])}",
        f"  estimate (time model):         {_t(d['estimate_s'])}  [{d['estimate_bound']}; tile "
        f"{d['tile_m']}x{d['tile_n']}{' 2-SM' if d['tile_sms'] == 2 else ''}"
        f"{', split-K ' + str(d['split_k']) if d['split_k'] > 1 else ''}]",
        f"  tile efficiency {d['tile_efficiency']:.3f}, K-tile efficiency {d['k_efficiency']:.3f}, "
        f"wave efficiency {d['wave_efficiency']:.3f}",
    ]
    if d.get("m_star") is not None:
        lines.append(f"  turns compute-bound at M >= {d['m_star']:.0f} (this N, K)")
    else:
        lines.append("  memory-bound at every M (this N, K)")
    return "\n".join(lines)


def render_profiles(profiles: list) -> str:
    lines = [
        f"{'name':<14} {'architecture':<14} {'SMs':>4}  {'bf16':>6} {'fp8':>6} {'nvfp4':>6} {'mxfp4':>6}"
        f"  {'HBM TB/s':>8}  {'GB':>5}  display name"
    ]
    for p in profiles:
        pk = p.peak_tflops

        def f(x, pk=pk):
            return f"{pk[x]:>6.0f}" if x in pk else f"{'-':>6}"

        lines.append(
            f"{p.name:<14} {p.architecture:<14} {p.sm_count:>4}  {f('bf16')} {f('fp8')} {f('nvfp4')} "
            f"{f('mxfp4')}  {p.memory_tbps:>8.3g}  {p.memory_gb:>5.0f}  {p.display_name}"
        )
    lines.append("dense TFLOP/s; '-' = format not native. `colint profiles NAME` shows one with its sources.")
    return "\n".join(lines)


def render_profile(p, tm) -> str:
    t = p.tiles
    lines = [
        f"{p.name}: {p.display_name} ({p.vendor}, {p.architecture}, {p.compute_capability})",
        *([f"  aliases: {', '.join(p.aliases)}"] if getattr(p, "aliases", None) else []),
        f"  SMs/CUs {p.sm_count}" + (f", clock {p.clock_mhz:.0f} MHz" if p.clock_mhz else ""),
        "  dense peak TFLOP/s: " + ", ".join(f"{k} {v:g}" for k, v in p.peak_tflops.items()),
        f"  memory {p.memory_gb:g} GB at {p.memory_tbps:g} TB/s" + (f", L2 {p.l2_mb:g} MB" if p.l2_mb else ""),
        "  ridge (FLOP/B): " + ", ".join(f"{k} {p.ridge(k):.0f}" for k in p.peak_tflops),
        (
            f"  interconnect {p.interconnect_gbps:g} GB/s per GPU, domain {p.domain_size}"
            if p.interconnect_gbps > 0
            else f"  no NVLink: PCIe {p.pcie_gen or 4}.0 x16 ({p.scale_up_gbps:.1f} GB/s per GPU), {p.domain_size} per host"
            + ("" if p.pcie_p2p else "; no GPU peer access (collectives staged through host memory)")
        )
        + (f", scale-out {p.scale_out_gbps:g} GB/s per GPU" if getattr(p, "scale_out_gbps", None) else ""),
        f"  tiles: base {t.base.m}x{t.base.n}"
        + (f", cooperative {t.cooperative.m}x{t.cooperative.n} ({t.cooperative.sms} SMs)" if t.cooperative else "")
        + (f", CGA {t.cga.m}x{t.cga.n}" if t.cga else ""),
        "  K-tile: " + ", ".join(f"{k} {v}" for k, v in t.k_tile.items()),
        "  alignment (elements): " + ", ".join(f"{k} {v}" for k, v in p.alignment.items()),
        f"  launch overhead {p.launch_overhead_us:g} us per kernel",
        f"  time model ({p.architecture}): compute efficiency "
        + ", ".join(f"{k} {v:g}" for k, v in tm.compute_efficiency.items())
        + f"; memory efficiency {tm.memory_efficiency:g}; kernel floor {tm.kernel_floor_us:g} us",
    ]
    for n in p.notes:
        lines.append(f"  note: {n}")
    lines.append("  sources:")
    for k, v in p.sources.items():
        lines.append(f"    {k}: {v}")
    for k, v in p.references.items():
        lines.append(f"    [{k}] {v}")
    return "\n".join(lines)


def render_estimates(e: dict) -> str:
    lines = ["", e["label"]]
    lines.append(
        f"  KV cache: {e['kv_cache_bytes_per_token']:,} bytes/token "
        f"({e['kv_cache_bytes_per_token_per_gpu']:,.0f} per GPU)"
        + (
            f"; recurrent state {e['state_bytes_per_sequence']:,} bytes/sequence"
            if e["state_bytes_per_sequence"]
            else ""
        )
    )
    for regime in ("decode", "prefill"):
        s = e["steps"][regime]
        what = (
            f"decode step (ITL), {s['tokens']} sequences"
            if regime == "decode"
            else f"prefill step, {s['tokens']} tokens"
        )
        extra = f", FTL {_t(s['ftl_s'])}" if s.get("ftl_s") else ""
        lines.append(
            f"  {what}: estimate {_t(s['estimate_s'])} (roofline {_t(s['sol_s'])}){extra}; "
            f"attention {s['attention_share']:.0%}, FFN {s['ffn_share']:.0%}, "
            + (f"collectives {s['collective_share']:.0%}, " if s.get("collective_share") else "")
            + (f"EP exchange hidden by two micro-batches {_t(s['comm_hidden_s'])}, " if s.get("comm_hidden_s") else "")
            + f"other {s['other_share'] - s.get('collective_share', 0.0):.0%}"
        )
    for regime in ("decode", "prefill"):
        rows = e["gemms"][regime]
        lines.append(f"  {regime} GEMMs per GPU (M x N x K per shard; times per layer):")
        w = max((len(r["name"]) for r in rows), default=8)
        lines.append(
            f"    {'name':<{w}}  {'kind':<22} {'M':>6} {'N':>7} {'K':>7}  {'AI':>7} {'ridge':>6} "
            f"{'bound':<7} {'roofline':>9} {'estimate':>9} {'tile eff':>8} {'wave eff':>8}"
        )
        for r in rows:
            kind = (r["kind"] or "-")[:22]
            inst = f" x{r['instances']:g}" if r["instances"] != 1 else ""
            lines.append(
                f"    {r['name']:<{w}}  {kind:<22} {r['m']:>6} {r['n']:>7} {r['k']:>7}  "
                f"{r['arithmetic_intensity']:>7.1f} {r['ridge']:>6.0f} {r['bound']:<7} "
                f"{_t(r['sol_s']):>9} {_t(r['estimate_s']):>9} {r['tile_efficiency']:>8.3f} "
                f"{r['wave_efficiency']:>8.3f}{inst}"
            )
    for n in e.get("notes", []):
        lines.append(f"  note: {n}")
    return "\n".join(lines)
