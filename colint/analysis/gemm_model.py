"""The GEMM time model (docs/design.md §5): speed of light and an estimate, side by side.

For ``C[M,N] = A[M,K] · W[K,N]`` in a format (``bf16``, ``fp8``, ``nvfp4``, ...):

* FLOPs = 2·M·N·K; bytes = M·K·b_a + K·N·b_w + M·N·b_out, block-scale bytes included
  (NVFP4 0.5 + 1/16 = 0.5625 B/element, MXFP4 0.5 + 1/32 = 0.53125, FP8 1×128 blocks
  1 + 4/128 for activations and 1 + 4/128² for 128×128 weight blocks).
* **Speed of light** (``sol_s``): max(FLOPs / peak, bytes / bandwidth) — the plain roofline.
* **Estimate** (``estimate_s``): for each tile the profile's kernels use (and split-K when the
  grid is smaller than one wave), the time of
  ``max(FLOPs / (peak·η_c(format)·η_tile·η_wave·η_k·η_fill), bytes / (BW·η_mem·η_grid)) + floor``
  and the fastest such kernel (what an autotuner picks). η_tile pads M and N to the tile,
  η_k pads K to the format's K-tile, η_wave pads the tile count to whole waves over the SMs,
  η_fill = K/(K + k_fill·K-tile) charges each tile's pipeline prologue/epilogue, η_grid caps
  the bandwidth a grid of few CTAs can pull, and the floor is a kernel's fixed time. The
  constants (η_c per format, k_fill, η_mem, floor, per-SM bandwidth share) belong to the
  architecture, not to one GPU (``colint/hardware_profiles/_architectures.yaml``).

``estimate(...)`` is pure Python for one GEMM; ``estimate_arrays(...)`` is the same model on
numpy arrays (numpy is imported inside it) for thousands of rows.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from colint.util.memo import keep

from colint.errors import ProfileError
from colint.hardware_profiles import time_model
from colint.util.records import dataclass

# format -> (hardware format it runs on, bytes per activation element, bytes per weight element)
# Sources: docs/design.md §5 (NVFP4 0.5 + 1/16, MXFP4 0.5 + 1/32); FP8 block scaling = one FP32 scale
# per 1×128 activation block and per 128×128 weight block (DeepSeek-V3 style; cuBLASLt
# VEC128_32F / BLK128x128_32F); weight-only int8/int4 dequantize to BF16 and use the BF16 path.
FORMATS: dict[str, tuple[str, float, float]] = {
    "tf32": ("tf32", 4.0, 4.0),
    "bf16": ("bf16", 2.0, 2.0),
    "fp16": ("fp16", 2.0, 2.0),
    "fp8": ("fp8", 1.0, 1.0),
    "fp8_block": ("fp8_block", 1.0 + 4 / 128, 1.0 + 4 / (128 * 128)),
    "int8": ("int8", 1.0, 1.0),
    "fp6": ("fp6", 0.75 + 1 / 32, 0.75 + 1 / 32),
    "mxfp8": ("mxfp8", 1.0 + 1 / 32, 1.0 + 1 / 32),
    "nvfp4": ("nvfp4", 0.5 + 1 / 16, 0.5 + 1 / 16),
    "mxfp4": ("mxfp4", 0.5 + 1 / 32, 0.5 + 1 / 32),
    "int8_wo": ("bf16", 2.0, 1.0),
    "int4_wo": ("bf16", 2.0, 0.5),
}
# Output element sizes (--out-dtype); block-scaled outputs carry their scale bytes.
OUT_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "fp8_block": 1.0 + 4 / 128,
    "mxfp8": 1.0 + 1 / 32,
    "nvfp4": 0.5 + 1 / 16,
    "mxfp4": 0.5 + 1 / 32,
    "int32": 4.0,
}
# Block size of a format's scales along K (CL4xx reads these): elements per scale.
SCALE_BLOCK: dict[str, int] = {"fp8_block": 128, "mxfp8": 32, "fp6": 32, "nvfp4": 16, "mxfp4": 32}
DEFAULT_OUT = "bf16"
SPLIT_K = (1, 2, 4, 8, 16)  # split-K factors a library uses when the grid is under one wave
# Extra HBM bytes per activation element for quantizing BF16 activations before the GEMM:
# read BF16 (2 B) + write the quantized copy; per-tensor FP8 also reads once more for its amax.
QUANT_PASS_BYTES: dict[str, float] = {
    "fp8": 2.0 + 2.0 + 1.0,
    "fp8_block": 2.0 + FORMATS["fp8_block"][1],
    "int8": 2.0 + 1.0,
    "nvfp4": 2.0 + FORMATS["nvfp4"][1],
    "mxfp4": 2.0 + FORMATS["mxfp4"][1],
    "mxfp8": 2.0 + FORMATS["mxfp8"][1],
    "fp6": 2.0 + FORMATS["fp6"][1],
}


# Other spellings of the formats (measurement files, frameworks) -> colint's names.
ALIASES: dict[str, str] = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float8": "fp8",
    "e4m3": "fp8",
    "fp8_e4m3": "fp8",
    "sq": "int8",
    "w8a8": "int8",
    "w8a16": "int8_wo",
    "w4a16": "int4_wo",
    "float32": "tf32",
}


def canonical(dtype: str) -> str:
    """colint's name of a format spelled ``bfloat16``, ``sq``, ``w4a16``, ..."""
    d = dtype.strip().lower()
    return ALIASES.get(d, d)


def check_format(profile, dtype: str) -> str:
    """The hardware format ``dtype`` runs on; ProfileError when unknown or not native."""
    if dtype not in FORMATS:
        raise ProfileError(f"unknown GEMM format '{dtype}'; known: {', '.join(FORMATS)}")
    hw = FORMATS[dtype][0]
    if not profile.has(hw):
        raise ProfileError(
            f"format {dtype} is not native on {profile.name} ({profile.architecture}); "
            f"native: {', '.join(profile.peak_tflops)}"
        )
    return hw


@dataclass(frozen=True)
class GemmTime:
    """One GEMM on one GPU. Times in seconds; ``*_s`` fields ending in estimate are estimates."""

    m: int
    n: int
    k: int
    dtype: str
    out_dtype: str
    flops: float
    bytes: float  # read + write, HBM, minimal traffic
    read_bytes: float
    write_bytes: float
    arithmetic_intensity: float  # FLOP/B
    ridge: float  # dense peak / bandwidth, FLOP/B
    bound: str  # "memory" | "compute" (speed of light)
    math_s: float  # FLOPs / dense peak
    memory_s: float  # bytes / bandwidth
    read_s: float
    write_s: float
    sol_s: float  # plain roofline: max(math_s, memory_s)
    estimate_s: float  # the time model's estimate
    estimate_bound: str  # what limits the estimate: "memory" | "compute" | "floor"
    tile_m: int  # tile of the estimate's kernel
    tile_n: int
    tile_sms: int
    split_k: int
    tile_efficiency: float  # M·N / padded M·N of that tile
    k_efficiency: float  # K / K padded to the format's K-tile
    wave_efficiency: float  # tiles / (waves · tile slots)
    m_star: float  # M at which this N, K turns compute-bound (speed of light); inf if never

    def public(self) -> dict:
        keys = (
            "m",
            "n",
            "k",
            "dtype",
            "flops",
            "bytes",
            "arithmetic_intensity",
            "ridge",
            "bound",
            "math_s",
            "memory_s",
            "sol_s",
            "estimate_s",
            "tile_efficiency",
            "wave_efficiency",
        )
        d = asdict(self)
        out = {k: d[k] for k in keys}
        out.update({k: d[k] for k in d if k not in out})
        return out


def tile_count(m: int, n: int, tm: int, tn: int) -> int:
    """Tiles covering an M×N output: ⌈M/tm⌉·⌈N/tn⌉ (257×256 on 128×128 → 6)."""
    return -(-m // tm) * -(-n // tn)


def tile_efficiency(m: int, n: int, tm: int, tn: int) -> float:
    """η_tile = M·N / (⌈M/tm⌉·tm · ⌈N/tn⌉·tn)."""
    return (m * n) / (-(-m // tm) * tm * -(-n // tn) * tn)


def wave_efficiency(tiles: int, slots: int) -> float:
    """η_wave = tiles / (⌈tiles/slots⌉ · slots)."""
    return tiles / (-(-tiles // slots) * slots)


def m_star(n: int, k: int, b_a: float, b_w: float, b_out: float, ridge: float) -> float:
    """Smallest M whose arithmetic intensity 2MNK/(M·K·b_a + K·N·b_w + M·N·b_out) reaches the ridge.

    Solves 2MNK = ridge·(M(K·b_a + N·b_out) + K·N·b_w); inf when the limit I∞ stays below the ridge.
    """
    denom = 2.0 * n * k - ridge * (k * b_a + n * b_out)
    if denom <= 0:
        return math.inf
    return ridge * k * n * b_w / denom


class Scalar:
    """The numpy functions the model core uses, for plain Python numbers."""

    maximum = staticmethod(max)
    minimum = staticmethod(min)

    @staticmethod
    def where(cond, a, b):
        return a if cond else b

    @staticmethod
    def any(cond) -> bool:
        return bool(cond)


# One search over tile x split-K candidates whose hoisted invariants keep every float identical to _core_scalar's
# (tests/analysis compare the two); split up, its loop would pass some twenty locals around.
# long: one candidate search, its locals shared (above)
def _core(m, n, k, dtype: str, profile, out_dtype: str, model, xp, standalone: bool = True) -> dict:
    """The time model on scalars (xp=Scalar) or numpy arrays (xp=numpy): one implementation.

    ``standalone``: the GEMM is called as one op, as the measurements do, paying its format's
    activation quantization (extra kernels and a pass over the activations). Inside a served model
    that quantization is fused into the previous kernel (norm/activation epilogue): no extra cost."""
    hw = FORMATS[dtype][0]
    _, b_a, b_w = FORMATS[dtype]
    peak = profile.peak_flops(hw)
    bw = profile.memory_bytes_per_s
    mf, nf, kf = m * 1.0, n * 1.0, k * 1.0
    flops = 2.0 * mf * nf * kf
    read_b = mf * kf * b_a + kf * nf * b_w
    write_b = mf * nf * OUT_BYTES[out_dtype]
    total_b = read_b + write_b
    math_s, memory_s = flops / peak, total_b / bw
    eta_c = model.compute_efficiency.get(
        dtype, model.compute_efficiency.get(hw, min(model.compute_efficiency.values()))
    )
    kt = profile.tiles.k_tile.get(hw, 64)
    k_steps = -(-k // kt)
    eta_k = kf / (k_steps * kt)
    bw_eff = bw * model.memory_efficiency
    # the format's quantized-linear path: fixed kernels + a pass over the activations
    fixed_s = model.kernel_floor_us * 1e-6
    if standalone:
        fixed_s = fixed_s + model.format_overhead_us.get(dtype, 0.0) * 1e-6
        fixed_s = fixed_s + mf * kf * QUANT_PASS_BYTES.get(dtype, 0.0) / bw_eff
    max_split = model.max_split_k.get(dtype, SPLIT_K[-1])
    gemv_m = model.gemv_max_m.get(dtype, 0)
    # loop invariants, hoisted as the same operations in the same order (the floats do not change)
    floor_s = model.kernel_floor_us * 1e-6
    fill = model.k_fill_tiles * kt
    share, sm_count = model.per_sm_bandwidth_share, profile.sm_count
    p_exp = model.overlap_p
    inv_p = 1.0 / p_exp
    peak_c = peak * eta_c
    best = None
    for tile_m, tile_n, sms in [
        (t.m, t.n, t.sms) for t in profile.tiles.format_candidates.get(hw, profile.tiles.candidates)
    ]:
        slots = max(1, sm_count // sms)
        tm_count, tn_count = -(-m // tile_m), -(-n // tile_n)
        tiles = tm_count * tn_count
        eta_tile = (mf * nf) / (tm_count * tile_m * tn_count * tile_n)
        peak_ct = peak_c * eta_tile
        for split in SPLIT_K:
            if split > max_split and not xp.any(m <= gemv_m):
                break
            ok = True if split == 1 else (tiles * split <= slots) & (split <= k_steps)
            if split > max_split:
                ok = ok & (m <= gemv_m)
            if not xp.any(ok):
                break
            units = tiles * split
            eta_wave = units / (-(-units // slots) * slots)
            k_per = k_steps * kt / split
            eta_fill = k_per / (k_per + fill)
            t_math = flops / (peak_ct * eta_wave * eta_k * eta_fill)
            extra_b = 0.0 if split == 1 else 2.0 * split * mf * nf * 4.0  # FP32 partials out and back in
            active_sms = xp.minimum(units, slots) * sms
            eta_grid = xp.minimum(1.0, active_sms * share / sm_count)
            t_mem = (total_b + extra_b) / (bw_eff * eta_grid)
            hi = xp.maximum(t_math, t_mem)
            lo = xp.minimum(t_math, t_mem)
            t = hi * (1.0 + (lo / hi) ** p_exp) ** inv_p + fixed_s
            if split > 1:
                t = t + floor_s  # the split-K reduction is a second kernel
            if best is not None:
                better = ok & (t < best["estimate_s"])
                if not xp.any(better):
                    continue
            cand = _kernel_fields(t, t_math, t_mem, tile_m, tile_n, sms, split, eta_tile, eta_wave)
            if best is None:
                best = cand
                continue
            for key, val in cand.items():
                best[key] = xp.where(better, val, best[key])
    assert best is not None  # split 1 of the first tile is always a candidate
    best.update(_roofline_fields(flops, read_b, write_b, math_s, memory_s, bw, peak, eta_k, fixed_s, xp.maximum))
    return best


def _kernel_fields(estimate_s, t_math, t_mem, tile_m, tile_n, sms, split, eta_tile, eta_wave) -> dict:
    """The fields of an estimate that describe the kernel chosen (its time, tile, split-K, efficiencies), for
    _core (arrays: one kernel per GEMM, merged with numpy's where; _core_scalar returns them as a tuple)."""
    return {
        "estimate_s": estimate_s,
        "t_math": t_math,
        "t_mem": t_mem,
        "tile_m": tile_m,
        "tile_n": tile_n,
        "tile_sms": sms,
        "split_k": split,
        "tile_efficiency": eta_tile,
        "wave_efficiency": eta_wave,
    }


def _roofline(flops, read_b, write_b, math_s, memory_s, bw, peak, maximum) -> tuple:
    """(bytes, read s, write s, the plain roofline's s, arithmetic intensity, ridge) of a GEMM, which do not depend
    on the kernel chosen: for _core (``maximum`` = numpy's, element-wise) and _estimate (the builtin)."""
    bytes_ = read_b + write_b
    return bytes_, read_b / bw, write_b / bw, maximum(math_s, memory_s), flops / bytes_, peak / bw


def _roofline_fields(flops, read_b, write_b, math_s, memory_s, bw, peak, eta_k, fixed_s, maximum) -> dict:
    """The fields of an estimate that do not depend on the kernel chosen (FLOPs, bytes, the plain roofline), for
    _core."""
    bytes_, read_s, write_s, sol_s, intensity, ridge = _roofline(
        flops, read_b, write_b, math_s, memory_s, bw, peak, maximum
    )
    return {
        "flops": flops,
        "bytes": bytes_,
        "read_bytes": read_b,
        "write_bytes": write_b,
        "math_s": math_s,
        "memory_s": memory_s,
        "read_s": read_s,
        "write_s": write_s,
        "sol_s": sol_s,
        "arithmetic_intensity": intensity,
        "ridge": ridge,
        "k_efficiency": eta_k,
        "fixed_s": fixed_s,
    }


# Per-(profile, time model, format, output format, standalone) constants of _core_scalar, computed as _core
# computes them (same operations, same order): every GEMM of one check shares a handful of these.
_SCALAR_CONSTANTS: dict[tuple, tuple] = {}


def _scalar_constants(dtype: str, profile, out_dtype: str, model, standalone: bool) -> tuple:
    key = (dtype, out_dtype, standalone, id(profile), id(model))
    hit = _SCALAR_CONSTANTS.get(key)
    if hit is not None and hit[0] is profile and hit[1] is model:
        return hit[2]
    hw = FORMATS[dtype][0]
    peak = profile.peak_flops(hw)
    bw = profile.memory_bytes_per_s
    eta_c = model.compute_efficiency.get(
        dtype, model.compute_efficiency.get(hw, min(model.compute_efficiency.values()))
    )
    kt = profile.tiles.k_tile.get(hw, 64)
    bw_eff = bw * model.memory_efficiency
    fixed_s = model.kernel_floor_us * 1e-6
    if standalone:
        fixed_s = fixed_s + model.format_overhead_us.get(dtype, 0.0) * 1e-6
    sm_count = profile.sm_count
    tiles = tuple(
        (t.m, t.n, t.sms, max(1, sm_count // t.sms))
        for t in profile.tiles.format_candidates.get(hw, profile.tiles.candidates)
    )
    consts = (
        FORMATS[dtype][1],
        FORMATS[dtype][2],
        OUT_BYTES[out_dtype],
        peak,
        bw,
        kt,
        bw_eff,
        fixed_s,
        QUANT_PASS_BYTES.get(dtype, 0.0) if standalone else None,
        model.max_split_k.get(dtype, SPLIT_K[-1]),
        model.gemv_max_m.get(dtype, 0),
        model.kernel_floor_us * 1e-6,
        model.k_fill_tiles * kt,
        model.per_sm_bandwidth_share,
        sm_count,
        model.overlap_p,
        1.0 / model.overlap_p,
        peak * eta_c,
        tiles,
    )
    if len(_SCALAR_CONSTANTS) >= 256:
        _SCALAR_CONSTANTS.clear()
    _SCALAR_CONSTANTS[key] = (profile, model, consts)
    return consts


def _core_scalar(m: int, n: int, k: int, dtype: str, profile, out_dtype: str, model, standalone: bool) -> tuple:
    """``_core`` for one GEMM of Python ints: the same operations in the same order on the same floats (so the
    same results to the last bit; tests/analysis/test_gemm_model.py compares the two paths), without the numpy-shaped
    selection, and skipping a kernel whose time cannot beat the best so far: its estimate is at least
    t_math + fixed time (hi >= t_math and the overlap factor (1 + (lo/hi)^p)^(1/p) >= 1).

    Returns (the estimate, the chosen kernel's (t_math, t_mem, tile_m, tile_n, tile SMs, split-K, tile and wave
    efficiency), FLOPs, read bytes, write bytes, math s, memory s, bandwidth, peak, K efficiency, fixed s): the
    parts _estimate builds a GemmTime from (_kernel_fields and _roofline name them) and estimate_s reads the
    first of, without a dict per GEMM."""
    (b_a, b_w, b_out, peak, bw, kt, bw_eff, fixed_s, quant_b, max_split, gemv_m, floor_s, fill, share, sm_count,
     p_exp, inv_p, peak_c, tiles_c) = _scalar_constants(dtype, profile, out_dtype, model, standalone)  # fmt: skip
    mf, nf, kf = m * 1.0, n * 1.0, k * 1.0
    flops = 2.0 * mf * nf * kf
    read_b = mf * kf * b_a + kf * nf * b_w
    write_b = mf * nf * b_out
    total_b = read_b + write_b
    math_s, memory_s = flops / peak, total_b / bw
    k_steps = -(-k // kt)
    eta_k = kf / (k_steps * kt)
    if quant_b is not None:
        fixed_s = fixed_s + mf * kf * quant_b / bw_eff
    gemv = m <= gemv_m
    best_t = math.inf
    best: tuple = ()
    for tile_m, tile_n, sms, slots in tiles_c:
        tm_count, tn_count = -(-m // tile_m), -(-n // tile_n)
        tiles = tm_count * tn_count
        eta_tile = (mf * nf) / (tm_count * tile_m * tn_count * tile_n)
        peak_ct = peak_c * eta_tile
        # no split of this tile beats the best so far: each one's t_math divides by peak_ct * eta_k times the wave
        # and fill efficiencies (each <= 1; float products and quotients are monotone), so it is at least this
        if flops / (peak_ct * eta_k) + fixed_s >= best_t:
            continue
        for split in SPLIT_K:
            if split > max_split and not gemv:
                break
            if split != 1 and not (tiles * split <= slots and split <= k_steps):
                break
            units = tiles * split
            eta_wave = units / (-(-units // slots) * slots)
            k_per = k_steps * kt / split
            eta_fill = k_per / (k_per + fill)
            t_math = flops / (peak_ct * eta_wave * eta_k * eta_fill)
            if t_math + fixed_s >= best_t:
                continue
            extra_b = 0.0 if split == 1 else 2.0 * split * mf * nf * 4.0  # FP32 partials out and back in
            active_sms = min(units, slots) * sms
            eta_grid = min(1.0, active_sms * share / sm_count)
            t_mem = (total_b + extra_b) / (bw_eff * eta_grid)
            hi = max(t_math, t_mem)
            lo = min(t_math, t_mem)
            t = hi * (1.0 + (lo / hi) ** p_exp) ** inv_p + fixed_s
            if split > 1:
                t = t + floor_s  # the split-K reduction is a second kernel
            if t < best_t:
                best_t = t
                best = (t_math, t_mem, tile_m, tile_n, sms, split, eta_tile, eta_wave)
    return best_t, best, flops, read_b, write_b, math_s, memory_s, bw, peak, eta_k, fixed_s


def _check_out(out_dtype: str | None) -> str:
    out_dtype = canonical(out_dtype) if out_dtype else DEFAULT_OUT
    if out_dtype not in OUT_BYTES:
        raise ProfileError(f"unknown output format '{out_dtype}'; known: {', '.join(OUT_BYTES)}")
    return out_dtype


# Memo of estimate(): a check analyses the same shapes many times (each regime, the rules' padded and
# latency re-analyses, files of one family), and a GemmTime is immutable. Keyed on the arguments (with
# their types: 8 and 8.0 give GemmTimes that print differently) and on the identity of the profile and
# time model, which the entry holds so the ids stay theirs (both are frozen). Cleared when full.
_MEMO: dict[tuple, tuple[object, object, GemmTime]] = {}
_MEMO_MAX = 1 << 15


# Memo of estimate_s() for the shapes estimate() was not asked: the estimate alone, keyed as _MEMO.
_TIME_MEMO: dict[tuple, tuple[object, object, float]] = {}


def clear_memo() -> None:
    """Forget memoized estimates (a caller that mutates a profile in place must call it)."""
    _MEMO.clear()
    _TIME_MEMO.clear()
    _SCALAR_CONSTANTS.clear()


def estimate(
    m: int, n: int, k: int, dtype: str, profile, out_dtype: str | None = None, model=None, standalone: bool = True
) -> GemmTime:
    """Speed of light and the time model's estimate for one GEMM (pure Python; memoized).

    ``standalone=False``: the GEMM inside a served model, its activation quantization fused into the
    previous kernel (see ``_core``). ``model`` overrides the architecture's TimeModel (calibration)."""
    if model is None:
        model = time_model(profile)
    key = (m, type(m), n, type(n), k, type(k), dtype, out_dtype, standalone, id(profile), id(model))
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is profile and hit[1] is model:
        return hit[2]
    return keep(
        _MEMO, key, (profile, model, _estimate(m, n, k, dtype, profile, out_dtype, model, standalone)), _MEMO_MAX
    )[2]


def estimate_s(
    m: int, n: int, k: int, dtype: str, profile, out_dtype: str | None = None, model=None, standalone: bool = True
) -> float:
    """``estimate(...).estimate_s``, the same float, for a caller that reads the estimate alone (a grouped GEMM's
    layer time, a padded shape's time): a shape estimate() priced answers from its memo; another is priced
    without building its GemmTime, and kept apart (memoized, keyed as estimate)."""
    if model is None:
        model = time_model(profile)
    key = (m, type(m), n, type(n), k, type(k), dtype, out_dtype, standalone, id(profile), id(model))
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is profile and hit[1] is model:
        return hit[2].estimate_s
    got = _TIME_MEMO.get(key)
    if got is not None and got[0] is profile and got[1] is model:
        return got[2]
    t = _checked_core(m, n, k, dtype, profile, out_dtype, model, standalone)[0][0]
    return keep(_TIME_MEMO, key, (profile, model, t), _MEMO_MAX)[2]


def _checked_core(m, n, k, dtype: str, profile, out_dtype: str | None, model, standalone: bool):
    """(_core_scalar's parts, the format, the output format) of one GEMM, its arguments checked."""
    if m <= 0 or n <= 0 or k <= 0:
        raise ProfileError(f"GEMM dimensions must be positive (got M={m}, N={n}, K={k})")
    if dtype not in FORMATS:  # colint's own names are canonical already
        dtype = canonical(dtype)
    check_format(profile, dtype)
    out_dtype = _check_out(out_dtype)
    return _core_scalar(int(m), int(n), int(k), dtype, profile, out_dtype, model, standalone), dtype, out_dtype


def _estimate(m, n, k, dtype: str, profile, out_dtype: str | None, model, standalone: bool) -> GemmTime:
    core, dtype, out_dtype = _checked_core(m, n, k, dtype, profile, out_dtype, model, standalone)
    est_s, kernel, flops, read_b, write_b, math_s, memory_s, bw, peak, eta_k, fixed_s = core
    t_math, t_mem, tile_m, tile_n, tile_sms, split, eta_tile, eta_wave = kernel
    if max(t_math, t_mem) < fixed_s:
        est_bound = "floor"
    else:
        est_bound = "compute" if t_math >= t_mem else "memory"
    _, b_a, b_w = FORMATS[dtype]
    bytes_, read_s, write_s, sol_s, intensity, ridge = _roofline(
        flops, read_b, write_b, math_s, memory_s, bw, peak, max
    )
    return GemmTime(
        m=m,
        n=n,
        k=k,
        dtype=dtype,
        out_dtype=out_dtype,
        flops=flops,
        bytes=bytes_,
        read_bytes=read_b,
        write_bytes=write_b,
        arithmetic_intensity=intensity,
        ridge=ridge,
        bound="compute" if math_s >= memory_s else "memory",
        math_s=math_s,
        memory_s=memory_s,
        read_s=read_s,
        write_s=write_s,
        sol_s=sol_s,
        estimate_s=est_s,
        estimate_bound=est_bound,
        tile_m=tile_m,
        tile_n=tile_n,
        tile_sms=tile_sms,
        split_k=split,
        tile_efficiency=eta_tile,
        k_efficiency=eta_k,
        wave_efficiency=eta_wave,
        m_star=m_star(n, k, b_a, b_w, OUT_BYTES[out_dtype], ridge),
    )


def estimate_arrays(
    m, n, k, dtype: str, profile, out_dtype: str | None = None, model=None, standalone: bool = True
) -> dict:
    """The same model on numpy arrays of M, N, K (one format). Returns a dict of arrays:
    flops, bytes, arithmetic_intensity, ridge, math_s, memory_s, sol_s, estimate_s, bound
    (str array), tile_efficiency, wave_efficiency, k_efficiency, split_k, tile_m, tile_n."""
    import numpy as np

    dtype = canonical(dtype)
    check_format(profile, dtype)
    out_dtype = _check_out(out_dtype)
    m = np.asarray(m, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    k = np.asarray(k, dtype=np.int64)
    if m.size and (m.min() <= 0 or n.min() <= 0 or k.min() <= 0):
        raise ProfileError("GEMM dimensions must be positive")
    r = _core(m, n, k, dtype, profile, out_dtype, model or time_model(profile), np, standalone)
    shape = m.shape
    out = {key: np.broadcast_to(np.asarray(v), shape) for key, v in r.items()}
    out["bound"] = np.where(out["math_s"] >= out["memory_s"], "compute", "memory")
    return out
