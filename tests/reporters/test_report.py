"""`colint report`: a valid PNG / SVG chart, and one self-contained HTML file whose embedded charts
are real PNG images."""

from __future__ import annotations

import base64
import io
import os
import re
import xml.etree.ElementTree as ET

import pytest

from colint.cli.main import main
from colint.reporters.report_charts import CHARTS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEEPSEEK = os.path.join(ROOT, "examples", "deepseek-v3.json")
LLAMA = os.path.join(ROOT, "examples", "llama-3.1-8b.json")
LLAMA2 = os.path.join(ROOT, "examples", "llama-2-7b.json")
MOBILELLM = os.path.join(ROOT, "tests", "corpus", "hf", "mobilellm__MobileLLM-125M.json")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR chunk."""
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_png_chart_reads_back(tmp_path):
    import matplotlib.image as mpimg

    from colint.reporters.html_report import DPI, FIG_SIZE_IN

    out = tmp_path / "pipeline.png"
    assert (
        main(
            [
                "report",
                DEEPSEEK,
                "--gpu",
                "b200",
                "--ep",
                "8",
                "--chart",
                "pipeline",
                "-o",
                str(out),
                "--isolated",
                "--fail-on",
                "never",
            ]
        )
        == 0
    )
    data = out.read_bytes()
    width, height = _png_size(data)
    assert (width, height) == (round(FIG_SIZE_IN[0] * DPI), round(FIG_SIZE_IN[1] * DPI))
    pixels = mpimg.imread(io.BytesIO(data), format="png")
    assert pixels.shape[:2] == (height, width)
    assert pixels.std() > 0.01  # something is drawn, not a blank canvas


def test_html_embeds_real_png_charts(tmp_path):
    out = tmp_path / "report.html"
    # DeepSeek-V3 in BF16 at ep=8 does not fit eight B200s (CL801 error): exit 1, the report written all the same
    # (--dtype bf16: without it the checkpoint's quantization_config picks fp8, which fits)
    assert (
        main(["report", DEEPSEEK, "--gpu", "b200", "--ep", "8", "--dtype", "bf16", "-o", str(out), "--isolated"]) == 1
    )
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    srcs = re.findall(r'<img [^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(srcs) == 4  # roofline, time, pipeline, frontier
    for b64 in srcs:
        w, h = _png_size(base64.b64decode(b64, validate=True))
        assert w > 100 and h > 100
    assert "http://" not in text and "https://" not in text  # self-contained: nothing to fetch
    # the findings list: every finding of `colint check` at the same settings
    assert "CL501" in text and "Findings on b200 (" in text
    assert "not a measurement" in text


def test_every_gpu_gets_a_section_and_fail_on_decides_the_exit(tmp_path, capsys):
    out = tmp_path / "report.html"
    # MobileLLM-125M: hidden_size 576 is not a multiple of 128, a CL201 warning on each GPU
    assert main(["report", MOBILELLM, "--gpu", "b200", "--gpu", "h100-sxm", "-o", str(out), "--isolated"]) == 1
    text = out.read_text(encoding="utf-8")
    assert re.findall(r'<section id="gpu-([\w-]+)">', text) == ["b200", "h100-sxm"]
    assert len(re.findall(r'<img [^>]*src="data:image/png', text)) == 2 * len(CHARTS)  # every chart per GPU
    assert "Findings on b200 (" in text and "Findings on h100-sxm (" in text
    assert (
        main(
            [
                "report",
                MOBILELLM,
                "--gpu",
                "b200",
                "--gpu",
                "h100-sxm",
                "-o",
                str(out),
                "--isolated",
                "--fail-on",
                "error",
            ]
        )
        == 0
    )
    png = tmp_path / "roofline.png"
    assert (
        main(
            ["report", LLAMA2, "--gpu", "b200", "--gpu", "h100-sxm", "-o", str(png), "--isolated", "--fail-on", "never"]
        )
        == 0
    )
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["roofline-b200.png", "roofline-h100-sxm.png"]
    assert "wrote " + str(tmp_path / "roofline-h100-sxm.png") in capsys.readouterr().err


def test_svg_chart_is_valid_xml(tmp_path):
    out = tmp_path / "time.svg"
    assert (
        main(
            [
                "report",
                LLAMA,
                "--gpu",
                "h100-sxm",
                "--chart",
                "time",
                "-o",
                str(out),
                "--isolated",
                "--fail-on",
                "never",
            ]
        )
        == 0
    )
    root = ET.parse(out).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert len(list(root.iter())) > 50


def test_report_data_adds_up():
    """The time breakdown sums to the step estimate; every weight GEMM is a roofline point."""
    from colint.analysis.scenario import make_scenario
    from colint.analysis.workload import analyse
    from colint.hardware_profiles import load_profile
    from colint.loading import load
    from colint.design.reporting import pipeline_balance, roofline, time_breakdown
    from colint.normalize import normalize

    spec = normalize(load(DEEPSEEK))
    profile = load_profile("b200")
    w = analyse(spec, profile, make_scenario("throughput", ep=8, gpu="b200"))
    t = time_breakdown(w)
    for regime in ("decode", "prefill"):
        parts = t["regimes"][regime]["seconds"]
        assert sum(parts.values()) == pytest.approx(w.steps[regime].estimate_s, rel=1e-9)
        assert parts["experts"] > 0 and parts["LM head"] > 0
    r = roofline(w)
    assert len(r["points"]) == len(w.gemms["decode"]) + len(w.gemms["prefill"])
    assert {x["format"] for x in r["roofs"]} == set(profile.peak_tflops)
    p = pipeline_balance(w)
    assert [row["pp"] for row in p["rows"]] == list(range(2, 17))
    assert all(row["prefill_even_imbalance"] is None for row in p["rows"])  # 61 layers: prime
    assert all(row["prefill_best_imbalance"] >= 0 for row in p["rows"])


def test_bad_output_and_missing_matplotlib(tmp_path, capsys, monkeypatch):
    assert main(["report", DEEPSEEK, "-o", str(tmp_path / "x.pdf")]) == 2
    assert ".html" in capsys.readouterr().err
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert main(["report", DEEPSEEK, "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'colint-llm[report]'" in err
    assert not (tmp_path / "x.html").exists()


def test_frontier_chart_draws_both_designs(tmp_path):
    import matplotlib.image as mpimg

    from colint.analysis.frontier import frontier
    from colint.analysis.serving import serving_for
    from colint.analysis.scenario import make_scenario
    from colint.analysis.workload import analyse
    from colint.hardware_profiles import load_profile
    from colint.loading import load
    from colint.design.pareto import load_design
    from colint.design.reporting import report_data
    from colint.normalize import normalize

    out = tmp_path / "frontier.png"
    assert (
        main(
            [
                "report",
                LLAMA,
                "--gpu",
                "h100-sxm",
                "--chart",
                "frontier",
                "--variant",
                "num_key_value_heads=32",
                "-o",
                str(out),
                "--isolated",
                "--fail-on",
                "never",
            ]
        )
        == 0
    )
    pixels = mpimg.imread(io.BytesIO(out.read_bytes()), format="png")
    assert pixels.std() > 0.01
    # the chart's numbers are the frontier's
    profile = load_profile("h100-sxm")
    sc = make_scenario("throughput", gpu=profile.name)
    spec = normalize(load(LLAMA))
    variant = load_design(LLAMA, {"num_key_value_heads": 32})
    d = report_data(LLAMA, spec, analyse(spec, profile, sc), [], compare=(LLAMA, {"num_key_value_heads": 32}, variant))[
        "frontier"
    ]
    assert [x["name"] for x in d["designs"]] == [LLAMA, LLAMA + " [num_key_value_heads=32]"]
    # served as colint pareto serves by default (aggregated: each request's prefill charged)
    f = frontier(spec, profile, sc, serving=serving_for("aggregated", sc.context))
    assert [(p["deployment"], p["concurrency"]) for p in d["designs"][0]["frontier"]] == [
        (p.deployment.label(), p.concurrency) for p in sorted(f.frontier, key=lambda p: p.tokens_per_s_per_user)
    ]
    assert d["designs"][0]["labelled"][0]["deployment"] == d["designs"][0]["frontier"][0]["deployment"]
    assert main(["report", LLAMA, "--variant", "nope=1", "-o", str(tmp_path / "x.png"), "--isolated"]) == 2
