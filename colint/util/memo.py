"""colint's bounded memos: two ways to keep a built value, shared by every stage.

``per_spec``: a check asks the same spec the same questions many times (its layer counts, GEMM entries,
footprint parts, candidate deployments): each is built once per spec object and kept by ``id(spec)`` with the
spec itself, so that an id Python recycles for another spec never answers for it. Past ``limit`` entries the
oldest is dropped.

``keep``: a memo keyed by value (a layer kind's GEMMs, a GEMM shape's time, a fused group's row) is cleared
when it holds ``limit`` entries and refilled: a bulk run meets a family's values together, so the recent ones
come back and the old ones rarely do.

What is kept is shared by every caller: read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


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


def keep(memo: dict[K, V], key: K, value: V, limit: int) -> V:
    """``value``, put in ``memo`` under ``key``; ``memo`` is cleared first when it holds ``limit`` entries."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value
