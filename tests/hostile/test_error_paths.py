"""Every mode reports a file that could not be checked as plain `colint check` does, located (issue 13, item 3).

``--diff`` used to exit 2 printing nothing, and ``--write-baseline`` printed no error and wrote a baseline of
the files it could read. Each mode below runs over the same broken files beside a good one; each broken file
must be named with its line and column (where it has one) and the message plain `check` prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colint.cli.main import main

TESTS = Path(__file__).resolve().parents[1]
LLAMA = json.loads((TESTS / "corpus" / "hf" / "llama3__Meta-Llama-3.1-8B.json").read_text())

# name -> (text, (line, column) or None, message)
BROKEN = {
    "bool.json": (
        '{\n  "model_type": "llama",\n  "hidden_size": true\n}\n',
        (3, 3),
        "'hidden_size' must be an integer, got true",
    ),
    "truncated.json": (
        '{\n  "model_type": "llama",\n  "hidden_size": 4096,\n',
        (3, 23),
        "invalid JSON: file ends before the document is complete (Expecting property name enclosed in double quotes)",
    ),
    "unknown.json": ('{\n  "model_type": "nonexistent_xyz",\n  "hidden_size": 10\n}\n', (2, 3), None),
    "missing.json": (None, None, "no such file"),
}
MODES = {
    "check": [],
    "diff": ["--diff", "--unsafe-fixes"],
    "fix": ["--fix", "--unsafe-fixes"],
    "write-baseline": ["--write-baseline", "baseline.json"],
    "statistics": ["--statistics"],
    "statistics-json": ["--statistics", "--format", "json"],
    "json": ["--format", "json"],
    "github": ["--format", "github"],
    "sarif": ["--format", "sarif"],
    "gitlab": ["--format", "gitlab"],
}


@pytest.fixture
def tree(tmp_path, monkeypatch):
    for name, (text, _, _) in BROKEN.items():
        if text is not None:
            (tmp_path / name).write_text(text)
    good = dict(LLAMA, num_key_value_heads=6)
    (tmp_path / "good.json").write_text(json.dumps(good, indent=2) + "\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _expected_text(name: str, out: str) -> None:
    _, where, message = BROKEN[name]
    prefix = f"{name}:{where[0]}:{where[1]}: error: " if where else f"{name}: error: "
    lines = [x for x in out.splitlines() if x.startswith(prefix)]
    assert len(lines) == 1, (name, out)
    if message:
        assert lines[0] == prefix + message
    else:
        assert lines[0].startswith(prefix + "model_type 'nonexistent_xyz' is not supported by colint")


@pytest.mark.parametrize("mode", list(MODES))
def test_every_mode_reports_every_broken_file_located(tree, capsys, mode):
    before = {p.name: p.read_bytes() for p in tree.iterdir()}
    rc = main(["check", *BROKEN, "good.json", "--isolated", *MODES[mode]])
    out, err = capsys.readouterr()
    assert rc == 2, (mode, out, err)
    assert "Traceback" not in out + err
    if mode in ("json", "github", "sarif", "gitlab"):
        _structured(mode, out)
    else:
        for name in BROKEN:
            _expected_text(name, out + "\n" + err)
    if mode == "write-baseline":
        assert not (tree / "baseline.json").exists()  # nothing written when a file could not be checked
        assert "colint: baseline.json not written: fix the files above first" in err
    if mode == "diff":
        assert out.startswith("--- a/good.json\n+++ b/good.json\n")  # the good file's fix is still shown
    if mode == "fix":
        assert json.loads((tree / "good.json").read_text())["num_key_value_heads"] == 4
    for name, content in before.items():  # broken files are never touched
        if name != "good.json":
            assert (tree / name).read_bytes() == content


def _structured(fmt: str, out: str) -> None:
    for name, (_, where, message) in BROKEN.items():
        if fmt == "json":
            (f,) = [f for f in json.loads(out)["files"] if f["path"] == name]
            got = (f["error"]["line"], f["error"]["column"])
            text = f["error"]["message"]
        elif fmt == "github":
            (line,) = [
                x
                for x in out.splitlines()
                if x.startswith(f"::error file={name},") or x.startswith(f"::error file={name}::")
            ]
            props = dict(p.split("=", 1) for p in line.split("::")[1].split(" ", 1)[1].split(","))
            got = (int(props["line"]), int(props["col"])) if "line" in props else None
            text = line.split("::", 2)[2].removeprefix("error: ").replace("%3A", ":").replace("%2C", ",")
        elif fmt == "sarif":
            notes = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
            (n,) = [n for n in notes if n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == name]
            region = n["locations"][0]["physicalLocation"].get("region")
            got = (region["startLine"], region["startColumn"]) if region else None
            text = n["message"]["text"].removeprefix("file not checked: ")
        else:
            (e,) = [e for e in json.loads(out) if e["location"]["path"] == name and e["check_name"] == "colint-error"]
            got = (e["location"]["lines"]["begin"],) if where else None  # GitLab's report has lines only
            text = e["description"].removeprefix("file not checked: ")
        want = None if not where else (where[0],) if fmt == "gitlab" else tuple(where)
        assert (got if where else None) == want, (fmt, name, got)
        if message:
            assert text == message, (fmt, name, text)
        else:
            assert "is not supported by colint" in text
