"""Writes respect their target (issue 19): --fix writes through symlinks, once per file, keeping mode, owner and
hard links; a read-only file, a file changed meanwhile, a device or a FIFO is never replaced.

Each ends in a one-line ``path:line:col: error:`` (or a normal result) and never stops the other files. A
per-test alarm (30 s, tests/hostile/conftest.py) turns a hang into a failure instead of a stuck CI job; how fast
each case is answered is measured by scripts, not asserted here.
"""

from __future__ import annotations

import json
import os
import stat

import pytest

from tests.hostile.helpers import IS_ROOT, LLAMA, llama_config, run_cli, write

pytestmark = pytest.mark.usefixtures("no_hang")


FIXABLE = llama_config(num_key_value_heads=6)  # CL002: the first unsafe fix sets 4 KV heads


def _fix(capsys, *paths, extra=()) -> tuple[int, str, str]:
    return run_cli(capsys, "check", *paths, "--fix", "--unsafe-fixes", "--select", "CL002", *extra)


def test_fix_through_a_symlink_writes_its_target(tmp_path, capsys):
    real = write(tmp_path / "real" / "config.json", FIXABLE)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    rc, _, err = _fix(capsys, link)
    assert rc == 0 and "fixed 1 file" in err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["num_key_value_heads"] == 4


def test_a_file_named_twice_is_fixed_once(tmp_path, capsys):
    p = write(tmp_path / "config.json", FIXABLE)
    link = tmp_path / "link.json"
    link.symlink_to(p)
    rc, _, err = _fix(capsys, p, link, p)
    assert rc == 0 and "fixed 1 file" in err and json.loads(p.read_text())["num_key_value_heads"] == 4


def test_fix_keeps_mode_and_hard_links(tmp_path, capsys):
    p = write(tmp_path / "config.json", FIXABLE)
    os.chmod(p, 0o640)
    twin = tmp_path / "twin.json"
    os.link(p, twin)
    rc, _, _ = _fix(capsys, p)
    assert rc == 0
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert os.path.samefile(p, twin) and json.loads(twin.read_text())["num_key_value_heads"] == 4


@pytest.mark.skipif(not IS_ROOT, reason="giving a file to another owner needs root")
def test_fix_keeps_the_owner(tmp_path, capsys):
    p = write(tmp_path / "config.json", FIXABLE)
    os.chown(p, 65534, 65534)
    rc, _, _ = _fix(capsys, p)
    st = os.stat(p)
    assert rc == 0 and (st.st_uid, st.st_gid) == (65534, 65534)
    assert json.loads(p.read_text())["num_key_value_heads"] == 4


def test_read_only_file_is_not_overwritten(tmp_path, capsys):
    p = write(tmp_path / "config.json", FIXABLE)
    before = p.read_bytes()
    os.chmod(p, 0o444)
    try:
        rc, _, err = _fix(capsys, p)
    finally:
        os.chmod(p, 0o644)
    assert rc == 2 and p.read_bytes() == before
    assert f"{p}: error: fixed file not written: read-only file (mode 0444); not overwritten" in err


def test_file_changed_during_the_fix_is_not_overwritten(tmp_path, capsys, monkeypatch):
    import colint.engine.checking as checking

    p = write(tmp_path / "config.json", FIXABLE)
    real = checking.fix_grouped

    def edit_meanwhile(*a, **kw):
        out = real(*a, **kw)
        p.write_text(p.read_text().replace('"hidden_act"', '"hidden_act_edited"'))  # the user's editor saves
        return out

    monkeypatch.setattr(checking, "fix_grouped", edit_meanwhile)
    rc, _, err = _fix(capsys, p)
    assert rc == 2 and '"hidden_act_edited"' in p.read_text() and '"num_key_value_heads": 6' in p.read_text()
    assert f"{p}: error: fixed file not written: changed since colint read it; not overwritten" in err


def test_unsafe_fixes_alone_changes_nothing(tmp_path, capsys):
    p = write(tmp_path / "config.json", FIXABLE)
    before = p.read_bytes()
    rc, _, err = run_cli(capsys, "check", p, "--unsafe-fixes")
    assert rc == 1 and p.read_bytes() == before
    assert "--unsafe-fixes does nothing without --fix or --diff; nothing was changed" in err


def test_report_to_a_device_or_fifo_is_written_not_replaced(tmp_path, capsys):
    import threading

    rc, _, _ = run_cli(capsys, "check", LLAMA, "-o", os.devnull)
    assert rc == 0 and stat.S_ISCHR(os.stat(os.devnull).st_mode)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, encoding="utf-8").read()))
    reader.start()
    rc, _, _ = run_cli(capsys, "check", LLAMA, "-o", fifo, "--format", "json")
    reader.join(10)
    assert rc == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert json.loads(got[0])["summary"]["files"] == 1


def test_write_atomic_leaves_no_temporary_file_and_refuses_directories(tmp_path):
    from colint.util.fileio import write_atomic

    write_atomic(str(tmp_path / "new.txt"), "a\r\nb")
    assert (tmp_path / "new.txt").read_bytes() == b"a\r\nb"
    with pytest.raises(IsADirectoryError):
        write_atomic(str(tmp_path), "x")
    assert sorted(os.listdir(tmp_path)) == ["new.txt"]
