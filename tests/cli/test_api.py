"""The Python API (colint.api): its doctests, the same records as the JSON output, errors, lazy import."""

from __future__ import annotations

import doctest
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

import colint
from colint import api
from colint.cli.main import main
from colint.errors import SpecError, UsageError

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "examples" / "llama-2-7b.json"


@pytest.mark.parametrize("name", ["check", "inspect", "suggest", "report_data"])
def test_doctests(name, monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples name examples/llama-2-7b.json
    finder = doctest.DocTestFinder()
    [test] = [t for t in finder.find(api, "colint.api", globs={}) if t.name == f"colint.api.{name}"]
    assert len(test.examples) >= 3
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False) == doctest.TestResults(0, len(test.examples))


def test_check_returns_the_records_of_the_json_output(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    rc = main(["check", "examples/llama-2-7b.json", "--tp", "8", "--gpu", "h100-sxm", "--isolated", "--format", "json"])
    cli = json.loads(capsys.readouterr().out)["files"][0]["findings"]
    # CL201 (+0.5% prefill step) and CL202 are info below the 1% warning threshold: findings, but exit 0
    assert rc == 0 and cli
    from_path = colint.check("examples/llama-2-7b.json", gpu="h100-sxm", tp=8)
    assert [f.public() for f in from_path] == cli
    # a dict: the same findings, without a file to point into
    from_dict = colint.check(json.loads(LLAMA.read_text()), gpu="h100-sxm", tp=8)
    assert [f.public() for f in from_dict] == [{**f, "line": None, "column": None} for f in cli]


def test_check_settings_and_project_files(tmp_path, monkeypatch):
    cfg = json.loads(LLAMA.read_text())
    (tmp_path / "pyproject.toml").write_text('[tool.colint]\ntp = 8\nignore = ["CL202"]\n')
    monkeypatch.chdir(tmp_path)
    # no tp named: colint's automatic deployment (weights and what fits of the sequences) passes every rule
    assert [f.code for f in colint.check(cfg)] == []
    # at tp=1 both dims align, but 256 sequences of this MHA model's KV cache need 2 GPUs
    assert [f.code for f in colint.check(cfg, tp=1, concurrency=256)] == ["CL801"]
    assert [f.code for f in colint.check(cfg, project=True)] == ["CL201"]  # the project's tp=8, CL202 ignored
    assert [f.code for f in colint.check(cfg, tp=8, select=["CL202"])] == ["CL202"]
    assert {f.gpu for f in colint.check(cfg, gpu=["b200", "h100-sxm"], tp=8)} == {"b200", "h100-sxm"}


def test_errors(monkeypatch):
    with pytest.raises(TypeError, match="unknown setting 'tensor_parallel'; colint takes scenario, "):
        colint.check({"model_type": "llama"}, tensor_parallel=8)
    with pytest.raises(UsageError, match=r"tp=0: expected a positive integer or 'auto'"):
        colint.check(str(LLAMA), tp=0)
    with pytest.raises(UsageError, match="unknown rule"):
        colint.check(str(LLAMA), select="CL999")
    with pytest.raises(SpecError) as info:
        colint.check(
            {
                "model_type": "llama",
                "hidden_size": 0,
                "num_hidden_layers": 2,
                "num_attention_heads": 2,
                "intermediate_size": 64,
                "vocab_size": 100,
            }
        )
    assert (info.value.path, info.value.line, info.value.column) == ("<dict>", None, None)
    assert info.value.located().startswith("<dict>: error: ")
    with pytest.raises(TypeError, match="expected a dict, a transformers config, a path or a Hub id, not int"):
        colint.check(42)
    from colint.errors import LoadError

    with pytest.raises(LoadError, match="no such file"):
        colint.inspect("no/such/config.json")


def test_transformers_config_object():
    from transformers import LlamaConfig

    cfg = LlamaConfig(
        hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32, vocab_size=32000
    )
    assert [(f.code, f.key) for f in colint.check(cfg, tp=8)] == [
        ("CL201", "intermediate_size"),
        ("CL202", "vocab_size"),
    ]


def test_hub_id_through_the_api(tmp_path, monkeypatch):
    from huggingface_hub import constants
    from tests.engine.test_sources import make_cache

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    snap = make_cache(tmp_path, "meta-llama/Llama-2-7b-hf", {"config.json": LLAMA.read_text()})
    assert colint.inspect("meta-llama/Llama-2-7b-hf")["path"] == str(snap / "config.json")
    assert [(f.code, f.line) for f in colint.check("meta-llama/Llama-2-7b-hf", tp=8)] == [("CL201", 10), ("CL202", 25)]


def test_suggest_stays_the_api_function_after_the_search_module_is_imported():
    import colint.suggesting.search  # the search lives in its own module, so colint.suggest is never shadowed

    assert colint.suggest is colint.api.suggest
    result = colint.suggest({**json.loads(LLAMA.read_text())}, gpu="b200", tp=8, top=1)
    assert result.path == "<dict>"
    assert result.candidates[0].edits == {"num_key_value_heads": 8, "intermediate_size": 14336, "num_hidden_layers": 30}


def test_chart_bytes():
    data = colint.report_data(str(LLAMA), gpu="b200", tp=8)
    assert colint.chart(data, "roofline").startswith(b"\x89PNG")
    assert b"<svg" in colint.chart(data, "pipeline", "svg")[:400]
    with pytest.raises(UsageError, match="unknown chart 'bars'; choose from roofline, time, pipeline"):
        colint.chart(data, "bars")


def test_import_colint_stays_cheap():
    code = (
        "import sys, colint; heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pydantic', 'click', 'transformers', 'huggingface_hub', 'numpy', 'ruamel') or m == 'colint.api');"
        "print(heavy); print(sorted(set(colint.__all__) - set(dir(colint))))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout == "[]\n[]\n"


def test_one_liner_from_the_issue():
    code = (
        "import colint; print([f.code for f in colint.check({'model_type': 'llama', 'hidden_size': 4096, "
        "'intermediate_size': 11008, 'num_hidden_layers': 32, 'num_attention_heads': 32, "
        "'vocab_size': 32000}, gpu='b200', tp=8)])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert proc.stdout == "['CL201', 'CL202']\n"


def test_notebook_example_runs(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    monkeypatch.setattr(sys, "argv", ["notebook.py", str(tmp_path)])
    monkeypatch.setitem(sys.modules, "pandas", None)  # the plain-text table, whatever is installed
    monkeypatch.setitem(sys.modules, "IPython", None)
    runpy.run_path(str(ROOT / "examples" / "notebook.py"), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["code", "|", "severity", "|", "key", "|", "message", "|", "estimated_loss_pct"]
    assert [line.split(" | ")[0].strip() for line in out[1:3]] == ["CL201", "CL202"]
    assert sorted(os.listdir(tmp_path)) == ["notebook-pipeline.png", "notebook-roofline.png", "notebook-time.png"]
    assert (tmp_path / "notebook-roofline.png").read_bytes().startswith(b"\x89PNG")


def test_inspect_estimates_are_the_clis(capsys):
    """colint.inspect(..., gpu=) prices the step as `colint inspect --gpu` does: the scenario fitted to the
    model (a 32k context is clipped to the positions llama-2-7b's file holds)."""
    from colint.cli.main import main

    api = colint.inspect(str(LLAMA), gpu="h100-sxm", context=32768)["estimates"]
    assert main(["inspect", str(LLAMA), "--gpu", "h100-sxm", "--context", "32768", "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().out)["estimates"]
    assert api == cli
    assert cli["scenario"]["context_clipped_from"] == 32768


def test_the_docs_example_shows_what_the_call_returns():
    # issue 29: docs/api.md showed a 'warning' where the call returns 'info'; its first result comment is checked here
    import re

    text = open(os.path.join(ROOT, "docs", "api.md"), encoding="utf-8").read()
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    head = block.split("[(f.code, f.severity, f.key) for f in findings]\n", 1)
    namespace: dict = {}
    exec(head[0], namespace)
    shown = re.match(r"# (\[.*?\])", head[1]).group(1)
    assert repr([(f.code, f.severity, f.key) for f in namespace["findings"]]) == shown
