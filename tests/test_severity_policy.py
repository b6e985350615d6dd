"""The severity policy (issue 17, docs/configuration.md "Severity policy") over the whole corpus at five settings.

A finding's severity follows its estimated step loss: within one file no finding is more severe than
another whose estimated loss is 10x larger or more. Hard constraints (will not run / will not load)
are errors and carry no loss, so they are outside the comparison.
"""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

from colint.checking import check_paths
from colint.settings import Settings
from colint.findings import SEVERITY_ORDER
from colint.rules import all_rules

CORPUS = sorted(str(p) for p in pathlib.Path("tests/corpus").rglob("*") if p.suffix in (".json", ".yaml"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from closure_sweep import SETTINGS  # noqa: E402 - the five settings of issues 13 and 17, defined once


def _inversions(findings) -> list[tuple]:
    graded = [f for f in findings if f.impact.estimated_loss_pct is not None]
    out = []
    for a in graded:
        for b in graded:
            if (
                SEVERITY_ORDER[a.severity] < SEVERITY_ORDER[b.severity]
                and b.impact.estimated_loss_pct >= 10 * a.impact.estimated_loss_pct
            ):
                out.append(
                    (a.code, a.severity, a.impact.estimated_loss_pct, b.code, b.severity, b.impact.estimated_loss_pct)
                )
    return out


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_no_finding_outranks_one_with_ten_times_its_loss(setting):
    results = check_paths(CORPUS, Settings(**SETTINGS[setting]))
    assert len(results) == len(CORPUS)
    bad = {r.path: inv for r in results if (inv := _inversions(r.findings))}
    assert bad == {}
    # the policy is exercised: graded findings at more than one severity
    sev = {f.severity for r in results for f in r.findings if f.impact.estimated_loss_pct is not None}
    assert len(sev) >= 2


def test_every_graded_rule_documents_its_thresholds_and_they_lie_within_a_factor_of_ten():
    rules = all_rules()
    graded = [r for r in rules.values() if r.graded]
    assert {"CL101", "CL102", "CL201", "CL202", "CL301", "CL502", "CL503", "CL601", "CL602", "CL701"} <= {
        r.code for r in graded
    }
    warn = [r.options["warning_loss_pct"].default for r in graded]
    err = [r.options["error_loss_pct"].default for r in graded if r.options["error_loss_pct"].default < 1e9]
    assert max(warn) <= 10 * min(warn) and max(err) <= 10 * min(err)
    for r in graded:
        assert "warning_loss_pct" in r.render_doc() and "by estimated step loss" in r.render_doc()


def test_hard_constraints_carry_no_loss():
    # GPT-2's vocabulary in FP8 (kernels refuse rows that are not 16-byte aligned): an error without a loss
    (r,) = check_paths(
        ["tests/corpus/hf/gpt2__gpt2-medium-early-revision.json"], Settings(dtype="fp8", select=["CL202"])
    )
    (f,) = r.findings
    assert (f.severity, f.impact.estimated_loss_pct) == ("error", None)


def test_thresholds_are_configurable():
    path = "tests/corpus/hf/llama2__Llama-2-7b-neuron-training.json"
    (r,) = check_paths([path], Settings(tp=8, select=["CL201"]))
    (f,) = r.findings
    assert f.severity == "warning" and 0.5 <= f.impact.estimated_loss_pct < 25
    (r,) = check_paths([path], Settings(tp=8, select=["CL201"], rules={"CL201": {"warning_loss_pct": 5.0}}))
    assert r.findings[0].severity == "info"
    (r,) = check_paths([path], Settings(tp=8, select=["CL201"], rules={"CL201": {"error_loss_pct": 0.1}}))
    assert r.findings[0].severity == "error"
