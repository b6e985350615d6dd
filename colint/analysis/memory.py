"""HBM footprint per GPU (an estimate): weights + KV cache + activations against usable memory.

``memory_fit(...)`` is called by ``analyse`` and fills the memory fields of ``Workload``
(weight_bytes_per_gpu, kv_cache_bytes_per_gpu, activation_bytes_per_gpu, max_decode_concurrency,
memory_fits). The pieces, per GPU:

* **weights** — the heaviest pipeline stage of the weight-balanced contiguous split (embedding on
  the first stage, LM head on the last), each GEMM sharded by tp/ep in the scenario's format
  (routers BF16, the embedding BF16): with pp = 1, the whole model's shard.
* **KV cache** — ``decode_concurrency`` sequences of ``context`` tokens (sliding-window layers hold
  their window; linear-attention/Mamba a fixed state), per tp shard (replicated where tp exceeds
  the KV heads), the layers of one stage (mean over stages).
* **activations** — the peak working set of one forward: the larger of a prefill step
  (``prefill_tokens``) and a decode step; per token the residual stream and the normed copy
  (2·H·2 B) plus the largest GEMM's input and output (its shard). Serving engines reserve about this
  by profiling a forward at their batched-token limit (vLLM ``max_num_batched_tokens``).

**Usable memory** = ``USABLE_HBM_SHARE`` x the profile's HBM (the rest: CUDA context, NCCL buffers,
CUDA graphs, allocator fragmentation).
"""

from __future__ import annotations


from colint.analysis.pipeline import best_partition
from colint.util.records import dataclass

USABLE_HBM_SHARE = 0.9  # vLLM's default gpu_memory_utilization (0.9): the share of HBM a serving engine plans with
B_ACT = 2.0  # BF16 activations between kernels


@dataclass(frozen=True)
class MemoryFit:
    """One GPU's footprint in one scenario (bytes; all estimates)."""

    weight_bytes_per_gpu: float
    kv_cache_bytes_per_gpu: float
    activation_bytes_per_gpu: float
    kv_bytes_per_sequence_per_gpu: float  # one sequence at the scenario's context
    hbm_bytes: float
    usable_bytes: float
    max_decode_concurrency: int  # sequences whose KV fits next to weights and activations (0: not even one)

    @property
    def total_bytes(self) -> float:
        return self.weight_bytes_per_gpu + self.kv_cache_bytes_per_gpu + self.activation_bytes_per_gpu

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.usable_bytes

    @property
    def weights_fit(self) -> bool:
        return self.weight_bytes_per_gpu + self.activation_bytes_per_gpu <= self.usable_bytes


def heaviest_stage_weight_bytes(layer_weights: list[float], first: float, last: float, pp: int) -> float:
    """Weight bytes of the heaviest stage of the weight-balanced contiguous split into ``pp`` stages."""
    total = sum(layer_weights) + first + last
    if pp <= 1 or len(layer_weights) < pp:
        return total / max(1, pp) if pp > 1 else total
    p = best_partition(layer_weights, pp, first_extra=first, last_extra=last)
    return p.max if p is not None else total / pp


def mtp_weight_bytes(
    layer_weights: list[float], mtp_layers: int, hidden: int, bytes_per_weight: float, tp: int
) -> float:
    """Weight bytes per GPU of the multi-token-prediction layers (DeepSeek's nextn, which transformers does not build
    but serving engines load for speculative decoding; issue 29): each holds a decoder layer like the last one
    (sharded as it is) plus its eh_proj (2H -> H) over tp; they sit on the last stage, beside the LM head, and
    share the embedding and head. An ESTIMATE: the MTP layer's norms (a few H each) and its KV cache are left out."""
    if not mtp_layers or not layer_weights:
        return 0.0
    return mtp_layers * (layer_weights[-1] + 2.0 * hidden * hidden * bytes_per_weight / tp)


def activation_bytes(hidden: int, rows_by_regime: dict, tokens_by_regime: dict[str, int]) -> float:
    """Peak activation bytes of one forward per GPU: max over regimes of tokens·2·H·B_ACT plus the largest
    GEMM's input and output (rows already sharded; routed experts: their rows on this GPU)."""
    peak = 0.0
    for regime, rows in rows_by_regime.items():
        tokens = tokens_by_regime[regime]
        gemm = max((r.m * max(r.instances, 1.0) * (r.k + r.n) * B_ACT for r in rows), default=0.0)
        peak = max(peak, tokens * 2.0 * hidden * B_ACT + gemm)
    return peak


def memory_fit(
    weight_bytes_per_gpu: float,
    kv_bytes_per_sequence_per_gpu: float,
    activation_bytes_per_gpu: float,
    concurrency: int,
    memory_gb: float,
) -> MemoryFit:
    hbm = memory_gb * 1e9
    usable = USABLE_HBM_SHARE * hbm
    room = usable - weight_bytes_per_gpu - activation_bytes_per_gpu
    if room <= 0:
        max_conc = 0
    elif kv_bytes_per_sequence_per_gpu <= 0:
        max_conc = 10**9
    else:
        max_conc = int(room // kv_bytes_per_sequence_per_gpu)
    return MemoryFit(
        weight_bytes_per_gpu,
        concurrency * kv_bytes_per_sequence_per_gpu,
        activation_bytes_per_gpu,
        kv_bytes_per_sequence_per_gpu,
        hbm,
        usable,
        max_conc,
    )
