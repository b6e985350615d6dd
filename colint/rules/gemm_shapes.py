"""A weight GEMM's thin side, for the CL1xx near-square rules (colint.rules.near_square): which spec field
sets it, which GEMMs are thin by design, and the step time a thin shape loses on the target (computed by
colint.analysis.gemm_shape, with I∞, the square references and the M at which a square GEMM turns
compute-bound).
"""

from __future__ import annotations

from colint.analysis.gemm_shape import thin_shape_loss_s
from colint.analysis.inventory import is_gate
from colint.rules.base import Context


def shape_loss_s(ctx: Context, row) -> float:
    """Estimated seconds per step that ``row`` loses to its shape on the target (analysis.gemm_shape)."""
    return thin_shape_loss_s(row, ctx.target_profile, ctx.target_scenario.outputs, ctx.analysis.kernel_floor_s)


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
