"""The weight matrices of one layer kind, and its parameter counts: what the architecture is, before any
hardware. Normalizers use ``kind_params`` (MTP module sizes); ``colint.analysis.inventory`` lists them
per model and ``colint.analysis.workload`` shards and times them.

Every weight matrix is a GEMM ``C[M, N] = A[M, K] · W[K, N]`` with the shapes transformers builds
(q, k and v separately unless the family fuses them; routed experts as one entry with ``count = E``),
how many layers have it, and how its M scales with the number of tokens (``m_per_token``: 1 for dense
weights, top-k/E for a routed expert under uniform routing). ``parallel`` says how tensor parallelism
shards it: ``column`` splits N, ``row`` splits K, ``expert`` spreads the ``count`` copies over
expert-parallel ranks, ``replicated`` keeps it whole (routers).
"""

from __future__ import annotations

from colint.util.memo import keep
from colint.util.plain_data import keeps_hash

from colint.normalize.model_spec import FFN, LayerKind, Mixer
from colint.util.records import dataclass


@keeps_hash  # the analysis keys its kind and group memos by GEMM values; kind_gemms hands out the same objects
@dataclass(frozen=True)
class Gemm:
    name: str  # e.g. "attn.q_proj", "moe.experts.gate_up", "lm_head"
    k: int  # reduction dim (input features)
    n: int  # output features
    layers: int  # how many layers have this weight
    count: int = 1  # copies per layer (routed experts: E)
    m_per_token: float = 1.0  # GEMM rows per token of the batch
    bias: bool = False
    parallel: str = "column"  # column | row | expert | replicated
    group: str | None = None  # weights a serving engine fuses into one GEMM: "qkv", "gate_up"
    k_field: str | None = None  # ModelSpec field that sets K, when it is exactly one field
    n_field: str | None = None
    kind: str | None = None  # LayerKind name ("" for embedding/LM head)

    @property
    def weight_params(self) -> int:
        return self.count * (self.k * self.n + (self.n if self.bias else 0))


GATE_SUFFIXES = ("router", "shared_expert_gate")  # the MoE router (N = experts), the shared expert's gate (N = 1)


def is_gate(name: str) -> bool:
    """A routing gate, by its GEMM (or fused row) name: the MoE router or the shared expert's scalar gate. Serving
    engines keep both replicated and in BF16, never quantized: the step times them so (colint.analysis.gemm_rows),
    the footprint counts their weights so, and the rules leave them out of tile and quantization questions."""
    return name.endswith(GATE_SUFFIXES)


def _mixer_gemms(m: Mixer, h: int) -> list[tuple]:
    """(name, k, n, bias, parallel, group, k_field, n_field) for one layer's token mixer."""
    if m.kind == "attention":
        return _attention_gemms(m, h)
    if m.kind == "mla":
        return _mla_gemms(m, h)
    if m.kind == "linear_attention":
        return _linear_attention_gemms(m, h)
    if m.kind == "mamba":
        return _mamba_gemms(m, h)
    if m.kind == "linear":
        return [("attn.linear", h, h, False, "column", None, "hidden_size", "hidden_size")]
    if m.kind == "short_conv":  # LFM2 gated short convolution: B, C, x projections, depthwise conv, out_proj
        return [
            ("conv.in_proj", h, 3 * h, m.in_bias, "column", None, "hidden_size", None),
            ("conv.out_proj", h, h, m.out_bias, "row", None, None, "hidden_size"),
        ]
    return []


def _attention_gemms(m: Mixer, h: int) -> list[tuple]:
    """Softmax attention: q, k, v (apart, fused, or fewer where Gemma-4 shares them) and o."""
    out: list[tuple]
    q = m.num_heads * m.head_dim * (2 if m.gated_q else 1)  # gated_q: query + output gate
    kv = m.num_kv_heads * m.head_dim
    v = m.num_kv_heads * (m.v_head_dim or m.head_dim)
    o_in = m.num_heads * (m.v_head_dim or m.head_dim)
    if m.kv_shared or m.v_from_k:  # Gemma-4: q only, or q and k
        out = [("attn.q_proj", h, q, m.qkv_bias, "column", "qkv", "hidden_size", None)]
        if not m.kv_shared:
            out.append(("attn.k_proj", h, kv, m.qkv_bias, "column", "qkv", "hidden_size", None))
    elif m.fused_qkv:
        out = [("attn.qkv_proj", h, q + kv + v, m.qkv_bias, "column", "qkv", "hidden_size", None)]
    else:
        out = [
            ("attn.q_proj", h, q, m.qkv_bias, "column", "qkv", "hidden_size", None),
            ("attn.k_proj", h, kv, m.qkv_bias, "column", "qkv", "hidden_size", None),
            ("attn.v_proj", h, v, m.qkv_bias, "column", "qkv", "hidden_size", None),
        ]
    out.append(("attn.o_proj", o_in, h, m.o_bias, "row", None, None, "hidden_size"))
    return out


def _mla_gemms(m: Mixer, h: int) -> list[tuple]:
    """Multi-head latent attention: q (through its latent or plain), the kv latent with the shared RoPE key, kv up,
    o; DeepSeek-V3.2's indexer where the layer has one."""
    nope, rope = m.qk_nope_head_dim or 0, m.qk_rope_head_dim or 0
    vd = m.v_head_dim or nope
    qd = m.num_heads * (nope + rope)
    out: list[tuple] = []
    if m.q_lora_rank:
        out.append(("mla.q_a_proj", h, m.q_lora_rank, m.qkv_bias, "replicated", None, "hidden_size", "q_lora_rank"))
        out.append(("mla.q_b_proj", m.q_lora_rank, qd, False, "column", None, "q_lora_rank", None))
    else:
        out.append(("mla.q_proj", h, qd, False, "column", None, "hidden_size", None))
    out.append(
        (
            "mla.kv_a_proj_with_mqa",
            h,
            (m.kv_lora_rank or 0) + rope,
            m.qkv_bias,
            "replicated",
            None,
            "hidden_size",
            None,
        )
    )
    out.append(
        (
            "mla.kv_b_proj",
            m.kv_lora_rank or 0,
            m.num_heads * (nope + vd),
            False,
            "column",
            None,
            "kv_lora_rank",
            None,
        )
    )
    out.append(("mla.o_proj", m.num_heads * vd, h, m.o_bias, "row", None, None, "hidden_size"))
    if m.index_num_heads and m.index_head_dim and m.q_lora_rank:  # DeepSeek-V3.2 indexer
        ih, ihd = m.index_num_heads, m.index_head_dim
        out.append(("mla.indexer.wq_b", m.q_lora_rank, ih * ihd, False, "replicated", None, "q_lora_rank", None))
        out.append(("mla.indexer.wk", h, ihd, False, "replicated", None, "hidden_size", None))
        out.append(("mla.indexer.weights_proj", h, ih, False, "replicated", None, "hidden_size", None))
    return out


def _linear_attention_gemms(m: Mixer, h: int) -> list[tuple]:
    """Gated DeltaNet (Qwen3-Next / Qwen3.5) and MiniMax-01's lightning attention."""
    nk, nv = m.num_k_heads or 0, m.num_v_heads or 0
    dk, dv = m.k_head_dim or 0, m.v_head_dim or 0
    if m.linear_variant == "lightning":  # MiniMax-01: one fused qkv, a sigmoid output gate, out_proj
        return [
            ("linear_attn.qkv_proj", h, nk * dk + 2 * nv * dv, False, "column", None, "hidden_size", None),
            ("linear_attn.output_gate", h, nv * dv, False, "column", None, "hidden_size", None),
            ("linear_attn.out_proj", nv * dv, h, False, "row", None, None, "hidden_size"),
        ]
    if m.split_in_proj:  # Qwen3.5: in_proj_qkv, in_proj_z, in_proj_b, in_proj_a
        return [
            ("linear_attn.in_proj_qkv", h, 2 * nk * dk + nv * dv, False, "column", None, "hidden_size", None),
            ("linear_attn.in_proj_z", h, nv * dv, False, "column", None, "hidden_size", None),
            ("linear_attn.in_proj_b", h, nv, False, "column", None, "hidden_size", None),
            ("linear_attn.in_proj_a", h, nv, False, "column", None, "hidden_size", None),
            ("linear_attn.out_proj", nv * dv, h, False, "row", None, None, "hidden_size"),
        ]
    return [
        ("linear_attn.in_proj_qkvz", h, 2 * nk * dk + 2 * nv * dv, False, "column", None, "hidden_size", None),
        ("linear_attn.in_proj_ba", h, 2 * nv, False, "column", None, "hidden_size", None),
        ("linear_attn.out_proj", nv * dv, h, False, "row", None, None, "hidden_size"),
    ]


def _mamba_gemms(m: Mixer, h: int) -> list[tuple]:
    """Mamba-1 and Mamba-2 projections (the convolution and SSM parameters are not GEMMs)."""
    di, ds, ng = m.d_inner or 0, m.d_state or 0, m.n_groups or 1
    if m.mamba_version == 1:
        return [
            ("mamba.in_proj", h, 2 * di, m.in_bias, "column", None, "hidden_size", None),
            ("mamba.x_proj", di, (m.dt_rank or 0) + 2 * ds, False, "row", None, None, None),
            ("mamba.dt_proj", m.dt_rank or 0, di, True, "column", None, None, None),
            ("mamba.out_proj", di, h, m.out_bias, "row", None, None, "hidden_size"),
        ]
    nheads = m.num_heads
    return [
        ("mamba.in_proj", h, 2 * di + 2 * ng * ds + nheads, m.in_bias, "column", None, "hidden_size", None),
        ("mamba.out_proj", di, h, m.out_bias, "row", None, None, "hidden_size"),
    ]


def _mlp(
    prefix: str,
    h: int,
    width: int,
    gated: bool,
    bias: bool,
    width_field: str | None,
    count: int = 1,
    m_per_token: float = 1.0,
    parallel_up: str = "column",
    parallel_down: str = "row",
    fused_gate_up: bool = False,
) -> list[tuple]:
    # (name, N) of each input projection: gate and up fused into one GEMM, or apart, or up alone
    if gated and fused_gate_up:
        ups = [("gate_up", 2 * width)]
    else:
        ups = [("gate_proj", width), ("up_proj", width)] if gated else [("up_proj", width)]
    group = "gate_up" if gated else None  # gate and up: the weights a serving engine fuses into one GEMM
    out: list[tuple] = [
        (f"{prefix}.{name}", h, n, bias, parallel_up, group, "hidden_size", width_field, count, m_per_token)
        for name, n in ups
    ]
    out.append(
        (f"{prefix}.down_proj", width, h, bias, parallel_down, None, width_field, "hidden_size", count, m_per_token)
    )
    return out


def _ffn_gemms(f: FFN, h: int) -> list[tuple]:
    if f.kind == "dense":
        return _mlp("mlp", h, f.intermediate_size, f.gated, f.bias, "intermediate_size")
    if f.kind == "linear":
        return [("mlp.linear", h, h, False, "column", None, "hidden_size", "hidden_size", 1, 1.0)]
    if f.kind != "moe":
        return []
    e, k = f.num_experts, f.top_k
    out: list[tuple] = [("moe.router", h, e, f.router_bias, "replicated", None, "hidden_size", "num_experts", 1, 1.0)]
    width_in = h
    if f.latent_size:
        out.append(
            ("moe.fc1_latent_proj", h, f.latent_size, f.latent_bias, "replicated", None, "hidden_size", None, 1, 1.0)
        )
        width_in = f.latent_size
    share = k / e if e else 0.0
    for g in _mlp(
        "moe.experts",
        width_in,
        f.expert_intermediate_size,
        f.expert_gated,
        f.expert_bias,
        "moe_intermediate_size",
        count=e,
        m_per_token=share,
        parallel_up="expert",
        parallel_down="expert",
        fused_gate_up=True,
    ):
        out.append(g)
    if f.latent_size:
        out.append(
            ("moe.fc2_latent_proj", f.latent_size, h, f.latent_bias, "replicated", None, None, "hidden_size", 1, 1.0)
        )
    if f.num_shared_experts and f.shared_intermediate_size:
        out += _mlp(
            "moe.shared_experts",
            h,
            f.num_shared_experts * f.shared_intermediate_size,
            f.shared_gated,
            f.shared_bias,
            "shared_expert_intermediate_size",
        )
    if f.shared_expert_gate:
        out.append(("moe.shared_expert_gate", h, 1, False, "replicated", None, "hidden_size", None, 1, 1.0))
    return out


# kind_gemms() and kind_params() memos, by value: a LayerKind is a frozen record (hashed once, compared field by
# field), so the kinds of a file, of its edited variants (a fix changes one kind) and of the files of one family
# share their GEMM lists; the argument types are part of the key (True == 1, 4096 == 4096.0). Bounded.
_GEMMS_MEMO: dict = {}
_PARAMS_MEMO: dict = {}
MEMO_MAX = 2048  # layer kinds kept: a 1,000-file run of one family's variants holds a few per file


def kind_gemms(kind: LayerKind, h: int, layers: int) -> list[Gemm]:
    """The weight GEMMs of one layer of ``kind`` (hidden size ``h``), each standing for ``layers`` layers
    (a new list of frozen Gemms, memoised by value)."""
    key = (kind, h, layers, type(h), type(layers))
    hit = _GEMMS_MEMO.get(key)
    if hit is None:
        hit = keep(_GEMMS_MEMO, key, tuple(_kind_gemms(kind, h, layers)), MEMO_MAX)
    return list(hit)


def _kind_gemms(kind: LayerKind, h: int, layers: int) -> list[Gemm]:
    gemms = []
    for t in _mixer_gemms(kind.mixer, h):
        name, k, n, bias, par, group, kf, nf = t
        gemms.append(Gemm(name, k, n, layers, 1, 1.0, bias, par, group, kf, nf, kind.name))
    if kind.parallel_mixer is not None:  # Falcon-H1: a second mixer beside the first (attn.* and mamba.*)
        taken = {g.name for g in gemms}
        for t in _mixer_gemms(kind.parallel_mixer, h):
            name, k, n, bias, par, group, kf, nf = t
            if name in taken:  # two mixers of one kind: keep the second's GEMMs apart (and unfused)
                name, group = f"{name.split('.', 1)[0]}.parallel.{name.split('.', 1)[1]}", None
            gemms.append(Gemm(name, k, n, layers, 1, 1.0, bias, par, group, kf, nf, kind.name))
    for t in _ffn_gemms(kind.ffn, h):
        name, k, n, bias, par, group, kf, nf, count, mpt = t
        gemms.append(Gemm(name, k, n, layers, count, mpt, bias, par, group, kf, nf, kind.name))
    return gemms


FFN_PREFIXES = ("mlp.", "moe.")  # the names of the FFN / MoE weight GEMMs (_ffn_gemms)


def kind_params(kind: LayerKind, h: int) -> tuple[int, int]:
    """(all parameters, parameters touched per token) of one layer of this kind (memoised by value)."""
    total, active, _ffn = _params(kind, h)
    return total, active


def kind_ffn_params(kind: LayerKind, h: int) -> int:
    """Parameters of one layer's FFN / MoE weight GEMMs (routed experts counted E times; memoised by value)."""
    return _params(kind, h)[2]


def _params(kind: LayerKind, h: int) -> tuple[int, int, int]:
    key = (kind, h, type(h))
    hit = _PARAMS_MEMO.get(key)
    if hit is None:
        hit = keep(_PARAMS_MEMO, key, _kind_params(kind, h), MEMO_MAX)
    return hit


def _kind_params(kind: LayerKind, h: int) -> tuple[int, int, int]:
    """(all, touched per token, FFN / MoE GEMMs) parameters of one layer of ``kind``."""
    total = active = kind.other_params
    ffn = 0
    for g in kind_gemms(kind, h, 1):
        p = g.weight_params
        total += p
        if g.parallel == "expert" and g.count:
            active += p * kind.ffn.top_k // g.count
        else:
            active += p
        if g.name.startswith(FFN_PREFIXES):
            ffn += p
    return total, active, ffn
