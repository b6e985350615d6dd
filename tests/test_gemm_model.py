"""GEMM time model: the published numbers it must reproduce (DESIGN.md §5, issue 3)."""

import math

import pytest

from colint.analysis.gemm_model import estimate, estimate_arrays, tile_count, tile_efficiency, wave_efficiency
from colint.errors import ProfileError
from colint.hardware_profiles import load_profile


@pytest.mark.parametrize("m, math_us, read_us, write_us", [
    (256, 0.14, 0.30, 0.26),
    (2048, 1.15, 0.37, 2.10),
    (16384, 9.16, 0.89, 16.8),
])
def test_codesign_blog_table2_gb300_ffn2_nvfp4(m, math_us, read_us, write_us):
    # NVIDIA co-design blog Table 2: GB300 15 PF NVFP4, 8 TB/s; N=8192, K=512, NVFP4 in, FP8 out.
    g = estimate(m, 8192, 512, "nvfp4", load_profile("gb300"), out_dtype="fp8")
    assert g.math_s * 1e6 == pytest.approx(math_us, abs=0.006)  # the blog rounds to 2 decimals
    assert g.read_s * 1e6 == pytest.approx(read_us, abs=0.006)
    assert g.write_s * 1e6 == pytest.approx(write_us, rel=0.01)
    assert g.bound == "memory"
    assert g.sol_s == g.memory_s
    assert g.estimate_s >= g.sol_s


def test_nvfp4_counts_block_scale_bytes():
    g = estimate(256, 8192, 512, "nvfp4", load_profile("gb300"), out_dtype="fp8")
    assert g.read_bytes == (256 * 512 + 512 * 8192) * 0.5625
    g = estimate(256, 8192, 512, "mxfp4", load_profile("b200"), out_dtype="fp8")
    assert g.read_bytes == (256 * 512 + 512 * 8192) * 0.53125


def test_matmul_guide_arithmetic_intensity():
    p = load_profile("h100-sxm")
    assert round(estimate(8192, 128, 8192, "fp16", p, "fp16").arithmetic_intensity, 1) == 124.1
    assert round(estimate(8192, 8192, 8192, "fp16", p, "fp16").arithmetic_intensity) == 2731  # guide: 2730


def test_matmul_guide_tile_quantization():
    assert tile_count(256, 256, 128, 128) == 4
    assert tile_count(257, 256, 128, 128) == 6
    assert tile_efficiency(257, 256, 128, 128) == pytest.approx(65792 / 98304)


def test_matmul_guide_wave_quantization_a100():
    # M=2304, 256x128 tiles, 108 SMs: N=1536 -> 108 tiles, one full wave; N=1664 -> 117 tiles, 54 %.
    assert wave_efficiency(tile_count(2304, 1536, 256, 128), 108) == 1.0
    assert wave_efficiency(tile_count(2304, 1664, 256, 128), 108) == pytest.approx(117 / 216)


def test_no_fp4_on_hopper():
    with pytest.raises(ProfileError, match="not native on h100-sxm"):
        estimate(128, 128, 128, "nvfp4", load_profile("h100-sxm"))
    with pytest.raises(ProfileError, match="not native"):
        estimate(128, 128, 128, "fp8", load_profile("a100-sxm-80gb"))


def test_m_star_and_bound_flip():
    p = load_profile("h100-sxm")
    g = estimate(1, 2048, 7168, "fp8", p)
    m_star = g.m_star
    assert 300 < m_star < 500  # domain.md §5.5: ≈382 with BF16 out
    assert estimate(math.floor(m_star), 2048, 7168, "fp8", p).bound == "memory"
    assert estimate(math.ceil(m_star) + 1, 2048, 7168, "fp8", p).bound == "compute"


def test_vectorized_path_matches_scalar():
    import numpy as np

    p = load_profile("b200")
    shapes = [(1, 4096, 4096), (257, 256, 512), (8192, 8192, 8192), (33, 65536, 1024), (4353, 1536, 7168)]
    for dtype in ("bf16", "fp8", "nvfp4"):
        arr = estimate_arrays(np.array([s[0] for s in shapes]), np.array([s[1] for s in shapes]),
                              np.array([s[2] for s in shapes]), dtype, p)
        for i, (m, n, k) in enumerate(shapes):
            g = estimate(m, n, k, dtype, p)
            assert arr["estimate_s"][i] == pytest.approx(g.estimate_s, rel=1e-12)
            assert arr["sol_s"][i] == pytest.approx(g.sol_s, rel=1e-12)
            assert arr["tile_efficiency"][i] == pytest.approx(g.tile_efficiency, rel=1e-12)
            assert arr["wave_efficiency"][i] == pytest.approx(g.wave_efficiency, rel=1e-12)
            assert arr["bound"][i] == g.bound
