"""Many files checked in worker processes, results in input order (as ruff checks files in parallel).

A ``colint check`` over a whole model zoo is CPU-bound pure Python: each file is loaded, normalized,
analysed and linted, and every fix it is offered is re-checked at the state it leads to (colint.engine.closure).
The files are independent, so ``map_ordered`` hands them to forked workers, in chunks taken in turn (a
large MoE costs several times a dense model), and returns the results in input order: the output is the
one a single process writes. A worker's memos (analyse, GEMM estimates, the closure's shared re-checks)
are its own; every memo is keyed by value or object identity, so no result depends on which process made
it.

A pool costs a fork per worker and a pickled result per file (0.4-0.6 ms for a FileResult of ~12 kB,
pickled there and unpickled here, measured on the corpus and the large-MoE mix), so it is considered only
for ``MIN_ITEMS`` items or more, where a machine has two CPUs or more and ``fork`` (Linux); a pre-commit
run on a few files never starts one. Where the caller says that ``MIN_ITEMS`` or more of the items differ
(``colint check`` counts its files' distinct contents), the pool starts at once: no memo will answer them.
Otherwise the items start in this process, and the rest go to a pool only after ``PROBE_S`` of that, once the recent ones have cost ``PAY_S`` each or more: items that cost
less than a few round trips stay here, whatever their number. The workers are forked from this process,
so they start with its warm memos. Where the caller gives each item a kind (``colint check``: files that
differ only in their numbers), a worker takes a kind's items together, so that its memos answer all but the
first. ``COLINT_JOBS=1`` turns the pool off (``COLINT_JOBS=N``: at most N workers). A result that
cannot be pickled, or a worker that dies, is redone in this process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Optional, TypeVar, cast

T = TypeVar("T")

MIN_ITEMS = 64  # below this a pool's start-up and transfers cost about what it saves (two workers)
# mean cost per item (s) from which a pool pays: about three times a result's round trip (0.4-0.6 ms), a margin
# for this process unpickling while the workers compute. It was 5 ms while a round trip was thought to cost 1-3 ms;
# a check now costs less than that (a mix of large MoE and corpus files: ~3-4 ms each), so the pool never started.
PAY_S = 0.0015
WINDOW = 16  # the recent items that mean is taken over
PROBE_S = 0.5  # items run here first, so that the mean is taken over a full window of recent ones
CHUNK = 4  # items per task: small enough that a chunk of large MoE files does not leave one worker last

# the job of the pool being run: the forked workers inherit it (nothing but an index is sent to them)
_JOB: Optional[tuple[Callable[[Any], Any], Sequence[Any]]] = None


def workers(n_items: int) -> int:
    """Worker processes for ``n_items`` items: 1 (no pool) below MIN_ITEMS, without ``fork``, on one CPU,
    or with COLINT_JOBS=1; else the CPUs this process may run on (at most COLINT_JOBS)."""
    if n_items < MIN_ITEMS or not sys.platform.startswith("linux"):
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - Linux has sched_getaffinity
        cpus = os.cpu_count() or 1
    limit = os.environ.get("COLINT_JOBS", "").strip()
    if limit:
        try:
            cpus = min(cpus, max(1, int(limit)))
        except ValueError:
            pass  # a malformed value is no limit (the run is the same, only slower or faster)
    return max(1, cpus)


def _run(task: list[int]) -> list[Optional[bytes]]:
    """In a worker: the items of ``task`` (indices into the job), each result pickled; None for one that cannot
    be pickled."""
    import pickle

    assert _JOB is not None
    fn, items = _JOB
    out: list[Optional[bytes]] = []
    for i in task:
        result = fn(items[i])
        try:
            out.append(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:  # noqa: BLE001 - the parent redoes this item itself
            out.append(None)
    return out


def _tasks(n_items: int, n_workers: int, kinds: Optional[Sequence[Hashable]]) -> list[list[int]]:
    """The items' indices in tasks, the unit a worker takes. Without ``kinds``: runs of CHUNK in order. With them:
    the items of one kind together, as whole a task as balance allows (at most an eighth of a worker's share), the
    largest tasks first, so that the workers finish together. A worker's memos answer the later items of a kind it
    has begun: split in turn over two workers, the 1,000-config large-MoE mix cost 1.3x the CPU of one process
    (every family warmed up twice), kept together, the same."""
    if kinds is None:
        return [list(range(i, min(i + CHUNK, n_items))) for i in range(0, n_items, CHUNK)]
    by_kind: dict = {}
    for i, k in enumerate(kinds):
        by_kind.setdefault(k, []).append(i)
    cap = max(CHUNK, n_items // (8 * n_workers))
    tasks = [group[j : j + cap] for group in by_kind.values() for j in range(0, len(group), cap)]
    tasks.sort(key=len, reverse=True)  # stable: equal sizes keep their first item's order
    return tasks


def map_ordered(
    fn: Callable[[Any], T],
    items: Sequence[Any],
    *,
    distinct: Optional[int] = None,
    kinds: Optional[Sequence[Hashable]] = None,
) -> list[T]:
    """``[fn(x) for x in items]``, in worker processes when there are enough items (see the module doc).
    ``distinct``: how many of the items differ, where the caller can tell (files by their contents): with
    ``MIN_ITEMS`` distinct ones or more no memo will answer most of them, so the pool starts at once.
    ``kinds``: a key per item, equal for items whose work the same memos answer (variants of one config):
    each worker takes whole kinds (see ``_tasks``)."""
    n = workers(len(items))
    if n < 2:
        return [fn(x) for x in items]
    if distinct is not None and distinct >= MIN_ITEMS:
        return _pooled(fn, items, n, kinds)
    import time

    out: list[T] = []
    recent: list[float] = []
    start = time.perf_counter()
    for x in items:
        if len(items) - len(out) < MIN_ITEMS:
            out.append(fn(x))
            continue
        if len(recent) == WINDOW and sum(recent) >= PAY_S * WINDOW and time.perf_counter() - start >= PROBE_S:
            return out + _pooled(fn, items[len(out) :], n, None if kinds is None else kinds[len(out) :])
        t0 = time.perf_counter()
        out.append(fn(x))
        recent = recent[-(WINDOW - 1) :] + [time.perf_counter() - t0]
    return out


def _pooled(
    fn: Callable[[Any], T], items: Sequence[Any], n: int, kinds: Optional[Sequence[Hashable]] = None
) -> list[T]:
    """``[fn(x) for x in items]`` over ``n`` forked workers, in order."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    global _JOB
    _JOB = (fn, items)
    # each result is unpickled as it arrives, while the workers compute the next ones (unpickling them all
    # after the last one came left this process alone on one CPU for a few tenths of a second per 1,000 files)
    done: dict[int, tuple[bool, Any]] = {}  # item index -> (arrived whole, the result)
    tasks = _tasks(len(items), n, kinds)
    try:
        with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork")) as pool:
            for task, blobs in zip(tasks, pool.map(_run, tasks)):
                for i, blob in zip(task, blobs):
                    done[i] = _unpickled(blob)
    except (BrokenProcessPool, OSError):  # a worker died (killed, out of memory) or none could start
        pass
    finally:
        _JOB = None
    out: list[T] = []
    for i, x in enumerate(items):
        whole, result = done.get(i, (False, None))
        out.append(cast(T, result) if whole else fn(x))
    return out


def _unpickled(blob: Optional[bytes]) -> tuple[bool, Any]:
    """(True, the result) from a worker's blob; (False, None) when it sent none or it does not unpickle (an
    object that pickles but does not unpickle): the caller redoes that item itself."""
    import pickle

    if blob is None:
        return False, None
    try:
        return True, pickle.loads(blob)
    except Exception:  # noqa: BLE001 - redone in this process
        return False, None
