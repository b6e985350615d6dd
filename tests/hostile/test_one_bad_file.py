"""One bad file never aborts the run, in any output format (issue 19): an internal error while checking or
fixing one file is that file's error, and the other files' results and fixes stand.

Each ends in a one-line ``path:line:col: error:`` (or a normal result) and never stops the other files. A
per-test alarm (30 s, tests/hostile/conftest.py) turns a hang into a failure instead of a stuck CI job; how fast
each case is answered is measured by scripts, not asserted here.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.hostile.helpers import llama_config, run_cli, write

pytestmark = pytest.mark.usefixtures("no_hang")


FORMATS = ["text", "json", "github", "sarif", "gitlab"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_internal_error_on_one_file_is_that_files_error(tmp_path, capsys, monkeypatch, fmt):
    import colint.normalize as spec

    real = spec.normalize

    def explode_on_a(doc, *a, **kw):
        if os.path.basename(doc.path) == "a.json":
            raise ZeroDivisionError("float division by zero")
        return real(doc, *a, **kw)

    from colint.engine import checking

    monkeypatch.setattr(checking, "normalize", explode_on_a)  # the name the engine calls
    bad = write(tmp_path / "a.json", llama_config())
    good = write(tmp_path / "b.json", llama_config(num_key_value_heads=6))
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run_cli(capsys, "check", "a.json", "b.json", "--format", fmt)
    assert rc == 2
    msg = "internal error: ZeroDivisionError: float division by zero (please report this with the input file)"
    if fmt == "text":
        assert f"a.json: error: {msg}" in out.splitlines() and "b.json:18:3: CL002 error" in out
    elif fmt == "json":
        files = {f["path"]: f for f in json.loads(out)["files"]}
        assert files["a.json"]["error"]["message"] == msg
        assert [x["code"] for x in files["b.json"]["findings"]] == ["CL002"]
    elif fmt == "github":
        assert f"::error file=a.json,title=colint%3A file not checked::error: {msg}" in out.splitlines()
        assert any(x.startswith("::error file=b.json,line=18,col=3,") for x in out.splitlines())
    elif fmt == "sarif":
        run = json.loads(out)["runs"][0]
        (note,) = run["invocations"][0]["toolExecutionNotifications"]
        assert note["message"]["text"] == f"file not checked: {msg}"
        assert [r["ruleId"] for r in run["results"]] == ["CL002"]
    else:
        entries = json.loads(out)
        assert [e["check_name"] for e in entries] == ["colint-error", "CL002"]
    assert bad.exists() and good.exists()


def test_a_crash_while_fixing_one_file_leaves_the_others_fixed(tmp_path, capsys, monkeypatch):
    import colint.engine.checking as checking

    real = checking._fix_one

    def explode_on_a(r, *a, **kw):
        if os.path.basename(r.path) == "a.json":
            raise MemoryError()
        return real(r, *a, **kw)

    monkeypatch.setattr(checking, "_fix_one", explode_on_a)
    a = write(tmp_path / "a.json", llama_config(num_key_value_heads=6))
    b = write(tmp_path / "b.json", llama_config(num_key_value_heads=6))
    rc, out, err = run_cli(capsys, "check", a, b, "--fix", "--unsafe-fixes", "--select", "CL002")
    assert rc == 2
    assert f"{a}: error: internal error: MemoryError (please report this with the input file)" in out
    assert json.loads(b.read_text())["num_key_value_heads"] == 4
    assert json.loads(a.read_text())["num_key_value_heads"] == 6
