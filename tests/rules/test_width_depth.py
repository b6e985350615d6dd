"""CL3xx width vs depth: exact findings, the latency workload, the equal-parameter alternative."""

import pytest

from colint.analysis.inventory import param_counts
from colint.analysis.wider import equivalent_layers, scaled_spec, wider_alternative
from tests.rules.helpers import LLAMA_8B, corpus, run, spec_of

# a 1.3B deep-narrow design: H=1536 over 48 layers (H/L 32, at the deep_aspect_ratio boundary: advice)
DEEP_NARROW = dict(
    LLAMA_8B,
    hidden_size=1536,
    num_hidden_layers=48,
    num_attention_heads=12,
    num_key_value_heads=4,
    intermediate_size=4096,
    vocab_size=32000,
)


def test_mobilellm_125m_below_1b_is_info_whatever_its_gain():
    spec = corpus("tests/corpus/hf/mobilellm__MobileLLM-125M.json")
    for kw in ({}, {"scenario": "latency"}, {"tp": 2}):
        (f,) = run(spec, ["CL3"], **kw)
        # below 1B parameters deep and thin is a known good choice (MobileLLM): advice (info), though the
        # estimated gain (about 48%) is far above the warning threshold
        assert (f.code, f.severity, f.key, f.line) == ("CL301", "info", "num_hidden_layers", 15)
        assert f.impact.estimated_loss_pct > 40
    assert f.evidence["aspect_ratio"] == 19.2 and f.evidence["params"] < 1e9
    assert "known good choice (MobileLLM)" in f.message
    assert all(x.safety == "display" for x in f.fixes)


def test_deep_narrow_fixture_with_equal_parameter_alternative():
    spec = spec_of(DEEP_NARROW)
    (f,) = run(spec, ["CL301"])
    # H/L 32 is not below deep_aspect_ratio (32): within the band of shipped designs, so info whatever the gain
    assert (f.severity, f.key, f.line) == ("info", "num_hidden_layers", 10)
    assert f.impact.estimated_loss_pct > 25
    # with the boundary moved above it, the same stack is graded by its gain and warns (capped at warning)
    (w,) = run(spec, ["CL301"], rules={"CL301": {"deep_aspect_ratio": 33.0}})
    assert w.severity == "warning" and w.impact.estimated_loss_pct == f.impact.estimated_loss_pct
    ev = f.evidence
    assert ev["aspect_ratio"] == 32.0 and ev["params"] > 1e9
    assert ev["est_fixed_share"] >= 0.25
    # the alternative keeps the parameters within 2% and widths on 128
    assert abs(ev["alt_params"] - ev["params"]) / ev["params"] <= 0.02
    assert ev["alt_hidden_size"] % 128 == 0 and ev["alt_num_layers"] < 48
    assert ev["est_alt_itl_s"] < ev["est_itl_s"]
    assert ev["est_alt_itl_gain_share"] == pytest.approx(1 - ev["est_alt_itl_s"] / ev["est_itl_s"], abs=1e-4)
    (fx,) = f.fixes
    assert fx.safety == "unsafe"
    keys = {e.key: (e.old, e.new) for e in fx.edits}
    assert keys["hidden_size"] == (1536, ev["alt_hidden_size"])
    assert keys["num_hidden_layers"] == (48, ev["alt_num_layers"])


def test_the_latency_workload_is_used_whatever_the_scenario():
    spec = spec_of(DEEP_NARROW)
    (a,) = run(spec, ["CL301"])
    (b,) = run(spec, ["CL301"], scenario="latency")
    (c,) = run(spec, ["CL301"], scenario="long-context")
    assert a.evidence["est_itl_s"] == b.evidence["est_itl_s"] == c.evidence["est_itl_s"]


def test_well_shaped_models_are_quiet():
    for name in (
        "llama3__Meta-Llama-3.1-8B",
        "llama3__Llama-3.3-70B-Instruct",
        "qwen3__Qwen3-8B",
        "deepseek__DeepSeek-V3",
    ):
        path = f"tests/corpus/hf/{name}.json"
        assert run(corpus(path), ["CL3"]) == [], path
        assert run(corpus(path), ["CL3"], scenario="latency") == [], path


def test_hybrid_half_blocks_count_as_half_layers():
    # Nemotron-H: 52 blocks that are each a Mamba, an attention or an MoE block = 26 layer equivalents
    spec = corpus("tests/corpus/hf/nemotron-h__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json")
    assert equivalent_layers(spec) == 26.0
    assert run(spec, ["CL3"]) == []


def test_scaled_spec_and_alternative_search():
    spec = spec_of(DEEP_NARROW)
    wide = scaled_spec(spec, 2048, 27)
    assert (wide.hidden_size, wide.num_layers, wide.num_heads, wide.num_kv_heads) == (2048, 27, 16, 4)
    assert wide.intermediate_size == 5504  # 4096 x 2048/1536 = 5461 -> 43 x 128
    alt, params = wider_alternative(spec, 30, 0.02)
    assert abs(params - param_counts(spec).total) <= 0.02 * param_counts(spec).total
    assert alt.num_layers in range(24, 48)


def test_qwen3_30b_a3b_deep_narrow_moe_within_the_shipped_band_is_info():
    (f,) = run(corpus("tests/corpus/hf/qwen3-moe__Qwen3-30B-A3B.json"), ["CL301"])
    # H/L 42.7: at or above deep_aspect_ratio 32, advice whatever its est. 16% gain
    assert f.severity == "info" and f.evidence["aspect_ratio"] == 42.7
    assert f.impact.estimated_loss_pct > 10
    assert "moe_intermediate_size" in {e.key for x in f.fixes for e in x.edits}


def test_mobilellm_1_5b_above_1b_and_below_h_l_32_is_a_warning():
    # MobileLLM-1.5B: 1.56B parameters, H=1600 over 54 layers (H/L 29.6): really deep and narrow at >= 1B, so
    # graded by its gain (est. 33%, above the error threshold) and capped at warning (a quality trade-off)
    (f,) = run(corpus("tests/corpus/hf/mobilellm__MobileLLM-1.5B.json"), ["CL3"], gpus=["b200"])
    assert (f.code, f.severity, f.key, f.line) == ("CL301", "warning", "num_hidden_layers", 15)
    assert f.evidence["aspect_ratio"] == 29.6 and f.evidence["params"] >= 1e9
    assert f.impact.estimated_loss_pct > 25
    assert f.message.startswith("H/L = 29.6 (1600 over 54 layers) is deep and narrow")


def test_the_ceiling_is_the_cap_the_rule_grades_under():
    """CL301's ceiling (Rule.ceiling) from the spec alone: a warning only for a really deep and narrow stack of 1B
    parameters or more (MobileLLM-1.5B, H/L 29.6), advice within the band of shipped designs (MiniMax-M2.5, H/L 49.5;
    the DEEP_NARROW fixture at its boundary 32) and below 1B (MobileLLM-125M, H/L 19.2); a configured boundary moves
    it as it moves the grading."""
    from colint.rules import all_rules

    r = all_rules()["CL301"]
    assert r.ceiling_on(corpus("tests/corpus/hf/mobilellm__MobileLLM-1.5B.json")) == "warning"
    assert r.ceiling_on(corpus("tests/corpus/hf/minimax__MiniMax-M2.5.json")) == "info"
    assert r.ceiling_on(corpus("tests/corpus/hf/mobilellm__MobileLLM-125M.json")) == "info"
    assert r.ceiling_on(spec_of(DEEP_NARROW)) == "info"
    assert r.ceiling_on(spec_of(DEEP_NARROW), {"deep_aspect_ratio": 33.0}) == "warning"
    # the ceiling only lowers what the thresholds allow: no warning where the loss thresholds allow none
    assert r.ceiling_on(corpus("tests/corpus/hf/mobilellm__MobileLLM-1.5B.json"), {"warning_loss_pct": 1e9}) == "info"
