"""Many files over worker processes (colint.parallel): the same results, in input order, as one process;
a pool only where it pays; a result that cannot travel is redone in the parent."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from click.testing import CliRunner

from colint import parallel
from colint.cli import cli

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus", "hf")
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


@linux_only
def test_results_in_input_order_from_workers(monkeypatch):
    monkeypatch.setenv("COLINT_JOBS", "2")
    if parallel.workers(parallel.MIN_ITEMS) < 2:
        pytest.skip("one CPU: no pool")
    items = list(range(3 * parallel.MIN_ITEMS))
    assert parallel.map_ordered(lambda i: i * i, items) == [i * i for i in items]
    assert os.getpid() not in set(parallel.map_ordered(_pid, items))  # the workers did the work


@linux_only
def test_a_result_that_cannot_be_pickled_is_redone_here(monkeypatch):
    monkeypatch.setenv("COLINT_JOBS", "2")
    if parallel.workers(parallel.MIN_ITEMS) < 2:
        pytest.skip("one CPU: no pool")
    items = list(range(parallel.MIN_ITEMS))
    out = parallel.map_ordered(lambda i: (lambda: i) if i % 7 == 0 else (i, os.getpid()), items)
    for i, r in zip(items, out):
        if i % 7 == 0:
            assert r() == i  # made in this process: a lambda does not pickle
        else:
            assert r[0] == i and r[1] != os.getpid()


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
    outs = []
    for jobs in ("1", "2"):
        monkeypatch.setenv("COLINT_JOBS", jobs)
        r = CliRunner().invoke(cli, ["check", "--output-format", "concise", *paths])
        outs.append((r.exit_code, r.output))
    assert outs[0][0] == 2 and "050-broken.json" in outs[0][1]
    assert outs[1] == outs[0]
