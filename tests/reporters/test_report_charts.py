"""`colint report --chart` offers exactly the charts the HTML report draws, from one list
(colint.reporters.report_charts.CHARTS), and the CLI reads that list without the drawing code."""

from __future__ import annotations

import os
import subprocess
import sys

from colint.cli.design import report_cmd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLAMA = os.path.join(ROOT, "examples", "llama-3.1-8b.json")


def test_chart_choices_are_the_charts_the_html_report_draws(monkeypatch):
    from colint.analysis.scenario import make_scenario
    from colint.analysis.workload import analyse
    from colint.hardware_profiles import load_profile
    from colint.loading import load
    from colint.design.reporting import report_data
    from colint.reporters import html_report
    from colint.normalize import normalize

    (opt,) = [p for p in report_cmd.params if p.name == "chart"]
    spec = normalize(load(LLAMA))
    data = report_data(LLAMA, spec, analyse(spec, load_profile("b200"), make_scenario("throughput", gpu="b200")), [])
    drawn = []
    monkeypatch.setattr(html_report, "render_chart", lambda d, chart, fmt="png": drawn.append(chart) or b"")
    html_report.render_html(data)
    assert list(opt.type.choices) == drawn == list(html_report.DRAW) == ["roofline", "time", "pipeline", "frontier"]


def test_cli_import_leaves_the_drawing_code_out():
    code = (
        "import sys, colint.cli.main; "
        "print(sorted(m for m in ('colint.reporters.html_report', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
