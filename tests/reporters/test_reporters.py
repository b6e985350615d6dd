"""Output formats: golden files for every format, the SARIF schema, GitHub escaping, CLI output options.

Golden files live in tests/golden_output/ (input/ holds the fixed input); regenerate them with
``COLINT_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/reporters/test_reporters.py`` and review the diff.
The version string is normalized to ``<VERSION>``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest

from colint import __version__
from colint.cli.main import main
from colint.reporters.github import command, escape_data, escape_property

TESTS = Path(__file__).resolve().parents[1]
GOLDEN = TESTS / "golden_output"
SCHEMA = TESTS / "schemas" / "sarif-schema-2.1.0.json"
INPUTS = ["input/config.json", "input/model.colint.yaml", "input/broken.json"]
ARGS = ["check", *INPUTS, "--select", "CL0", "--isolated"]
EXT = {"text": "txt", "json": "json", "github": "txt", "sarif": "sarif", "gitlab": "json"}


def _run(args, monkeypatch, capsys, cwd=GOLDEN, env=None):
    monkeypatch.chdir(cwd)
    for k in ("GITHUB_ACTIONS", "NO_COLOR"):
        monkeypatch.delenv(k, raising=False)
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def _normalize_sarif(text: str) -> str:
    """Keep only the rules that results reference, and drop ruleIndex (checked on its own below), so
    that a rule added or re-documented elsewhere does not change this golden file."""
    log = json.loads(text)
    run = log["runs"][0]
    used = {r["ruleId"] for r in run["results"]}
    run["tool"]["driver"]["rules"] = [r for r in run["tool"]["driver"]["rules"] if r["id"] in used]
    for r in run["results"]:
        r.pop("ruleIndex", None)
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _normalize(text: str, fmt: str = "") -> str:
    if fmt == "sarif":
        text = _normalize_sarif(text)
    return text.replace(f'"version": "{__version__}"', '"version": "<VERSION>"').replace(
        f'"semanticVersion": "{__version__}"', '"semanticVersion": "<VERSION>"'
    )


@pytest.mark.parametrize("fmt", list(EXT))
def test_golden_output(fmt, monkeypatch, capsys):
    rc, out, err = _run([*ARGS, "--format", fmt], monkeypatch, capsys)
    assert rc == 2  # broken.json could not be checked
    assert "\x1b[" not in out
    if fmt != "text":
        assert err == ""  # machine formats: everything on stdout
    expected_path = GOLDEN / f"expected.{fmt}.{EXT[fmt]}"
    got = _normalize(out, fmt)
    if os.environ.get("COLINT_UPDATE_GOLDEN"):
        expected_path.write_text(got, encoding="utf-8")
    assert got == expected_path.read_text(encoding="utf-8")


def test_github_format_is_chosen_on_actions(monkeypatch, capsys):
    rc, out, _ = _run(ARGS, monkeypatch, capsys, env={"GITHUB_ACTIONS": "true"})
    assert out == (GOLDEN / "expected.github.txt").read_text(encoding="utf-8")
    rc, out, _ = _run([*ARGS, "--format", "text"], monkeypatch, capsys, env={"GITHUB_ACTIONS": "true"})
    assert out == (GOLDEN / "expected.text.txt").read_text(encoding="utf-8")


def _sarif(monkeypatch, capsys, args=ARGS, cwd=GOLDEN):
    rc, out, _ = _run([*args, "--format", "sarif"], monkeypatch, capsys, cwd=cwd)
    return json.loads(out)


def test_sarif_validates_against_the_official_schema(monkeypatch, capsys):
    log = _sarif(monkeypatch, capsys)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)


def test_sarif_rules_results_and_fixes(monkeypatch, capsys):
    from colint.rules import all_rules

    log = _sarif(monkeypatch, capsys)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(all_rules())  # the full registry, not only the rules that fired
    for r in rules:
        assert r["shortDescription"]["text"] and r["fullDescription"]["text"] and r["help"]["text"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    by_rule = {}
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        by_rule.setdefault(res["ruleId"], []).append(res)
    assert sorted(by_rule) == ["CL000", "CL002", "CL005", "CL006", "CL007", "CL009"]
    cl002 = by_rule["CL002"][0]
    loc = cl002["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "input/config.json", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 9, "startColumn": 3, "endLine": 9, "endColumn": 28}  # key to end of value
    # each fix replaces exactly the old value's text in the file
    text = (GOLDEN / "input" / "config.json").read_text(encoding="utf-8").splitlines()
    news = []
    for fx in cl002["fixes"]:
        (change,) = fx["artifactChanges"]
        (rep,) = change["replacements"]
        reg = rep["deletedRegion"]
        assert reg["startLine"] == reg["endLine"] == 9
        assert text[8][reg["startColumn"] - 1 : reg["endColumn"] - 1] == "12"
        news.append(rep["insertedContent"]["text"])
    assert news == ["8", "16"]
    assert run["invocations"][0]["executionSuccessful"] is False
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "input/broken.json"
    assert "invalid JSON" in note["message"]["text"]


def test_sarif_uri_outside_the_working_directory_stays_relative(monkeypatch, capsys, tmp_path):
    """No absolute file:/// URI (it would publish the runner's directory layout): a ../ path from %SRCROOT%."""
    log = _sarif(
        monkeypatch,
        capsys,
        args=["check", str(GOLDEN / "input" / "config.json"), "--select", "CL0", "--isolated"],
        cwd=tmp_path,
    )
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    rel = os.path.relpath(GOLDEN / "input" / "config.json", tmp_path)
    assert rel.startswith("../") and uri == {"uri": rel, "uriBaseId": "%SRCROOT%"}


def test_gitlab_fingerprints_are_unique_and_stable_across_line_moves(monkeypatch, capsys, tmp_path):
    src = (GOLDEN / "input" / "config.json").read_text(encoding="utf-8")
    (tmp_path / "config.json").write_text(src, encoding="utf-8")
    _, out, _ = _run(
        ["check", "config.json", "--select", "CL0", "--isolated", "--format", "gitlab"],
        monkeypatch,
        capsys,
        cwd=tmp_path,
    )
    first = json.loads(out)
    assert len({e["fingerprint"] for e in first}) == len(first) == 3
    assert [e["severity"] for e in first] == ["critical", "minor", "info"]
    (tmp_path / "config.json").write_text(src.replace("{\n", '{\n  "torch_dtype": "bfloat16",\n', 1), encoding="utf-8")
    _, out, _ = _run(
        ["check", "config.json", "--select", "CL0", "--isolated", "--format", "gitlab"],
        monkeypatch,
        capsys,
        cwd=tmp_path,
    )
    moved = json.loads(out)
    assert [e["location"]["lines"]["begin"] for e in moved] == [e["location"]["lines"]["begin"] + 1 for e in first]
    assert [e["fingerprint"] for e in moved] == [e["fingerprint"] for e in first]


# ---------------------------------------------------------------- GitHub workflow-command escaping


def test_toolkit_escaping():
    assert escape_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e"
    assert escape_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce"
    assert escape_data("%0A") == "%250A"  # '%' first, so an escape sequence in the text survives


def test_command_skips_empty_properties_and_escapes_each():
    assert (
        command("warning", "100% of 2:1\nnext", file="we,ird:dir/a%b.json", line=3, col=None, title="t")
        == "::warning file=we%2Cird%3Adir/a%25b.json,line=3,title=t::100%25 of 2:1%0Anext"
    )


def test_github_annotation_for_a_path_with_comma_and_colon(monkeypatch, capsys, tmp_path):
    d = tmp_path / "we,ird:dir"
    d.mkdir()
    (d / "config.json").write_text((GOLDEN / "input" / "config.json").read_text(encoding="utf-8"), encoding="utf-8")
    _, out, _ = _run(
        ["check", "we,ird:dir/config.json", "--select", "CL002", "--isolated", "--format", "github"],
        monkeypatch,
        capsys,
        cwd=tmp_path,
    )
    lines = out.splitlines()
    assert lines[0] == "::group::colint: we,ird:dir/config.json"
    assert lines[1].startswith(
        "::error file=we%2Cird%3Adir/config.json,line=9,col=3,"
        "title=colint CL002 (kv-heads-not-divisor)::CL002 12 KV heads"
    )


# ---------------------------------------------------------------- --output, --statistics, --exit-zero


def test_output_file_gets_the_report_and_stdout_stays_empty(monkeypatch, capsys, tmp_path):
    target = tmp_path / "report.sarif"
    rc, out, err = _run([*ARGS, "--format", "sarif", "--output", str(target)], monkeypatch, capsys)
    assert rc == 2 and out == "" and err == ""
    assert _normalize(target.read_text(encoding="utf-8"), "sarif") == (GOLDEN / "expected.sarif.sarif").read_text(
        encoding="utf-8"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["report.sarif"]  # no temporary file left behind


def test_statistics(monkeypatch, capsys):
    rc, out, _ = _run(
        ["check", INPUTS[0], INPUTS[1], "--select", "CL0", "--isolated", "--statistics"], monkeypatch, capsys
    )
    assert rc == 1
    assert out.splitlines() == [
        "    1  CL000  warning  unused-suppression",
        "    1  CL002  error    kv-heads-not-divisor",
        "    1  CL005  warning  duplicate-key",
        "    1  CL006  info     non-standard-literal",
        "    1  CL007  warning  unknown-key",  # model.colint.yaml's rope_scalling
        "    1  CL009  info     window-covers-context",
    ]
    rc, out, _ = _run(
        ["check", INPUTS[0], "--select", "CL0", "--isolated", "--statistics", "--format", "json"], monkeypatch, capsys
    )
    assert json.loads(out)[0] == {"code": "CL002", "name": "kv-heads-not-divisor", "severity": "error", "count": 1}
    rc, _, err = _run([*ARGS, "--statistics", "--format", "sarif"], monkeypatch, capsys)
    assert rc == 2 and "--statistics" in err


def test_exit_zero_keeps_exit_2_for_errors(monkeypatch, capsys):
    assert _run(["check", INPUTS[0], "--select", "CL0", "--isolated", "--exit-zero"], monkeypatch, capsys)[0] == 0
    assert _run(["check", INPUTS[0], "--select", "CL0", "--isolated"], monkeypatch, capsys)[0] == 1
    assert _run([*ARGS, "--exit-zero"], monkeypatch, capsys)[0] == 2


def test_no_colour_in_machine_formats_even_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    for fmt in ("json", "github", "sarif", "gitlab"):
        _, out, _ = _run([*ARGS, "--format", fmt], monkeypatch, capsys)
        assert not re.search(r"\x1b\[", out), fmt
