"""Attention op models (issue 12): decode and context attention, MLA decode and prefill.

Each function takes the shapes of ONE kernel call (scalars, or numpy arrays with ``xp=numpy``) and
returns ``(estimate_s, sol_s)``: the model's ESTIMATE and the plain roofline
max(FLOPs / peak, bytes / bandwidth). Constants come from the architecture's time model
(``_architectures.yaml``: ``attention_efficiency``, ``attention_floor_us``, ``attention_tile``,
``softmax_exp_per_clk``, ``softmax_overlap``), never from one GPU.

* Decode (FlashDecoding / TensorRT-LLM XQA): bound by the KV bytes read at long context,
  t_mem = b·L·2·h_kv·d·b_kv / (BW·η_mem·η_grid), with η_grid the share of HBM bandwidth a grid of
  b·h_kv·⌈L/chunk⌉ CTAs can pull (as for skinny GEMMs); at short context the kernel floor.
* Context (FlashAttention-2/3/4): FLOPs = 4·b·h_q·d·(tiled query-key pairs); causal masking skips
  the tiles above the diagonal (Dao 2023, §3.1), a window keeps ⌈w/tile⌉+1 key tiles per query tile;
  tiles over b·h_q·⌈S/tile⌉ CTAs are quantized to whole waves over the SMs; the softmax exp runs on
  the SFU at ``softmax_exp_per_clk`` per SM per clock, partly overlapped with the MMAs (FA3 §3.1).
* MLA decode runs absorbed on the latent (DeepSeek-V2 §2.1.3; FlashMLA): per token
  kv_lora + rope (576) elements read; FLOPs 2·h·L·(576 + 512); heads pad to the MMA tile's M.
  Without a split-KV MLA kernel (sm80: FlashMLA and XQA-MLA are sm90+) one CTA per sequence walks the
  context (``mla_serial_cycles``): time ∝ context, flat in heads at small batch (MEAS-OPS, A100).
* MLA prefill is plain attention with d_qk = nope + rope (192) and d_v (128); its preprocessing pass
  rotates only the rope parts and appends the 576-wide latent.
* Context attention's QKV preprocessing (RoPE + KV-cache append) is a separate streaming kernel
  before the FMHA: its bytes (Q, K, V read, rotated Q and K written) add to the time.
* DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2 tech report §2.1; DeepGEMM's
  ``fp8_mqa_logits`` / ``fp8_paged_mqa_logits``, then a top-k): each query scores every cached token with
  ``index_heads`` FP8 heads of ``index_head_dim`` against one shared FP8 key, writes FP32 logits and
  selects its top-k from them (:func:`dsa_indexer`); the attention core then attends those k tokens.
"""

from __future__ import annotations

from colint.analysis.gemm_model import Scalar
from colint.hardware_profiles import time_model

KV_BYTES = {
    "bfloat16": 2.0,
    "bf16": 2.0,
    "float16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "nvfp4": 0.5 + 1 / 16,
    "fp4": 0.5 + 1 / 16,
}
XQA_MAX_GROUP = 32  # query heads per KV head that one XQA CTA serves (MEAS: jump between 32 and 48)
DECODE_CHUNK = 256  # tokens per CTA of a multi-block decode kernel (TensorRT-LLM XQA/MMHA, FlashDecoding)
# Hopper XQA's short call on an FP8 cache (decode_floor_us "gqa_fp8") serves head_dim >= 128 and GQA groups of
# 2-16 query heads only (MEAS-OPS H100, b <= 4, step <= 63: 5.7-7.7 us there; head_dim 64 or groups >= 32: 8-9.3 us,
# the BF16 call's floor)
XQA_FP8_MAX_GROUP = 16
XQA_FP8_MIN_HEAD_DIM = 128
# TensorRT-LLM's XQA / MMHA decode kernels are built for head sizes up to 256; larger heads (512) run on
# FlashInfer's decode kernel (MEAS-OPS B200: every head_dim 512 row is kernel_source torch_flow_flashinfer)
XQA_MAX_HEAD_DIM = 256


def _attention_peak(profile, tmod, dtype: str) -> tuple[float, float]:
    """(peak FLOP/s, sustained fraction) of the attention math in ``dtype`` (bf16 or fp8)."""
    fmt = "fp8" if dtype in ("fp8", "float8") and profile.has("fp8") else "bf16"
    if not profile.has(fmt):
        fmt = next(iter(profile.peak_tflops))
    eff = tmod.attention_efficiency.get(fmt, tmod.attention_efficiency.get("bf16", 0.6))
    return profile.peak_flops(fmt), eff


def _overlap(t_a, t_b, p: float, xp):
    """(t_a^p + t_b^p)^(1/p): two imperfectly overlapped times (the GEMM model's form)."""
    hi = xp.maximum(t_a, t_b)
    lo = xp.minimum(t_a, t_b)
    return hi * (1.0 + (lo / xp.maximum(hi, 1e-30)) ** p) ** (1.0 / p)


def _grid_bandwidth(ctas, profile, tmod, xp):
    """η_grid: share of HBM bandwidth ``ctas`` CTAs pull (per-SM share as in the GEMM model)."""
    sms = profile.sm_count
    return xp.minimum(1.0, xp.minimum(ctas, sms) * tmod.per_sm_bandwidth_share / sms)


def decode_kv_bytes_per_s(profile, tmod) -> float:
    """The rate (bytes/s) a decode kernel streams the KV cache at: its long contiguous pages and deep prefetch
    sustain more of HBM than a skinny GEMM's weight read (the profile's decode_memory_efficiency, else the GEMM
    memory efficiency)."""
    return profile.memory_bytes_per_s * (tmod.decode_memory_efficiency or tmod.memory_efficiency)


def decode_attention(
    b,
    ctx,
    heads,
    kv_heads,
    head_dim,
    window,
    kv_dtype: str,
    profile,
    tmod=None,
    xp=Scalar,
    q_dtype: str = "bf16",
    backend: str | None = None,
):
    """One decode step of GQA/MHA attention for ``b`` sequences with ``ctx`` cached tokens each
    (the new token included), ``heads``/``kv_heads`` on this GPU; ``window`` 0 = full. ``backend``
    "flashinfer" or "xqa" (None: FlashInfer for head_dim > ``XQA_MAX_HEAD_DIM``, as TensorRT-LLM runs it).

    A GQA group of up to ``XQA_MAX_GROUP`` query heads shares one CTA and one read of its KV head
    (TensorRT-LLM XQA); a larger group runs one work item per query head, each reading the KV head
    again (MEAS: the per-item time jumps between groups of 32 and 48 on A100, H100 and B200)."""
    tmod = tmod or time_model(profile)
    b_kv = KV_BYTES.get(kv_dtype, 2.0)
    if xp is Scalar:
        length = min(ctx, window) if window and window > 0 else ctx
    else:
        length = xp.where(window > 0, xp.minimum(ctx, window), ctx)
    group = heads / xp.maximum(kv_heads, 1) if xp is not Scalar else heads / max(kv_heads, 1)
    split = group > XQA_MAX_GROUP
    readers = xp.where(split, heads, kv_heads)  # work items (CTAs) per sequence
    # HBM serves each KV head once; past XQA's group the other query heads' re-reads hit L2 (t_split below)
    kv_bytes = b * length * 2.0 * kv_heads * head_dim * b_kv
    qo_bytes = b * heads * head_dim * 2.0 * 2.0
    flops = 4.0 * b * heads * length * head_dim
    peak, eff = _attention_peak(profile, tmod, q_dtype)
    bw = profile.memory_bytes_per_s
    sol = xp.maximum(flops / peak, (b * length * 2.0 * kv_heads * head_dim * b_kv + qo_bytes) / bw)
    chunks = -(-length // DECODE_CHUNK)
    eta_grid = _grid_bandwidth(b * readers * chunks, profile, tmod, xp)
    t_mem = (kv_bytes + qo_bytes) / (decode_kv_bytes_per_s(profile, tmod) * eta_grid)
    # split-KV (multi-block) mode: when one CTA per work item would leave SMs idle, each item's cached
    # length is split over CTAs whose partial (max, sum, O) a combine step merges; the split follows the
    # cached length, not the window (a windowed call still splits, and its CTAs outside the window exit)
    multi_block = (-(-ctx // DECODE_CHUNK) > 1) & (b * readers < profile.sm_count)
    t_combine = xp.where(multi_block, tmod.decode_combine_us * 1e-6, 0.0)
    # per work item (one sequence x one KV head, or x one query head past XQA's group): prologue, Q load,
    # softmax finalize, O store, in SM cycles; a GQA item also pays per query head of its group. The
    # cycles are read at head_dim 128; about half of them (Q, O and the per-token dot products over d,
    # and the shared memory that sets how many items an SM holds) scale with head_dim (MEAS-OPS, step <= 3,
    # b >= 1024, d 64 / 128 / 256: B200 BF16 GQA 2,400 / 2,900 / 4,850; H100 BF16 7,500 / 8,400 / 11,700)
    d_scale = 0.5 + 0.5 * head_dim / 128.0
    cyc = tmod.decode_item_cycles
    gqa_base = cyc.get("gqa_fp8", cyc.get("gqa", 3000.0)) if b_kv <= 1.0 else cyc.get("gqa", 3000.0)
    per_item = xp.where(split | (group <= 1), cyc.get("mha", 3000.0), gqa_base + cyc.get("per_head", 0.0) * group)
    clock = (profile.clock_mhz or 1500.0) * 1e6
    t_items = b * readers * per_item * d_scale / (profile.sm_count * clock)
    t_math = flops / (peak * eff) + t_items
    # past XQA's group, one CTA per query head walks the cached tokens loading K and V (2·d elements a token)
    # from L2 at decode_split_elems_per_clk per SM; b·heads CTAs share the SMs (MEAS-OPS, group >= 64, step >= 1023:
    # 13-14 elements per SM clock at d 128 and 256 on A100, H100 and B200 alike, BF16 and FP8; ~20 at d 64)
    t_split = b * heads * length * 2.0 * head_dim / tmod.decode_split_elems_per_clk
    t_math = t_math + xp.where(split, t_split / (xp.minimum(b * heads, profile.sm_count) * clock), 0.0)
    floor_us = tmod.attention_floor_us
    fp8_floor = tmod.decode_floor_us.get("gqa_fp8") if b_kv <= 1.0 else None
    if fp8_floor is not None:  # XQA on an FP8 cache: its own (shorter) call, for the GQA shapes it serves
        served = (group > 1) & (group <= XQA_FP8_MAX_GROUP) & (head_dim >= XQA_FP8_MIN_HEAD_DIM)
        floor_us = xp.where(served, fp8_floor, floor_us)
    # FlashInfer's decode call on an FP8 cache has its own, longer floor (B200: 13 us against 9-11 for BF16)
    fi_fp8_floor = tmod.decode_floor_us.get("flashinfer_fp8") if b_kv <= 1.0 else None
    if fi_fp8_floor is not None:
        flashinfer = (head_dim > XQA_MAX_HEAD_DIM) if backend is None else (backend == "flashinfer")
        floor_us = xp.where(flashinfer, fi_fp8_floor, floor_us)
    est = _overlap(t_math, t_mem, tmod.overlap_p, xp) + t_combine + floor_us * 1e-6
    return est, sol


def _causal_tiles(q_tiles, window_tiles, causal: bool, xp):
    """Key tiles computed over all query tiles of one (sequence, head): Σ_i min(i, c) for i = 1..T,
    c = the window's key tiles (c >= T: no window)."""
    t = q_tiles
    c = xp.minimum(window_tiles, t)
    if not causal:
        return t * c
    return c * (c + 1) / 2.0 + (t - c) * c


def context_attention(
    b,
    seq,
    heads,
    kv_heads,
    head_dim,
    window,
    dtype: str,
    kv_dtype: str,
    profile,
    tmod=None,
    xp=Scalar,
    v_head_dim=None,
    causal: bool = True,
    prep_bytes_per_token=None,
):
    """One prefill of ``b`` sequences of ``seq`` tokens (no cached prefix), ``heads`` on this GPU.

    The op is two kernels in sequence (TensorRT-LLM's context attention: QKV preprocessing, then
    FMHA): the preprocessing pass reads the projected Q, K, V, rotates Q and K (RoPE) in place and
    appends K, V to the KV cache, a streaming kernel whose time adds to the FMHA's.
    ``prep_bytes_per_token`` overrides that pass's bytes per token (MLA: its latent cache)."""
    tmod = tmod or time_model(profile)
    d_v = head_dim if v_head_dim is None else v_head_dim
    # a sequence shorter than the tile runs on the smallest MMA-M tile that holds it (FMHA kernels
    # ship 64-row variants; wgmma M = 64): padding is to that, not to the full 128x128 tile
    small = profile.tiles.min_m_tile
    if xp is Scalar:
        tile = min(tmod.attention_tile, -(-seq // small) * small)
    else:
        tile = xp.minimum(tmod.attention_tile, -(-seq // small) * small)
    b_kv = KV_BYTES.get(kv_dtype, 2.0)
    b_q = 1.0 if dtype in ("fp8", "float8") else 2.0
    q_tiles = -(-seq // tile)
    if xp is Scalar:
        w_tiles = (-(-window // tile) + 1) if window and window > 0 else q_tiles
    else:
        w_tiles = xp.where(window > 0, -(-window // tile) + 1, q_tiles)
    tiles = _causal_tiles(q_tiles, w_tiles, causal, xp)
    pairs_tiled = b * heads * tiles * tile * tile
    # exact causal pairs for the roofline: s(s+1)/2 (window: capped at w per query)
    if xp is Scalar:
        w = window if window and 0 < window < seq else seq
    else:
        w = xp.where((window > 0) & (window < seq), window, seq)
    pairs = b * heads * (w * (w + 1) / 2.0 + (seq - w) * w) if causal else b * heads * seq * seq
    flops = 2.0 * pairs * (head_dim + d_v)
    flops_tiled = 2.0 * pairs_tiled * (head_dim + d_v)
    bytes_ = b * seq * (heads * head_dim * b_q + kv_heads * (head_dim + d_v) * (2.0 + b_kv) + heads * d_v * 2.0)
    peak, eff = _attention_peak(profile, tmod, dtype)
    bw = profile.memory_bytes_per_s
    sol = xp.maximum(flops / peak, bytes_ / bw)
    ctas = b * heads * q_tiles
    sms = profile.sm_count
    eta_wave = ctas / (-(-ctas // sms) * sms)
    t_mma = flops_tiled / (peak * eff * eta_wave)
    clock = (profile.clock_mhz or 1500.0) * 1e6
    t_exp = pairs_tiled / (sms * clock * tmod.softmax_exp_per_clk * eta_wave)
    # per-CTA fixed cycles (Q-tile load, softmax finalize, O store; rope and KV-cache append per token)
    t_cta = (ctas * tmod.context_cta_cycles + b * heads * tiles * tmod.context_tile_cycles) / (sms * clock)
    t_math = t_mma + (1.0 - tmod.softmax_overlap) * t_exp + t_cta
    t_mem = bytes_ / (bw * tmod.memory_efficiency)
    # QKV preprocessing (TensorRT-LLM invokeQKVPreprocessing: RoPE + KV-cache append): reads Q, K, V and
    # writes the rotated Q and K back in BF16 before the FMHA reads them (its cache write is in bytes_)
    if prep_bytes_per_token is None:
        prep_bytes_per_token = (heads + 2.0 * kv_heads) * head_dim * 2.0 + (heads + kv_heads) * head_dim * 2.0
    t_prep = b * seq * prep_bytes_per_token / (bw * tmod.memory_efficiency)
    est = _overlap(t_math, t_mem, tmod.overlap_p, xp) + t_prep + tmod.context_floor_us * 1e-6
    return est, sol


def mla_decode(b, ctx, heads, kv_lora: int, rope: int, kv_dtype: str, profile, tmod=None, xp=Scalar):
    """One absorbed-MLA decode step: ``b`` sequences, ``ctx`` cached tokens, ``heads`` on this GPU."""
    tmod = tmod or time_model(profile)
    b_kv = KV_BYTES.get(kv_dtype, 2.0)
    lat = kv_lora + rope
    kv_bytes = b * ctx * lat * b_kv
    q_bytes = b * heads * (lat + kv_lora) * 2.0
    flops = 2.0 * b * heads * ctx * (lat + kv_lora)
    head_tile = profile.tiles.min_m_tile
    heads_padded = -(-heads // head_tile) * head_tile
    peak, eff = _attention_peak(profile, tmod, "bf16")
    bw = profile.memory_bytes_per_s
    sol = xp.maximum(flops / peak, (kv_bytes + q_bytes) / bw)
    chunks = -(-ctx // DECODE_CHUNK)
    eta_grid = _grid_bandwidth(b * (heads_padded // head_tile) * chunks, profile, tmod, xp)
    t_mem = (kv_bytes + q_bytes) / (bw * tmod.memory_efficiency * eta_grid)
    clock = (profile.clock_mhz or 1500.0) * 1e6
    # per-(sequence, head tile) work item, as for GQA decode (the latent is one shared KV head)
    t_items = b * (heads_padded // head_tile) * tmod.decode_item_cycles.get("gqa", 3000.0) / (profile.sm_count * clock)
    t_math = flops * heads_padded / heads / (peak * eff) + t_items
    floor_us = tmod.mla_floor_us if tmod.mla_floor_us is not None else tmod.attention_floor_us
    est = _overlap(t_math, t_mem, tmod.overlap_p, xp)
    ser = tmod.mla_serial_cycles
    if ser:
        # no split-KV kernel (sm80): one CTA per sequence walks its context token by token; a lone CTA
        # is bound by its dependent chain, a full GPU by the SMs' throughput over b x heads
        per_tok = _overlap(
            ser.get("latency", 0.0),
            b * (ser.get("seq", 0.0) + ser.get("head", 0.0) * heads) / profile.sm_count,
            tmod.overlap_p,
            xp,
        )
        est = xp.maximum(est, ctx * per_tok / clock)
    return est + floor_us * 1e-6, sol


def mla_prefill(
    b,
    seq,
    heads,
    qk_head_dim: int,
    v_head_dim: int,
    kv_dtype: str,
    profile,
    tmod=None,
    xp=Scalar,
    *,
    rope: int,
    kv_lora: int,
):
    """One MLA prefill (not absorbed: per-head K of nope + rope, V of v_head_dim), no cached prefix.

    Its preprocessing pass (TensorRT-LLM's MLA RoPE context kernel) rotates only the ``rope``-wide
    parts of Q and K in place and appends the (``kv_lora`` + ``rope``)-wide latent to the cache; the
    per-head K and V come from the kv_b up-projection GEMM, outside this op."""
    b_kv = KV_BYTES.get(kv_dtype, 2.0)
    prep = heads * rope * 2.0 * 2.0 + (kv_lora + rope) * (2.0 + b_kv)
    return context_attention(
        b,
        seq,
        heads,
        heads,
        qk_head_dim,
        0 if xp is Scalar else seq * 0,
        "bf16",
        kv_dtype,
        profile,
        tmod,
        xp,
        v_head_dim=v_head_dim,
        prep_bytes_per_token=prep,
    )


# FP32 logits per (query, key), written by the scoring kernel and read by the top-k (DeepGEMM)
INDEXER_LOGIT_BYTES = 4.0
INDEXER_KERNELS = 2  # the scoring kernel and the top-k selection


def dsa_indexer(queries, keys_per_query, index_heads: int, index_dim: int, key_bytes, profile, tmod=None, xp=Scalar):
    """The DSA lightning indexer for ``queries`` queries that each score ``keys_per_query`` cached keys (mean) with
    ``index_heads`` heads of ``index_dim`` (FP8 MMA), reading ``key_bytes`` of its FP8 key cache and writing then
    reading one FP32 logit per (query, key) for the top-k. Returns (FLOPs, bytes, ESTIMATED s): the slower of the
    derated FP8 math and the memory traffic, plus one kernel floor for each of its two kernels."""
    tmod = tmod or time_model(profile)
    pairs = queries * keys_per_query
    flops = 2.0 * pairs * index_heads * index_dim
    bytes_ = key_bytes + 2.0 * pairs * INDEXER_LOGIT_BYTES
    peak, eff = _attention_peak(profile, tmod, "fp8")
    t_math = flops / (peak * eff)
    t_mem = bytes_ / (profile.memory_bytes_per_s * tmod.memory_efficiency)
    est = xp.maximum(t_math, t_mem) + INDEXER_KERNELS * tmod.attention_floor_us * 1e-6
    return flops, bytes_, est
