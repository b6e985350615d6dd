"""Closure of advice (issue 13 item 1): every fix and every advised setting is re-checked at the state it
leads to before it is shown (colint.closure)."""

from __future__ import annotations

import json
import os
import sys

import pytest

from colint.checking import CheckOptions, build_targets, check_document, check_file
from colint.loading import load_text
from colint.rules import select_rules

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DSV3 = os.path.join(HERE, "corpus", "hf", "deepseek__DeepSeek-V3.json")


def _kimi_k2_text() -> str:
    """DeepSeek-V3's published config with Kimi-K2's routed experts (384, top-8): the shape of issue 13."""
    with open(DSV3, encoding="utf-8") as fh:
        data = json.load(fh)
    data.update(n_routed_experts=384, num_attention_heads=64)
    return json.dumps(data, indent=2)


def _check(text: str, **settings):
    opts = CheckOptions(**settings)
    rules = select_rules()
    targets = build_targets(opts)
    return check_document("kimi.json", load_text(text, "kimi.json", syntax="json"), targets, opts, rules), \
        (targets, opts, rules)


@pytest.mark.parametrize("gpu", ["b200", "gb200"])
def test_ep_advice_divides_the_experts(gpu):
    """384 experts, ep>=65 needed: CL501 advises ep=96 (divides 384), never 72 (5.33 per GPU, CL502 11% idle)."""
    r, (targets, opts, rules) = _check(_kimi_k2_text(), gpus=[gpu])
    (f,) = [f for f in r.findings if f.code == "CL501"]
    (fx,) = f.fixes
    assert fx.settings == {"ep": 96}
    assert fx.title == ("deploy the experts with ep=96 and data-parallel attention (spans "
                        + ("12 8-GPU NVLink domains of b200" if gpu == "b200" else "2 72-GPU NVLink domains of gb200")
                        + ": the all-to-all runs over the scale-out network)")
    at_96, _ = _check(_kimi_k2_text(), gpus=[gpu], ep=96)
    assert not [g for g in at_96.findings if g.code == "CL502"]
    # the rejected size: at ep=72 CL502 warns, which is what advice closure keeps from being advised
    at_72, _ = _check(_kimi_k2_text(), gpus=[gpu], ep=72)
    (w,) = [g for g in at_72.findings if g.code == "CL502"]
    assert w.severity == "warning" and w.evidence["idle_expert_share"] == pytest.approx(0.1111, abs=1e-4)


def test_blocked_ep_advice_states_its_tradeoff():
    """60 experts (Qwen1.5-MoE): every EP width wide enough needs redundant experts, so CL502 would warn; the
    advice stays, as display text naming the warning it trades for, with no setting to apply blindly."""
    path = os.path.join(HERE, "corpus", "hf", "qwen2-moe__Qwen1.5-MoE-A2.7B-Wikihow-finetune.json")
    opts = CheckOptions()
    rules = select_rules()
    r = check_file(path, build_targets(opts), opts, rules)
    (f,) = [f for f in r.findings if f.code == "CL501"]
    (fx,) = f.fixes
    assert fx.settings == {} and fx.safety == "display"
    assert fx.title.startswith("deploy the experts with ep=32 and data-parallel attention (60 experts need 4 "
                               "redundant copies (EPLB) to fill 32 x 2 slots; spans 4 8-GPU NVLink domains of b200")
    assert "— trade-off: raises CL502 warning: 60 experts over ep=32 is 1.88 per GPU" in fx.title


def test_fix_that_breaks_per_layer_lists_is_not_offered():
    """gemma-3-1b declares 26 layer_types: CL301's 20-layer alternative would make it unloadable (CL004)."""
    path = os.path.join(HERE, "corpus", "meta", "executorch__gemma-3-1b.json")
    for settings in ({}, {"pp": 4}):
        opts = CheckOptions(**settings)
        rules = select_rules()
        r = check_file(path, build_targets(opts), opts, rules)
        titles = [fx.title for f in r.findings for fx in f.fixes]
        assert not any("x 20 layers" in t for t in titles)
        assert not any(t.startswith("use 24 layers") or t.startswith("use 28 layers") for t in titles)


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
    assert tried > 50
    assert [(os.path.basename(p), code, title, [g.message for g in new], err)
            for p, code, title, new, err in bad] == []


def test_gemma4_kv_fix_edits_the_global_kv_heads(tmp_path):
    """Gemma-4's full layers read num_global_key_value_heads (attention_k_eq_v): CL701's fix edits that key, not
    num_key_value_heads (16 already), and states the delta the edited file has."""
    types = (["sliding_attention"] * 5 + ["full_attention"]) * 10
    cfg = {"model_type": "gemma4_text", "hidden_size": 5376, "intermediate_size": 21504, "num_hidden_layers": 60,
           "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 256, "global_head_dim": 512,
           "attention_k_eq_v": True, "num_global_key_value_heads": 4, "vocab_size": 262144,
           "sliding_window": 1024, "layer_types": types}
    r, _ = _check(json.dumps(cfg, indent=1), gpus=["h100-sxm"], tp=16)
    (f,) = [f for f in r.findings if f.code == "CL701"]
    assert f.key == "num_global_key_value_heads"
    edits = [(e.key, e.old, e.new) for fx in f.fixes for e in fx.edits]
    assert edits == [("num_global_key_value_heads", 4, 16)]


def test_vocab_padding_is_never_safe():
    path = os.path.join(HERE, "corpus", "hf", "gpt2__gpt2-medium-early-revision.json")
    opts = CheckOptions()
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
    from colint.fixing import apply_edits
    from colint.rules._fixes import ffn_params
    from colint.spec import normalize

    opts = CheckOptions(**SETTINGS[name])
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
