"""Memos keyed by a spec object's identity, shared by the analysis and the rules.

A check asks the same spec the same questions many times (its layer counts, GEMM entries, footprint parts,
candidate deployments): each is built once per spec object and kept by ``id(spec)`` with the spec itself, so
that an id Python recycles for another spec never answers for it. Past ``limit`` entries the oldest is dropped.
What is kept is shared by every caller: read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


def per_spec(memo: dict, key: Hashable, spec: Any, build: Callable[[], T], limit: int) -> T:
    """``build()``, kept in ``memo`` under ``key`` (``id(spec)``, or a tuple that holds it) with ``spec``."""
    hit = memo.get(key)
    if hit is not None and hit[0] is spec:
        return hit[1]
    out = build()
    if len(memo) >= limit:
        del memo[next(iter(memo))]
    memo[key] = (spec, out)
    return out
