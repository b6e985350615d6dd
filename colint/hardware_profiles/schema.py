"""The hardware-profile schema (docs/design.md §3).

A profile is a YAML data file: one GPU's dense peak rates per GEMM format, memory, interconnect
and tile facts, each number with its source (``sources:`` maps a field path to a citation key
of ``references:``). Formats a chip lacks are absent from ``peak_tflops``; asking for one is an
error. The time model's efficiency constants are not here: they are shared by every GPU of one
``architecture`` (``_architectures.yaml``); a profile of a new architecture may carry its own
``time_model:`` block.
"""

from __future__ import annotations

import math
import re
from dataclasses import field
from typing import Any, Literal, Optional

from colint.util.plain_data import dump
from colint.util.records import dataclass

Architecture = Literal[
    "ampere",
    "ada",
    "hopper",
    "blackwell-dc",
    "blackwell-ultra",
    "blackwell-rtx",
    "blackwell-gb10",
    "blackwell-thor",
    "cdna3",
    "cdna4",
]

# Hardware GEMM formats a profile may list in peak_tflops (what the matrix unit executes).
HW_FORMATS = ("tf32", "bf16", "fp16", "fp8", "fp8_block", "int8", "fp6", "mxfp8", "nvfp4", "mxfp4")


# An alias: lower-case letters, digits and single '-' between them (the form colint.hardware_profiles.gpu_key
# compares after folding case, '_' and spaces); "h200-sxm", "rtx4090", "gb200-nvl72"
ALIAS_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# PCIe per generation: GT/s per lane and the share of the line rate that carries data (PCI-SIG base specifications:
# 3.0-5.0 128b/130b encoding; 6.0 FLIT mode, 236 TLP bytes of each 256-byte flit); a GPU's host link is x16
PCIE_GT_S = {3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
PCIE_CODE = {3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 236 / 256}
PCIE_GENS = tuple(PCIE_GT_S)
PCIE_LANES = 16
DEFAULT_PCIE_GEN = 4  # a profile that names no generation: Gen4 (PCIe 4.0 x16: 31.5 GB/s each way)

MAX_NUMBER = 1e15  # above any chip figure (SMs, TFLOP/s, GB, MHz, microseconds) by orders of magnitude


def _check_numbers(data: Any, where: str = "") -> None:
    """Every number in a profile finite and of a size a chip can have: a NaN or an infinity made every
    comparison false and silently yielded no findings; 10**400 overflowed the float conversions."""
    if isinstance(data, dict):
        for k, v in data.items():
            _check_numbers(v, f"{where}.{k}" if where else str(k))
    elif isinstance(data, (list, tuple)):
        for i, v in enumerate(data):
            _check_numbers(v, f"{where}.{i}")
    elif isinstance(data, bool) or not isinstance(data, (int, float)):
        return
    elif isinstance(data, float) and not math.isfinite(data):
        raise ValueError(f"{where}: must be a finite number, got {data!r}")
    elif abs(data) > MAX_NUMBER:
        shown = f"{float(data):.3g}" if abs(data) < 1e300 else f"a {len(str(abs(int(data))))}-digit number"
        raise ValueError(f"{where}: {shown} is beyond any GPU (limit {MAX_NUMBER:.0e})")


def _positive(mapping: dict, where: str) -> None:
    for k, v in mapping.items():
        if not v > 0:
            raise ValueError(f"{where}.{k}: must be > 0, got {v!r}")


@dataclass(frozen=True, kw_only=True, slots=True)
class Tile:
    """An output tile one CTA (``sms`` = 1) or a cooperative CTA pair / cluster computes."""

    __pydantic_config__ = {"extra": "forbid"}

    m: int = field(metadata={"gt": 0})
    n: int = field(metadata={"gt": 0})
    sms: int = field(default=1, metadata={"gt": 0})  # SMs that work on one tile together (Blackwell 2-SM UMMA: 2)


@dataclass(frozen=True, kw_only=True, slots=True)
class Tiles:
    """The GEMM tiles a GPU's kernels use, for tile and wave quantization."""

    __pydantic_config__ = {"extra": "forbid"}

    base: Tile  # the portable CTA tile (128x128 on Hopper/Blackwell)
    cooperative: Optional[Tile] = None  # e.g. Blackwell's 2-SM 256-wide tile
    cga: Optional[Tile] = None  # the cluster (CGA) granularity, e.g. 512 on GB300
    # Tiles the kernel library picks from; the time model takes the fastest (an autotuner does).
    candidates: list[Tile]
    # Formats whose kernels allow fewer tiles (Blackwell NVFP4/MXFP4: M 128 or 256 only).
    format_candidates: dict[str, list[Tile]] = field(default_factory=dict)
    k_tile: dict[str, int]  # K per mainloop stage, per format
    min_m_tile: int = 64  # the smallest M tile a kernel uses for skinny GEMMs (wgmma M=64)

    def __post_init__(self) -> None:
        if not self.candidates:
            raise ValueError("tiles.candidates must list at least one tile")
        _positive(self.k_tile, "k_tile")
        if not self.min_m_tile > 0:
            raise ValueError(f"min_m_tile: must be > 0, got {self.min_m_tile!r}")


@dataclass(frozen=True, kw_only=True, slots=True)
class TimeModel:
    """The few constants of the GEMM time model. ``compute_efficiency`` and ``kernel_floor_us``
    belong to an architecture; the others are shared by all architectures (the ``common:`` block
    of ``_architectures.yaml``) because they describe the kernels and libraries, not a chip."""

    __pydantic_config__ = {"extra": "forbid"}

    # Sustained fraction of the dense peak for a large, well-shaped GEMM, per format (MAMF ratios).
    compute_efficiency: dict[str, float]
    # Fixed time of one GEMM kernel (launch, prologue, epilogue, tail), microseconds.
    kernel_floor_us: float = field(metadata={"ge": 0})
    # Per-tile pipeline fill: a tile's K loop runs as if K were K + k_fill_tiles * k_tile.
    k_fill_tiles: float = field(metadata={"ge": 0})
    # Sustained fraction of the HBM bandwidth a streaming GEMM reaches.
    memory_efficiency: float = field(metadata={"gt": 0, "le": 1})
    # Fraction of the HBM bandwidth one SM (or CU) can pull alone, in units of its fair share
    # (BW / SMs): limits the bandwidth of grids with few CTAs.
    per_sm_bandwidth_share: float = field(metadata={"gt": 0})
    # Fixed time of a format's quantized-linear path beyond the GEMM kernel (activation
    # quantization, amax, scale layout kernels), microseconds per call.
    format_overhead_us: dict[str, float] = field(default_factory=dict)
    # Largest split-K factor the format's kernels use (absent: 16); 1 = no split-K.
    max_split_k: dict[str, int] = field(default_factory=dict)
    # Formats with a GEMV-style kernel for skinny M (M <= this) that splits K across the grid anyway.
    gemv_max_m: dict[str, int] = field(default_factory=dict)
    # Imperfect overlap of math and memory: t = (t_math^p + t_mem^p)^(1/p); p -> inf is max().
    overlap_p: float = field(default=4.0, metadata={"ge": 1})
    # --- op models (colint.analysis.ops_attention / ops_moe / collectives; issue 12) ---
    # Sustained fraction of the dense peak for FlashAttention's MMAs, per format (per architecture).
    attention_efficiency: dict[str, float] = field(default_factory=lambda: {"bf16": 0.6})
    # Fixed time of one attention kernel call (launch, KV-append/rope, prologue), microseconds.
    attention_floor_us: float = field(default=5.0, metadata={"ge": 0})
    # SM cycles of one decode work item (one sequence x one KV head) beyond its KV reads, by kernel kind
    decode_item_cycles: dict[str, float] = field(default_factory=lambda: {"mha": 3000.0, "gqa": 3000.0})
    # decode kernel call floors by kernel variant ("gqa_fp8": XQA on an FP8 cache), overriding attention_floor_us
    decode_floor_us: dict[str, float] = field(default_factory=dict)
    # Sustained fraction of HBM bandwidth a decode-attention kernel's KV stream reaches (None: memory_efficiency)
    decode_memory_efficiency: Optional[float] = field(default=None, metadata={"gt": 0, "le": 1})
    # decode past XQA's group (one CTA per query head): K and V elements one SM loads from L2 per clock
    decode_split_elems_per_clk: float = field(default=14.0, metadata={"gt": 0})
    # split-KV (multi-block) decode: the combine of the CTAs' partial results, microseconds per call
    decode_combine_us: float = field(default=0.0, metadata={"ge": 0})
    mla_floor_us: Optional[float] = field(
        default=None, metadata={"ge": 0}
    )  # MLA decode call (split-KV + combine); None: attention's
    context_floor_us: float = field(default=15.0, metadata={"ge": 0})  # fixed time of one context-attention call
    context_cta_cycles: float = field(default=5000.0, metadata={"ge": 0})  # SM cycles per (sequence, head, query tile)
    context_tile_cycles: float = field(default=0.0, metadata={"ge": 0})  # SM cycles per (query tile, key tile) step
    attention_tile: int = field(default=128, metadata={"gt": 0})  # query and key tile of a FlashAttention CTA
    softmax_exp_per_clk: float = field(default=16.0, metadata={"gt": 0})  # SFU exp2 per SM per clock
    softmax_overlap: float = field(default=0.5, metadata={"ge": 0, "le": 1})  # share of the exp time hidden under MMAs
    moe_gemm_efficiency: float = field(
        default=1.0, metadata={"gt": 0, "le": 1}
    )  # grouped expert GEMM vs dense, compute
    moe_fixed_us: float = field(default=17.5, metadata={"ge": 0})  # MoE helper kernels (routing .. finalize), per arch
    moe_masked_group_us: float = field(default=0.0, metadata={"ge": 0})  # DeepGEMM masked MoE: per local expert
    moe_pick_ns: float = field(default=0.0, metadata={"ge": 0})  # MoE helper kernels: per (token, top-k) pick
    peer_link_share: float = field(
        default=1.0, metadata={"gt": 0, "le": 1}
    )  # share of a GPU's links one peer stream fills
    link_efficiency: float = field(default=0.8, metadata={"gt": 0, "le": 1})  # achieved / one-direction link bandwidth
    collective_latency_us: float = field(default=10.0, metadata={"ge": 0})  # NCCL collective's fixed latency
    collective_step_latency_us: float = field(default=1.0, metadata={"ge": 0})  # per log2(GPUs) hop
    # NCCL protocols: name -> (extra base latency us, ring-step latency in units of
    # collective_step_latency_us, share of the link bandwidth)
    nccl_protocols: dict[str, list[float]] = field(
        default_factory=lambda: {"ll": [0.0, 1.0, 0.5], "ll128": [12.0, 2.0, 0.9375], "simple": [10.0, 6.0, 1.0]}
    )
    # NCCL point-to-point (all-to-all): LL throughput per peer (GB/s) and Simple's extra rendezvous time (us)
    p2p_ll_gbps: float = field(default=6.0, metadata={"gt": 0})
    p2p_simple_us: float = field(default=8.0, metadata={"ge": 0})
    custom_allreduce_latency_us: float = field(default=3.0, metadata={"ge": 0})  # TensorRT-LLM custom all-reduce floor
    oneshot_max_bytes: float = field(default=2.0**20, metadata={"ge": 0})  # one-shot all-reduce up to this message
    # the custom all-reduce hands messages above this size to NCCL (TensorRT-LLM 1.0 on A100: 2 MiB); None: never
    custom_allreduce_max_bytes: float | None = field(default=None, metadata={"ge": 0})
    a2a_latency_us: dict[str, float] = field(default_factory=lambda: {"ht": 80.0, "ll": 30.0})
    # DeepEP high-throughput (normal) kernels copy tokens with a fixed number of SMs: bandwidth
    # min(link, a2a_ht_sms x a2a_sm_copy_gbps), plus a2a_copy_cycles per (token, destination rank)
    a2a_fp4_combine_us: float = field(default=0.0, metadata={"ge": 0})  # LL combine in FP4: quantize + dequantize
    # DeepEP low-latency kernels: the combine's time per top-k pick of a token and per warp group on an SM (one
    # group per (expert, rank) pair, ceil(experts / SMs) per SM); the dispatch's in-kernel cast per wire format, us
    a2a_ll_pick_us: float = field(default=0.0, metadata={"ge": 0})
    a2a_ll_group_us: float = field(default=0.0, metadata={"ge": 0})
    a2a_ll_cast_us: dict[str, float] = field(default_factory=dict)
    a2a_ht_sms: int = field(default=24, metadata={"gt": 0})
    a2a_sm_copy_gbps: float = field(default=16.0, metadata={"gt": 0})
    a2a_copy_cycles: float = field(default=0.0, metadata={"ge": 0})
    # MLA decode without a split-KV kernel (sm80: no FlashMLA / XQA-MLA): one CTA per sequence walks the
    # context; SM cycles per cached token: {"latency": the serial chain, "seq": per (sequence, token),
    # "head": per (sequence, token, head)}. None: the absorbed split-KV kernel
    mla_serial_cycles: Optional[dict[str, float]] = None
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class Profile:
    """One GPU: dense peak rates per format, memory, interconnect and tiles, each with its source."""

    __pydantic_config__ = {"extra": "forbid"}

    name: str  # the stable id used by --gpu (e.g. "b200")
    display_name: str
    vendor: Literal["nvidia", "amd"]
    architecture: Architecture
    compute_capability: Optional[str] = None  # NVIDIA sm_XY / AMD gfx target
    sm_count: int = field(metadata={"gt": 0})  # SMs (NVIDIA) or CUs (AMD)
    clock_mhz: Optional[float] = field(default=None, metadata={"gt": 0})
    peak_tflops: dict[str, float]  # DENSE TFLOP/s (TOPS for int8) per native format
    memory_gb: float = field(metadata={"gt": 0})
    memory_tbps: float = field(metadata={"gt": 0})
    l2_mb: Optional[float] = field(default=None, metadata={"gt": 0})
    interconnect_gbps: float = field(metadata={"ge": 0})  # scale-up bandwidth per GPU, bidirectional aggregate
    domain_size: int = field(metadata={"ge": 1})  # GPUs in one scale-up domain (8 HGX, 72 NVL72)
    # scale-out (NIC) bandwidth per GPU, bidirectional aggregate like interconnect_gbps (a 400 Gb/s NIC per GPU:
    # 100 GB/s): what collectives of groups larger than the domain run at; None = not given: a 400 Gb/s NIC
    # (collectives.DEFAULT_SCALE_OUT_GBPS) is assumed, and CL504/CL704 say so
    scale_out_gbps: Optional[float] = field(default=None, metadata={"ge": 0})
    # the PCIe generation of the GPU's x16 host link: what peers without a scale-up link (interconnect_gbps 0)
    # exchange collectives over (pcie_bytes_per_s); None = not given: Gen4 assumed
    pcie_gen: Optional[int] = None
    # whether GPUs of one host reach each other's memory directly over PCIe (GPUDirect peer-to-peer); GeForce drivers
    # turn it off, so collectives stage through host memory and the custom all-reduce kernels (which map peer
    # memory) do not run (colint.analysis.collectives)
    pcie_p2p: bool = True
    # GPUs one host holds where that is more than the scale-up domain: PCIe cards joined by NVLink bridges in pairs,
    # 8 to a server (H100 PCIe, H100 NVL); past the domain and within the host collectives run over PCIe
    # (pcie_gen), past the host over the NIC. None: the domain is the host (HGX, NVL72, cards without NVLink)
    host_gpus: Optional[int] = field(default=None, metadata={"ge": 1})
    # other names users give this GPU (--gpu, [tool.colint] gpus, the API): "h200-sxm", "rtx4090"; lower case,
    # '-' between words (case, '_' and spaces are folded when a name is looked up)
    aliases: list[str] = field(default_factory=list)
    tiles: Tiles
    alignment: dict[str, int]  # hard element multiple of a contiguous dim, per format
    launch_overhead_us: float = field(metadata={"ge": 0})  # per-kernel launch cost seen by a decode step
    time_model: Optional[TimeModel] = None  # only for an architecture colint does not know
    notes: list[str] = field(default_factory=list)
    sources: dict[str, str]  # field path -> reference key (or "computed: formula")
    references: dict[str, str] = field(default_factory=dict)  # reference key -> citation

    def __post_init__(self) -> None:
        _check_numbers(dump(self))
        _positive(self.alignment, "alignment")
        if self.pcie_gen is not None and self.pcie_gen not in PCIE_GENS:
            raise ValueError(f"pcie_gen: {self.pcie_gen!r} is not a PCIe generation ({', '.join(map(str, PCIE_GENS))})")
        if self.host_gpus is not None and (self.host_gpus < self.domain_size or self.host_gpus % self.domain_size):
            raise ValueError(
                f"host_gpus: {self.host_gpus} is not a whole number of scale-up domains of {self.domain_size} GPUs"
            )
        for i, alias in enumerate(self.aliases):
            if not isinstance(alias, str) or not ALIAS_RE.match(alias):
                raise ValueError(
                    f"aliases.{i}: {alias!r} must be lower-case letters and digits, '-' between words (e.g. h200-sxm)"
                )
            if alias == self.name:
                raise ValueError(f"aliases.{i}: {alias!r} is the profile's own name")
        if len(set(self.aliases)) != len(self.aliases):
            raise ValueError("aliases: a name is listed twice")
        if self.time_model is not None:
            _positive(self.time_model.compute_efficiency, "time_model.compute_efficiency")
            _positive(self.time_model.max_split_k, "time_model.max_split_k")
        unknown = sorted(set(self.peak_tflops) - set(HW_FORMATS))
        if unknown:
            raise ValueError(f"peak_tflops: unknown format(s) {', '.join(unknown)}; known: {', '.join(HW_FORMATS)}")
        for fmt, v in self.peak_tflops.items():
            if v <= 0:
                raise ValueError(f"peak_tflops.{fmt}: must be > 0 (omit a format the chip lacks)")
        missing = [
            f
            for f in ("sm_count", "peak_tflops", "memory_tbps", "memory_gb", "tiles", "launch_overhead_us")
            if not any(k == f or k.startswith(f + ".") for k in self.sources)
        ]
        if missing:
            raise ValueError(f"sources: no source for {', '.join(missing)}")
        for fmt in self.peak_tflops:
            if not any(k in (f"peak_tflops.{fmt}", "peak_tflops") for k in self.sources):
                raise ValueError(f"sources: no source for peak_tflops.{fmt}")

    # -- helpers -----------------------------------------------------------------------------
    def has(self, fmt: str) -> bool:
        return fmt in self.peak_tflops

    def peak_flops(self, fmt: str) -> float:
        """Dense peak, FLOP/s (raises KeyError when the format is not native)."""
        return self.peak_tflops[fmt] * 1e12

    @property
    def memory_bytes_per_s(self) -> float:
        return self.memory_tbps * 1e12

    @property
    def pcie_bytes_per_s(self) -> float:
        """One direction of the GPU's PCIe x16 host link, bytes/s: GT/s x 16 lanes x the encoding's data share / 8
        (``pcie_gen``; Gen4 when the profile names none): Gen4 31.5 GB/s, Gen5 63.0 GB/s."""
        gen = self.pcie_gen or DEFAULT_PCIE_GEN
        return PCIE_GT_S[gen] * 1e9 * PCIE_LANES * PCIE_CODE[gen] / 8.0

    @property
    def host_size(self) -> int:
        """GPUs of one host: ``host_gpus``, else the scale-up domain."""
        return self.host_gpus or self.domain_size

    @property
    def scale_up(self) -> str:
        """The link inside one scale-up domain, as messages name it: NVLink, or PCIe where the GPU has none."""
        return "NVLink" if self.interconnect_gbps > 0 else "PCIe"

    @property
    def domain_noun(self) -> str:
        """What ``domain_size`` GPUs are, as messages name them: an NVLink domain, or a PCIe host."""
        return "NVLink domain" if self.interconnect_gbps > 0 else "PCIe host"

    @property
    def scale_up_gbps(self) -> float:
        """That link's bandwidth per GPU, GB/s bidirectional like ``interconnect_gbps`` (PCIe: both directions)."""
        return self.interconnect_gbps if self.interconnect_gbps > 0 else 2 * self.pcie_bytes_per_s / 1e9

    def ridge(self, fmt: str) -> float:
        """Dense peak / HBM bandwidth, FLOP per byte."""
        return self.peak_flops(fmt) / self.memory_bytes_per_s
