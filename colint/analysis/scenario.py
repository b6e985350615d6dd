"""What a model is linted for (docs/design.md §4): precisions, parallelism, regimes, context.

Regimes:

* **prefill** — ``prefill_tokens`` tokens per forward on one model replica (default 8192),
  prompts of ``context`` tokens (chunked by ``prefill_tokens`` when longer).
* **decode** — ``decode_concurrency`` sequences in flight per attention data-parallel group
  (one replica of attention: ``tp`` GPUs that all see these sequences), each one token per step,
  with ``context`` tokens of KV cache each. Under expert parallelism an EP domain of ``ep`` GPUs
  holds ``attention_dp_groups = max(1, ep // tp)`` such groups (vLLM EP = DP × TP; SGLang
  dp-attention; TensorRT-LLM attention DP: colint.analysis.moe.attention_dp_groups), so one routed
  expert sees ``decode_concurrency · attention_dp_groups · top_k / E`` tokens per step (uniform
  routing); ``prefill_tokens`` likewise.

Parallelism shards the weight GEMMs: ``tp`` splits N of column-parallel and K of row-parallel
layers, ``ep`` spreads routed experts, ``pp`` splits the layers into stages. ``moe_tp`` splits each routed
expert within the ``ep`` GPUs the experts span (TensorRT-LLM's moe_tp_size x moe_ep_size): each expert's
gate/up split on N and its down projection on K over ``moe_tp`` GPUs, the experts spread over
``moe_ep = ep / moe_tp`` groups of them (``ep = 1``: every expert tensor-parallel over the tp x kvp GPUs). ``kvp`` (KV / Helix
parallelism, NVIDIA 2025) splits each sequence's KV cache along the context over kvp GPUs per TP
rank: decode attention reads context/kvp tokens per GPU and exchanges partial outputs in one
all-to-all per attention layer; the FFN and its dense GEMMs run tensor-parallel over tp x kvp GPUs
(attention projections stay tp-sharded, replicated over the kvp GPUs); prefill attention is not
split by kvp (an upper bound).

``ep_overlap`` says whether an EP deployment hides its dispatch/combine behind compute by splitting each
forward into two micro-batches (DeepSeek's dual micro-batch overlap, SGLang's two-batch overlap, vLLM's
dual-batch overlap): ``auto`` (default) where that makes the layer faster, ``on`` wherever the batch
splits, ``off`` never (the exchange in series with compute). colint.analysis.overlap prices it.
"""

from __future__ import annotations

from dataclasses import field, replace
from typing import Literal, Optional

from colint.analysis.gemm_model import FORMATS, OUT_BYTES, canonical
from colint.analysis.moe import attention_dp_groups
from colint.errors import UsageError
from colint.util.records import dataclass

# KV-cache bytes per element, block scales included: NVFP4 0.5 + 1/16 (an FP8 scale per 16),
# MXFP4 0.5 + 1/32 (an E8M0 scale per 32) as colint.analysis.gemm_model.FORMATS (docs/design.md §5).
KV_BYTES = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp32": 4.0,
    "fp8": 1.0,
    "int8": 1.0,
    "nvfp4": 0.5 + 1 / 16,
    "mxfp4": 0.5 + 1 / 32,
    "int4": 0.5,
}

# EP dispatch/combine overlap (colint.analysis.overlap): "auto" prices two micro-batches where they make a
# layer faster, as a serving operator enables them for a deployment that gains (SGLang
# --enable-two-batch-overlap, DeepSeek's inference system); "on" wherever the batch splits; "off" never
EP_OVERLAP_MODES = ("auto", "on", "off")
# the default: in series, as the engines run it unless their operator turns two micro-batches on (SGLang
# --enable-two-batch-overlap and vLLM --enable-dbo are opt-in; aiconfigurator prices TensorRT-LLM's forward so)
EP_OVERLAP_DEFAULT: Literal["auto", "on", "off"] = "off"

PRESETS: dict[str, dict] = {
    # many sequences, short-to-medium context: tokens/s per GPU
    "throughput": {"prefill_tokens": 8192, "decode_concurrency": 256, "context": 8192},
    # one user: interactivity (1/ITL)
    "latency": {"prefill_tokens": 8192, "decode_concurrency": 1, "context": 8192},
    # long prompts, few sequences: attention and KV reads dominate
    "long-context": {"prefill_tokens": 8192, "decode_concurrency": 16, "context": 131072},
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Scenario:
    """What a model is linted for: formats, parallel sizes and the regimes' token counts (module docstring)."""

    __pydantic_config__ = {"extra": "forbid"}

    name: str = "throughput"  # the preset it started from
    weights: str = (
        "bf16"  # GEMM weight format (bf16, fp8, fp8_block, nvfp4, mxfp4, int8, int8_wo/int4_wo = weight-only)
    )
    activations: str = "bf16"
    outputs: str = "bf16"  # GEMM output format
    kv_cache: str = "bf16"
    tp: int = field(default=1, metadata={"ge": 1})
    ep: int = field(default=1, metadata={"ge": 1})  # GPUs the routed experts span (moe_tp x moe_ep)
    moe_tp: int = field(default=1, metadata={"ge": 1})  # GPUs each routed expert is split over, within ep (ep > 1)
    pp: int = field(default=1, metadata={"ge": 1})
    kvp: int = field(default=1, metadata={"ge": 1})  # KV (Helix) parallelism: GPUs that split each sequence's KV cache
    dp: int = field(default=1, metadata={"ge": 1})
    prefill_tokens: int = field(default=8192, metadata={"ge": 1})  # tokens per forward per replica
    decode_concurrency: int = field(default=256, metadata={"ge": 1})  # sequences per attention-DP group (tp GPUs)
    context: int = field(default=8192, metadata={"ge": 1})  # tokens of context per sequence
    gpu: Optional[str] = None  # profile name, for labels only
    context_clipped_from: Optional[int] = None  # the context asked for, when the model's max positions clipped it
    ep_overlap: Literal["auto", "on", "off"] = EP_OVERLAP_DEFAULT  # the EP exchange under two micro-batches
    # the automatic deployment colint chose where the user named none (colint.analysis.deployments
    # .automatic_deployment): "auto: tp=8 (8 GPUs), 166 sequences of 8,192 tokens fit (of 256) on h100-sxm, ..."
    auto_note: Optional[str] = None

    @property
    def gemm_format(self) -> str:
        """The GEMM format of a weight GEMM: weights==activations, or weight-only int8/int4."""
        if self.weights == self.activations:
            return self.weights
        if self.activations in ("bf16", "fp16") and self.weights in ("int8", "int8_wo"):
            return "int8_wo"
        if self.activations in ("bf16", "fp16") and self.weights in ("int4", "int4_wo"):
            return "int4_wo"
        return self.weights

    @property
    def attention_dp_groups(self) -> int:
        """Attention data-parallel groups (of ``tp`` GPUs, each with its own ``decode_concurrency``
        sequences / ``prefill_tokens``) whose tokens meet in one EP domain: max(1, ep // tp)."""
        return attention_dp_groups(self.ep, self.tp * self.kvp)

    @property
    def moe_ep(self) -> int:
        """Groups the routed experts are spread over (each expert on one group of ``moe_tp`` GPUs): ep / moe_tp
        (1 where ep = 1: every expert split over the tp x kvp GPUs)."""
        return max(1, self.ep // self.moe_tp) if self.ep > 1 else 1

    def experts_label(self) -> str:
        """How the routed experts are split, where it is a mix: ``experts tp2 x ep4`` ("" otherwise)."""
        return f"experts tp{self.moe_tp} x ep{self.moe_ep}" if self.ep > 1 and self.moe_tp > 1 else ""

    @property
    def group_gpus(self) -> int:
        """GPUs of one attention group: ``tp`` (query/KV heads) x ``kvp`` (KV (Helix) parallelism: each of
        the kvp GPUs holds 1/kvp of every sequence's context); the dense FFN, LM head excepted, is
        tensor-parallel over all of them (Helix: TP_F = KVP x TP_A)."""
        return self.tp * self.kvp

    def tp_of(self, component: str) -> int:
        """GPUs a tensor-parallel GEMM of ``component`` ("attention", "ffn", "other": the LM head) is split
        over: the FFN over ``group_gpus`` (Helix: TP_F = KVP x TP_A), the rest over ``tp``."""
        return self.tp * self.kvp if component == "ffn" else self.tp

    def tp_label(self, component: str = "ffn") -> str:
        """How a finding names that split: ``tp=8``, or ``tp=4 x kvp=2`` for the FFN under KV parallelism."""
        if component == "ffn" and self.kvp > 1:
            return f"tp={self.tp} x kvp={self.kvp}"
        return f"tp={self.tp}"

    @property
    def kv_bytes_per_elem(self) -> float:
        return KV_BYTES[self.kv_cache]

    def label(self) -> str:
        par = ", ".join(f"{k}={getattr(self, k)}" for k in ("tp", "kvp", "ep", "pp") if getattr(self, k) > 1)
        if self.experts_label():
            par += f" ({self.experts_label()})"
        if self.ep > 1 and self.ep_overlap != EP_OVERLAP_DEFAULT:
            par += f", EP overlap {self.ep_overlap}"
        clipped = (
            f" (clipped from {self.context_clipped_from}: the model's max positions)"
            if self.context_clipped_from
            else ""
        )
        extra = "".join(f", {what} {v}" for what, v in (("KV", self.kv_cache), ("out", self.outputs)) if v != "bf16")
        # concurrency counts sequences per attention group (its one meaning, issue 29): where a replica holds several
        # groups (attention data-parallel under EP) the label says how many
        groups = self.attention_dp_groups
        per = f" per attention group x {groups}" if groups > 1 else ""
        return (
            f"{self.name} scenario: {self.gemm_format}, decode {self.decode_concurrency} seq{per}, "
            f"prefill {self.prefill_tokens} tok, context {self.context}{clipped}"
            + extra
            + (f", {par}" if par else "")
            + (f" ({self.auto_note})" if self.auto_note else "")
        )


def fit_to_model(sc: Scenario, spec) -> Scenario:
    """The scenario for one model: a context beyond the model's maximum positions (``max_position_embeddings``,
    GPT-2's ``n_positions``) is clipped to them, and the label says so (issue 17: gpt2-xl priced at 8192)."""
    return fit_context(sc, getattr(spec, "max_position_embeddings", None))


def fit_context(sc: Scenario, limit: int | None) -> Scenario:
    """``sc`` with its context clipped to ``limit`` positions (fit_to_model's, for a model whose maximum positions
    are ``limit``; None: no limit)."""
    if limit and sc.context > limit:
        return replace(sc, context=int(limit), context_clipped_from=sc.context)
    return sc


# Largest parallel sizes and token counts a scenario takes: far beyond any deployment, small enough that
# every product of them stays an exact float (10**400 overflowed float() mid-check).
MAX_PARALLEL = 1 << 20  # GPUs in one parallel group
MAX_TOKENS = 1 << 40  # tokens in a context or a prefill forward
LIMITS = {
    "tp": MAX_PARALLEL,
    "kvp": MAX_PARALLEL,
    "ep": MAX_PARALLEL,
    "pp": MAX_PARALLEL,
    "context": MAX_TOKENS,
    "decode_concurrency": MAX_TOKENS,
    "prefill_tokens": MAX_TOKENS,
}


def make_scenario(
    preset: str = "throughput",
    *,
    dtype: str | None = None,
    tp: int | None = None,
    ep: int | None = None,
    pp: int | None = None,
    kvp: int | None = None,
    context: int | None = None,
    concurrency: int | None = None,
    prefill_tokens: int | None = None,
    kv_cache: str | None = None,
    out_dtype: str | None = None,
    gpu: str | None = None,
    ep_overlap: str | None = None,
) -> Scenario:
    """A preset with CLI overrides. ``dtype`` sets weights and activations (``int8_wo``/``int4_wo``:
    weight-only, BF16 activations)."""
    if preset not in PRESETS:
        raise UsageError(f"unknown scenario '{preset}'; known: {', '.join(PRESETS)}")
    kw: dict = {"name": preset, **PRESETS[preset]}
    if dtype:
        if dtype not in FORMATS:
            raise UsageError(f"unknown --dtype '{dtype}'; known: {', '.join(FORMATS)}")
        if dtype in ("int8_wo", "int4_wo"):
            kw.update(weights=dtype, activations="bf16")
        else:
            kw.update(weights=dtype, activations=dtype)
    if kv_cache:
        if kv_cache not in KV_BYTES:
            raise UsageError(f"unknown KV-cache format '{kv_cache}'; known: {', '.join(KV_BYTES)}")
        kw["kv_cache"] = kv_cache
    if out_dtype:
        out_dtype = canonical(out_dtype)
        if out_dtype not in OUT_BYTES:
            raise UsageError(f"unknown output format '{out_dtype}'; known: {', '.join(OUT_BYTES)}")
        kw["outputs"] = out_dtype
    for key, val in (
        ("tp", tp),
        ("ep", ep),
        ("pp", pp),
        ("kvp", kvp),
        ("context", context),
        ("decode_concurrency", concurrency),
        ("prefill_tokens", prefill_tokens),
    ):
        if val is not None:
            if val < 1:
                raise UsageError(f"--{key.replace('_', '-')} must be >= 1 (got {val})")
            if val > LIMITS[key]:
                digits = len(str(val)) if val < 10**4000 else "huge"
                shown = f"{val:,}" if val < 10**30 else f"a {digits}-digit number"
                raise UsageError(
                    f"--{key.replace('_', '-').replace('decode-', '')} is {shown}, beyond the "
                    f"{LIMITS[key]:,} colint models"
                )
            kw[key] = val
    if ep_overlap is not None:
        if ep_overlap not in EP_OVERLAP_MODES:
            raise UsageError(f"unknown EP overlap '{ep_overlap}'; known: {', '.join(EP_OVERLAP_MODES)}")
        kw["ep_overlap"] = ep_overlap
    kw["gpu"] = gpu
    return Scenario(**kw)


Regime = Literal["decode", "prefill"]
