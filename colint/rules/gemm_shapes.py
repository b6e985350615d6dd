"""A weight GEMM's shape on the roofline, for the CL1xx near-square rules (colint.rules.near_square):
the limit intensity I∞ as M grows, the M at which a large square GEMM turns compute-bound, the aligned
near-square references of equal work and the step time a thin shape loses against them (an estimate of
the GEMM time model), and which spec field sets a GEMM's thin side.
"""

from __future__ import annotations

import math

from colint.analysis.gemm_model import FORMATS, OUT_BYTES, estimate
from colint.analysis.inventory import is_gate
from colint.rules.base import Context


def limit_intensity(n: int, k: int, dtype: str, out_dtype: str) -> float:
    """I∞ = 2NK / (K·b_a + N·b_out), FLOP/B: the intensity as M → ∞ (weight bytes amortised away)."""
    _, b_a, _ = FORMATS[dtype]
    return 2.0 * n * k / (k * b_a + n * OUT_BYTES[out_dtype])


def square_m_star(dtype: str, ridge: float) -> float:
    """M at which a very large square GEMM turns compute-bound: ridge·b_w/2 (the floor of M*)."""
    return ridge * FORMATS[dtype][2] / 2.0


def reference_shapes(n: int, k: int, tile: int = 128) -> list[tuple[int, int]]:
    """Aligned near-square references of a GEMM's N x K: sides multiples of ``tile`` around sqrt(N·K) (the
    nearest and one tile either way, the other side making up the same N·K), so that each does about the
    same work per token. Several, so that one reference's wave quantization does not pass for a shape cost."""
    base = max(tile, int(round(math.sqrt(n * k) / tile)) * tile)
    out = []
    for a in (base - tile, base, base + tile):
        if a < tile:
            continue
        b = max(tile, int(round(n * k / a / tile)) * tile)
        if (a, b) == (base, base) or max(a, b) / min(a, b) < max(n, k) / min(n, k):
            out.append((a, b))  # only shapes squarer than the GEMM itself
    return out


def reference_shape(n: int, k: int, tile: int = 128) -> tuple[int, int]:
    """The square reference quoted in messages: sqrt(N·K) rounded to a multiple of ``tile``."""
    side = max(tile, int(round(math.sqrt(n * k) / tile)) * tile)
    return side, side


def shape_loss_s(ctx: Context, row) -> float:
    """Estimated seconds per step that ``row`` loses to its SHAPE: its time minus the time of the same
    GEMM at the best aligned near-square reference of equal FLOPs (same M, format, output format,
    library path and kernel floor; ``reference_shapes``), scaled back to the row's work. The format's
    library efficiency and the kernel floor are in both, so they cancel: what remains is what N and K cost."""
    t = row.time.estimate_s
    floor = ctx.analysis.kernel_floor_s
    best = t
    for n_ref, k_ref in reference_shapes(row.n, row.k):
        t_ref = estimate(
            row.m, n_ref, k_ref, row.dtype, ctx.target_profile, ctx.target_scenario.outputs, standalone=False
        ).estimate_s
        best = min(best, floor + max(0.0, t_ref - floor) * (row.n * row.k) / (n_ref * k_ref))
    share = max(0.0, (t - best) / t) if t > 0 else 0.0
    return row.total_s * share


def memory_bound(row) -> bool:
    """Memory-bound by the time model's estimate (what limits the estimate), not only by the plain roofline:
    a GEMM whose derated math time exceeds its memory time is compute-bound, whatever its intensity."""
    return row.time.estimate_bound == "memory"


def thin_dim(row) -> str:
    return f"K={row.k}" if row.k <= row.n else f"N={row.n}"


def field_of_thin(ctx: Context, row) -> str | None:
    """The spec field that sets the thin side of this GEMM (the one to widen)."""
    g = row.gemm
    thin_k = row.k <= row.n
    f = g.k_field if thin_k else g.n_field
    if (f in ("hidden_size", None) and row.parallel == "expert") or row.name.startswith("moe.fc"):
        latent = next((k.ffn.latent_size for k in ctx.spec.layer_kinds if k.ffn.latent_size), None)
        if latent and (row.k if thin_k else row.n) == latent:
            return "moe_latent_size"  # latent MoE (Nemotron-H): experts work in the latent width
    if f is None and (
        row.name in ("attn.o_proj", "mla.o_proj")
        and thin_k
        or row.name in ("attn.qkv_proj", "mla.q_b_proj", "mla.kv_b_proj", "mla.q_proj")
        and not thin_k
    ):
        f = "num_heads"
    if f is None and row.name.startswith("mla.kv_a"):
        f = "kv_lora_rank"
    if f is None and row.name.startswith("mla.kv_b") and thin_k:
        f = "kv_lora_rank"
    return f


_THIN_NAMES = (
    "mamba.x_proj",
    "mamba.dt_proj",
    "linear_attn.in_proj_ba",
    "linear_attn.in_proj_b",
    "linear_attn.in_proj_a",
)


def thin_by_design(row) -> bool:
    """Routers (N = experts) and gates (N = 1): thin by construction, replicated, high precision."""
    name = row.name
    return is_gate(name) or name.startswith("mla.indexer.") or name in _THIN_NAMES


def thin_value(ctx: Context, f: str | None, row) -> str:
    if f is None:
        return thin_dim(row)
    kinds = ctx.spec.layer_kinds
    v = getattr(ctx.spec, f, None)
    if f == "moe_intermediate_size":
        v = next((k.ffn.expert_intermediate_size for k in kinds if k.ffn.kind == "moe"), None)
    elif f == "shared_expert_intermediate_size":
        v = next(
            (
                k.ffn.num_shared_experts * k.ffn.shared_intermediate_size
                for k in kinds
                if k.ffn.kind == "moe" and k.ffn.shared_intermediate_size
            ),
            None,
        )
        f = "shared expert width"
    elif f == "moe_latent_size":
        v = next((k.ffn.latent_size for k in kinds if k.ffn.latent_size), None)
    elif f in ("kv_lora_rank", "q_lora_rank"):
        v = next((getattr(k.mixer, f) for k in kinds if getattr(k.mixer, f, None)), None)
    return f"{f} {v}" if isinstance(v, int) else f
