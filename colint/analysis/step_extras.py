"""The parts of a step beside its weight GEMMs (docs/design.md §5), per layer of a kind on one GPU: the
attention (or recurrent-state) core (``AttentionCost``, priced by the op models of
colint.analysis.ops_attention), the elementwise passes and kernel launches, MoE permute/finalize, TP
all-reduces and EP dispatch/combine (colint.analysis.collectives) and the KV-parallel (Helix)
exchange. Every time is an ESTIMATE. ``colint.analysis.overlap.layer_time`` sums them into one layer's
time (with the EP exchange overlapped by two micro-batches where the deployment does so), for
``colint.analysis.workload.analyse`` and the frontier alike.
"""

from __future__ import annotations

from dataclasses import fields
from colint.util.memo import keep
from typing import NamedTuple

from colint.analysis import ops_attention as ops
from colint.analysis.collectives import collective, moe_dispatch_combine
from colint.analysis.gemm_model import FORMATS
from colint.analysis.gemm_rows import ceil_div, prefill_shape
from colint.analysis.kv_cache import (
    indexer_kv_bytes_per_token,
    kind_mixers,
    mixer_kv_bytes_per_token,
    mixer_kv_read_bytes_per_token,
    mixer_state_bytes,
)
from colint.analysis.moe import busiest_rank_factor
from colint.analysis.scenario import Scenario
from colint.hardware_profiles import time_model
from colint.normalize.model_spec import LayerKind, Mixer, ModelSpec
from colint.util.records import dataclass

ATTN_FORMAT = "bf16"  # attention core math (FlashAttention/FlashMLA BF16 path)
# activation-sized HBM passes per layer: two norms, two residual adds, the activation (estimate); RoPE and the
# KV-cache append run inside the attention op (colint.analysis.ops_attention prices them)
ELEMENTWISE_PASSES = 5
# TensorRT-LLM runs FP8 block-scaled MoE layers with DeepGEMM's masked grouped GEMM on SM100 (DeepGemmFusedMoE; the
# measured B200 fp8_block MoE rows are kernel_source deepgemm, H100's cutlass); DeepGEMM dispatches its SM100 kernels on
# compute capability major 10 (csrc/apis: arch_major == 10): B200/GB200 (10.0) and B300/GB300 (10.3), not Thor or sm_12x
MASKED_MOE_CC_MAJOR = "10"
LL_MAX_TOKENS = 128  # DeepEP: low-latency kernels up to this many tokens per rank (decode), high-throughput above
ATTN_EFFICIENCY_FALLBACK = 0.7  # attention core's share of peak FLOP/s when the time model has no bf16 entry (estimate)


@dataclass(frozen=True)
class AttentionCost:
    """The attention core (or recurrent-state update) of one layer kind in one regime, per GPU."""

    kind: str
    regime: str
    layers: int
    mixer: str  # attention | mla | linear_attention | mamba | linear | none
    flops: float  # per layer per step
    bytes: float  # KV-cache / state bytes read (+ written) per layer per step
    sol_s: float
    estimate_s: float  # per layer per step
    kv_bytes_per_token: float  # STORED per layer per token, this GPU's shard, scenario KV format (0: KV-sharing)
    kv_replication: int  # TP ranks holding the same KV (tp > KV heads; MLA: every rank)
    attended_tokens: float  # mean keys per query (sliding windows cap it)


_ATTENTION_FIELDS = tuple(f.name for f in fields(AttentionCost))


class AttentionRoof(NamedTuple):
    """The roofs an attention (or recurrent-state) core runs under on one profile; analyse's
    attention_core_cost and the vectorized search of colint.suggesting.search both price cores with it."""

    peak_flops_per_s: float  # the ATTN_FORMAT peak (or the profile's first format's)
    compute_efficiency: float
    memory_bytes_per_s: float
    memory_efficiency: float
    kernel_floor_s: float

    def estimate_s(self, flops, bytes_, maximum=max):
        """A core's ESTIMATED time (s): the slower of its derated compute and memory times plus one
        kernel floor. ``maximum=numpy.maximum`` prices arrays with the same float operations."""
        return (
            maximum(
                flops / (self.peak_flops_per_s * self.compute_efficiency),
                bytes_ / (self.memory_bytes_per_s * self.memory_efficiency),
            )
            + self.kernel_floor_s
        )


def attention_roof(profile) -> AttentionRoof:

    tmod = time_model(profile)
    peak = profile.peak_flops(ATTN_FORMAT if profile.has(ATTN_FORMAT) else next(iter(profile.peak_tflops)))
    return AttentionRoof(
        peak,
        tmod.compute_efficiency.get(ATTN_FORMAT, ATTN_EFFICIENCY_FALLBACK),
        profile.memory_bytes_per_s,
        tmod.memory_efficiency,
        tmod.kernel_floor_us * 1e-6,
    )


def _attended(s: int, window: int | None) -> float:
    """Mean keys per query over a causal sequence of s tokens with an optional window."""
    if not window or window >= s:
        return (s + 1) / 2.0
    w = window
    return (w * (w + 1) / 2.0 + (s - w) * w) / s


# attention_core_cost's memo: a core's cost depends on the mixer's geometry (by value: kinds, files and edited specs
# share mixers; 13,168 cores of the 1,000-config MoE mix's analyses had 249 distinct keys), the mixer whose KV
# it reads, the regime's batch and context, tp, kvp, the KV format and the profile (by identity, held in the
# entry). -> (profile, the AttentionCost fields after kind, regime and layers). Cleared when full.
_ATTENTION_MEMO: dict[tuple, tuple] = {}
_ATTENTION_MEMO_MAX = 4096


def attention_core_cost(
    spec: ModelSpec,
    kind: LayerKind,
    n_layers: int,
    profile,
    sc: Scenario,
    regime: str,
    source: Mixer | None = None,
    mixer: Mixer | None = None,
) -> AttentionCost:
    """The core of ``kind``'s mixer (or of ``mixer``: its parallel mixer). ``source``: for a
    KV-sharing layer (Gemma-4), the mixer whose cache it reads (it stores nothing, but reads that
    cache like any attention layer)."""
    mx: Mixer = mixer if mixer is not None else kind.mixer
    batch = sc.decode_concurrency if regime == "decode" else sc.prefill_tokens
    key: tuple = (mx, source, regime, batch, type(batch), sc.context, type(sc.context), sc.tp, sc.kvp)
    key += (sc.kv_bytes_per_elem, id(profile))
    hit = _ATTENTION_MEMO.get(key)
    if hit is not None and hit[0] is profile:
        return AttentionCost(kind.name, regime, n_layers, *hit[1])
    cost = _attention_cost(kind, n_layers, profile, sc, regime, source, mx)
    keep(_ATTENTION_MEMO, key, (profile, tuple(getattr(cost, f) for f in _ATTENTION_FIELDS[3:])), _ATTENTION_MEMO_MAX)
    return cost


def _attention_cost(
    kind: LayerKind, n_layers: int, profile, sc: Scenario, regime: str, source: Mixer | None, mx: Mixer
) -> AttentionCost:
    roof = attention_roof(profile)
    kv_gpu, kv_read_gpu, replication, q_per_gpu = _kv_per_gpu(mx, sc, source)
    window = mx.window if mx.attention in ("sliding", "chunked") else None
    topk = mx.index_topk if mx.kind == "mla" and mx.index_topk else None  # DeepSeek Sparse Attention
    if regime == "decode":
        flops, bytes_, f_i, idx_est, attended = _decode_terms(
            mx, sc, profile, kv_gpu, kv_read_gpu, q_per_gpu, window, topk
        )
    else:
        flops, bytes_, f_i, idx_est, attended, topk = _prefill_terms(
            mx, sc, profile, kv_gpu, kv_read_gpu, q_per_gpu, window, topk
        )
    if mx.kind not in ("attention", "mla"):
        attended = 0.0
    sol = max(flops / roof.peak_flops_per_s, bytes_ / roof.memory_bytes_per_s) if (flops or bytes_) else 0.0
    if mx.kind in ("attention", "mla") and (flops or bytes_):
        est = _core_estimate_s(mx, sc, profile, regime, q_per_gpu, attended, window, flops - f_i, bool(topk))
        est += idx_est
    else:  # linear attention / Mamba state update: a streaming kernel on the roofline's terms
        est = roof.estimate_s(flops, bytes_) if (flops or bytes_) else 0.0
    return AttentionCost(kind.name, regime, n_layers, mx.kind, flops, bytes_, sol, est, kv_gpu, replication, attended)


def _kv_per_gpu(mx: Mixer, sc: Scenario, source: Mixer | None) -> tuple[float, float, int, int]:
    """(KV bytes per token stored on one GPU, read per cached token on one GPU, the KV replication factor, query
    heads per GPU) of one layer at the scenario's tp: GQA shards its KV heads up to tp (copies beyond), MLA's
    latent is whole on every GPU."""
    b_kv, tp = sc.kv_bytes_per_elem, sc.tp
    kv_layer = mixer_kv_bytes_per_token(mx, b_kv)  # stored (0 for a KV-sharing layer)
    kv_read_layer = mixer_kv_read_bytes_per_token(mx, b_kv, source)  # read per cached token
    if mx.kind == "attention":
        shard = min(tp, max(1, mx.num_kv_heads))
        replication = max(1, tp // max(1, mx.num_kv_heads)) if tp > mx.num_kv_heads else 1
        return kv_layer / shard, kv_read_layer / shard, replication, ceil_div(mx.num_heads, tp)
    if mx.kind == "mla":
        return kv_layer, kv_layer, tp, ceil_div(mx.num_heads, tp)
    return 0.0, 0.0, 1, 0


def _decode_terms(mx: Mixer, sc: Scenario, profile, kv_gpu, kv_read_gpu, q_per_gpu, window, topk):
    """(FLOPs, bytes, the DSA indexer's FLOPs, the indexer's estimate s, keys attended per query) of one layer's
    decode attention on one GPU."""
    b_kv, b = sc.kv_bytes_per_elem, sc.decode_concurrency
    idx_tok = indexer_kv_bytes_per_token(mx)  # the DSA indexer's cached key (0 without an indexer)
    flops = bytes_ = f_i = idx_est = 0.0
    ctx = sc.context
    attended = min(ctx, window) if window else ctx
    scored = attended  # keys the DSA indexer scores per query: the whole context
    if topk:
        attended = min(attended, topk)  # the sparse core attends the indexer's top-k only
    if mx.kind in ("attention", "mla") and sc.kvp > 1:
        attended = ceil_div(int(attended), sc.kvp)  # KV parallelism: this GPU's share of the context
        scored = ceil_div(int(scored), sc.kvp)
    if mx.kind == "attention":
        d_v = mx.v_head_dim or mx.head_dim
        flops = 2.0 * b * attended * q_per_gpu * (mx.head_dim + d_v)
        bytes_ = b * attended * kv_read_gpu
    elif mx.kind == "mla":
        lat = (mx.kv_lora_rank or 0) + (mx.qk_rope_head_dim or 0)
        flops = 2.0 * b * attended * q_per_gpu * (lat + (mx.kv_lora_rank or 0))  # absorbed MLA
        bytes_ = b * attended * (kv_gpu - idx_tok)
        if idx_tok:
            f_i, by_i, idx_est = _indexer(mx, b, scored, b * scored * idx_tok, profile)
            flops, bytes_ = flops + f_i, bytes_ + by_i
    elif mx.kind in ("linear_attention", "mamba"):
        state = mixer_state_bytes(mx, b_kv) / sc.tp
        bytes_ = 2.0 * b * state  # read and write the state
        flops = 4.0 * b * state / b_kv
    return flops, bytes_, f_i, idx_est, attended


def _prefill_terms(mx: Mixer, sc: Scenario, profile, kv_gpu, kv_read_gpu, q_per_gpu, window, topk):
    """(FLOPs, bytes, the DSA indexer's FLOPs, its estimate s, keys attended per query, the top-k left after DSA's
    choice between its sparse and dense kernels) of one layer's prefill attention on one GPU."""
    b_kv = sc.kv_bytes_per_elem
    idx_tok = indexer_kv_bytes_per_token(mx)
    flops = bytes_ = f_i = idx_est = 0.0
    s, n_seq, chunks = prefill_shape(sc)
    ctx = sc.context
    attended = _attended(ctx, window)
    if topk:
        # DeepSeek Sparse Attention prefill: the absorbed (MQA-mode) kernel over each query's top-k latent rows,
        # or, where that costs more (short prompts), plain masked MHA over all keys, as DeepSeek-V3.2 serves
        # short prefills (tech report §2.1); top-k caps the keys per query as a window of k does
        sparse_pairs = _attended(ctx, topk)
        lat_mqa = 2 * (mx.kv_lora_rank or 0) + (mx.qk_rope_head_dim or 0)
        dense_d = (mx.qk_nope_head_dim or 0) + (mx.qk_rope_head_dim or 0) + (mx.v_head_dim or 0)
        if sparse_pairs * lat_mqa < attended * dense_d:
            attended = sparse_pairs
        else:
            topk = None  # priced as dense MLA prefill
    # keys attended per query over the whole prompt; a step holds prefill_tokens queries
    q_tokens = n_seq * s
    if mx.kind == "attention":
        d_v = mx.v_head_dim or mx.head_dim
        flops = 2.0 * q_tokens * attended * q_per_gpu * (mx.head_dim + d_v)
        # write this chunk's K/V (none on a KV-sharing layer), read it and the earlier chunks' cache
        bytes_ = q_tokens * (kv_gpu + kv_read_gpu) + (chunks - 1) / max(chunks, 1) * n_seq * ctx / 2 * kv_read_gpu
    elif mx.kind == "mla":
        nope, rope = mx.qk_nope_head_dim or 0, mx.qk_rope_head_dim or 0
        if topk:  # DSA prefill runs absorbed (MQA mode on the 576-wide latent, 512-wide output) over the top-k
            lat, kv_lora = (mx.kv_lora_rank or 0) + rope, mx.kv_lora_rank or 0
            flops = 2.0 * q_tokens * attended * q_per_gpu * (lat + kv_lora)
        else:
            d_v = mx.v_head_dim or nope
            flops = 2.0 * q_tokens * attended * q_per_gpu * (nope + rope + d_v)
        bytes_ = q_tokens * kv_gpu * 2
        if idx_tok:  # the indexer scores every earlier token of the prompt (causal)
            f_i, by_i, idx_est = _indexer(mx, q_tokens, _attended(ctx, None), n_seq * ctx * idx_tok, profile)
            flops, bytes_ = flops + f_i, bytes_ + by_i
    elif mx.kind in ("linear_attention", "mamba"):
        state = mixer_state_bytes(mx, b_kv) / sc.tp
        flops = 4.0 * q_tokens * state / b_kv
        bytes_ = 2.0 * n_seq * state
    return flops, bytes_, f_i, idx_est, attended, topk


def _indexer(mx: Mixer, queries: float, keys_per_query: float, key_bytes: float, profile) -> tuple[float, float, float]:
    """(FLOPs, bytes, ESTIMATED s) of the DSA lightning indexer scoring ``keys_per_query`` cached keys for each of
    ``queries`` queries on one GPU (its weights are replicated: every GPU scores all its index heads)."""
    return ops.dsa_indexer(queries, keys_per_query, mx.index_num_heads or 0, mx.index_head_dim or 0, key_bytes, profile)


def _kv_dtype(b_kv: float) -> str:
    """The measured kernels' name of a KV-cache element size (2 B bf16, 1 B fp8, 0.5625 B nvfp4)."""
    return "bfloat16" if b_kv >= 2 else ("fp8" if b_kv >= 1 else "nvfp4")


def _core_estimate_s(
    mx: Mixer,
    sc: Scenario,
    profile,
    regime: str,
    q_per_gpu: int,
    attended: float,
    window: int | None,
    flops: float,
    sparse: bool = False,
) -> float:
    """An attention / MLA core's ESTIMATE from the op models (colint.analysis.ops_attention), checked
    against measured TensorRT-LLM kernels (docs/time-model.md "Op model accuracy")."""

    kv = _kv_dtype(sc.kv_bytes_per_elem)
    tp = sc.tp
    if regime == "decode":
        ctx = max(1, int(round(attended)))
        if mx.kind == "mla":
            return ops.mla_decode(
                sc.decode_concurrency, ctx, q_per_gpu, mx.kv_lora_rank or 0, mx.qk_rope_head_dim or 0, kv, profile
            )[0]
        kv_heads = ceil_div(max(1, mx.num_kv_heads), min(tp, max(1, mx.num_kv_heads)))
        # a windowed layer reads ``attended`` tokens but its kernel splits the whole cached length (ops_attention)
        cached = max(ctx, ceil_div(sc.context, max(1, sc.kvp))) if window else ctx
        return ops.decode_attention(
            sc.decode_concurrency, cached, q_per_gpu, kv_heads, mx.head_dim, ctx if window else 0, kv, profile
        )[0]
    s, n_seq, _chunks = prefill_shape(sc)
    if mx.kind == "mla" and mx.index_topk and sparse:
        # DeepSeek Sparse Attention: the absorbed (MQA-mode) kernel over each query's top-k latent rows; a causal top-k
        # covers as many key tiles as a window of k (an estimate: the gathered rows are not contiguous)
        rope, kv_lora = mx.qk_rope_head_dim or 0, mx.kv_lora_rank or 0
        lat = kv_lora + rope
        b_kv = ops.KV_BYTES.get(kv, 2.0)
        prep = q_per_gpu * rope * 2.0 * 2.0 + lat * (2.0 + b_kv)
        est, _ = ops.context_attention(
            n_seq,
            s,
            q_per_gpu,
            1,
            lat,
            mx.index_topk,
            "bf16",
            kv,
            profile,
            v_head_dim=kv_lora,
            prep_bytes_per_token=prep,
        )
        w = min(mx.index_topk, s)
        model_flops = 2.0 * n_seq * q_per_gpu * (w * (w + 1) / 2.0 + (s - w) * w) * (lat + kv_lora)
    elif mx.kind == "mla":
        nope, rope = mx.qk_nope_head_dim or 0, mx.qk_rope_head_dim or 0
        est, _ = ops.mla_prefill(
            n_seq,
            s,
            q_per_gpu,
            nope + rope,
            mx.v_head_dim or nope,
            kv,
            profile,
            rope=rope,
            kv_lora=mx.kv_lora_rank or 0,
        )
        model_flops = 2.0 * n_seq * q_per_gpu * s * (s + 1) / 2.0 * (nope + rope + (mx.v_head_dim or nope))
    else:
        kv_heads = ceil_div(max(1, mx.num_kv_heads), min(tp, max(1, mx.num_kv_heads)))
        d_v = mx.v_head_dim or mx.head_dim
        est, _ = ops.context_attention(
            n_seq, s, q_per_gpu, kv_heads, mx.head_dim, window or 0, "bf16", kv, profile, v_head_dim=d_v
        )
        w = window if window and window < s else s
        model_flops = 2.0 * n_seq * q_per_gpu * (w * (w + 1) / 2.0 + (s - w) * w) * (mx.head_dim + d_v)
    # a chunk of a longer prompt also attends to the earlier chunks' cache: the same kernel, more keys
    return est * max(1.0, flops / model_flops) if model_flops > 0 else est


def expert_all_to_all_s(
    tokens: float, top_k: int, hidden: int, sc: Scenario, profile, experts: int = 0, groups: tuple[int, int] = (1, 1)
) -> float:
    """EP dispatch + combine of one MoE layer for ``tokens`` dispatched by one GPU (analyse passes
    its attention group's tokens / tp: the group's ranks split them, as DeepSeek's TP+SP attention
    and SGLang's DeepEP path do): the DeepEP op model of colint.analysis.collectives (an ESTIMATE;
    dispatch in the GEMM format (FP8 or narrower: FP8; NVFP4 as NVFP4; else BF16), combine in BF16;
    the low-latency kernels for decode-sized batches (<= 128 tokens per rank), else high-throughput;
    ``experts``: the layer's routed experts, which set the LL combine's warp groups per SM; ``groups``: its router's
    (expert groups, groups a token may pick), FFN.expert_groups and groups_per_token: a group-limited router sends a
    token to fewer ranks and domains (moe.group_limit_share))."""

    key = (tokens, type(tokens), top_k, hidden, experts, groups, sc.ep, sc.moe_tp, sc.gemm_format, id(profile))
    hit = _EXCHANGE_MEMO.get(key)
    if hit is not None and hit[0] is profile:
        return hit[1]
    fmt = sc.gemm_format
    wire = (
        "nvfp4"
        if fmt in ("nvfp4", "mxfp4")
        else ("fp8" if FORMATS.get(fmt, ("bf16", 2.0, 2.0))[1] <= 1.1 else "bfloat16")
    )
    backend = "deepep_ll" if tokens <= LL_MAX_TOKENS else "deepep_ht"
    ex = experts or None
    # with experts split moe_tp ways each pick goes to (and comes back from) the moe_tp GPUs of its expert
    picks = top_k * sc.moe_tp
    d, c = (
        moe_dispatch_combine(
            phase, tokens, hidden, picks, sc.ep, on_wire, profile, None, backend, ex, groups, sc.moe_tp
        )[0]
        for phase, on_wire in (("dispatch", wire), ("combine", "bfloat16"))
    )
    # the other exchange serving frameworks run: every rank all-gathers the EP domain's tokens, runs its own
    # experts on those routed to them and reduce-scatters the outputs back (vLLM's default all2all backend
    # allgather_reducescatter; TensorRT-LLM's attention-DP MoE without DeepEP). It moves every token to every rank,
    # not just to its top-k experts' ranks, but it is one NCCL collective each way: at a few tokens per rank it
    # beats DeepEP's low-latency kernels, whose flag waits hold them near a fixed ~70 us. The faster one is priced.
    gathered = tokens * sc.ep * hidden
    wire_bytes = 1.0 if wire == "fp8" else (0.5 + 1 / 16 if wire == "nvfp4" else 2.0)
    ag = collective("all_gather", gathered * wire_bytes, sc.ep, profile)[0]
    rs = collective("reduce_scatter", gathered * 2.0, sc.ep, profile)[0]
    return keep(_EXCHANGE_MEMO, key, (profile, min(d + c, ag + rs)), _EXCHANGE_MEMO_MAX)[1]


# expert_all_to_all_s's memo: (tokens, top-k, hidden, experts, router groups, ep, moe_tp, GEMM format, profile) ->
# (profile, s); analyse asks for the same exchange per MoE kind, regime and micro-batch, and again per re-analysis at
# the same ep.
_EXCHANGE_MEMO: dict[tuple, tuple] = {}
_EXCHANGE_MEMO_MAX = 4096  # a run meets a few dozen (tokens, shape, ep) per model: room for a bulk run's models


def ffn_exchange_s(ffn, tokens: float, hidden: int, sc: Scenario, profile) -> float:
    """expert_all_to_all_s of one MoE layer whose FFN is ``ffn`` (its top-k, routed experts and router groups), for
    ``tokens`` dispatched by one GPU."""
    groups = (ffn.expert_groups, ffn.groups_per_token)
    return expert_all_to_all_s(tokens, ffn.top_k, hidden, sc, profile, ffn.num_experts, groups)


def ep_all_to_all(sc: Scenario) -> bool:
    """Whether an EP deployment exchanges tokens all-to-all (dispatch + combine): only where its EP domain spans
    more GPUs than one attention group (attention data parallelism, ep > tp x kvp). Where ep <= tp x kvp every EP
    rank already holds all of its group's tokens after the attention all-reduce: each runs its own experts on the
    tokens routed to them and the FFN's all-reduce, which the layer pays anyway, sums their outputs (TensorRT-LLM's
    and vLLM's expert parallelism without attention DP) - no dispatch, no combine."""
    return sc.ep > 1 and sc.ep > sc.group_gpus


def tp_all_reduce_s(tokens: int, hidden: int, tp: int, profile) -> float:
    """One TP all-reduce of ``tokens`` x ``hidden`` BF16 activations (TensorRT-LLM's custom
    one-shot/two-shot kernel; colint.analysis.collectives; an ESTIMATE)."""

    return collective("all_reduce", tokens * hidden * 2.0, tp, profile, implementation="custom")[0]


def _kernels_per_layer(kind: LayerKind, gemm_rows: int, tp: int) -> tuple[int, int]:
    """(non-GEMM kernels, collectives) per layer: norms, rope/attention, activation, MoE routing."""
    other = 2  # two norms (residual add fused)
    for mx in kind_mixers(kind):  # Falcon-H1: attention and Mamba-2 side by side
        if mx.kind in ("attention", "mla", "linear_attention", "mamba"):
            other += 2  # rope/conv + attention/scan core
        if indexer_kv_bytes_per_token(mx):
            other += 2  # the DSA indexer's logits and its top-k selection
    if kind.ffn.kind == "dense":
        other += 1  # activation (SiLU·mul)
    elif kind.ffn.kind == "moe":
        other += 4  # top-k, permute, activation, finalize/unpermute
    collectives = 2 if tp > 1 else 0
    return other, collectives


def layer_extras(kind: LayerKind, tokens: int, h: int, scenario: Scenario, profile, tmod, regime: str = "decode"):
    """(non-GEMM kernels, collectives, elementwise bytes, elementwise + launch + MoE permute/finalize s,
    collective s) of one layer of ``kind`` at ``tokens`` per forward: analyse's per-layer extras, and
    the frontier's per-concurrency price (colint.analysis.frontier), both through colint.analysis.overlap."""
    b_act = 2.0  # BF16 activations between kernels
    bw = profile.memory_bytes_per_s
    launch_s = profile.launch_overhead_us * 1e-6
    group = scenario.group_gpus  # tp x kvp: the all-reduces after o_proj and the FFN span them (Helix)
    n_other, n_coll = _kernels_per_layer(kind, 0, group)
    act_bytes = ELEMENTWISE_PASSES * tokens * h * b_act
    elem_s = act_bytes / (bw * tmod.memory_efficiency) + n_other * launch_s
    coll_s = 0.0
    if n_coll:
        coll_s = n_coll * tp_all_reduce_s(tokens, h, group, profile)
    if kind.ffn.kind == "moe" and ep_all_to_all(scenario):
        # each GPU dispatches its share of its attention group's tokens (split over its tp x kvp ranks)
        coll_s += ffn_exchange_s(kind.ffn, tokens / group, h, scenario, profile)
        n_coll += 2
    if regime == "decode":
        coll_s += kvp_exchange_s(kind, tokens, scenario, profile)
    if kind.ffn.kind == "moe":
        elem_s += moe_data_s(kind, tokens * scenario.attention_dp_groups, h, scenario, profile, tmod)
    return n_other, n_coll, act_bytes, elem_s, coll_s


def masked_moe_layout(profile) -> bool:
    """Whether an FP8 block-scaled MoE layer runs DeepGEMM's masked grouped GEMM on ``profile``: the SM100 family,
    compute capability 10.x (DeepGEMM's own dispatch), whatever colint calls its architecture."""
    return profile.vendor == "nvidia" and str(profile.compute_capability).split(".")[0] == MASKED_MOE_CC_MAJOR


def moe_data_s(kind: LayerKind, t_global: float, h: int, scenario: Scenario, profile, tmod) -> float:
    """One MoE layer's work beside its grouped GEMMs and its helper kernels' launches, for ``t_global`` tokens of the
    EP domain (s; an ESTIMATE), as colint.analysis.ops_moe.moe_layer prices the measured layer: the permute,
    activation and finalize passes on the busiest of the moe_ep expert groups (whose GPUs each gather their experts'
    rows at the full hidden width); and where TensorRT-LLM runs an FP8 block-scaled MoE in DeepGEMM's masked layout
    (datacenter Blackwell), a group per local expert, touched or not (``moe_masked_group_us``). The op model's
    helper-kernel time (``moe_fixed_us``, ``moe_pick_ns``) stays the step's launch floors (docs/serving.md)."""
    ffn = kind.ffn
    experts = ffn.num_experts or 1
    moe_ep = scenario.moe_ep
    busiest = busiest_rank_factor(t_global, ffn.top_k, experts, moe_ep)
    rows_gpu = t_global * ffn.top_k / moe_ep * busiest
    # the tokens a GPU holds: its attention group's (or the EP domain's, all-gathered); where an all-to-all dispatches
    # to it, those routed to its experts
    held = rows_gpu / max(1, ffn.top_k) if ep_all_to_all(scenario) else t_global
    # ops_moe's passes: permute reads the tokens and writes their rows (GEMM format), the activation reads gate/up
    # and writes I (BF16), finalize reads the down GEMM's BF16 rows and writes the tokens
    i_shard = ceil_div(ffn.expert_intermediate_size or h, scenario.moe_tp if scenario.ep > 1 else scenario.group_gpus)
    n_up = (2 if ffn.expert_gated else 1) * i_shard
    b_act = FORMATS.get(scenario.gemm_format, ("bf16", 2.0, 2.0))[1]
    move_b = (held + rows_gpu) * h * (b_act + 2.0) + rows_gpu * (n_up + i_shard) * 2.0
    masked_s = 0.0
    if scenario.gemm_format == "fp8_block" and masked_moe_layout(profile):
        masked_s = tmod.moe_masked_group_us * 1e-6 * (ceil_div(experts, moe_ep) if scenario.ep > 1 else experts)
    return move_b / (profile.memory_bytes_per_s * tmod.memory_efficiency) + masked_s


def kvp_exchange_s(kind: LayerKind, tokens: int, scenario: Scenario, profile) -> float:
    """KV (Helix) parallelism's one exchange per attention layer (s; an ESTIMATE): the kvp GPUs of a
    KV-parallel group each hold 1/kvp of every sequence's context and attend to it; their partial
    outputs (BF16, ``tokens`` x the layer's query heads on this TP rank x d_v, plus a log-sum-exp per
    head) meet in one all-to-all over the kvp GPUs (Helix, NVIDIA 2025), then each rank combines its
    heads. 0 with kvp = 1 or for a layer without attention. A group's kvp GPUs sit tp apart (the TP ranks side
    by side): past tp x kvp > the NVLink domain its exchange leaves the domain too (CL704)."""

    kvp = scenario.kvp
    if kvp <= 1 or not tokens:
        return 0.0
    total = 0.0
    for mx in kind_mixers(kind):
        if mx.kind == "attention":
            d_v = mx.v_head_dim or mx.head_dim
        elif mx.kind == "mla":
            d_v = mx.kv_lora_rank or 0  # absorbed: the latent output, up-projected after the exchange
        else:
            continue
        heads = ceil_div(mx.num_heads, scenario.tp)
        msg = tokens * heads * (d_v * 2.0 + 4.0)
        total += collective("alltoall", msg, kvp, profile, span=scenario.group_gpus)[0]
    return total
