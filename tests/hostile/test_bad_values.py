"""Hostile values that aborted every file of a run with an internal error (issue 19): numbers too large or not
finite, bad bytes, missing keys, parallel sizes beyond range, GEMM tables and GPU profiles with bad values,
unreadable files; each is one located ``path:line:col: error:`` line and the other files are still checked.

Each ends in a one-line ``path:line:col: error:`` (or a normal result) and never stops the other files. A
per-test alarm (30 s, tests/hostile/conftest.py) turns a hang into a failure instead of a stuck CI job; how fast
each case is answered is measured by scripts, not asserted here.
"""

from __future__ import annotations

import os

import pytest

from tests.hostile.helpers import IS_ROOT, LLAMA, PROFILE, error_line, llama_config, run_cli, write

pytestmark = pytest.mark.usefixtures("no_hang")


HUGE = "1" + "0" * 400


@pytest.mark.parametrize(
    "name,text,where,message",
    [
        (
            "huge.json",
            '{\n  "model_type": "llama",\n  "hidden_size": %s\n}\n' % HUGE,
            (3, 3),
            "'hidden_size' is a 401-digit number, beyond any config value (a float holds at most 309 digits)",
        ),
        (
            "huge.yaml",
            "model_type: llama\nhidden_size: %s\n" % HUGE,
            (2, 1),
            "'hidden_size' is a 401-digit number, beyond any config value (a float holds at most 309 digits)",
        ),
        (
            "digits.json",
            '{\n  "model_type": "llama",\n  "hidden_size": %s\n}\n' % ("9" * 5000),
            (3, 18),
            "a number with more digits than any config value (value has 5000 digits)",
        ),
        (
            "digits.yaml",
            "model_type: llama\nhidden_size: %s\n" % ("9" * 5000),
            (2, 14),
            "a number with more digits than any config value (value has 5000 digits)",
        ),
        (
            "late_nul.yaml",
            "model_type: llama\n" + "# pad\n" * 3000 + "hidden_size: 4096\x00\n",
            (3002, 18),
            "NUL byte in the text, not a JSON or YAML config",
        ),
        (
            "ernie.json",
            '{\n  "model_type": "ernie4_5_vl_moe_text", "hidden_size": 1024, "num_hidden_layers": 2,\n'
            '  "num_attention_heads": 8, "intermediate_size": 2048\n}\n',
            (1, 1),
            "missing key 'moe_intermediate_size' (the family's default, [1536, 512], is not one integer: state the value)",
        ),
    ],
)
def test_bad_numbers_and_bytes_are_located_and_do_not_stop_the_run(tmp_path, capsys, name, text, where, message):
    if name.startswith("ernie"):
        pytest.importorskip("transformers")
    bad = write(tmp_path / name, text.encode())
    good = write(tmp_path / "good.json", llama_config(num_key_value_heads=6))
    rc, out, _ = run_cli(capsys, "check", bad, good)
    assert rc == 2
    assert error_line(out, bad) == f"{bad}:{where[0]}:{where[1]}: error: {message}"
    assert f"{good}:18:3: CL002 error" in out


def test_meta_config_missing_key_is_located(tmp_path, capsys):
    p = write(
        tmp_path / "params.json",
        '{"dim": 2048, "n_layers": 2, "n_heads": 16, "n_dense_layers": 1,\n'
        ' "n_routed_experts": 8, "moe_inter_dim": 1408, "kv_lora_rank": 512,\n'
        ' "vocab_size": 1000}\n',
    )
    rc, out, _ = run_cli(capsys, "check", p)
    assert rc == 2 and error_line(out, p) == f"{p}:1:1: error: missing key 'inter_dim'"


def test_parallel_sizes_beyond_range(tmp_path, capsys):
    write(tmp_path / "proj" / ".colint.toml", f"tp = {HUGE}\n")
    p = write(tmp_path / "proj" / "config.json", llama_config())
    rc, out, _ = run_cli(capsys, "check", p)
    assert rc == 2 and error_line(out, p) == (
        f"{p}: error: not checked: its settings file {tmp_path / 'proj' / '.colint.toml'}:1:1 is invalid: tp: must "
        "be at most 1,048,576 or 'auto' (got a huge number)"
    )
    rc, _, err = run_cli(capsys, "check", LLAMA, "--tp", HUGE)
    assert rc == 2 and err.strip() == "colint: error: --tp is a 401-digit number, beyond the 1,048,576 colint models"
    rc, _, err = run_cli(capsys, "gemm", HUGE, 1, 1)
    assert rc == 2 and err.startswith("colint: error: Invalid value for '[DIMS]...'")


@pytest.mark.parametrize(
    "content,where,message",
    [
        (
            b"dtype,m,n,k\nbf16,4096,4096,4096\nbf16," + HUGE.encode() + b",1,1\n",
            3,
            "m: '1000000000000000000000000000000000000...' is too large",
        ),
        (
            b"dtype,m,n,k\nbf16,4096,4096,4096\nbf16,1099511627776,1,1\n",
            3,
            "m: 1,099,511,627,776 is beyond the 2,147,483,648 a GEMM dimension may be",
        ),
        (b"dtype,m,n,k\nbf16,4096,4096,4\xff\n", "2:17", "not UTF-8 text (byte 0xff at offset 28)"),
    ],
)
def test_gemm_csv_with_huge_values_or_bad_bytes(tmp_path, capsys, content, where, message):
    p = write(tmp_path / "shapes.csv", content)
    rc, out, err = run_cli(capsys, "gemm", "--from-csv", p)
    assert rc == 2 and out == "" and err.strip() == f"{p}:{where}: error: {message}"


@pytest.mark.parametrize(
    "edit,column,message",
    [
        (("alignment: {tf32: 4, bf16: 8", "alignment: {tf32: 4, bf16: 0"), "22", "alignment.bf16: must be > 0, got 0"),
        (("k_tile: {tf32: 32, bf16: 64", "k_tile: {tf32: 32, bf16: 0"), "22", "tiles.k_tile.bf16: must be > 0, got 0"),
        (("sm_count: 148", f"sm_count: {HUGE}"), "1", "sm_count: a 401-digit number is beyond any GPU (limit 1e+15)"),
        (("memory_gb: 180", "memory_gb: .inf"), "1", "memory_gb: must be a finite number, got inf"),
        (("memory_tbps: 8.0", "memory_tbps: .nan"), "1", "memory_tbps: Input should be greater than 0"),
    ],
)
def test_gpu_profile_zero_huge_or_not_finite(tmp_path, capsys, edit, column, message):
    text = PROFILE.read_text()
    assert edit[0] in text
    where = f"{text[: text.index(edit[0])].count(chr(10)) + 1}:{column}"  # the edited line, wherever the profile has it
    prof = write(tmp_path / "gpu.yaml", text.replace(edit[0], edit[1], 1))
    rc, out, err = run_cli(capsys, "check", LLAMA, "--gpu", prof)
    assert rc == 2 and err.strip() == f"{prof}:{where}: error: {message}"


@pytest.mark.skipif(IS_ROOT, reason="root reads a mode-000 file (test_robustness covers the message as root)")
def test_unreadable_file_does_not_stop_the_others(tmp_path, capsys):
    bad = write(tmp_path / "a.json", llama_config())
    good = write(tmp_path / "b.json", llama_config(num_key_value_heads=6))
    os.chmod(bad, 0)
    try:
        rc, out, _ = run_cli(capsys, "check", bad, good)
    finally:
        os.chmod(bad, 0o644)
    assert rc == 2 and f"{bad}: error: permission denied" in out and f"{good}:18:3: CL002" in out


def test_unreadable_file_does_not_stop_the_others_even_as_root(tmp_path, capsys, monkeypatch):
    """What a non-root user sees for a mode-000 file, simulated for any user: the argument parser does not
    refuse the run (click's access check did), the file gets its own located error."""
    import colint.util.fileio as fileio

    bad = write(tmp_path / "a.json", llama_config())
    good = write(tmp_path / "b.json", llama_config(num_key_value_heads=6))
    real_access, real_open = os.access, os.open

    def access(path, mode, *a, **kw):
        return False if os.fspath(path) == str(bad) else real_access(path, mode, *a, **kw)

    def deny(path, *a, **kw):
        if os.fspath(path) == str(bad):
            raise PermissionError(13, "Permission denied", str(bad))
        return real_open(path, *a, **kw)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(fileio.os, "open", deny)
    rc, out, _ = run_cli(capsys, "check", bad, good)
    assert rc == 2 and f"{bad}: error: permission denied" in out.splitlines() and f"{good}:18:3: CL002" in out
