"""Resizing a ModelSpec's layer pattern to another depth, keeping its irregular prefix (first-k dense)
and repeating its period (a hybrid's): used by fixes that change the layer count and by the
wider/shallower what-if (colint.analysis.wider)."""

from __future__ import annotations

import functools


def divisors(n: int) -> list[int]:
    """The divisors of ``n`` in increasing order (1 and n included)."""
    return [d for d in range(1, n + 1) if n % d == 0]


def nearest_divisor(n: int, target: int) -> int:
    """The divisor of ``n`` nearest ``target`` (ties: the larger): a head count's KV heads after a resize."""
    return min(divisors(n), key=lambda d: (abs(d - target), -d))


def layer_pattern_for(pattern: list[int], n: int) -> list[int]:
    """The layer pattern resized to ``n`` layers, keeping an irregular prefix (first-k dense) and
    repeating the periodic rest (a hybrid's period): DeepSeek-V3 61 -> 60 drops one MoE layer."""
    if n <= 0 or not pattern:
        return []
    f, p = _prefix_and_period(tuple(pattern))
    if n <= f:
        return pattern[:n]
    return pattern[:f] + [pattern[f + (i % p)] for i in range(n - f)]


MAX_IRREGULAR_PREFIX = 64  # first-k-dense prefixes are a few layers (DeepSeek-V3: 3); bounds the search


@functools.lru_cache(maxsize=64)
def _prefix_and_period(pattern: tuple) -> tuple[int, int]:
    """(f, p): the shortest period p of pattern[f:] over prefixes f <= min(L/2, MAX_IRREGULAR_PREFIX), the
    smallest f on ties. The shortest period of a sequence s is len(s) - π(s), with π the KMP failure
    function: O(L) per prefix, where testing every period took O(L^3) (minutes on a typo'd
    7,000-layer config)."""
    L = len(pattern)
    best = (0, L)
    for f in range(0, min(max(1, L // 2), MAX_IRREGULAR_PREFIX) + 1):
        rest = pattern[f:]
        m = len(rest)
        pi = [0] * m
        k = 0
        for i in range(1, m):
            while k and rest[i] != rest[k]:
                k = pi[k - 1]
            if rest[i] == rest[k]:
                k += 1
            pi[i] = k
        p = m - pi[-1] if m else 1
        if p < best[1]:
            best = (f, p)
        if best[1] == 1:
            break
    return best
