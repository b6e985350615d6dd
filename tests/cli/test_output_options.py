"""ruff's output conventions: --output-format full|concise (--format alias), -q, --show-fixes, '-' with
--stdin-filename, NO_COLOR / FORCE_COLOR / --color, the estimate context once per run, the Markdown step
summary, SARIF fingerprints, and --write-baseline with [tool.colint] baseline= naming the new file."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from colint.cli.main import main
from colint.reporters.console import use_colour

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LLAMA2 = str(EXAMPLES / "llama-2-7b.json")
# This Llama-2-7B file holds 2,048 positions: the scenario's 8,192-token context is clipped to it (as each finding's details say)
CONTEXT = (
    "estimate: b200, throughput scenario: bf16, decode 256 seq, prefill 8192 tok, context 2048 (clipped from "
    "8192: the model's max positions), tp=8 "
    "(colint's GEMM time model; every est. figure is an estimate, not a measurement)"
)


def _run(args, capsys, monkeypatch, env=None, stdin: bytes | None = None):
    for k in ("GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "COLINT_OUTPUT_FORMAT"):
        monkeypatch.delenv(k, raising=False)
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_concise_is_one_line_per_finding(capsys, monkeypatch):
    rc, out, err = _run(["check", LLAMA2, "--tp", "8", "--isolated", "--output-format", "concise"], capsys, monkeypatch)
    # CL201 here costs est. +0.5% of a prefill step, below the 1% warning threshold: info, exit 0
    assert rc == 0 and err == ""
    assert out.splitlines() == [
        f"{LLAMA2}:10:5: CL201 info intermediate_size 11008 is 1376 per shard at tp=8, not a multiple of 128 [b200]",
        f"{LLAMA2}:25:5: CL202 info vocab_size 32000 is 4000 per shard at tp=8, not a multiple of 128 [b200]",
        "2 findings: 0 errors, 0 warnings, 2 infos",
        CONTEXT,
    ]
    rc, shown, _ = _run(
        ["check", LLAMA2, "--tp", "8", "--isolated", "--format", "concise", "--show-fixes"], capsys, monkeypatch
    )
    assert shown.splitlines()[1:4] == [
        "    fix (unsafe): intermediate_size 11008 → 11264 (+2.3% FFN params)",
        "    fix (unsafe): intermediate_size 11008 → 10240 (-7.0% FFN params)",
        f"{LLAMA2}:25:5: CL202 info vocab_size 32000 is 4000 per shard at tp=8, not a multiple of 128 [b200]",
    ]
    rc, env_out, _ = _run(
        ["check", LLAMA2, "--tp", "8", "--isolated"], capsys, monkeypatch, env={"COLINT_OUTPUT_FORMAT": "concise"}
    )
    assert env_out == out


def test_full_prints_the_estimate_context_once(capsys, monkeypatch):
    rc, out, _ = _run(
        ["check", LLAMA2, str(EXAMPLES / "llama-3.1-8b.json"), "--tp", "8", "--isolated"], capsys, monkeypatch
    )
    assert rc == 0  # infos only
    assert "(estimate: b200" not in out  # not repeated inside the findings' details
    # one line per distinct context: this Llama-2 file clips the context to its 2,048 positions, Llama-3.1 does not
    assert out.count("throughput scenario") == 2 and out.splitlines()[-2] == CONTEXT
    assert out.splitlines()[-1] == CONTEXT.split(" (colint")[0].replace(
        " 2048 (clipped from 8192: the model's max positions)", " 8192"
    )
    assert "    est. +0.1% decode step, +0.5% prefill step" in out.splitlines()
    rc, text_out, _ = _run(
        ["check", LLAMA2, str(EXAMPLES / "llama-3.1-8b.json"), "--tp", "8", "--isolated", "--format", "text"],
        capsys,
        monkeypatch,
    )
    assert text_out == out  # text is full's old name


def test_quiet_prints_findings_only(capsys, monkeypatch):
    rc, out, _ = _run(
        ["check", LLAMA2, "--tp", "8", "--isolated", "-q", "--output-format", "concise"], capsys, monkeypatch
    )
    assert rc == 0 and len(out.splitlines()) == 2 and "findings:" not in out
    rc, out, _ = _run(
        ["check", str(EXAMPLES / "llama-3.1-8b.json"), "--isolated", "-q", "--select", "CL2"], capsys, monkeypatch
    )
    assert (rc, out) == (0, "")


@pytest.mark.parametrize(
    "choice, isatty, env, expected",
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"NO_COLOR": ""}, True),  # no-color.org: set and non-empty
        ("auto", False, {"FORCE_COLOR": "1"}, True),
        ("auto", True, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_precedence(choice, isatty, env, expected):
    assert use_colour(choice, isatty, env) is expected


def test_colour_flags_reach_the_output(capsys, monkeypatch):
    args = ["check", LLAMA2, "--tp", "8", "--isolated", "--output-format", "concise"]
    assert "\x1b[" in _run([*args, "--color", "always"], capsys, monkeypatch)[1]
    assert "\x1b[" in _run(args, capsys, monkeypatch, env={"FORCE_COLOR": "1"})[1]
    assert "\x1b[" not in _run([*args, "--color", "never"], capsys, monkeypatch, env={"FORCE_COLOR": "1"})[1]


def test_stdin_with_a_filename(capsys, monkeypatch, tmp_path):
    raw = Path(LLAMA2).read_bytes()
    (tmp_path / "pyproject.toml").write_text("[tool.colint]\ntp = 8\n")
    name = str(tmp_path / "models" / "config.json")  # need not exist: it names the input and finds the settings
    rc, out, _ = _run(
        ["check", "-", "--stdin-filename", name, "--output-format", "concise"], capsys, monkeypatch, stdin=raw
    )
    assert rc == 0  # the tp=8 of the settings found next to the name: CL201 at tp=8 (an info)
    assert out.splitlines()[0] == (
        f"{name}:10:5: CL201 info intermediate_size 11008 is 1376 per shard at tp=8, not a multiple of 128 [b200]"
    )
    rc, out, _ = _run(
        ["check", "-", "--isolated", "--tp", "8", "-q", "--output-format", "concise"], capsys, monkeypatch, stdin=raw
    )
    assert out.splitlines()[0].startswith("-:10:5: CL201 info")  # sniffed as JSON: positions are JSON's
    rc, out, err = _run(["check", LLAMA2, "--stdin-filename", "x.json"], capsys, monkeypatch)
    assert rc == 2 and "pass '-' as the PATH" in err
    rc, out, err = _run(
        ["check", "-", "--isolated", "--stdin-filename", "big.yaml"], capsys, monkeypatch, stdin=b"a: 1\n" * 200_000
    )
    assert rc == 2 and out.startswith("big.yaml:1:1: error: file is 1,000,000 bytes, over the 524,288-byte limit"), out


def test_markdown_step_summary(capsys, monkeypatch):
    monkeypatch.chdir(EXAMPLES)
    rc, out, _ = _run(
        ["check", "llama-2-7b.json", "--tp", "8", "--isolated", "--output-format", "markdown"], capsys, monkeypatch
    )
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "### colint: 2 findings (0 errors, 0 warnings, 2 infos)"
    assert lines[2:4] == ["| | code | location | finding |", "|---|---|---|---|"]
    from colint import __version__

    assert lines[4] == (
        f"| ℹ️ info | [CL201](https://github.com/colint-llm/colint/blob/v{__version__}/docs/"
        "rules.md#cl201) | `llama-2-7b.json:10:5` `intermediate_size` | intermediate\\_size 11008 is "
        "1376 per shard at tp=8, not a multiple of 128 \\[b200\\] |"
    )  # markup escaped: text, rendered


def test_markdown_cells_cannot_break_the_table():
    from colint.reporters.markdown import cell

    assert cell("a | b\nc <img src=x>") == "a \\| b c \\<img src=x\\>"


def _sarif_results(capsys, monkeypatch, path):
    # --dtype bf16: the checkpoint's own fp8 (its quantization_config) drops the MLA latent CL201 at +0.00%
    rc, out, _ = _run(
        ["check", path, "--tp", "8", "--dtype", "bf16", "--isolated", "--format", "sarif"], capsys, monkeypatch
    )
    return json.loads(out)["runs"][0]["results"]


def test_sarif_fingerprints_survive_line_moves_and_tell_findings_apart(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    src = (EXAMPLES / "deepseek-v3.json").read_text(encoding="utf-8")
    (tmp_path / "config.json").write_text(src, encoding="utf-8")
    before = _sarif_results(capsys, monkeypatch, "config.json")
    prints = [r["partialFingerprints"]["colint/v1"] for r in before]
    assert len(prints) == len(set(prints)) >= 5  # CL701 and CL201 both sit on kv_lora_rank: two results
    assert all(len(p) == 32 for p in prints)
    moved = src.replace("{\n", "{\n\n\n", 1)  # every key two lines further down
    (tmp_path / "config.json").write_text(moved, encoding="utf-8")
    after = _sarif_results(capsys, monkeypatch, "config.json")
    assert [r["partialFingerprints"] for r in after] == [r["partialFingerprints"] for r in before]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after] == [
        r["locations"][0]["physicalLocation"]["region"]["startLine"] + 2 for r in before
    ]


def test_sarif_help_uri_points_at_an_anchor_of_docs_rules(capsys, monkeypatch):
    import re

    rc, out, _ = _run(["check", LLAMA2, "--isolated", "--format", "sarif"], capsys, monkeypatch)
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    doc = (EXAMPLES.parent / "docs" / "rules.md").read_text(encoding="utf-8")
    anchors = {h.lower() for h in re.findall(r"^## (CL\d{3})$", doc, re.M)}
    for r in rules:
        assert r["helpUri"].endswith(f"/docs/rules.md#{r['id'].lower()}")
        assert r["id"].lower() in anchors


def test_write_baseline_creates_the_file_the_config_names(tmp_path, capsys, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.colint]\ntp = 8\nbaseline = "colint-baseline.json"\n')
    (tmp_path / "config.json").write_text(Path(LLAMA2).read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    rc, out, err = _run(["check", "config.json", "--write-baseline", "colint-baseline.json"], capsys, monkeypatch)
    assert rc == 0, err
    assert err == "colint: recorded 2 findings in colint-baseline.json\n"
    rc, out, err = _run(["check", "config.json", "--output-format", "concise"], capsys, monkeypatch)
    assert rc == 0 and out == "0 findings: 0 errors, 0 warnings, 0 infos\n"
