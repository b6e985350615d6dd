"""Every estimate says it is an estimate: figures from the time model or from uniform routing (M*, rows per
expert, experts touched, crossover context) read "est." in the findings, never a bare "~"."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from colint.errors import ColintError
from tests.rules.helpers import run

CORPUS = sorted(p for p in Path("tests/corpus").rglob("*") if p.suffix in (".json", ".yaml", ".yml"))
SCENARIOS = [dict(), dict(tp=8), dict(tp=8, ep=8), dict(scenario="latency"), dict(scenario="long-context")]
# the rules whose findings quote M*, tokens per expert or a crossover context
FAMILIES = ["CL1", "CL5", "CL7"]


def _findings(opts: dict):
    return _findings_of(tuple(sorted(opts.items())))


@cache
def _findings_of(opts: tuple):
    out = []
    for path in CORPUS:
        try:
            out.extend(run(str(path), FAMILIES, **dict(opts)))
        except ColintError:
            continue  # corpus files colint cannot read are the loaders' tests, not this one
    return out


@pytest.mark.parametrize("opts", SCENARIOS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_estimated_figures_read_as_estimates(opts):
    fs = _findings(opts)
    assert fs, "the corpus gives findings of these families"
    for f in fs:
        assert "~" not in f.message, f.message
        for text in [f.message, *f.details]:
            # M* is where the roofline turns the GEMM compute-bound: always an estimate
            assert [m.start() for m in re.finditer(r"M\*", text)] == [
                m.start() + 5 for m in re.finditer(r"est\. M\*", text)
            ], text


def test_the_guard_sees_the_estimated_figures():
    """The scenarios above do reach the messages the guard is about (else it could not fail)."""
    msgs = [
        f.message for opts in (dict(), dict(scenario="latency"), dict(scenario="long-context")) for f in _findings(opts)
    ]
    assert any("below est. M*=" in m for m in msgs)  # CL501, tokens per expert >= 1
    assert any("a decode step touches est. " in m for m in msgs)  # CL501 at one sequence
    assert any("compute-bound only from est. M*=" in m for m in msgs)  # CL102 / CL501
    assert any("parallelism pays from est. " in m for m in msgs)  # CL703 crossover
