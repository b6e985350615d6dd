"""[tool.colint] / .colint.toml: discovery, CLI overrides, per-file-ignores, severities, thresholds,
strict validation (exit 2 with a located one-line error) and `colint config`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colint.cli.main import main
from colint.errors import UsageError
from colint.rules.base import Option, Rule, RuleDoc
from colint.engine.config_files import parse_config
from colint.util.globs import glob_matches
from colint.engine.settings import resolve, resolve_rule_options

# 12 KV heads for 32 query heads (CL002 error) and a bare Infinity (CL006 info)
BAD = (
    '{\n  "model_type": "llama",\n  "hidden_size": 2048,\n  "intermediate_size": 5632,\n'
    '  "num_hidden_layers": 4,\n  "num_attention_heads": 32,\n  "num_key_value_heads": 12,\n'
    '  "vocab_size": 32000,\n  "rope_theta": Infinity\n}\n'
)


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def _json(args, monkeypatch, capsys, cwd):
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    rc = main([*args, "--format", "json"])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if out.strip() else None), err


def _codes(report) -> dict[str, list[str]]:
    return {f["path"]: [x["code"] for x in f["findings"]] for f in report["files"]}


def test_pyproject_per_file_ignores_apply_relative_to_the_config(tmp_path, monkeypatch, capsys):
    _tree(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "m"\n\n[tool.colint]\nselect = ["CL0"]\n\n'
            '[tool.colint.per-file-ignores]\n"released/**" = ["CL002"]\n"config.json" = ["CL006"]\n',
            "released/v1/config.json": BAD,
            "draft/config.json": BAD,
            "draft/model.json": BAD,
        },
    )
    rc, report, _ = _json(
        ["check", "released/v1/config.json", "draft/config.json", "draft/model.json"], monkeypatch, capsys, tmp_path
    )
    assert _codes(report) == {
        "released/v1/config.json": [],  # CL002 by the glob, CL006 by the name
        "draft/config.json": ["CL002"],
        "draft/model.json": ["CL002", "CL006"],
    }
    assert rc == 1
    # the globs are relative to the pyproject, not to the working directory
    rc, report, _ = _json(["check", "v1/config.json"], monkeypatch, capsys, tmp_path / "released")
    assert _codes(report) == {"v1/config.json": []}


def test_nearest_config_wins_and_cli_flags_override(tmp_path, monkeypatch, capsys):
    _tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.colint]\nselect = ["CL002"]\n',
            "a/config.json": BAD,
            "b/.colint.toml": 'select = ["CL006"]\nfail-on = "never"\n',
            "b/pyproject.toml": '[tool.colint]\nselect = ["CL005"]\n',  # .colint.toml first in the same directory
            "b/config.json": BAD,
            "c/pyproject.toml": '[project]\nname = "no colint table here"\n',  # skipped: no [tool.colint]
            "c/config.json": BAD,
        },
    )
    rc, report, _ = _json(["check", "a/config.json", "b/config.json", "c/config.json"], monkeypatch, capsys, tmp_path)
    assert _codes(report) == {"a/config.json": ["CL002"], "b/config.json": ["CL006"], "c/config.json": ["CL002"]}
    assert rc == 1  # a/ fails on the CL002 error; b/ says fail-on never
    rc, report, _ = _json(["check", "b/config.json"], monkeypatch, capsys, tmp_path)
    assert rc == 0
    rc, report, _ = _json(
        ["check", "b/config.json", "--select", "CL002", "--fail-on", "error"], monkeypatch, capsys, tmp_path
    )
    assert _codes(report) == {"b/config.json": ["CL002"]} and rc == 1
    rc, report, _ = _json(["check", "a/config.json", "--isolated", "--select", "CL0"], monkeypatch, capsys, tmp_path)
    assert _codes(report) == {"a/config.json": ["CL002", "CL006"]}


def test_ignore_and_extend_select_add_to_the_config(tmp_path, monkeypatch, capsys):
    _tree(tmp_path, {".colint.toml": 'select = ["CL002"]\n', "config.json": BAD})
    _, report, _ = _json(["check", "config.json", "--extend-select", "CL006"], monkeypatch, capsys, tmp_path)
    assert _codes(report) == {"config.json": ["CL002", "CL006"]}
    _, report, _ = _json(
        ["check", "config.json", "--extend-select", "CL006", "--ignore", "CL002"], monkeypatch, capsys, tmp_path
    )
    assert _codes(report) == {"config.json": ["CL006"]}


def test_severity_overrides(tmp_path, monkeypatch, capsys):
    _tree(
        tmp_path,
        {".colint.toml": 'select = ["CL006"]\nfail-on = "error"\n[severity]\nCL006 = "error"\n', "config.json": BAD},
    )
    rc, report, _ = _json(["check", "config.json"], monkeypatch, capsys, tmp_path)
    (f,) = report["files"][0]["findings"]
    assert (f["code"], f["severity"], rc) == ("CL006", "error", 1)
    assert report["summary"]["errors"] == 1


@pytest.mark.parametrize(
    "text,message",
    [
        (
            '[tool.colint]\nselect = ["CL0"]\nhardware = "b200"\n',
            "pyproject.toml:3:1: error: unknown key 'hardware' in [tool.colint]",
        ),
        ('[tool.colint]\nignore = ["CL999"]\n', "pyproject.toml:2:1: error: ignore: unknown rule selector 'CL999'"),
        (
            '[tool.colint]\n[tool.colint.per-file-ignores]\n"old/**" = ["XX1"]\n',
            "pyproject.toml:3:1: error: per-file-ignores 'old/**': unknown rule selector 'XX1'",
        ),
        (
            '[tool.colint]\nscenario = "fast"\n',
            "pyproject.toml:2:1: error: scenario: Input should be 'throughput', 'latency' or 'long-context'",
        ),
        ("[tool.colint]\ntp = 0\n", "pyproject.toml:2:1: error: tp: must be at least 1 or 'auto' (got 0)"),
        ('[tool.colint.severity]\nCL002 = "fatal"\n', "pyproject.toml:2:1: error: severity.CL002:"),
        ("[tool.colint.rules.CL999]\nx = 1\n", "pyproject.toml:1:1: error: rules: unknown rule 'CL999'"),
        (
            "[tool.colint.rules.CL002]\nmax_heads = 4\n",
            "pyproject.toml:2:1: error: rules.CL002: unknown threshold 'max_heads' for CL002 kv-heads-not-divisor",
        ),
        ("[tool.colint\nselect = 1\n", "pyproject.toml:1:"),
    ],
)
def test_bad_configuration_is_a_located_error(text, message, tmp_path, monkeypatch, capsys):
    """A broken settings file ends the files it governs, each with the settings file's located error; files
    elsewhere (here: one with no settings file above it) are still checked (issue 19: one bad file never
    aborts the run)."""
    _tree(tmp_path, {"proj/pyproject.toml": text, "proj/config.json": BAD, "other/config.json": BAD})
    monkeypatch.chdir(tmp_path)
    rc = main(["check", "proj/config.json", "other/config.json"])
    out, err = capsys.readouterr()
    assert rc == 2 and "Traceback" not in out + err
    lines = out.splitlines()
    prefix = f"proj/config.json: error: not checked: its settings file {tmp_path / 'proj' / 'pyproject.toml'}:"
    assert lines[0].startswith(prefix), lines[0]
    where, _, rest = lines[0][len(prefix) - len("pyproject.toml:") :].partition(" is invalid: ")
    assert f"{where}: error: {rest}".startswith(message), lines[0]
    assert any(x.startswith("other/config.json:") and " CL" in x for x in lines[1:])  # still checked


def test_unknown_cli_selector_is_exit_2(tmp_path, monkeypatch, capsys):
    _tree(tmp_path, {"config.json": BAD})
    monkeypatch.chdir(tmp_path)
    assert main(["check", "config.json", "--isolated", "--select", "CL0", "--extend-select", "nonsense"]) == 2
    assert "unknown rule selector 'nonsense'" in capsys.readouterr().err


def _fake_rules():
    doc = RuleDoc(what="w", why="y", example="e", fix="f")
    opts = (
        Option(name="min_loss_pct", type=float, default=0.25, doc="pct"),
        Option(name="tile", type=int, default=128, doc="tile"),
        Option(name="strict", type=bool, default=False, doc="flag"),
    )
    r = Rule(
        code="CL901",
        name="fake-rule",
        family="test",
        severity="warning",
        summary="s",
        doc=doc,
        options={o.name: o for o in opts},
        check=lambda ctx: (),
    )
    return {"CL901": r}


def test_rule_thresholds_are_validated_against_the_rule(monkeypatch):
    monkeypatch.setattr("colint.rules.all_rules", _fake_rules)  # what find_rule reads
    assert resolve_rule_options({"CL901": {"min_loss_pct": 1, "tile": 256}, "fake-rule": {"strict": True}}) == {
        "CL901": {"min_loss_pct": 1.0, "tile": 256, "strict": True}
    }
    with pytest.raises(UsageError, match="unknown threshold 'tiles'.*known: min_loss_pct, strict, tile"):
        resolve_rule_options({"CL901": {"tiles": 256}})
    with pytest.raises(UsageError, match="rules.CL901.tile: should be int like the default 128, got 1.5"):
        resolve_rule_options({"CL901": {"tile": 1.5}})
    with pytest.raises(UsageError, match="should be bool"):
        resolve_rule_options({"CL901": {"strict": "yes"}})


def test_rule_thresholds_reach_the_rules(tmp_path, monkeypatch, capsys):
    from colint.rules import all_rules

    with_options = [r for r in all_rules().values() if r.options]
    assert with_options, "no registered rule declares a threshold: this test would check nothing"
    r = with_options[0]
    name, default = next((o.name, o.default) for o in r.options.values())
    _tree(tmp_path, {".colint.toml": f"[rules.{r.code}]\n{name} = {json.dumps(default)}\n"})
    cfg = parse_config(str(tmp_path / ".colint.toml"))
    settings = resolve(cfg, {})
    assert settings.rule_options == {r.code: {name: default}}
    assert settings.sources["rules"] == f"{tmp_path / '.colint.toml'}"


def test_colint_config_shows_values_and_where_they_come_from(tmp_path, monkeypatch, capsys):
    _tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.colint]\ngpus = ["h100-sxm", "b200"]\ntp = 8\nignore = ["CL009"]\n'
            'baseline = "colint-baseline.json"\n',
            "models/x/config.json": BAD,
        },
    )
    monkeypatch.chdir(tmp_path)
    assert (
        main(["config", "models/x/config.json", "--scenario", "latency", "--ignore", "CL006", "--format", "json"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    label = f"{tmp_path / 'pyproject.toml'} [tool.colint]"
    s = data["settings"]
    assert data["config"] == label
    assert s["gpus"] == {"value": ["h100-sxm", "b200"], "source": label}
    assert s["tp"] == {"value": 8, "source": label}
    assert s["scenario"] == {"value": "latency", "source": "command line"}
    assert s["ignore"] == {"value": ["CL009", "CL006"], "source": "config + command line"}
    assert s["fail-on"] == {"value": "warning", "source": "default"}
    assert s["baseline"]["value"] == str(tmp_path / "colint-baseline.json")
    assert main(["config", "models/x/config.json"]) == 0
    text = capsys.readouterr().out
    assert f"# config file: {label}" in text
    assert 'scenario         = "throughput"  # default' in text
    assert f"tp               = 8  # {label}" in text


def test_gpu_key_takes_a_string_or_a_list(tmp_path):
    _tree(tmp_path, {".colint.toml": 'gpu = "h200"\n'})
    assert resolve(parse_config(str(tmp_path / ".colint.toml")), {}).gpus == ("h200",)
    _tree(tmp_path, {".colint.toml": 'gpu = ["h200", "b200"]\n'})
    assert resolve(parse_config(str(tmp_path / ".colint.toml")), {}).gpus == ("h200", "b200")
    _tree(tmp_path, {".colint.toml": 'gpu = "h200"\ngpus = ["b200"]\n'})
    with pytest.raises(UsageError, match="either gpu or gpus"):
        parse_config(str(tmp_path / ".colint.toml"))


@pytest.mark.parametrize(
    "glob,rel,hit",
    [
        ("released/**", "released/v1/config.json", True),
        ("released/**", "draft/config.json", False),
        ("**/config.json", "config.json", True),
        ("**/config.json", "a/b/config.json", True),
        ("a/*/config.json", "a/b/c/config.json", False),
        ("a/*/config.json", "a/b/config.json", True),
        ("./a/?.json", "a/x.json", True),
        ("config.json", "deep/down/config.json", True),  # no '/': matches the file name anywhere
        ("*.colint.yaml", "m/x.colint.yaml", True),
    ],
)
def test_glob_matching(glob, rel, hit, tmp_path):
    assert glob_matches(glob, str(tmp_path / rel), str(tmp_path)) is hit
    assert glob_matches("a/**", str(tmp_path.parent / "a" / "x.json"), str(tmp_path)) is False  # outside the base


def test_readme_configuration_example_is_valid(tmp_path):
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Configuration.*?```toml\n(.*?)```", readme, re.S).group(1)
    (tmp_path / "pyproject.toml").write_text(block, encoding="utf-8")
    eff = resolve(parse_config(str(tmp_path / "pyproject.toml")), {})
    assert eff.gpus == ("b200", "h100-sxm") and eff.tp == 8
    assert eff.severity_overrides == {"CL202": "warning"}
    assert eff.rule_options == {"CL201": {"warning_loss_pct": 1.0}}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('[tool.colint]\nselect = ["CL0"]\n', {"select": ("CL0",)}),
        ('[ tool . "colint" . severity ]\nCL002 = "info"\n', {"severity": {"CL002": "info"}}),
        ('tool.colint.select = ["CL0"]\n', {"select": ("CL0",)}),
        ('[project]\ndependencies = ["tomli"]  # read for [tool.colint] on 3.10\n', None),
        ("# [tool.colint] is documented in the README\n[project]\nname = 'm'\n", None),
        ('[project]\nname = "colint-plugin"\n', None),
    ],
)
def test_a_pyproject_is_parsed_only_when_it_names_tool_colint_outside_a_comment(text, found, tmp_path):
    from colint.engine.config_files import _config_in_dir, find_config_path

    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    _config_in_dir.cache_clear()
    assert (find_config_path(str(tmp_path)) == str(tmp_path / "pyproject.toml")) is (found is not None)
    if found is not None:
        assert parse_config(str(tmp_path / "pyproject.toml")).values == found
