"""Closure of advice (issue 13 item 1): every fix and every advised setting is re-checked at the state it
leads to before it is shown (colint.engine.closure)."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections import Counter

import pytest

from colint.engine.checking import build_targets, check_document, check_file
from colint.engine.settings import Settings
from colint.loading import load_text
from colint.rules import select_rules

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# a deployment named in full (one GPU, the throughput preset's 256 sequences, BF16): without one colint chooses an
# automatic deployment per model, whose findings are advice (issue 29), and these tests are about the closure of
# advice that blocks
NAMED = {"tp": 1, "concurrency": 256, "dtype": "bf16"}
ROOT = os.path.dirname(TESTS)
DSV3 = os.path.join(TESTS, "corpus", "hf", "deepseek__DeepSeek-V3.json")


def _kimi_k2_text() -> str:
    """DeepSeek-V3's published config with Kimi-K2's routed experts (384, top-8): the shape of issue 13."""
    with open(DSV3, encoding="utf-8") as fh:
        data = json.load(fh)
    data.update(n_routed_experts=384, num_attention_heads=64)
    return json.dumps(data, indent=2)


def _check(text: str, **settings):
    opts = Settings(**settings)
    rules = select_rules()
    targets = build_targets(opts)
    return check_document("kimi.json", load_text(text, "kimi.json", syntax="json"), targets, opts, rules), (
        targets,
        opts,
        rules,
    )


@pytest.mark.parametrize("gpu, crossing", [("b200", "error"), ("gb200", "warning")])
def test_wide_ep_advice_that_leads_to_an_error_is_not_offered(gpu, crossing):
    """384 experts, ep>=73 needed: the nearest size that divides them, ep=96, spans NVLink domains on both
    GPUs (8-GPU HGX, 72-GPU NVL72), where the all-to-all over the scale-out network costs the step (CL504: an
    error over twelve HGX nodes; a warning over two NVL72 racks, where DeepEP sends a prefill token across once
    and fans it out over NVLink); 72 (inside NVL72) leaves 11% of the expert slots idle (CL502). Closure offers
    neither as a setting."""
    r, (targets, opts, rules) = _check(_kimi_k2_text(), gpus=[gpu])
    (f,) = [f for f in r.findings if f.code == "CL501"]
    assert f.fixes == []
    at_96, _ = _check(_kimi_k2_text(), gpus=[gpu], ep=96)
    assert [g.severity for g in at_96.findings if g.code == "CL504"] == [crossing]
    assert not [g for g in at_96.findings if g.code == "CL502"]
    at_72, _ = _check(_kimi_k2_text(), gpus=[gpu], ep=72)
    (w,) = [g for g in at_72.findings if g.code == "CL502"]
    assert w.evidence["idle_expert_share"] == pytest.approx(0.1111, abs=1e-4)


def test_ep_advice_inside_the_domain_names_its_cost():
    """60 experts (Qwen1.5-MoE): on an 8-GPU HGX every EP width wide enough (>=25) crosses the domain (CL504
    error): nothing is offered; inside GB200's NVL72 domain ep=32 is, with the redundant experts it needs."""
    path = os.path.join(TESTS, "corpus", "hf", "qwen2-moe__Qwen1.5-MoE-A2.7B-Wikihow-finetune.json")
    rules = select_rules()
    opts = Settings(**NAMED)
    r = check_file(path, build_targets(opts), opts, rules)
    (f,) = [f for f in r.findings if f.code == "CL501"]
    assert f.fixes == []
    opts = Settings(gpus=["gb200"], **NAMED)
    r = check_file(path, build_targets(opts), opts, rules)
    (f,) = [f for f in r.findings if f.code == "CL501"]
    assert [(x.safety, x.title, x.settings) for x in f.fixes] == [
        (
            "display",
            "deploy the experts with ep=32 and data-parallel attention (60 experts need 4 redundant copies "
            "(EPLB) to fill 32 x 2 slots)",
            {"ep": 32},
        )
    ]


def test_closure_off_keeps_the_rules_advice():
    r, _ = _check(_kimi_k2_text(), close_advice=False, gpus=["b200"], ep=16)
    assert any(fx.settings for f in r.findings for fx in f.fixes)


sys.path.insert(0, os.path.join(ROOT, "scripts"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["default", "h100-sxm tp=8", "gb200 ep=16", "nvfp4", "pp=4"])
def test_corpus_closure(name):
    """Every fix and advised setting offered on every corpus file, applied and re-checked, raises nothing new
    at warning or above (scripts/closure_sweep.py prints the counts)."""
    from closure_sweep import SETTINGS, sweep

    tried, bad = sweep(SETTINGS[name])
    assert tried >= 40  # enough states to mean something (49 at the default setting)
    assert [(os.path.basename(p), code, title, [g.message for g in new], err) for p, code, title, new, err in bad] == []


def test_gemma4_kv_fix_edits_the_global_kv_heads(tmp_path):
    """Gemma-4's full layers read num_global_key_value_heads (attention_k_eq_v): CL701's fix edits that key, not
    num_key_value_heads (16 already), and states the delta the edited file has."""
    types = (["sliding_attention"] * 5 + ["full_attention"]) * 10
    cfg = {
        "model_type": "gemma4_text",
        "hidden_size": 5376,
        "intermediate_size": 21504,
        "num_hidden_layers": 60,
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "head_dim": 256,
        "global_head_dim": 512,
        "attention_k_eq_v": True,
        "num_global_key_value_heads": 4,
        "vocab_size": 262144,
        "sliding_window": 1024,
        "layer_types": types,
    }
    r, _ = _check(json.dumps(cfg, indent=1), gpus=["h100-sxm"], tp=16)
    (f,) = [f for f in r.findings if f.code == "CL701"]
    assert f.key == "num_global_key_value_heads"
    edits = [(e.key, e.old, e.new) for fx in f.fixes for e in fx.edits]
    assert edits == [("num_global_key_value_heads", 4, 16)]


def test_vocab_padding_is_never_safe():
    path = os.path.join(TESTS, "corpus", "hf", "gpt2__gpt2-medium-early-revision.json")
    opts = Settings()
    r = check_file(path, build_targets(opts), opts, select_rules())
    assert not [fx for f in r.findings for fx in f.fixes if fx.safety == "safe"]
    (f,) = [f for f in r.findings if f.code == "CL202"]
    assert [fx.safety for fx in f.fixes] == ["unsafe"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["default", "h100-sxm tp=8"])
def test_stated_parameter_deltas_are_what_inspect_reports(name):
    """Every fix title's "+x.x% params" / "+x.x% FFN params" equals the change in the parameter count of the
    edited file (params.total, as `colint inspect` reports it; FFN params for the FFN share), to one decimal."""
    import re

    from closure_sweep import SETTINGS, corpus

    from colint.analysis.inventory import param_counts
    from colint.fixing.fix_text import apply_edits
    from colint.rules.fix_builders import ffn_params
    from colint.normalize import normalize

    opts = Settings(**SETTINGS[name])
    rules = select_rules()
    targets = build_targets(opts)
    checked = 0
    for path in corpus():
        r = check_file(path, targets, opts, rules)
        for f in r.findings:
            for fx in f.fixes:
                m = re.search(r"([+\-]\d+\.\d)% (FFN )?params", fx.title)
                if not m or not fx.edits:
                    continue
                after = normalize(load_text(apply_edits(r.doc, fx.edits), path, syntax=r.doc.syntax))
                if m.group(2):
                    pct = 100.0 * (ffn_params(after) - ffn_params(r.spec)) / ffn_params(r.spec)
                else:
                    pct = 100.0 * (param_counts(after).total - param_counts(r.spec).total) / param_counts(r.spec).total
                assert m.group(1) == f"{pct:+.1f}", (os.path.basename(path), fx.title)
                checked += 1
    assert checked > 10


def _as_data(result) -> list:
    return [(f.code, f.key, f.gpu, f.severity, f.message, [(x.title, x.settings) for x in f.fixes]) for f in result]


@pytest.mark.parametrize(
    "name, settings, tradeoffs",
    [
        ("kimi", {"gpus": ["b200"], **NAMED}, 0),
        ("kimi", {"gpus": ["gb200"], "ep": 16}, 0),
        ("llama2__Llama-2-7b-neuron-training.json", {"gpus": ["h100-sxm"], "tp": 8}, 0),
        ("qwen2-moe__Qwen1.5-MoE-A2.7B-Wikihow-finetune.json", {"gpus": ["gb200", "b200"]}, 0),
        ("jamba__Jamba-v0.1.json", {}, 1),
        ("mobilellm__MobileLLM-125M.json", {"gpus": ["h100-sxm"], "tp": 8}, 1),  # "raises CL101 ... (+1 more)"
    ],
)
def test_stopping_at_the_first_blocking_finding_changes_no_advice(monkeypatch, name, settings, tradeoffs):
    """A state is re-checked only until it shows a blocking finding (check_spec's ``stop``), with the rules that
    blocked most often first; a trade-off's reason comes from its full re-check. What is shown must equal the
    full re-checks': with the blocking rules tried in another order, and with every re-check complete, the
    findings and their fixes are the same."""
    from colint.engine import closure

    if name == "kimi":
        text, path = _kimi_k2_text(), "kimi.json"
    else:
        path = os.path.join(TESTS, "corpus", "hf", name)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    # a width off the 128 grid, so that CL201's edits are re-checked too
    text = text.replace('"intermediate_size": 11008', '"intermediate_size": 11072')
    opts = Settings(**settings)
    rules = select_rules()

    def run() -> list:
        closure._SHARED.clear()
        doc = load_text(text, path, syntax="json")
        return _as_data(check_document(path, doc, build_targets(opts), opts, rules).findings)

    closure.BLOCKERS.clear()
    before = dataclasses.replace(closure.STATS)
    stopped = run()
    assert closure.STATS.tried > before.tried
    assert closure.STATS.tradeoff - before.tradeoff == tradeoffs  # a trade-off's reason needs its full re-check
    seen = list(closure.BLOCKERS)
    monkeypatch.setattr(closure, "BLOCKERS", Counter({code: i for i, code in enumerate(seen)}))
    assert run() == stopped
    full = closure.Closure.outcome
    monkeypatch.setattr(
        closure.Closure, "outcome", lambda self, fx, level, fixed=None, **_: full(self, fx, level, fixed)
    )
    assert run() == stopped


def test_rules_state_the_most_severe_level_they_emit():
    """A rule's most severe level is its fixed level or, graded, what its loss thresholds reach: CL301 is advice
    that warns from 5% of the decode step; CL604 only ever informs."""
    rules = {r.code: r for r in select_rules()}
    assert rules["CL604"].max_severity() == "info"
    assert rules["CL301"].max_severity() == "warning"
    assert rules["CL301"].max_severity({"error_loss_pct": 30.0}) == "error"
    assert rules["CL602"].max_severity() == "error"
    assert rules["CL602"].max_severity({"warning_loss_pct": 1e9, "error_loss_pct": 1e9}) == "warning"  # its own level


def _checked_with(path: str, code: str, severity: str, field: str):
    """The check of ``path`` with rule ``code`` replaced by one that reports ``field`` at ``severity``."""
    rules = [
        dataclasses.replace(r, check=lambda ctx: [ctx.finding(severity, "replaced", field=field)])
        if r.code == code
        else r
        for r in select_rules()
    ]
    opts = Settings()
    with open(path, encoding="utf-8") as fh:
        doc = load_text(fh.read(), path, syntax="json")
    return check_document(path, doc, build_targets(opts), opts, rules)


def test_a_rule_emitting_above_its_most_severe_level_is_a_bug_reported_as_one():
    result = _checked_with(DSV3, "CL604", "warning", "num_layers")
    assert result.error is not None and "CL604 emitted a finding at warning, above its most severe level info" in (
        result.error.message
    )


def test_a_rule_emitting_above_its_ceiling_on_the_spec_is_a_bug_reported_as_one():
    """CL301 can warn only for a really deep and narrow stack (Rule.ceiling); on MiniMax-M2.5 (H/L 49.5) its ceiling
    is info, and a warning there is a bug in colint, which the closure relies on to leave it out of re-checks."""
    result = _checked_with(
        os.path.join(TESTS, "corpus", "hf", "minimax__MiniMax-M2.5.json"), "CL301", "warning", "num_layers"
    )
    assert result.error is not None and "CL301 emitted a finding at warning, above its most severe level info" in (
        result.error.message
    )


def test_a_recheck_leaves_out_a_rule_the_state_caps_at_what_the_file_reported():
    """MiniMax-M2.5 with intermediate_size 1600 (a CL201 info with two width fixes) on B200: CL301 reports num_layers
    at info, and on any state whose H/L stays at or above 32 its ceiling is info, so the width fix's state can show
    nothing new from it: the re-check leaves it out. A fix of hidden_size that takes H/L below 32 runs it; so does a
    file whose CL301 is not reported, and one with a severity override for it."""
    from colint.engine import closure
    from colint.engine.checking import check_spec
    from colint.findings import SEVERITY_ORDER, Edit, Fix
    from colint.normalize import normalize

    minimax = os.path.join(TESTS, "corpus", "hf", "minimax__MiniMax-M2.5.json")
    with open(minimax, encoding="utf-8") as fh:
        text = fh.read().replace('"intermediate_size": 1536', '"intermediate_size": 1600')
    doc = load_text(text, minimax, syntax="json")
    spec = normalize(doc)
    skipped: list[tuple] = []

    def recording(*args, **kw):
        skipped.append(kw.get("skip", ()))
        return check_spec(*args, **kw)

    def recheck_skip(fx: Fix, **settings) -> tuple:
        opts, rules = Settings(**settings), select_rules()
        targets = build_targets(opts)
        findings = check_spec(spec, targets, opts, rules)
        cl201 = next(f for f in findings if f.code == "CL201" and f.key == "intermediate_size")
        closure._SHARED.clear()
        c = closure.Closure(
            minimax, doc, spec, findings, targets, opts, rules, check_spec=recording, build_targets=None
        )
        c.outcome(fx, SEVERITY_ORDER["info"], cl201, complete=False)
        return skipped[-1], c

    width = Fix(title="w", safety="unsafe", edits=[Edit(key="intermediate_size", old=1600, new=1664)])
    skip, c = recheck_skip(width)
    # left out for its ceiling, not for having reported all it can (it could warn: max_severity)
    assert "CL301" in skip and "CL301" in c._capped() and "CL301" not in c._reported()
    assert c._capped()["CL301"] == (("num_layers",), ("num_hidden_layers",), SEVERITY_ORDER["info"])
    # H=1536 over 62 layers: H/L 24.8, below deep_aspect_ratio: CL301 may warn there, so it runs
    narrow = Fix(title="n", safety="unsafe", edits=[Edit(key="hidden_size", old=3072, new=1536)])
    assert "CL301" not in recheck_skip(narrow)[0]
    # an override sets its level whatever the ceiling: not capped (it has reported all it can instead)
    assert "CL301" not in recheck_skip(width, severity={"CL301": "warning"})[1]._capped()
    # not reported on this file (its threshold for reporting raised past the gain): nothing to compare with
    skip, c = recheck_skip(width, rules={"CL301": {"min_itl_gain": 0.99}})
    assert "CL301" not in skip and "CL301" not in c._capped()


def test_a_rule_pointing_outside_its_declared_fields_is_a_bug_reported_as_one():
    """A rule that declares the fields it reports on (Rule.fields) is held to them: the closure leaves it out of a
    re-check where its findings on them were all there before, so one on another key is a bug in colint."""
    result = _checked_with(DSV3, "CL604", "info", "hidden_size")
    assert result.error is not None
    assert "CL604 emitted a finding on hidden_size [b200], not on its fields num_layers [b200]" in result.error.message


def test_a_recheck_leaves_out_the_rules_that_can_raise_nothing_new():
    """DeepSeek-V3 (routed experts 2112 wide: a CL201 info with two width fixes) on B200: CL604 and CL501 report on
    one field each (num_layers, num_experts), at info, the most severe level they emit. No state of the file can
    show them anywhere new or more severe, so the re-check of a width fix leaves them out. CL801 and CL201 run:
    CL801 may point at the head counts too, CL201 declares no fields. A file whose CL604 points at another key
    (its num_layers under n_layer) runs CL604 on the same state: the state's shared check is keyed by those keys
    too, so the first file's check does not answer for it."""
    from colint.engine import closure
    from colint.engine.checking import check_spec
    from colint.findings import SEVERITY_ORDER
    from colint.normalize import normalize

    opts, rules = Settings(**NAMED), select_rules()
    targets = build_targets(opts)
    with open(DSV3, encoding="utf-8") as fh:
        text = fh.read().replace('"moe_intermediate_size": 2048', '"moe_intermediate_size": 2112')
    doc = load_text(text, DSV3, syntax="json")
    spec = normalize(doc)
    findings = check_spec(spec, targets, opts, rules)
    assert {("CL604", "info"), ("CL501", "info"), ("CL801", "error")} <= {(f.code, f.severity) for f in findings}
    cl201 = next(f for f in findings if f.code == "CL201" and f.fixes and f.fixes[0].edits)
    skipped: list[tuple] = []

    def recording(*args, **kw):
        skipped.append(kw.get("skip", ()))
        return check_spec(*args, **kw)

    closure._SHARED.clear()
    for moved in (False, True):
        c = closure.Closure(DSV3, doc, spec, findings, targets, opts, rules, check_spec=recording, build_targets=None)
        if moved:
            c._reported_memo = {**c._reported(), "CL604": (("num_layers",), ("n_layer",))}
        else:
            assert {"CL604", "CL501"} <= set(c._reported()) and not {"CL801", "CL201"} & set(c._reported())
        before = len(skipped)
        c.outcome(cl201.fixes[0], SEVERITY_ORDER["info"], cl201, complete=False)
        assert len(skipped) == before + 1  # re-checked, not answered by the other file's state
        assert "CL501" in skipped[-1] and ("CL604" in skipped[-1]) is not moved
        assert not {"CL801", "CL201"} & set(skipped[-1])


def test_a_warning_level_recheck_skips_only_the_rules_that_cannot_warn():
    """What a re-check may leave out: the rules that cannot emit a finding at the level asked (info-only advice when
    a warning is asked; warnings too when an error is fixed), never the fixed finding's own rule, and none that an
    override or a threshold makes louder."""
    from colint.engine.closure import Closure
    from colint.findings import SEVERITY_ORDER

    def skippable(level: str, fixed_code: str, **settings) -> tuple:
        opts = Settings(**settings)
        c = Closure("x.json", None, None, [], [], opts, select_rules(), check_spec=None, build_targets=None)
        fixed = dataclasses.replace(_check(_kimi_k2_text())[0].findings[0], code=fixed_code)
        return c._skippable(SEVERITY_ORDER[level], fixed)

    info_only = ("CL006", "CL009", "CL010", "CL103", "CL203", "CL204", "CL404", "CL501", "CL604", "CL703")
    assert skippable("warning", "CL201") == info_only
    assert skippable("warning", "CL604") == tuple(c for c in info_only if c != "CL604")
    assert skippable("warning", "CL201", severity={"CL604": "warning"}) == tuple(c for c in info_only if c != "CL604")
    assert "CL301" in skippable("error", "CL201") and "CL000" in skippable("error", "CL201")
    assert "CL301" not in skippable("error", "CL201", rules={"CL301": {"error_loss_pct": 30.0}})


@pytest.mark.parametrize("settings", [{"tp": 1}, {"gpus": ["h100-sxm"], "tp": 8}, {"gpus": ["gb200"], "ep": 16}])
def test_a_brief_check_tells_the_same_findings_apart(settings):
    """A closure re-check is brief (Context.brief: no deployment search for CL801, no width fixes for CL201): every
    finding's code, key, GPU and severity, all that a re-check reads, are those of the full check."""
    from colint.engine.checking import check_spec
    from colint.normalize import normalize

    opts = Settings(**{"concurrency": 256, "dtype": "bf16", **settings})
    targets, rules = build_targets(opts), select_rules()
    seen = Counter()
    for name in ("deepseek__DeepSeek-V3.json", "mistral__Mistral-7B-Instruct-v0.3.json", "jamba__Jamba-v0.1.json"):
        path = os.path.join(TESTS, "corpus", "hf", name)
        with open(path, encoding="utf-8") as fh:
            spec = normalize(load_text(fh.read().replace("14336", "14400"), path, syntax="json"))
        full = check_spec(spec, targets, opts, rules)
        brief = check_spec(spec, targets, opts, rules, stop=lambda f: False, brief=True)
        assert Counter((f.code, f.key, f.gpu, f.severity) for f in brief) == Counter(
            (f.code, f.key, f.gpu, f.severity) for f in full
        )
        seen.update(f.code for f in full)
    assert seen["CL801"] and seen["CL201"]  # the rules that cut work when brief fired


def test_fixes_are_rechecked_at_the_deployment_the_file_was_checked_at(monkeypatch):
    """With no deployment named, colint chooses one per model (issue 29); a fix's state is re-checked at the file's
    chosen deployment (its resolved targets), not at one chosen again for the edited model: the same tp judges the
    fix, and the layout search runs once per file and GPU."""
    from colint.engine import checking
    from colint.analysis import deployments

    calls = []
    real = deployments.automatic_deployment

    def counting(spec, profile, scenario, **kw):
        calls.append(profile.name)
        return real(spec, profile, scenario, **kw)

    monkeypatch.setattr(checking, "automatic_deployment", counting)
    path = os.path.join(TESTS, "corpus", "hf", "llama2__Llama-2-7b-neuron-training.json")
    text = open(path, encoding="utf-8").read().replace('"intermediate_size": 11008', '"intermediate_size": 11000')
    opts = Settings(gpus=["b200", "h100-sxm"])
    r = check_document(path, load_text(text, path, syntax="json"), build_targets(opts), opts, select_rules())
    fixed = [f for f in r.findings if f.code == "CL201"]
    assert fixed and any(fx.edits for f in fixed for fx in f.fixes)  # a width fix was offered, so re-checked
    assert sorted(calls) == ["b200", "h100-sxm"]
