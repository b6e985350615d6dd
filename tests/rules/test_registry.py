"""@rule's metadata: keyword-only, the family taken from the rule's module, options typed."""

from __future__ import annotations

import sys
import types

import pytest

from colint.rules import all_rules
from colint.rules.base import _REGISTRY, Family, Option, RuleDoc, rule

DOC = RuleDoc(what="w", why="y", example="e", fix="f")


def _module(monkeypatch, family):
    mod = types.ModuleType("colint_test_family")
    if family is not None:
        mod.FAMILY = family
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    return mod


def _check(mod):
    def check(ctx):
        return ()

    check.__module__ = mod.__name__
    return check


def test_the_family_is_the_rule_modules(monkeypatch):
    monkeypatch.setattr("colint.rules.base._REGISTRY", dict(_REGISTRY))
    from colint.rules import base

    mod = _module(monkeypatch, Family(name="test-family", number=9))
    rule(code="CL950", name="fake", severity="info", summary="s", doc=DOC)(_check(mod))
    assert base._REGISTRY["CL950"].family == "test-family"
    with pytest.raises(ValueError, match="rule CL150 in colint_test_family: family test-family codes are CL9xx"):
        rule(code="CL150", name="fake", severity="info", summary="s", doc=DOC)(_check(mod))


def test_a_rule_module_without_a_family_is_refused(monkeypatch):
    mod = _module(monkeypatch, None)
    with pytest.raises(TypeError, match="colint_test_family declares no FAMILY"):
        rule(code="CL951", name="fake", severity="info", summary="s", doc=DOC)(_check(mod))


def test_rule_takes_keywords_only():
    with pytest.raises(TypeError):
        rule("CL952", "fake", "info", "s", DOC)  # type: ignore[misc]


def test_an_option_default_must_be_of_its_type():
    with pytest.raises(TypeError, match="option tile: default 128.0 is not a int"):
        Option(name="tile", type=int, default=128.0, doc="tile width (elements)")
    o = Option(name="min_loss_pct", type=float, default=0.5, doc="estimated step loss (percent)")
    assert o.coerce(2) == 2.0 and isinstance(o.coerce(2), float)
    with pytest.raises(ValueError, match="should be float like the default 0.5, got True"):
        o.coerce(True)


def test_every_registered_family_matches_its_codes():
    for r in all_rules().values():
        module = sys.modules[r.check.__module__]
        assert module.FAMILY.name == r.family and r.code.startswith(f"CL{module.FAMILY.number}"), r.code


def test_a_context_hands_its_typed_targets_only_where_the_engine_set_them():
    from colint.analysis.scenario import Scenario
    from colint.hardware_profiles import load_profile
    from colint.normalize import normalize
    from colint.loading import load_text
    from colint.analysis.workload import analyse
    from colint.rules.base import Context

    spec = normalize(
        load_text(
            '{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, '
            '"num_hidden_layers": 2, "num_attention_heads": 32, "vocab_size": 32000}',
            "c.json",
        )
    )
    r = all_rules()["CL201"]
    bare = Context(rule=r, spec=spec)  # a spec-only rule's context: no GPU target
    for name, what in (("analysis", "workload"), ("target_profile", "GPU profile"), ("target_scenario", "scenario")):
        with pytest.raises(RuntimeError, match=f"CL201 read the {what}"):
            getattr(bare, name)
    profile, sc = load_profile("b200"), Scenario()
    w = analyse(spec, profile, sc)
    ctx = Context(rule=r, spec=spec, workload=w, gpu="b200", profile=profile, scenario=sc)
    assert ctx.analysis is w and ctx.target_profile is profile and ctx.target_scenario is sc
