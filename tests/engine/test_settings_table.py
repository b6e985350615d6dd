"""One frozen Settings: the typed table that validates [tool.colint] without pydantic, one default per
field, the sources map, and every command building its settings the same way (issue 16)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from colint.cli.main import main
from colint.engine.config_files import parse_config, settings_for
from colint.errors import UsageError
from colint.engine.settings import KEYS, Settings, resolve

LLAMA = "tests/corpus/hf/llama3__Meta-Llama-3.1-8B.json"


def _parse(tmp_path: Path, text: str):
    (tmp_path / ".colint.toml").write_text(text + "\n", encoding="utf-8")
    return parse_config(str(tmp_path / ".colint.toml"))


@pytest.mark.parametrize(
    "text,message",
    [
        ('gpu = ["b200", 2]', "2:1: error: gpu.1: Input should be a valid string (got 2)"),
        ("gpu = 1", "2:1: error: gpu: Input should be a valid string or a valid list (got 1)"),
        ('tp = "many"', "2:1: error: tp: Input should be a valid integer or 'auto' (got 'many')"),
        ("tp = true", "2:1: error: tp: Input should be a valid integer or 'auto' (got True)"),  # not 1
        ("ep = 0", "2:1: error: ep: Input should be greater than or equal to 1 (got 0)"),
        ("ep = 1.5", "2:1: error: ep: Input should be a valid integer, got a number with a fractional part (got 1.5)"),
        (
            f"context = {10**40}",
            "2:1: error: context: Input should be less than or equal to 1099511627776 (got a huge number)",
        ),
        ('select = "CL0"', "2:1: error: select: Input should be a valid list (got 'CL0')"),
        (
            '[per-file-ignores]\n"a/**" = [1]',
            "3:1: error: per-file-ignores.a/**.0: Input should be a valid string (got 1)",
        ),
        (
            '[severity]\nCL002 = "fatal"',
            "3:1: error: severity.CL002: Input should be 'error', 'warning' or 'info' (got 'fatal')",
        ),
        ("[rules]\nCL201 = 1", "3:1: error: rules.CL201: Input should be a valid dictionary (got 1)"),
        (
            'kv-dtype = "fp7"',
            "2:1: error: kv-dtype: unknown KV-cache format; known: bf16, fp16, fp32, fp8, int8, nvfp4",
        ),
        ('close-advice = "no"', "2:1: error: close-advice: Input should be a valid boolean (got 'no')"),
        ("pp = 0\nhardware = 1", "2:1: error: pp: Input should be greater than or equal to 1 (got 0)"),  # fields first
        ("hardware = 1", "2:1: error: unknown key 'hardware' in the config (known: baseline, close-advice,"),
    ],
)
def test_the_typed_table_says_what_is_wrong_where(text, message, tmp_path):
    with pytest.raises(UsageError) as exc:
        _parse(tmp_path, "# a project's settings\n" + text)
    assert exc.value.located().startswith(f"{tmp_path / '.colint.toml'}:{message}"), exc.value.located()


def test_the_typed_table_gives_values_in_the_fields_shapes(tmp_path):
    cfg = _parse(
        tmp_path,
        'gpu = "h200"\ntp = "auto"\nep = 8.0\nfail_on = "info"\nclose-advice = false\nextend-select = ["CL2"]\n'
        '[per-file-ignores]\n"a/**" = ["CL201"]\n[rules.CL201]\nwarning_loss_pct = 1',
    )
    assert cfg.values == {
        "gpus": ("h200",),
        "tp": "auto",
        "ep": 8,
        "extend_select": ("CL2",),
        "per_file_ignores": {"a/**": ("CL201",)},
        "rules": {"CL201": {"warning_loss_pct": 1}},
        "fail_on": "info",
        "close_advice": False,
    }
    s = resolve(cfg, {"ignore": ["CL009"], "tp": 4})
    assert (s.gpus, s.tp, s.ep, s.close_advice, s.ignore) == (("h200",), 4, 8, False, ("CL009",))
    assert s.rule_options == {"CL201": {"warning_loss_pct": 1.0}}
    assert s.sources["tp"] == "command line" and s.sources["gpus"] == str(tmp_path / ".colint.toml")
    assert s.sources["kvp"] == "default"


def test_settings_are_frozen_with_one_default_each():
    s = Settings(select=["CL0"])  # a caller's list is kept as a tuple
    assert s.select == ("CL0",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.tp = 8  # type: ignore[misc]
    assert resolve(None, {}) == Settings()  # the defaults are the fields' own, nowhere else
    assert Settings().with_keys({"context": 4096, "tp": 8}) == Settings(context_tokens=4096, tp=8)
    assert list(Settings().as_dict()) == list(KEYS.values())


def test_colint_config_lists_every_key_with_its_source(tmp_path, monkeypatch, capsys):
    (tmp_path / ".colint.toml").write_text("close-advice = false\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["config", ".", "--format", "json", "--tp", "8"]) == 0
    rows = json.loads(capsys.readouterr().out)["settings"]
    assert list(rows) == list(KEYS.values())
    assert rows["close-advice"] == {"value": False, "source": str(tmp_path / ".colint.toml")}
    assert rows["tp"] == {"value": 8, "source": "command line"}
    assert rows["context"] == {"value": None, "source": "default"}


def test_close_advice_is_a_setting_and_a_flag(tmp_path, monkeypatch, capsys):
    import colint.engine.closure  # imported by the check only where a finding has a fix to re-check

    calls = []
    real = colint.engine.closure.close_advice
    monkeypatch.setattr(colint.engine.closure, "close_advice", lambda *a, **k: calls.append(1) or real(*a, **k))
    path = shutil.copy(LLAMA, tmp_path / "config.json")
    args = ["check", str(path), "--tp", "8", "--format", "json"]
    main(args)
    assert calls == [1]
    main([*args, "--no-close-advice"])
    assert calls == [1]
    project = tmp_path / "project"  # another directory: settings files are looked up once per directory and run
    project.mkdir()
    (project / ".colint.toml").write_text("close-advice = false\n", encoding="utf-8")
    args[1] = str(shutil.copy(LLAMA, project / "config.json"))
    main(args)
    assert calls == [1]
    main([*args, "--close-advice"])  # the flag wins over the file
    assert calls == [1, 1]
    capsys.readouterr()
    from colint.api import check

    check(str(path), tp=8, close_advice=False)  # the Python API's keyword is the same setting
    assert calls == [1, 1]
    check(str(path), tp=8)
    assert calls == [1, 1, 1]


def test_every_command_reads_the_project_settings_the_same_way(tmp_path, capsys):
    """check, inspect, suggest, report and pareto resolve through config_files.settings_for: a broken
    [tool.colint] is the same located error in each."""
    path = shutil.copy(LLAMA, tmp_path / "config.json")
    (tmp_path / "pyproject.toml").write_text("[tool.colint]\nkvp = 0\n", encoding="utf-8")
    expected = f"{tmp_path / 'pyproject.toml'}:2:1: error: kvp: Input should be greater than or equal to 1 (got 0)"
    for argv in (
        ["inspect", str(path)],
        ["suggest", str(path)],
        ["pareto", str(path)],
        ["config", str(path)],
        ["report", str(path), "-o", str(tmp_path / "r.html")],
    ):
        if argv[0] == "report" and not _has("matplotlib"):
            continue
        assert main(argv) == 2, argv
        assert capsys.readouterr().err.strip() == expected, argv
    assert main(["check", str(path)]) == 2
    assert expected.split(": error: ")[1] in capsys.readouterr().out


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_pareto_takes_the_kv_dtype_of_the_project(tmp_path, capsys):
    path = shutil.copy(LLAMA, tmp_path / "config.json")
    (tmp_path / ".colint.toml").write_text('kv-dtype = "fp8"\n', encoding="utf-8")

    def label(*args: str) -> str:
        assert main(["pareto", str(path), "--format", "json", *args]) == 0
        return json.loads(capsys.readouterr().out)["designs"][0]["gpus"][0]["label"]

    assert "KV cache fp8" in label()
    assert label() == label("--isolated", "--kv-cache", "fp8") != label("--isolated")


def test_api_and_cli_resolve_to_the_same_settings(tmp_path):
    from colint.api import _options

    (tmp_path / "pyproject.toml").write_text('[tool.colint]\ntp = 8\nkv-dtype = "fp8"\n', encoding="utf-8")
    api = _options("h100-sxm", {"context": 4096}, str(tmp_path), True)
    cli = settings_for(str(tmp_path), {"gpus": ["h100-sxm"], "context_tokens": 4096})
    assert api == cli and (api.tp, api.kv_dtype, api.context_tokens) == (8, "fp8", 4096)


_NO_PYDANTIC = """
import json, sys
from colint.cli.main import main
codes = [main(["check", "--format", "json", *sys.argv[1:]]), main(["config", sys.argv[1]])]
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core"))
print(json.dumps({"codes": codes, "pydantic": loaded}))
"""


def test_a_project_with_a_config_file_never_imports_pydantic(tmp_path):
    path = shutil.copy("tests/corpus/hf/gpt2__gpt2-medium-early-revision.json", tmp_path / "config.json")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.colint]\ngpu = ["h100-sxm", "b200"]\ntp = 8\nextend-select = ["CL2"]\nclose-advice = true\n'
        'kv-dtype = "fp8"\nout-dtype = "bf16"\n[tool.colint.per-file-ignores]\n"other/**" = ["CL0"]\n'
        '[tool.colint.severity]\nCL201 = "error"\n[tool.colint.rules.CL201]\nwarning_loss_pct = 1.0\n',
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "COLINT_CHECK_RECORDS"}
    proc = subprocess.run(
        [sys.executable, "-c", _NO_PYDANTIC, str(path)], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"codes": [1, 0], "pydantic": []}
