"""Pipeline-stage partitioning of a per-layer cost vector (docs/design.md §5).

Pure functions, no rules: the best contiguous split of ``costs`` (one number per decoder layer)
into ``stages`` stages that minimizes the largest stage (exact dynamic program, O(p·n) — n is
a few hundred at most), with fixed extras on the first stage (embedding) and the last stage
(LM head, MTP layers); its imbalance ``max/mean − 1``; and the Megatron pipeline bubble.

Sources: Megatron-LM (Narayanan et al., SC'21, arXiv 2104.04473): bubble fraction (p−1)/m,
interleaved (p−1)/(v·m); uneven splits via ``--decoder-first/last-pipeline-num-layers``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from colint.util.records import dataclass
from functools import lru_cache
from itertools import accumulate, islice
from operator import le
from collections.abc import Sequence


@dataclass(frozen=True)
class Partition:
    sizes: tuple[int, ...]  # decoder layers per stage
    sums: tuple[float, ...]  # stage cost (extras included)

    @property
    def max(self) -> float:
        return max(self.sums)

    @property
    def mean(self) -> float:
        return sum(self.sums) / len(self.sums)

    @property
    def imbalance(self) -> float:
        """max/mean − 1: how much longer the slowest stage is than a perfect split."""
        return imbalance(self.sums)

    @property
    def idle_share(self) -> float:
        """1 − mean/max: share of pipeline time the other stages wait for the slowest."""
        m = self.max
        return 1.0 - self.mean / m if m > 0 else 0.0


def imbalance(stage_sums: Sequence[float]) -> float:
    mean = sum(stage_sums) / len(stage_sums) if stage_sums else 0.0
    return max(stage_sums) / mean - 1.0 if mean > 0 else 0.0


def bubble_fraction(stages: int, microbatches: int, virtual_stages: int = 1) -> float:
    """Megatron's pipeline bubble (p−1)/(v·m) as a fraction of the ideal time."""
    return (stages - 1) / (virtual_stages * microbatches)


def stage_sums(
    costs: Sequence[float], sizes: Sequence[int], first_extra: float = 0.0, last_extra: float = 0.0
) -> tuple[float, ...]:
    out, i = [], 0
    for j, s in enumerate(sizes):
        v = float(sum(costs[i : i + s]))
        if j == 0:
            v += first_extra
        if j == len(sizes) - 1:
            v += last_extra
        out.append(v)
        i += s
    return tuple(out)


def evaluate(
    costs: Sequence[float], sizes: Sequence[int], first_extra: float = 0.0, last_extra: float = 0.0
) -> Partition:
    return Partition(tuple(sizes), stage_sums(costs, sizes, first_extra, last_extra))


def even_sizes(n: int, stages: int) -> tuple[int, ...] | None:
    """The plain n/p split (what Megatron does by default), None when p does not divide n."""
    if stages <= 0 or n % stages:
        return None
    return (n // stages,) * stages


def best_partition(
    costs: Sequence[float],
    stages: int,
    first_extra: float = 0.0,
    last_extra: float = 0.0,
    cap_costs: Sequence[float] | None = None,
    cap: float | None = None,
    cap_first_extra: float = 0.0,
    cap_last_extra: float = 0.0,
) -> Partition | None:
    """The contiguous split of ``costs`` into ``stages`` non-empty stages that minimizes the
    largest stage sum (extras included). With ``cap_costs``/``cap``, only splits whose stages
    all stay within ``cap`` in the second cost vector are allowed (used to pick, among the
    splits that are optimal in one cost, the best in another). None when no split exists.

    Exact dynamic program over prefixes. Costs are non-negative, so the best value of a prefix
    split into j stages does not decrease with the prefix, and a stage's sum does not increase
    as its start moves right: the best start of the last stage is at the crossing of the two. That
    crossing never moves left as the stage's end moves right, so one walk per stage finds it for every
    end (O(p·n)); bisection where float ties break that order (_best_partition). Memoized on the arguments (with the cost types): rules ask
    for the same split of the same vector (CL60x at several pp, files of one family)."""
    cap_key = None if cap_costs is None or cap is None else (tuple(cap_costs), tuple(map(type, cap_costs)))
    return _best_partition_memo(
        tuple(costs),
        tuple(map(type, costs)),
        stages,
        first_extra,
        last_extra,
        cap_key,
        cap,
        cap_first_extra,
        cap_last_extra,
    )


@lru_cache(maxsize=1024)
def _best_partition_memo(
    costs: tuple,
    _types: tuple,
    stages: int,
    first_extra: float,
    last_extra: float,
    cap_key: tuple | None,
    cap: float | None,
    cap_first_extra: float,
    cap_last_extra: float,
) -> Partition | None:
    return _best_partition(
        costs,
        stages,
        first_extra,
        last_extra,
        None if cap_key is None else cap_key[0],
        cap,
        cap_first_extra,
        cap_last_extra,
    )


def _best_partition(
    costs: Sequence[float],
    stages: int,
    first_extra: float,
    last_extra: float,
    cap_costs: Sequence[float] | None,
    cap: float | None,
    cap_first_extra: float,
    cap_last_extra: float,
) -> Partition | None:
    """best_partition's dynamic program. A stage's sum is ``pre[b] - pre[a]``, plus ``first_extra`` on
    stage 0, plus ``last_extra`` on stage p-1 (in that order: the float sums are the documented ones);
    the loops inline it (this runs ~10^4 steps per stack).

    For every end i of stage j >= 1, two starts a of that stage are looked for: with a cap, the first
    whose stage fits it (``lo``), and the first where the prefix's best ``prev[a]`` reaches the stage's
    sum ``pre[i] - pre[a]`` (``left``); the best start is ``left`` or the one before it (:func:`_pick`).
    Both starts come from one walk over a stage's ends where ``prev`` does not decrease over the starts
    tried (:func:`_walk_stage`, the rule), else from bisection (:func:`_starts_bisect`)."""
    n = len(costs)
    p = stages
    if p < 1 or n < p:
        return None
    pre = list(accumulate(map(float, costs), initial=0.0))
    cpre = None
    if cap_costs is not None and cap is not None:
        cpre = list(accumulate(map(float, cap_costs), initial=0.0))
    tol = 1e-9
    limit = (cap * (1 + tol) + tol) if cap is not None else 0.0

    inf = float("inf")
    # best[j][i]: min over splits of the first i layers into j+1 stages of the largest stage
    best = [[inf] * (n + 1) for _ in range(p)]
    arg = [[-1] * (n + 1) for _ in range(p)]
    # stage 0 = layers (0, i]: pre[i] - pre[0] + first_extra (+ last_extra when it is the only stage); cap alike
    only = p == 1
    c_last = cap_last_extra if only else 0.0
    best_0, arg_0 = best[0], arg[0]
    for i in range(1, n - (p - 1) + 1):
        if cpre is None or cpre[i] - cpre[0] + cap_first_extra + c_last <= limit:
            v = pre[i] - pre[0] + first_extra
            best_0[i] = v + last_extra if only else v
            arg_0[i] = 0
    # the walk finds the bisection's starts where pre (and cpre) do not decrease (costs >= 0): then any end of a
    # stage is what bisection and _pick give it alone, and the stage before the last is computed at the ends the
    # last stage's bisection asks for only (_LazyRow)
    lazy = p >= 3 and _rises(pre) and (cpre is None or _rises(cpre))
    for j in range(1, p):
        # stage j >= 1: seg(j, a, i) = pre[i] - pre[a] (+ last_extra on the last stage); cseg alike
        prev = best[j - 1]
        if lazy and j == p - 2:
            best[j] = _LazyRow(j, n - 1, prev, pre, cpre, limit, tol, best[j], arg[j])  # type: ignore[call-overload]
            continue
        if j < p - 1:
            tried = prev[j : n - (p - j) + 1]  # prev at every start a these ends try
            if all(map(le, tried, islice(tried, 1, None))):
                # prev does not decrease: its infinite starts (a capped prefix no split fits) are a suffix
                unfit = j + tried.index(inf) if cpre is not None and tried[-1] == inf else n
                _walk_stage(j, n - (p - 1 - j), prev, pre, cpre, limit, best[j], arg[j], tol, unfit)
                continue
            starts = _starts_bisect(range(j + 1, n - (p - 1 - j) + 1), j, prev, pre, cpre, 0.0, limit, None)
            extra = 0.0
        else:
            starts = _starts_bisect([n], j, prev, pre, cpre, cap_last_extra, limit, last_extra)
            extra = last_extra
        best_j, arg_j = best[j], arg[j]
        for i, lo, left in starts:
            best_j[i], arg_j[i] = _pick(i, lo, left, prev, pre, extra, j == p - 1, tol)
    if best[p - 1][n] == inf:
        return None
    sizes = []
    i = n
    for j in range(p - 1, -1, -1):
        a = arg[j][i]
        sizes.append(i - a)
        i = a
    sizes.reverse()
    return evaluate(costs, sizes, first_extra, last_extra)


def _rises(xs: list[float]) -> bool:
    """Whether ``xs`` never decreases (False with a NaN)."""
    return all(map(le, xs, islice(xs, 1, None)))


class _LazyRow:
    """Stage ``j``'s row of the program (``best[j]``, read as a list), computed at the ends read only: each as
    :func:`_starts_bisect` and :func:`_pick` give it, which is what the walk gives where it runs (the caller
    checks that pre and cpre rise), and what the bisection gives where it runs. The last stage's bisection reads
    ~log n ends of the stage before it, and its pick the start before the crossing: a row of ~n ends otherwise.
    Ends outside (j, end] are infinite, as the program leaves them; ``arg`` gets the start of each end computed."""

    __slots__ = ("j", "end", "prev", "pre", "cpre", "limit", "tol", "best", "arg", "done")

    def __init__(self, j: int, end: int, prev, pre, cpre, limit: float, tol: float, best, arg) -> None:
        self.j, self.end, self.prev, self.pre, self.cpre = j, end, prev, pre, cpre
        self.limit, self.tol, self.best, self.arg = limit, tol, best, arg
        self.done = [False] * len(best)

    def __getitem__(self, i: int) -> float:
        if not self.done[i]:
            self.done[i] = True
            if self.j < i <= self.end:
                for e, lo, left in _starts_bisect((i,), self.j, self.prev, self.pre, self.cpre, 0.0, self.limit, None):
                    self.best[e], self.arg[e] = _pick(e, lo, left, self.prev, self.pre, 0.0, False, self.tol)
        return self.best[i]


def _pick(i: int, lo: int, left: int, prev, pre, last_extra: float, last: bool, tol: float) -> tuple[float, int]:
    """(best value, start) of the stage ending at i from the two starts found (lo <= left <= i - 1): the
    start before the crossing, else the crossing itself unless it is better by more than tol."""
    inf = math.inf
    pi = pre[i]
    bv, ba = inf, -1
    if left > lo and prev[left - 1] < inf:
        pv, sv = prev[left - 1], pi - pre[left - 1]
        if last:
            sv += last_extra
        bv, ba = (sv if sv > pv else pv), left - 1  # max(prev[a], seg), as max() picks
    pv = prev[left]
    if pv < inf:
        sv = pi - pre[left] + last_extra if last else pi - pre[left]
        v = sv if sv > pv else pv
        if ba == -1 or v < bv - tol * max(1.0, abs(bv)):
            bv, ba = v, left
    return bv, ba


def _walk_stage(j: int, end: int, prev, pre, cpre, limit: float, best_j, arg_j, tol: float, unfit: int) -> None:
    """best_j[i], arg_j[i] for every end i in (j, end] of a stage j before the last, when ``prev`` does not
    decrease over the starts tried (the caller checks; a tolerance tie in the stage before can make it dip
    by a last bit, and then the bisection's own probes decide): what :func:`_starts_bisect` and :func:`_pick`
    give, in O(n) instead of O(n log n), in one loop (the DP's inner loop: a stack asks it ~10^3 times).

    Both tests are monotone in a, false then true: ``cpre`` and ``pre`` rise with a, and so does ``prev``.
    Both are monotone in i, true then false: the stage's sum rises with its end. So the first start where
    each holds never moves left as i rises, and one pointer per test walks all ends: the bisection finds
    the same first true start (or the same ``hi`` when there is none). An end no start fits is left out.

    ``unfit``: the first start from which ``prev`` is infinite (every later one is, as it does not decrease).
    Once ``lo`` reaches it, every start an end may take has an infinite prefix: that end's best stays infinite
    (with no start), as it was set, and so does every later end's (``lo`` never moves left): the walk stops."""
    inf = math.inf
    lo = left = j
    for i in range(j + 1, end + 1):
        hi = i - 1
        if cpre is not None:
            ci = cpre[i]
            while lo < i and not (ci - cpre[lo] <= limit):  # the bisection's ci - cpre[m] + 0.0 + 0.0 <= limit
                lo += 1
            if lo >= unfit:
                break
            if lo > hi:
                continue
            if left < lo:
                left = lo
        pi = pre[i]
        sl = pi - pre[left]
        pv = prev[left]
        while left < hi and not (pv >= sl):
            left += 1
            sl = pi - pre[left]
            pv = prev[left]
        # _pick, inlined (not the last stage: no extra)
        if left > lo:
            qv = prev[left - 1]
            if qv < inf:
                sv = pi - pre[left - 1]
                bv = sv if sv > qv else qv
                if pv < inf:
                    v = sl if sl > pv else pv
                    ab = bv if bv >= 0.0 else -bv
                    if v < bv - tol * (ab if ab > 1.0 else 1.0):
                        best_j[i], arg_j[i] = v, left
                        continue
                best_j[i], arg_j[i] = bv, left - 1
                continue
        if pv < inf:
            best_j[i], arg_j[i] = (sl if sl > pv else pv), left
        else:
            best_j[i], arg_j[i] = inf, -1


def _starts_bisect(ends, j, prev, pre, cpre, c_last, limit, last_extra) -> list[tuple[int, int, int]]:
    """(i, lo, left) for each end i of stage j (module doc of _best_partition): both starts by bisection
    over a in [j, i - 1]. ``last_extra``: None on a stage before the last. An end no start fits is left out."""
    out = []
    for i in ends:
        pi = pre[i]
        lo, hi = j, i - 1
        if cpre is not None:  # the stage (a, i] must fit the cap: a at least the smallest such start
            ci = cpre[i]
            left, h = lo, hi + 1
            while left < h:
                m = (left + h) // 2
                if ci - cpre[m] + 0.0 + c_last <= limit:
                    h = m
                else:
                    left = m + 1
            lo = left
            if lo > hi:
                continue
        left, h = lo, hi  # the first start where the prefix's best reaches the stage's sum
        if last_extra is not None:
            while left < h:
                m = (left + h) // 2
                if prev[m] >= pi - pre[m] + last_extra:
                    h = m
                else:
                    left = m + 1
        else:
            while left < h:
                m = (left + h) // 2
                if prev[m] >= pi - pre[m]:
                    h = m
                else:
                    left = m + 1
        out.append((i, lo, left))
    return out


def crossing_split(
    costs: Sequence[float], stages: int, first_extra: float = 0.0, last_extra: float = 0.0
) -> Partition | None:
    """A split into ``stages`` non-empty stages cut where the running sum (extras included) comes nearest each
    k/p of the total: O(n), feasible, so its largest stage bounds best_partition's from above (a cheap filter
    before the exact program). None when there are fewer costs than stages."""
    n, p = len(costs), stages
    if p < 1 or n < p:
        return None
    pre = list(accumulate(map(float, costs), initial=0.0))
    total = pre[-1] + first_extra + last_extra
    sizes, a = [], 0
    for k in range(1, p):
        target = k * total / p - first_extra
        i = bisect_left(pre, target, a + 1, n - (p - k))  # a cut after layer i, leaving a layer per stage after
        if i > a + 1 and target - pre[i - 1] < pre[i] - target:
            i -= 1
        sizes.append(i - a)
        a = i
    sizes.append(n - a)
    return evaluate(costs, sizes, first_extra, last_extra)


def best_partition_two(
    costs: Sequence[float],
    second: Sequence[float],
    stages: int,
    first_extra: float = 0.0,
    last_extra: float = 0.0,
    second_first_extra: float = 0.0,
    second_last_extra: float = 0.0,
) -> Partition | None:
    """Among the splits optimal in ``costs``, the one whose largest stage in ``second`` is
    smallest (returned as a Partition in ``costs``; evaluate ``second`` with its sizes)."""
    first = best_partition(costs, stages, first_extra, last_extra)
    if first is None:
        return None
    # minimize the max of `second` subject to every stage of `costs` staying within the optimum
    alt = best_partition(
        second,
        stages,
        second_first_extra,
        second_last_extra,
        cap_costs=costs,
        cap=first.max,
        cap_first_extra=first_extra,
        cap_last_extra=last_extra,
    )
    if alt is None:
        return first
    return evaluate(costs, alt.sizes, first_extra, last_extra)
