"""KV-cache replication under attention tensor parallelism (CL701; estimates of the workload).

Under tp each rank holds n_kv/tp KV heads; when tp exceeds the KV heads (MLA's latent cache counts as one head)
whole KV heads are copied onto tp/n_kv ranks each. ``kv_replication`` gives the worst such copy among the
attention kinds in use, the KV bytes per token per GPU against the evenly sharded figure, the extra bytes per GPU
at the scenario's concurrency and context, and the decode seconds spent re-reading the copies.
"""

from __future__ import annotations


from typing import Optional

from colint.analysis.inventory import layer_counts
from colint.normalize.model_spec import Mixer, ModelSpec
from colint.util.records import dataclass


def attention_kinds(spec: ModelSpec) -> list:
    """(kind, mixer) for layer kinds whose token mixer is softmax attention or MLA, in use."""
    counts = layer_counts(spec)
    return [(k, k.mixer) for k, n in zip(spec.layer_kinds, counts) if n and k.mixer.kind in ("attention", "mla")]


def kv_heads(mx: Mixer) -> int:
    """KV heads a tp split shares out: MLA's latent cache is one head; else the mixer's KV heads (at least 1)."""
    return 1 if mx.kind == "mla" else max(1, mx.num_kv_heads)


@dataclass(frozen=True)
class KvReplication:
    """The worst KV replication of a deployment (bytes and seconds are estimates)."""

    tp: int
    factor: int  # tp ranks holding each KV head of ``mixer``
    mixer: Mixer
    kv_heads: int
    kv_bytes_per_token_per_gpu: float  # as deployed, copies included
    kv_bytes_per_token_sharded: float  # the model's KV bytes per token over tp, without copies
    extra_kv_bytes_per_gpu: float  # the copies at the scenario's concurrency x context
    replicated_kv_read_s: float  # decode seconds per step spent reading the copies
    decode_step_s: float

    @property
    def loss_pct(self) -> float:
        """The replicated KV reads as a percent of the decode step (0 without a step time)."""
        return 100.0 * self.replicated_kv_read_s / self.decode_step_s if self.decode_step_s else 0.0


def kv_replication(spec: ModelSpec, workload, scenario) -> Optional[KvReplication]:
    """The attention kind whose KV heads the scenario's tp copies most (tp a multiple of its KV heads; an uneven
    tp is CL702's), with what the copies cost; None where tp <= 1 or no KV head is copied."""
    tp = scenario.tp
    if tp <= 1:
        return None
    kinds = {k.name: mx for k, mx in attention_kinds(spec)}
    decode = workload.attention["decode"]
    worst: Optional[tuple[int, Mixer, int]] = None
    for a in decode:
        mx = kinds.get(a.kind) if a.mixer in ("attention", "mla") and a.kv_replication >= 1 else None
        if mx is None:
            continue
        n_kv = kv_heads(mx)
        if tp <= n_kv or tp % n_kv:
            continue  # tp % n_kv != 0: the KV heads cannot be replicated evenly (CL702)
        if worst is None or tp // n_kv > worst[0]:
            worst = (tp // n_kv, mx, n_kv)
    if worst is None:
        return None
    factor, mx, n_kv = worst
    kv_gpu = workload.kv_bytes_per_token_per_gpu
    kv_sharded = workload.kv_bytes_per_token / tp
    # the replicated share of the KV reads could be spread over the tp ranks
    read_s = sum(
        a.estimate_s * a.layers * (1 - 1 / max(1.0, min(a.kv_replication, tp)))
        for a in decode
        if a.kind in kinds and a.kv_replication > 1
    )
    return KvReplication(
        tp=tp,
        factor=factor,
        mixer=mx,
        kv_heads=n_kv,
        kv_bytes_per_token_per_gpu=kv_gpu,
        kv_bytes_per_token_sharded=kv_sharded,
        extra_kv_bytes_per_gpu=(kv_gpu - kv_sharded) * scenario.decode_concurrency * scenario.context,
        replicated_kv_read_s=read_s,
        decode_step_s=workload.steps["decode"].estimate_s,
    )
