"""GEMM time model: the published numbers it must reproduce (docs/design.md §5, issue 3)."""

import math

import pytest

from colint.analysis.gemm_model import estimate, estimate_arrays, tile_count, tile_efficiency, wave_efficiency
from colint.errors import ProfileError
from colint.hardware_profiles import load_profile
from tests.scripts import load_script


@pytest.mark.parametrize(
    "m, math_us, read_us, write_us",
    [
        (256, 0.14, 0.30, 0.26),
        (2048, 1.15, 0.37, 2.10),
        (16384, 9.16, 0.89, 16.8),
    ],
)
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


def test_fp8_block_is_native_on_ada():
    # TensorRT-LLM's SM89 blockwise FP8 GEMM (ada_blockwise_gemm) runs 1x128 / 128x128 scales on
    # Ada's FP8 tensor cores: fp8_block on an L40S is priced, not refused.
    g = estimate(4096, 4096, 4096, "fp8_block", load_profile("l40s"))
    assert g.dtype == "fp8_block" and g.estimate_s > g.sol_s > 0


# Published torch.matmul BF16 rates, best of square sizes 1024-10240 (zzc0721/torch-performance-test-data,
# database.md): on the calibrated GPUs the model lands within 0.98-1.08 of them; the GPUs it has no
# measurements for must land in the same band, so that their constants follow the same evidence.
@pytest.mark.parametrize(
    "gpu, published_tflops",
    [
        ("a100-sxm-80gb", 264.53),
        ("h100-sxm", 789.24),
        ("b200", 1696.03),
        ("l40s", 269.15),
        ("rtx-pro-6000", 409.42),  # Server Edition
    ],
)
def test_bf16_best_rate_matches_published_torch_matmul(gpu, published_tflops):
    p = load_profile(gpu)
    best = max(2 * n**3 / estimate(n, n, n, "bf16", p).estimate_s for n in (1024, 2048, 4096, 8192, 10240))
    assert 0.92 < best / (published_tflops * 1e12) < 1.10


# The best published large-GEMM kernels per format (M = N = 8192). B200's constants come from TensorRT-LLM's
# kernels, which trail the best ones (FP4 DeepGEMM PR 348, FP8/BF16 MAMF); sm_120's constants must trail
# its best published kernels (cutlass PR 3272 CuTeDSL NVFP4 / MXFP8, torch.matmul BF16) by the same margin,
# and Blackwell Ultra, which shares B200's, must too (CUTLASS sm_103 NVFP4 8.30 PF at K=33024,
# ThunderKittens kernels/gemm/nvfp4_b300/HANDOFF.md).
@pytest.mark.parametrize(
    "gpu, dtype, k, best_tflops",
    [
        ("b200", "nvfp4", 8192, 5702.0),
        ("b200", "fp8", 8192, 3432.5),
        ("b200", "bf16", 8192, 1745.0),
        ("rtx-pro-6000", "nvfp4", 8192, 1629.0),
        ("rtx-pro-6000", "fp8", 8192, 802.0),
        ("rtx-pro-6000", "bf16", 8192, 409.42),
        ("b300", "nvfp4", 33024, 8300.0),
    ],
)
def test_large_gemm_trails_the_best_published_kernel_as_on_b200(gpu, dtype, k, best_tflops):
    # The GEMM alone on pre-quantized operands (standalone=False), as those kernels were timed.
    g = estimate(8192, 8192, k, dtype, load_profile(gpu), standalone=False)
    assert 1.0 < g.estimate_s * best_tflops * 1e12 / g.flops < 1.45


def test_m_star_and_bound_flip():
    p = load_profile("h100-sxm")
    g = estimate(1, 2048, 7168, "fp8", p)
    m_star = g.m_star
    assert 300 < m_star < 500  # docs/design.md §9.3: ≈382 with BF16 out
    assert estimate(math.floor(m_star), 2048, 7168, "fp8", p).bound == "memory"
    assert estimate(math.ceil(m_star) + 1, 2048, 7168, "fp8", p).bound == "compute"


def test_vectorized_path_matches_scalar_on_every_profile_and_format():
    import random

    import numpy as np

    from colint.analysis.gemm_model import FORMATS
    from colint.hardware_profiles import list_profiles

    rnd = random.Random(7)
    shapes = [
        (
            rnd.choice([1, 3, 64, 257, 4096, 20000]),
            rnd.choice([32, 576, 4097, 65536]),
            rnd.choice([16, 512, 7168, 65536]),
        )
        for _ in range(12)
    ]
    m, n, k = (np.array(c) for c in zip(*shapes))
    for name in list_profiles():
        p = load_profile(name)
        for fmt, (hw, _, _) in FORMATS.items():
            if not p.has(hw):
                continue
            for standalone in (True, False):
                arr = estimate_arrays(m, n, k, fmt, p, standalone=standalone)
                for i, (a, b, c) in enumerate(shapes):
                    g = estimate(a, b, c, fmt, p, standalone=standalone)
                    assert arr["estimate_s"][i] == pytest.approx(g.estimate_s, rel=1e-12), (name, fmt, a, b, c)
                    assert g.estimate_s >= g.sol_s > 0  # no estimate beats the speed of light


def test_vectorized_path_matches_scalar():
    import numpy as np

    p = load_profile("b200")
    shapes = [(1, 4096, 4096), (257, 256, 512), (8192, 8192, 8192), (33, 65536, 1024), (4353, 1536, 7168)]
    for dtype in ("bf16", "fp8", "nvfp4"):
        arr = estimate_arrays(
            np.array([s[0] for s in shapes]),
            np.array([s[1] for s in shapes]),
            np.array([s[2] for s in shapes]),
            dtype,
            p,
        )
        for i, (m, n, k) in enumerate(shapes):
            g = estimate(m, n, k, dtype, p)
            assert arr["estimate_s"][i] == pytest.approx(g.estimate_s, rel=1e-12)
            assert arr["sol_s"][i] == pytest.approx(g.sol_s, rel=1e-12)
            assert arr["tile_efficiency"][i] == pytest.approx(g.tile_efficiency, rel=1e-12)
            assert arr["wave_efficiency"][i] == pytest.approx(g.wave_efficiency, rel=1e-12)
            assert arr["bound"][i] == g.bound


# ----------------------------------------------------------------------------- CLI
import json  # noqa: E402

from colint.cli.main import main  # noqa: E402


def test_cli_gemm_json_keys(capsys):
    assert (
        main(
            [
                "gemm",
                "2048",
                "8192",
                "512",
                "--gpu",
                "gb300",
                "--dtype",
                "nvfp4",
                "--out-dtype",
                "fp8",
                "--format",
                "json",
            ]
        )
        == 0
    )
    d = json.loads(capsys.readouterr().out)
    for key in (
        "m",
        "n",
        "k",
        "dtype",
        "flops",
        "bytes",
        "arithmetic_intensity",
        "ridge",
        "bound",
        "math_s",
        "memory_s",
        "sol_s",
        "estimate_s",
        "tile_efficiency",
        "wave_efficiency",
    ):
        assert key in d
    assert (d["m"], d["n"], d["k"], d["dtype"], d["bound"]) == (2048, 8192, 512, "nvfp4", "memory")
    assert d["math_s"] == pytest.approx(1.145e-6, rel=1e-3)


def test_cli_gemm_errors_exit_2(capsys):
    assert main(["gemm", "128", "128", "128", "--gpu", "h100-sxm", "--dtype", "nvfp4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nvfp4 is not native on h100-sxm" in err
    assert main(["gemm", "128", "128", "128", "--gpu", "x100"]) == 2
    assert "unknown GPU 'x100'" in capsys.readouterr().err
    assert main(["gemm", "128", "128"]) == 2


def test_cli_gemm_from_csv(tmp_path, capsys):
    src = tmp_path / "shapes.csv"
    src.write_text("# my shapes\nname,dtype,m,n,k\nqkv,bf16,1,6144,4096\nffn,fp8,257,256,512\n")
    assert main(["gemm", "--gpu", "h100-sxm", "--from-csv", str(src)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "# my shapes"
    header = lines[1].split(",")
    assert header[:5] == ["name", "dtype", "m", "n", "k"]
    for col in ("sol_s", "estimate_s", "bound", "tile_efficiency", "wave_efficiency", "arithmetic_intensity"):
        assert col in header
    row = dict(zip(header, lines[2].split(",")))
    assert row["name"] == "qkv" and row["bound"] == "memory"
    g = estimate(1, 6144, 4096, "bf16", load_profile("h100-sxm"))
    assert float(row["estimate_s"]) == pytest.approx(g.estimate_s, rel=1e-5)
    bad = tmp_path / "bad.csv"
    bad.write_text("dtype,m,n,k\nbf16,1,2,3\nbf16,x,2,3\n")
    assert main(["gemm", "--gpu", "h100-sxm", "--from-csv", str(bad)]) == 2
    assert capsys.readouterr().err.strip() == f"{bad}:3: error: m: 'x' is not an integer"
    bad.write_text("dtype,m,n,k\nnvfp4,1,2,3\n")
    assert main(["gemm", "--gpu", "h100-sxm", "--from-csv", str(bad)]) == 2
    assert "not native on h100-sxm" in capsys.readouterr().err


# ------------------------------------------------------------------- measured accuracy (sample)
def test_model_meets_accuracy_targets_on_measured_sample():
    """Median |log2(est/meas)| <= 0.25, p90 <= 0.8, Spearman >= 0.97 per GPU and format, and the
    model beats the plain roofline everywhere (tests/data/measured, see its README)."""
    cal = load_script("calibrate")
    results = cal.evaluate(cal.files_from([]))
    assert {(r["gpu"], r["format"]) for r in results} >= {
        ("h100-sxm", "bf16"),
        ("h100-sxm", "fp8"),
        ("h100-sxm", "fp8_block"),
        ("b200", "bf16"),
        ("b200", "fp8"),
        ("b200", "fp8_block"),
        ("b200", "nvfp4"),
        ("a100-sxm-80gb", "bf16"),
        ("a100-sxm-80gb", "int8"),
    }
    for r in results:
        m = r["model"]
        assert m["median"] <= 0.25 and m["p90"] <= 0.8 and m["rho"] >= 0.97, r
        assert m["median"] < r["roofline"]["median"] and m["p90"] < r["roofline"]["p90"], r


def test_gb300_nvfp4_k_sweep_matches_codesign_fig4():
    # Co-design blog Fig. 4 (docs/design.md §9.5, V2): M=8192, N=9728, NVFP4 on GB300 reaches 80 % of its
    # sustained throughput at K ~ 3072 and saturates near K ~ 6144.
    p = load_profile("gb300")

    def rate(k):
        g = estimate(8192, 9728, k, "nvfp4", p, standalone=False)
        return g.flops / g.estimate_s

    sustained = rate(32768)
    assert 0.72 < rate(3072) / sustained < 0.88
    assert rate(1536) / sustained < 0.72
    assert rate(6144) / sustained > 0.88


def test_cli_check_accepts_fp8_block_on_l40s(capsys):
    # `colint check --dtype fp8_block --gpu l40s` prices the model (Ada runs FP8 block scaling natively).
    from pathlib import Path

    example = str(Path(__file__).resolve().parents[2] / "examples" / "llama-3.1-8b.json")
    args = ["check", example, "--gpu", "l40s", "--dtype", "fp8_block", "--isolated", "--fail-on", "never"]
    assert main([*args, "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "not native" not in captured.err
    assert json.loads(captured.out)["files"]
