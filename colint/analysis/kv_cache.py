"""KV-cache size per token (DESIGN.md §5).

Per layer and token: attention stores K and V, ``n_kv·(d_k + d_v)·b`` bytes; MLA stores the
compressed latent and the shared RoPE key, ``(kv_lora_rank + rope_dim)·b``; linear attention
and Mamba layers keep a fixed-size state instead (reported by :func:`state_bytes`).
Checks (tests): DeepSeek-V3 70,272 B/token and Llama-3.1-405B 516,096 B/token in BF16.
"""

from __future__ import annotations

from colint.spec.model import Mixer, ModelSpec


def mixer_kv_bytes_per_token(m: Mixer, bytes_per_elem: float) -> float:
    if m.kind == "attention":
        return m.num_kv_heads * (m.head_dim + (m.v_head_dim or m.head_dim)) * bytes_per_elem
    if m.kind == "mla":
        return ((m.kv_lora_rank or 0) + (m.qk_rope_head_dim or 0)) * bytes_per_elem
    return 0.0


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
    counts = spec.layer_counts()
    total = 0.0
    for kind, n in zip(spec.layer_kinds, counts):
        total += n * mixer_kv_bytes_per_token(kind.mixer, bytes_per_elem)
    return int(round(total))


def state_bytes_per_sequence(spec: ModelSpec, bytes_per_elem: float = 2.0) -> int:
    counts = spec.layer_counts()
    return int(round(sum(n * mixer_state_bytes(k.mixer, bytes_per_elem)
                         for k, n in zip(spec.layer_kinds, counts))))
