"""Output escaping of hostile keys (issue 19): no control character, terminal escape, workflow command or
Markdown from a file reaches the text, GitHub, SARIF or step-summary output raw.

Each ends in a one-line ``path:line:col: error:`` (or a normal result) and never stops the other files. A
per-test alarm (30 s, tests/hostile/conftest.py) turns a hang into a failure instead of a stuck CI job; how fast
each case is answered is measured by scripts, not asserted here.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.hostile.helpers import TESTS, llama_config, run_cli, write

pytestmark = pytest.mark.usefixtures("no_hang")


EVIL_KEY = "x\x1b]8;;http://evil/\x07click\x1b[2J\n::error::pwned\n```\n[link](http://evil)"


def _evil_config(tmp_path: Path) -> Path:
    d = llama_config(num_key_value_heads=6)
    d["quantization_config"] = {"quant_method": EVIL_KEY}
    return write(tmp_path / "config.json", d)


def test_text_output_escapes_control_characters_and_workflow_commands(tmp_path, capsys, monkeypatch):
    evil_dir = tmp_path / "::warning file=x::owned" / "\x1b[31m"
    p = write(evil_dir / "config.json", llama_config(num_key_value_heads=6, model_type="evil\x1b[2J::error::x"))
    monkeypatch.chdir(tmp_path)
    rel = os.path.relpath(p)
    good = write(tmp_path / "config.json", llama_config(num_key_value_heads=6))
    rc, out, _ = run_cli(capsys, "check", rel, "config.json", "--format", "text")
    assert rc == 1  # the unknown model_type is read by its structure (issue 30): its name is in a finding, escaped
    assert "read by its structure as llama" in out
    assert "\x1b" not in out and "\x07" not in out
    assert not any(line.lstrip().startswith("::") or "##[" in line for line in out.splitlines())
    assert r"\x3a:warning file=x::owned/\x1b[31m/config.json" in out
    assert good.exists()


def test_github_and_sarif_output_carry_no_raw_control_characters(tmp_path, capsys, monkeypatch):
    p = _evil_config(tmp_path)
    monkeypatch.chdir(tmp_path)
    for fmt in ("github", "text"):
        _, out, _ = run_cli(capsys, "check", "config.json", "--format", fmt)
        assert "\x1b" not in out and "\x07" not in out
        assert not any(line.startswith("::error::pwned") for line in out.splitlines())
    _, out, _ = run_cli(capsys, "check", "config.json", "--format", "sarif")
    run = json.loads(out)["runs"][0]
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "config.json",
        "uriBaseId": "%SRCROOT%",
    }
    assert p.exists()


def test_step_summary_block_cannot_be_left(tmp_path):
    from colint.util.escape import code_block, md_inline

    report = "config.json:3:1: CL002 error x\n```\n</pre><img src=x>\n[link](http://evil)\n````\n"
    block = code_block(report)
    fence = block.splitlines()[0]
    assert fence == "`````" and block.endswith(f"\n{fence}\n")
    body = block.splitlines()[1:-1]
    assert all(not (set(line) == {"`"} and len(line) >= len(fence)) for line in body)  # nothing closes it early
    assert md_inline("a|b`c\n<x>[y](z)") == r"a\|b\`c \<x\>\[y\]\(z\)"


def test_the_step_summary_table_gives_file_content_no_markup(tmp_path, capsys):
    # the Action writes `--output-format markdown` to $GITHUB_STEP_SUMMARY: a key or a path from a pull request
    # must stay text there (a key with ``` once broke out of a fenced block and injected a link)
    assert "--output-format markdown" in (TESTS.parent / "action.yml").read_text()
    evil = "x```\n\n[click](https://evil.example)<img src=x>|"
    p = write(tmp_path / "config.json", {**llama_config(num_key_value_heads=6), evil: 1})
    rc, out, _ = run_cli(capsys, "check", p, "--output-format", "markdown", "--select", "CL002,CL007")
    assert rc == 1

    # a code span shows its text as is: markup outside one is what renders; a backslash-escaped character is text
    prose = re.sub(r"(?<!\\)`[^`\n]*?(?<!\\)`", "", out)
    assert not re.search(r"(?<!\\)\[click(?<!\\)\]", prose) and not re.search(r"(?<!\\)<img", prose)
    assert "```" not in out
    assert all(
        line.startswith(("|", "#", "**", "- ", "<sub>", "<details>", "</details>"))
        or not line.strip()
        or line[0].isdigit()
        for line in out.splitlines()
    )


def test_sarif_path_outside_the_working_directory_is_relative(tmp_path, capsys, monkeypatch):
    p = write(tmp_path / "repo" / "config.json", llama_config(num_key_value_heads=6))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    _, out, _ = run_cli(capsys, "check", p, "--format", "sarif")
    loc = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "../repo/config.json", "uriBaseId": "%SRCROOT%"}
