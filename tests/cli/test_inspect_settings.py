"""`colint inspect` honours a project's [tool.colint] like check, suggest and report do."""

from __future__ import annotations

import json
import shutil

from colint.cli.main import main

LLAMA = "tests/corpus/hf/llama3__Meta-Llama-3.1-8B.json"


def _inspect(capsys, *args: str) -> dict:
    assert main(["inspect", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_inspect_takes_the_scenario_from_the_project_config_unless_isolated_or_overridden(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.colint]\ntp = 8\ndtype = "fp8"\nscenario = "latency"\n', encoding="utf-8"
    )
    path = tmp_path / "config.json"
    shutil.copy(LLAMA, path)

    sc = _inspect(capsys, str(path), "--gpu", "h100-sxm")["estimates"]["scenario"]
    assert (sc["name"], sc["tp"], sc["weights"]) == ("latency", 8, "fp8")

    sc = _inspect(capsys, str(path), "--gpu", "h100-sxm", "--tp", "2")["estimates"]["scenario"]
    assert (sc["name"], sc["tp"], sc["weights"]) == ("latency", 2, "fp8")

    sc = _inspect(capsys, str(path), "--gpu", "h100-sxm", "--isolated")["estimates"]["scenario"]
    assert (sc["name"], sc["tp"], sc["weights"]) == ("throughput", 1, "bf16")


def test_inspect_without_gpu_shows_no_estimates_even_when_the_config_names_gpus(tmp_path, capsys):
    (tmp_path / ".colint.toml").write_text('gpus = ["h100-sxm"]\n', encoding="utf-8")
    path = tmp_path / "config.json"
    shutil.copy(LLAMA, path)
    assert "estimates" not in _inspect(capsys, str(path))


def test_a_broken_project_config_is_a_located_error(tmp_path, capsys):
    (tmp_path / ".colint.toml").write_text('tp = "many"\n', encoding="utf-8")
    path = tmp_path / "config.json"
    shutil.copy(LLAMA, path)
    assert main(["inspect", str(path), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert ".colint.toml" in err and "tp" in err
