"""`colint check --fix/--unsafe-fixes/--diff` on copies of every corpus file.

Byte-level: the fixed file differs from the original only on the lines of the values that
changed, it still loads, and a second run finds nothing left to fix.
"""

import difflib
import glob
import os
import shutil

import pytest

from colint.cli.main import main
from colint.loading import load

CORPUS = sorted(glob.glob("tests/corpus/*/*.json") + glob.glob("tests/corpus/*/*.yaml"))


def _changed_leaf_paths(a, b, prefix=()):
    if isinstance(a, dict) and isinstance(b, dict):
        out = set()
        for k in set(a) | set(b):
            out |= _changed_leaf_paths(a.get(k), b.get(k), prefix + (k,))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = set()
        for i, (x, y) in enumerate(zip(a, b)):
            out |= _changed_leaf_paths(x, y, prefix + (i,))
        return out
    return set() if a == b else {prefix}


@pytest.mark.parametrize("src", CORPUS, ids=[os.path.basename(p) for p in CORPUS])
def test_unsafe_fix_changes_only_targeted_values_and_is_idempotent(src, tmp_path, capsys):
    dst = tmp_path / os.path.basename(src)
    shutil.copyfile(src, dst)
    before = dst.read_bytes()
    rc = main(["check", str(dst), "--tp", "8", "--unsafe-fixes", "--fix", "--isolated", "--fail-on", "never"])
    capsys.readouterr()
    after = dst.read_bytes()
    if rc == 2:  # broken as published: nothing may be written
        assert after == before
        return
    assert rc == 0
    if after == before:
        return
    old_doc, new_doc = load(src), load(str(dst))
    changed = _changed_leaf_paths(old_doc.data, new_doc.data)
    assert changed, "bytes changed but no value did"
    allowed_lines = {old_doc.span(p).line for p in changed if old_doc.span(p) is not None}
    old_lines = before.decode().splitlines()
    new_lines = after.decode().splitlines()
    sm = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    touched = set()
    for tag, i1, i2, _j1, _j2 in sm.get_opcodes():
        if tag != "equal":
            touched |= set(range(i1 + 1, i2 + 1))
    # Every changed line holds a changed value (or is where a missing key was inserted).
    inserted = {p for p in changed if old_doc.span(p) is None}
    assert touched <= allowed_lines | ({max(allowed_lines | {0})} if inserted else set()) | (
        set(range(1, len(old_lines) + 1)) if inserted else set()
    )
    # A second run finds nothing left to fix.
    rc2 = main(["check", str(dst), "--tp", "8", "--unsafe-fixes", "--diff", "--isolated"])
    assert capsys.readouterr().out == ""
    assert rc2 == 0


def test_diff_writes_nothing_and_prints_the_unsafe_fixes_only_when_asked(tmp_path, capsys):
    dst = tmp_path / "config.json"
    shutil.copyfile("examples/llama-2-7b.json", dst)
    before = dst.read_bytes()
    # padding the vocab changes the checkpoint's embedding shape: not a safe fix (issue 17 item 6), so --diff alone
    # has nothing to show
    main(["check", str(dst), "--tp", "8", "--diff", "--isolated"])
    assert capsys.readouterr().out == ""
    rc = main(["check", str(dst), "--tp", "8", "--diff", "--unsafe-fixes", "--isolated"])
    out = capsys.readouterr().out
    assert rc == 1
    assert dst.read_bytes() == before
    assert '-    "vocab_size": 32000\n+    "vocab_size": 32768\n' in out  # the last member: no comma
    assert '-    "intermediate_size": 11008,\n+    "intermediate_size": 11264,\n' in out


def test_fix_pads_vocab_in_place_and_reports_what_is_left(tmp_path, capsys):
    dst = tmp_path / "config.json"
    shutil.copyfile("examples/llama-2-7b.json", dst)
    before = dst.read_text()
    rc = main(["check", str(dst), "--tp", "8", "--fix", "--isolated"])
    captured = capsys.readouterr()
    assert dst.read_text() == before  # no safe fix: the vocab padding needs --unsafe-fixes
    assert "CL201" in captured.out and "CL202" in captured.out
    rc = main(["check", str(dst), "--tp", "8", "--fix", "--unsafe-fixes", "--select", "CL202", "--isolated"])
    captured = capsys.readouterr()
    assert dst.read_text() == before.replace('"vocab_size": 32000', '"vocab_size": 32768')
    assert "colint: fixed 1 file" in captured.err
    assert "CL202" not in captured.out
    assert rc == 0
