"""SARIF fixes are the text replacements `colint --fix` makes (colint.fixing.fix_text.text_edits), so a fix
that inserts a key the file lacks reaches SARIF too (it used to be dropped)."""

from __future__ import annotations

import json
import shutil

from colint.cli.main import main

GEMMA = "tests/corpus/hf/gemma__gemma-3-4b-it.json"  # text_config lacks vocab_size: CL202's fix inserts it


def _apply(text: str, replacements: list[dict]) -> str:
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    spans = sorted(
        (
            (
                offset(r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
                offset(r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
                r["insertedContent"]["text"],
            )
            for r in replacements
        ),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def test_inserted_key_fix_is_in_sarif_and_equals_what_fix_writes(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    path = tmp_path / "config.json"
    shutil.copy(GEMMA, path)
    original = path.read_text(encoding="utf-8")
    assert (
        main(["check", str(path), "--isolated", "--select", "CL202", "--format", "sarif"]) == 0
    )  # CL202 here is an info
    result = json.loads(capsys.readouterr().out)["runs"][0]["results"][0]
    (fix,) = result["fixes"]
    (change,) = fix["artifactChanges"]
    (rep,) = change["replacements"]
    region = rep["deletedRegion"]
    assert region["startLine"] == region["endLine"] and region["startColumn"] == region["endColumn"]  # insertion
    assert rep["insertedContent"]["text"] == ',\n    "vocab_size": 262272'
    sarif_text = _apply(original, change["replacements"])

    assert main(["check", str(path), "--isolated", "--select", "CL202", "--fix", "--unsafe-fixes", "--exit-zero"]) == 0
    capsys.readouterr()
    assert path.read_text(encoding="utf-8") == sarif_text
