"""Many files over worker processes (colint.util.parallel): the same results, in input order, as one process;
a pool only where it pays; a result that cannot travel is redone in the parent."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from click.testing import CliRunner

from colint.util import parallel
from colint.cli.main import cli

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(TESTS, "corpus", "hf")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the pool forks (Linux)")


def _pid(_x) -> int:
    return os.getpid()


def test_few_items_never_start_a_pool(monkeypatch):
    monkeypatch.delenv("COLINT_JOBS", raising=False)
    assert parallel.workers(parallel.MIN_ITEMS - 1) == 1
    assert set(parallel.map_ordered(_pid, range(parallel.MIN_ITEMS - 1))) == {os.getpid()}


def test_colint_jobs_limits_the_workers(monkeypatch):
    monkeypatch.setenv("COLINT_JOBS", "1")
    assert parallel.workers(10_000) == 1
    monkeypatch.setenv("COLINT_JOBS", "not a number")
    assert parallel.workers(10_000) >= 1


def _always_pool(monkeypatch):
    """A pool from the first items on, however cheap they are."""
    monkeypatch.setattr(parallel, "PAY_S", 0.0)
    monkeypatch.setattr(parallel, "PROBE_S", 0.0)
    monkeypatch.setattr(parallel, "WINDOW", 1)


def test_cheap_items_stay_in_this_process(monkeypatch):
    """1,000 copies of a few configs cost a millisecond or two each from the memos: less than a transfer."""
    monkeypatch.setenv("COLINT_JOBS", "2")
    monkeypatch.setattr(parallel, "PROBE_S", 0.0)
    assert set(parallel.map_ordered(_pid, range(3 * parallel.MIN_ITEMS))) == {os.getpid()}


@linux_only
def test_results_in_input_order_from_workers(monkeypatch):
    monkeypatch.setenv("COLINT_JOBS", "2")
    _always_pool(monkeypatch)
    if parallel.workers(parallel.MIN_ITEMS) < 2:
        pytest.skip("one CPU: no pool")
    items = list(range(3 * parallel.MIN_ITEMS))
    assert parallel.map_ordered(lambda i: i * i, items) == [i * i for i in items]
    pids = parallel.map_ordered(_pid, items)
    assert pids[0] == os.getpid() and os.getpid() not in set(pids[1 : -parallel.MIN_ITEMS])  # workers did the rest


@linux_only
def test_distinct_items_go_to_the_pool_at_once(monkeypatch):
    """Items the caller says are distinct (files that differ in content) answer from no memo: the pool takes
    them all from the first, however long the probe would have run; copies still start here."""
    monkeypatch.setenv("COLINT_JOBS", "2")
    if parallel.workers(parallel.MIN_ITEMS) < 2:
        pytest.skip("one CPU: no pool")
    monkeypatch.setattr(parallel, "PROBE_S", 3600.0)
    items = list(range(2 * parallel.MIN_ITEMS))
    pids = parallel.map_ordered(_pid, items, distinct=len(items))
    assert os.getpid() not in set(pids)
    few = parallel.map_ordered(_pid, items, distinct=parallel.MIN_ITEMS - 1)
    assert set(few) == {os.getpid()}


def test_distinct_files_counts_contents_not_paths(tmp_path):
    from colint.engine.checking import _file_kinds

    a, b, c = (tmp_path / n for n in ("a.json", "b.json", "c.json"))
    a.write_text('{"hidden_size": 4096}')
    b.write_text('{"hidden_size": 4096}')
    c.write_text('{"hidden_size": 5120}')
    assert _file_kinds([str(a), str(b), str(c), str(tmp_path / "missing.json")])[0] == 3


@linux_only
def test_distinct_files_never_opens_a_device_or_fifo(tmp_path):
    """A FIFO (would block) and /dev/zero (would never end) given as configs are counted unread: the loader
    refuses them with a located error."""
    from colint.engine.checking import _file_kinds

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    a = tmp_path / "a.json"
    a.write_text("{}")
    distinct, kinds = _file_kinds([str(fifo), "/dev/zero", str(a), str(a)])
    assert distinct == 3 and kinds[:2] == [str(fifo), "/dev/zero"]  # each its own kind, unread


@linux_only
def test_a_result_that_cannot_be_pickled_is_redone_here(monkeypatch):
    monkeypatch.setenv("COLINT_JOBS", "2")
    _always_pool(monkeypatch)
    if parallel.workers(parallel.MIN_ITEMS) < 2:
        pytest.skip("one CPU: no pool")
    items = list(range(2 * parallel.MIN_ITEMS))
    out = parallel.map_ordered(lambda i: (lambda: i) if i % 7 == 0 else (i, os.getpid()), items)
    for i, r in zip(items, out):
        if i % 7 == 0:
            assert r() == i  # made in this process: a lambda does not pickle
        else:
            assert r[0] == i and (r[1] != os.getpid() or i == 0 or i >= parallel.MIN_ITEMS)


@linux_only
def test_check_output_is_the_same_with_and_without_the_pool(tmp_path, monkeypatch):
    """A bulk run (over MIN_ITEMS files, dense and MoE, one broken) prints byte for byte what one process
    prints, errors located and in input order."""
    sources = sorted(f for f in os.listdir(CORPUS) if f.endswith(".json"))
    paths = []
    for i in range(parallel.MIN_ITEMS + 6):
        dest = tmp_path / f"{i:03d}-{sources[i % len(sources)]}"
        shutil.copyfile(os.path.join(CORPUS, sources[i % len(sources)]), dest)
        paths.append(str(dest))
    (tmp_path / "050-broken.json").write_text('{"model_type": "llama", "hidden_size": true}\n')
    paths.insert(50, str(tmp_path / "050-broken.json"))
    _always_pool(monkeypatch)
    outs = []
    for jobs in ("1", "2"):
        monkeypatch.setenv("COLINT_JOBS", jobs)
        r = CliRunner().invoke(cli, ["check", "--output-format", "concise", *paths])
        outs.append((r.exit_code, r.output))
    assert outs[0][0] == 2 and "050-broken.json" in outs[0][1]
    assert outs[1] == outs[0]


def test_items_of_one_kind_go_to_one_worker_largest_first():
    """With kinds, a worker takes a whole kind (its memos answer the kind's later items), a kind larger than an
    eighth of a worker's share in pieces of that size, the largest tasks first; without, runs of CHUNK in order."""
    kinds = ["a", "b", "a", "c", "b", "a"] * 40  # 240 items: a 120, b 80, c 40
    tasks = parallel._tasks(len(kinds), 2, kinds)
    cap = len(kinds) // 16
    assert sorted(i for t in tasks for i in t) == list(range(len(kinds)))
    assert all(len({kinds[i] for i in t}) == 1 and len(t) <= cap for t in tasks)
    assert [len(t) for t in tasks] == sorted((len(t) for t in tasks), reverse=True)
    assert len(tasks) == sum(-(-size // cap) for size in (120, 80, 40))  # a kind's remainder is its own task
    assert parallel._tasks(10, 2, None) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


@linux_only
def test_kinds_change_which_worker_not_the_results(monkeypatch):
    monkeypatch.setenv("COLINT_JOBS", "2")
    if parallel.workers(parallel.MIN_ITEMS) < 2:
        pytest.skip("one CPU: no pool")
    items = list(range(3 * parallel.MIN_ITEMS))
    kinds = [i % 5 for i in items]
    out = parallel.map_ordered(lambda i: (i * i, os.getpid()), items, distinct=len(items), kinds=kinds)
    assert [r[0] for r in out] == [i * i for i in items]
    assert os.getpid() not in {pid for _, pid in out}
    # every task (a kind, or a piece of one past the cap) ran in one worker, whose memos then answer its later items
    tasks = parallel._tasks(len(items), 2, kinds)
    assert len(tasks) > 5  # the 5 kinds (38 or 39 items each) exceed the cap: pieces, each on one worker
    assert all(len({out[i][1] for i in task}) == 1 for task in tasks)


def test_file_kinds_group_files_that_differ_only_in_numbers(tmp_path):
    from colint.engine.checking import _file_kinds

    a, b, c, d = (tmp_path / n for n in ("a.json", "b.json", "c.json", "d.json"))
    a.write_text('{"hidden_size": 4096, "model_type": "llama"}')
    b.write_text('{"hidden_size": 5120, "model_type": "llama"}')
    c.write_text('{"hidden_size": 4096, "model_type": "llama"}')
    d.write_text('{"hidden_size": 4096, "model_type": "qwen2"}')
    distinct, kinds = _file_kinds([str(p) for p in (a, b, c, d)] + [str(tmp_path / "missing.json")])
    assert distinct == 4
    assert kinds[0] == kinds[1] == kinds[2] != kinds[3] and kinds[4] == str(tmp_path / "missing.json")


def test_results_carry_their_document_only_where_a_reporter_reads_it(tmp_path):
    """A bulk check sends its results without the Document unless SARIF (fix regions), --fix or --diff read it, and
    without the ModelSpec, which `colint check` never reads: its estimate labels, clipped to the model's maximum
    positions (GPT-2 medium: 1,024), come from the positions the result keeps."""
    from colint.engine.checking import check_paths, estimate_labels
    from colint.engine.settings import Settings

    p = tmp_path / "a.json"
    shutil.copyfile(os.path.join(CORPUS, "gpt2__gpt2-medium-early-revision.json"), p)
    opts = Settings()
    kept, dropped = (check_paths([str(p)], opts, keep_docs=k)[0] for k in (True, False))
    assert kept.doc is not None and dropped.doc is None
    assert kept.spec is not None and dropped.spec is None and dropped.max_positions == 1024
    assert estimate_labels([dropped], [opts]) == estimate_labels([kept], [opts])
    assert "context 1024 (clipped from 8192: the model's max positions)" in estimate_labels([dropped], [opts])[0]
    assert [(f.code, f.key, f.line, f.message) for f in dropped.findings] == [
        (f.code, f.key, f.line, f.message) for f in kept.findings
    ]
