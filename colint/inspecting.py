"""`colint inspect`: the normalized spec, parameter counts and GEMM table of one file."""

from __future__ import annotations

from colint.analysis.inventory import gemms, param_counts
from colint.analysis.kv_cache import kv_cache_bytes_per_token
from colint.normalize.model_spec import ModelSpec
from colint.plain_data import dump


def inspect_spec(spec: ModelSpec, path: str) -> dict:
    """The ``inspect`` JSON shape of docs/output.md."""
    p = param_counts(spec)
    return {
        "path": path,
        "format": spec.format,
        "model_type": spec.model_type,
        "spec": dump(spec, json=True, exclude={"sources"}),
        "params": {
            "total": p.total,
            "embedding": p.embedding,
            "lm_head": p.lm_head,
            "active_per_token": p.active_per_token,
            "mtp": p.mtp,
            "counts_include_vocab": p.known_vocab,
        },
        "gemms": [
            {"name": g.name, "layers": g.layers, "k": g.k, "n": g.n, "m_per_token": g.m_per_token, "count": g.count}
            for g in gemms(spec)
        ],
        "kv_cache_bytes_per_token": kv_cache_bytes_per_token(spec),
        "notes": list(spec.notes),
    }
