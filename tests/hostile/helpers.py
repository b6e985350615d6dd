"""What the hostile-input tests share: the fixtures' files, one CLI run that never shows a traceback, and the
one located error line a bad file gets."""

from __future__ import annotations

import json
import os
from pathlib import Path

from colint.cli.main import main

TESTS = Path(__file__).resolve().parents[1]
LLAMA = TESTS / "corpus" / "hf" / "llama3__Meta-Llama-3.1-8B.json"
MIXTRAL = TESTS / "corpus" / "hf" / "mixtral__Mixtral-8x7B-v0.1.json"
PROFILE = TESTS.parent / "colint" / "hardware_profiles" / "b200.yaml"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def run_cli(capsys, *args) -> tuple[int, str, str]:
    argv = [str(a) for a in args]
    if argv[:1] == ["check"] and "--concurrency" not in argv:
        # 128 sequences of the fixtures' Llama-3.1-8B fit one B200 (256 of 8,192 tokens do not: CL801 would warn)
        argv += ["--concurrency", "128"]
    rc = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def llama_config(**changes) -> dict:
    d = json.loads(LLAMA.read_text())
    d.update(changes)
    return d


def write(path: Path, content) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, dict):
        path.write_text(json.dumps(content, indent=2) + "\n")
    else:
        path.write_text(content)
    return path


def error_line(text: str, path) -> str:
    lines = [x for x in text.splitlines() if x.startswith(f"{path}:") and ": error: " in x]
    assert len(lines) == 1, text
    return lines[0]
