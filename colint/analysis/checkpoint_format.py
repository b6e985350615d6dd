"""The checkpoint's own format as colint's default GEMM format (issue 29): a config whose ``quantization_config``
says how its weights are stored is priced in that format unless ``--dtype`` is given, and the estimate line says so.

``checkpoint_format(spec)`` reads colint.normalize's Quantization (the file's quantization_config), or, without one,
the dtypes of the checkpoint's safetensors beside the file (``weights_format``, colint.loading.weights):

* ``quant_method: fp8`` with ``weight_block_size`` [128, 128] (DeepSeek-V3/R1, MiniMax-M2) -> ``fp8_block``;
  without blocks (per-tensor/channel scales, Mistral's) -> ``fp8``; ``fbgemm_fp8`` -> ``fp8``;
* ``mxfp4`` (gpt-oss) -> ``mxfp4``; ModelOpt (``modelopt``, ``quant_algo`` NVFP4 / FP8) -> ``nvfp4`` / ``fp8``;
  compressed-tensors: ``nvfp4-pack-quantized`` -> ``nvfp4``, ``float-quantized`` 8-bit -> ``fp8`` (``fp8_block``
  with block scales), ``int-quantized``/``pack-quantized`` 4-bit weights -> ``int4_wo``;
* ``bits`` 4 / 8 (GPTQ, AWQ, bitsandbytes, MLX) -> weight-only ``int4_wo`` / ``int8_wo``;
* a KV-cache scheme (ModelOpt ``kv_cache_quant_algo: FP8``, compressed-tensors ``kv_cache_scheme`` 8-bit float)
  -> an FP8 KV cache.

On a GPU without native support for the format the serving engines run the same weights weight-only
(vLLM's Marlin FP8 / FP4 kernels dequantize to BF16 on Ampere and Hopper): ``native_or_weight_only`` maps 8-bit
formats to ``int8_wo`` and 4-bit ones to ``int4_wo`` there. An ESTIMATE: one format for every weight GEMM (gpt-oss
keeps attention in BF16; its MXFP4 experts hold ~97% of its weights).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from colint.analysis.gemm_model import check_format
from colint.errors import ProfileError


class CheckpointFormat(NamedTuple):
    weights: str  # a colint GEMM format (colint.analysis.gemm_model.FORMATS)
    kv_cache: Optional[str]  # "fp8" when the checkpoint quantizes its KV cache, else None (the scenario's)
    why: str  # "quantization_config fp8, 128x128 blocks"


def _bits(raw: dict) -> Optional[int]:
    b = raw.get("bits", raw.get("w_bit", raw.get("num_bits")))
    return b if isinstance(b, int) and not isinstance(b, bool) else None


def _compressed_tensors(raw: dict) -> Optional[str]:
    fmt = str(raw.get("format") or "").lower()
    if "nvfp4" in fmt:
        return "nvfp4"
    groups = raw.get("config_groups")
    weights = (
        next(
            (g.get("weights") for g in groups.values() if isinstance(g, dict) and isinstance(g.get("weights"), dict)),
            None,
        )
        if isinstance(groups, dict)
        else None
    )
    if not weights:
        return None
    bits, kind = _bits(weights), str(weights.get("type") or "")
    if kind == "float" and bits == 8:
        return "fp8_block" if weights.get("strategy") == "block" else "fp8"
    if kind == "float" and bits == 4:
        return "nvfp4"
    if bits == 4:
        return "int4_wo"
    if bits == 8:
        return "int8" if weights.get("strategy") and raw.get("format") == "int-quantized" else "int8_wo"
    return None


def checkpoint_format(spec) -> Optional[CheckpointFormat]:
    """The format the checkpoint stores its weights in (module docstring); None: not stated or not one colint
    prices (the scenario's --dtype default, BF16, stands)."""
    q = getattr(spec, "quantization", None)
    if q is None:
        return weights_format(getattr(spec, "weights", None))
    raw = q.raw if isinstance(q.raw, dict) else {}
    method = str(q.quant_method or "").lower()
    kv = None
    weights: Optional[str] = None
    if method == "fp8":
        block = q.weight_block_size
        weights = "fp8_block" if block and len(block) == 2 and block[0] == block[1] == 128 else "fp8"
    elif method == "fbgemm_fp8":
        weights = "fp8"
    elif method == "mxfp4":
        weights = "mxfp4"
    elif method == "modelopt":
        algo = str(raw.get("quant_algo") or "").upper()
        # ModelOpt's quant_algo: NVFP4, FP8 (per-tensor), FP8_PB_WO/FP8_BLOCK..., W4A16_AWQ / W4A8_AWQ (INT4 weights)
        weights = (
            "nvfp4"
            if "NVFP4" in algo
            else "fp8"
            if "FP8" in algo
            else "int4_wo"
            if algo.startswith(("W4A", "INT4"))
            else None
        )
        kv = "fp8" if str(raw.get("kv_cache_quant_algo") or "").upper() == "FP8" else None
    elif method == "compressed-tensors":
        weights = _compressed_tensors(raw)
        scheme = raw.get("kv_cache_scheme")
        if isinstance(scheme, dict) and _bits(scheme) == 8 and scheme.get("type") == "float":
            kv = "fp8"
    elif _bits(raw) in (4, 8) and method not in ("bitnet",):
        weights = "int4_wo" if _bits(raw) == 4 else "int8_wo"
    if weights is None:
        return None
    what = method or f"{_bits(raw)}-bit"
    if weights == "fp8_block":
        what += ", 128x128 blocks"
    return CheckpointFormat(weights, kv, f"the checkpoint's {q.origin}: {what}")


def weights_format(witness) -> Optional[CheckpointFormat]:
    """The format the checkpoint's safetensors store most of their parameters in (colint.loading.weights), for a
    config without quantization_config (issue 30): F8_E4M3 -> ``fp8`` (``fp8_block`` with ``*_scale_inv`` block
    scales), packed U8 with FP8 scales -> ``nvfp4``, with U8 (E8M0) scales -> ``mxfp4``; BF16/F16/F32 -> None."""
    if witness is None or not witness.dtype_params:
        return None
    dtype = max(witness.dtype_params, key=witness.dtype_params.__getitem__)
    scales = set(witness.scale_dtypes)
    weights: Optional[str] = None
    if dtype in ("F8_E4M3", "F8_E5M2"):
        weights = "fp8_block" if witness.block_scales else "fp8"
    elif dtype == "U8" and "F8_E4M3" in scales:
        weights = "nvfp4"
    elif dtype == "U8" and "U8" in scales:
        weights = "mxfp4"
    if weights is None:
        return None
    share = witness.dtype_params[dtype] / sum(witness.dtype_params.values())
    return CheckpointFormat(weights, None, f"the checkpoint's weights: {share:.0%} of parameters stored as {dtype}")


_WEIGHT_ONLY = {"fp8": "int8_wo", "fp8_block": "int8_wo", "int8": "int8_wo", "nvfp4": "int4_wo", "mxfp4": "int4_wo"}


def native_or_weight_only(profile, fmt: str) -> tuple[str, bool]:
    """``fmt`` where ``profile`` runs it natively, else its weight-only equivalent (8-bit -> int8_wo, 4-bit ->
    int4_wo); the flag says whether it was mapped."""
    try:
        check_format(profile, fmt)
        return fmt, False
    except ProfileError:
        wo = _WEIGHT_ONLY.get(fmt)
        if wo is None:
            return fmt, False
        return wo, True
