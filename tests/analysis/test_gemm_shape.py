"""A weight GEMM's shape on the roofline (colint.analysis.gemm_shape, what the CL1xx rules judge)."""

from types import SimpleNamespace

import pytest

from colint.analysis.gemm_model import estimate
from colint.analysis.gemm_shape import (
    limit_intensity,
    reference_shape,
    reference_shapes,
    square_m_star,
    thin_shape_loss_s,
    thin_side_for_ridge,
    whole_expert_shape,
)
from colint.analysis.scenario import make_scenario
from colint.hardware_profiles import load_profile


def test_limit_intensity_of_mobilellm_125m_o_proj():
    # N = K = 576 in BF16 with BF16 outputs: 2·576·576 / (576·2 + 576·2) = 288 FLOP/B
    assert limit_intensity(576, 576, "bf16", "bf16") == 288.0
    # FP8 inputs halve the activation bytes: 2·576·576 / (576·1 + 576·2) = 384
    assert limit_intensity(576, 576, "fp8", "bf16") == 384.0


def test_square_m_star_is_ridge_times_half_the_weight_bytes():
    assert square_m_star("bf16", 600.0) == 600.0
    assert square_m_star("fp8", 600.0) == 300.0


def test_thin_side_that_reaches_the_ridge():
    # N = 576 held: 576·K / (K + 576) passes 500 FLOP/B from K = 3,790 (3,789 gives 499.99)
    assert thin_side_for_ridge(576, 576, "bf16", "bf16", 500.0) == ("K", 3790)
    assert limit_intensity(576, 3789, "bf16", "bf16") < 500.0 < limit_intensity(576, 3790, "bf16", "bf16")
    assert thin_side_for_ridge(8192, 576, "bf16", "bf16", 500.0)[0] == "K"
    assert thin_side_for_ridge(576, 8192, "bf16", "bf16", 500.0)[0] == "N"
    # N = 576 caps I∞ below 576 FLOP/B whatever K: no width reaches a ridge of 600
    assert thin_side_for_ridge(576, 576, "bf16", "bf16", 600.0) is None


def test_reference_shapes_are_aligned_squarer_and_of_equal_work():
    # sqrt(4096·512) = 1,448 → 1,408 (11 tiles), and one tile either way with the other side making up N·K
    assert reference_shapes(4096, 512) == [(1280, 1664), (1408, 1536), (1536, 1408)]
    assert reference_shape(4096, 512) == (1408, 1408)
    assert reference_shapes(512, 512) == [(512, 512)]  # a square, aligned GEMM is its own reference


def _row(m, n, k, profile, name="mlp.down_proj", parallel="row"):
    t = estimate(m, n, k, "bf16", profile, "bf16", standalone=False)
    return SimpleNamespace(m=m, n=n, k=k, dtype="bf16", time=t, total_s=10 * t.estimate_s, name=name, parallel=parallel)


def test_thin_shape_loss():
    h100 = load_profile("h100-sxm")
    floor = 2e-6
    # its own reference: nothing lost (to rounding)
    assert thin_shape_loss_s(_row(4096, 512, 512, h100), h100, "bf16", floor) == pytest.approx(0.0, abs=1e-18)
    thin = _row(4096, 4096, 512, h100)
    t = thin.time.estimate_s
    best = min(
        [t]
        + [
            floor
            + max(0.0, estimate(4096, a, b, "bf16", h100, "bf16", standalone=False).estimate_s - floor)
            * (4096 * 512)
            / (a * b)
            for a, b in reference_shapes(4096, 512)
        ]
    )
    assert thin_shape_loss_s(thin, h100, "bf16", floor) == pytest.approx(thin.total_s * (t - best) / t)
    assert 0 < thin_shape_loss_s(thin, h100, "bf16", floor) < thin.total_s


def test_whole_expert_shape_before_expert_tp():
    h100 = load_profile("h100-sxm")
    down = _row(64, 7168, 256, h100, name="moe.down_proj", parallel="expert")  # K = 2,048 / 8
    up = _row(64, 512, 7168, h100, name="moe.gate_up_proj", parallel="expert")  # N = 4,096 / 8
    tp8 = make_scenario("throughput", tp=8, dtype="bf16")
    assert whole_expert_shape(down, tp8) == (7168, 2048, limit_intensity(7168, 2048, "bf16", "bf16"))
    assert whole_expert_shape(up, tp8)[:2] == (4096, 7168)
    assert whole_expert_shape(down, make_scenario("throughput", tp=8, ep=8, dtype="bf16")) is None  # EP keeps it whole
    assert whole_expert_shape(_row(64, 7168, 256, h100), tp8) is None  # not a routed expert
