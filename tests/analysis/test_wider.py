"""The equal-parameter wider/shallower what-if of CL301 (colint.analysis.wider)."""

import pytest

from colint.analysis.inventory import param_counts
from colint.analysis.scenario import make_scenario
from colint.analysis.wider import decode_step_s, target_layers, wider_what_if
from colint.analysis.workload import analyse
from colint.hardware_profiles import load_profile
from colint.loading import load
from colint.normalize import normalize


def test_target_layers_brings_the_aspect_ratio_to_the_band_at_most_halving():
    # MobileLLM-1.5B: H/L = 1600/54; (29.6/64)^(2/3) x 54 = 32.3 layers
    assert target_layers(54, 1600 / 54, 64.0) == 32
    assert target_layers(48, 2048 / 48, 64.0) == 37  # Qwen3-30B-A3B: 48 x (42.7/64)^(2/3) = 36.6
    assert target_layers(40, 4.0, 64.0) == 20  # never below half the layers
    assert target_layers(10, 63.0, 64.0) == 9  # always at least one layer fewer


def test_mobilellm_1_5b_wider_alternative_on_b200():
    spec = normalize(load("tests/corpus/hf/mobilellm__MobileLLM-1.5B.json"))
    b200 = load_profile("b200")
    w = analyse(spec, b200, make_scenario("latency", dtype="bf16"))
    alt = wider_what_if(spec, b200, w, 64.0, 0.02)
    assert (alt.spec.hidden_size, alt.spec.num_layers) == (2048, 32)
    assert alt.params == param_counts(alt.spec).total == 1_540_490_816  # -1.4% of 1,562,388,800
    assert abs(alt.params - param_counts(spec).total) / param_counts(spec).total <= 0.02
    assert alt.itl_s == decode_step_s(alt.spec, b200, w.scenario)
    assert alt.gain_share == pytest.approx(1 - alt.itl_s / w.steps["decode"].estimate_s)
    assert 0.2 < alt.gain_share < 0.5  # fewer layers' fixed costs: about a third of the step


def test_no_alternative_within_a_zero_tolerance():
    spec = normalize(load("tests/corpus/hf/mobilellm__MobileLLM-1.5B.json"))
    b200 = load_profile("b200")
    w = analyse(spec, b200, make_scenario("latency", dtype="bf16"))
    assert wider_what_if(spec, b200, w, 64.0, 0.0) is None
