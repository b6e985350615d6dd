"""KV-cache size per token (docs/design.md §5).

Per layer and token: attention stores K and V, ``n_kv·(d_k + d_v)·b`` bytes; MLA stores the
compressed latent and the shared RoPE key, ``(kv_lora_rank + rope_dim)·b``; linear attention
and Mamba layers keep a fixed-size state instead (reported by :func:`state_bytes`).
Gemma-4 (transformers ``Gemma4TextAttention``): an ``attention_k_eq_v`` layer (``v_from_k``)
stores K only (its values are its keys); a KV-sharing layer (``kv_shared``) stores nothing: it
attends over the cache of the last earlier non-sharing layer of the same attention type
(``Gemma4TextConfig.kv_sharing_modes``), so it still *reads* that layer's K/V every step
(:func:`mixer_kv_read_bytes_per_token`, :func:`kv_sources`).
A layer with a ``parallel_mixer`` (Falcon-H1: attention beside Mamba-2) counts both mixers.
DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): a layer that runs the lightning indexer also caches
its keys, ``index_head_dim`` per token, always FP8 with one FP32 scale per 128 elements whatever the
main cache's format (:func:`indexer_kv_bytes_per_token`); a layer that reuses an earlier layer's top-k
caches none.
Checks (tests): DeepSeek-V3 70,272 B/token and Llama-3.1-405B 516,096 B/token in BF16; DeepSeek-V3.2
78,324 (61 x (576 x 2 + 132)).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from colint.analysis.inventory import COUNTS_MEMO_MAX, layer_counts
from colint.util.memo import per_spec
from colint.normalize.model_spec import LayerKind, Mixer, ModelSpec


# The DSA indexer's key cache: FP8 E4M3 keys (1 B an element) and one FP32 scale per block of 128 (DeepSeek-V3.2-Exp
# inference/model.py, class Indexer: k_cache float8_e4m3fn [.., index_head_dim], k_scale_cache float32
# [.., index_head_dim // block_size], block_size 128; vLLM's indexer cache holds the same 128 + 4 B a token)
INDEXER_KEY_BYTES_PER_ELEM = 1.0
INDEXER_SCALE_BLOCK = 128
INDEXER_SCALE_BYTES = 4.0


def indexer_kv_bytes_per_token(m: Mixer) -> float:
    """Bytes the DSA lightning indexer caches per token on this layer (0 without an indexer): its FP8 key and
    the key's FP32 scales, whatever format the main KV cache is in."""
    if m.kind != "mla" or not (m.index_num_heads and m.index_head_dim):
        return 0.0
    d = m.index_head_dim
    return d * INDEXER_KEY_BYTES_PER_ELEM + -(-d // INDEXER_SCALE_BLOCK) * INDEXER_SCALE_BYTES


def mixer_kv_bytes_per_token(m: Mixer, bytes_per_elem: float) -> float:
    """KV-cache bytes this mixer STORES per token (0 for a KV-sharing layer); a DSA layer adds its indexer's keys."""
    if m.kind == "attention":
        if m.kv_shared:
            return 0.0
        v = 0 if m.v_from_k else (m.v_head_dim or m.head_dim)
        return m.num_kv_heads * (m.head_dim + v) * bytes_per_elem
    if m.kind == "mla":
        latent = ((m.kv_lora_rank or 0) + (m.qk_rope_head_dim or 0)) * bytes_per_elem
        return latent + indexer_kv_bytes_per_token(m)
    return 0.0


def mixer_kv_read_bytes_per_token(m: Mixer, bytes_per_elem: float, source: Optional[Mixer] = None) -> float:
    """KV-cache bytes the attention core READS per cached token: what it stores, or, for a
    KV-sharing layer, what its ``source`` layer stores (the layer's own shapes, as if it stored
    K and V, when the source is unknown)."""
    if m.kind == "attention" and m.kv_shared:
        src = source if source is not None and not source.kv_shared else replace(m, kv_shared=False)
        return mixer_kv_bytes_per_token(src, bytes_per_elem)
    return mixer_kv_bytes_per_token(m, bytes_per_elem)


def kind_mixers(kind: LayerKind) -> list[Mixer]:
    """The token mixers of a layer kind: its mixer and, when it has one, the parallel mixer."""
    return [kind.mixer] if kind.parallel_mixer is None else [kind.mixer, kind.parallel_mixer]


# kv_sources() memo: id(spec) -> (spec, sources), as inventory.layer_counts' (every analysis of a spec, and each
# re-pricing of its steps, walks its layer pattern for them otherwise)
_SOURCES_MEMO: dict[int, tuple[ModelSpec, dict[int, Mixer]]] = {}


def kv_sources(spec: ModelSpec) -> dict[int, Mixer]:
    """Layer-kind index of each KV-sharing attention kind -> the mixer whose cache it reads: the
    last layer before the kind's first layer that stores K/V with the same attention type and
    window (Gemma-4's producer of that ``layer_type``). Built once per spec object: read-only."""
    return per_spec(_SOURCES_MEMO, id(spec), spec, lambda: _kv_sources(spec), COUNTS_MEMO_MAX)


def _kv_sources(spec: ModelSpec) -> dict[int, Mixer]:
    out: dict[int, Mixer] = {}
    last: dict[tuple, Mixer] = {}
    for ki in spec.layer_pattern:
        m = spec.layer_kinds[ki].mixer
        if m.kind != "attention":
            continue
        key = (m.attention, m.window)
        if m.kv_shared:
            if ki not in out and key in last:
                out[ki] = last[key]
        else:
            last[key] = m
    return out


def mixer_state_bytes(m: Mixer, bytes_per_elem: float) -> float:
    """Fixed per-sequence recurrent state of a linear-attention or Mamba layer."""
    if m.kind == "linear_attention":
        nv, dk, dv = m.num_v_heads or 0, m.k_head_dim or 0, m.v_head_dim or 0
        conv = (m.conv_kernel or 0) * (2 * (m.num_k_heads or 0) * dk + nv * dv)
        return (nv * dk * dv + conv) * bytes_per_elem
    if m.kind == "mamba":
        di, ds = m.d_inner or 0, m.d_state or 0
        conv = (m.conv_kernel or 0) * (di + 2 * (m.n_groups or 1) * ds)
        return (di * ds + conv) * bytes_per_elem
    return 0.0


def kv_cache_bytes_per_token(spec: ModelSpec, bytes_per_elem: float = 2.0) -> int:
    """KV-cache bytes stored per token by the whole model (KV-sharing layers add nothing)."""
    counts = layer_counts(spec)
    total = 0.0
    for kind, n in zip(spec.layer_kinds, counts):
        total += n * sum(mixer_kv_bytes_per_token(m, bytes_per_elem) for m in kind_mixers(kind))
    return int(round(total))


def state_bytes_per_sequence(spec: ModelSpec, bytes_per_elem: float = 2.0) -> int:
    counts = layer_counts(spec)
    return int(
        round(
            sum(
                n * sum(mixer_state_bytes(m, bytes_per_elem) for m in kind_mixers(k))
                for k, n in zip(spec.layer_kinds, counts)
            )
        )
    )
