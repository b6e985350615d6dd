"""Hostile input that took minutes or gigabytes (issue 19): interpolation chains, globs of many ``**``, devices and
FIFOs named as files, huge strings, lists and layer counts; each is refused or answered, located, in bounded work.

Each ends in a one-line ``path:line:col: error:`` (or a normal result) and never stops the other files. A
per-test alarm (30 s, tests/hostile/conftest.py) turns a hang into a failure instead of a stuck CI job; how fast
each case is answered is measured by scripts, not asserted here.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from tests.hostile.helpers import MIXTRAL, error_line, llama_config, run_cli, write

pytestmark = pytest.mark.usefixtures("no_hang")


def test_interpolation_chain_that_triples_per_line(tmp_path, capsys):
    # x_i = x_{i-1} three times: 3^30 characters without a memo; the last line is resolved first
    lines = ['x0: "ab"'] + [f'x{i}: "${{x{i - 1}}}${{x{i - 1}}}${{x{i - 1}}}"' for i in range(1, 30)]
    p = write(tmp_path / "m.yaml", "model_type: llama\n" + "\n".join(reversed(lines)) + "\n")
    rc, out, _ = run_cli(capsys, "check", p)
    assert rc == 2
    line = error_line(out, p)
    assert re.match(rf"{re.escape(str(p))}:2:1: error: interpolation \$\{{x28\}}.* at 'x29' needs too much work", line)


def test_interpolation_chain_is_linear_with_the_memo(tmp_path):
    from colint.loading import load_text

    # 9 lines: 2 * 3^8 = 13,122 characters, within the limit; resolved once per key
    lines = ['x0: "ab"'] + [f'x{i}: "${{x{i - 1}}}${{x{i - 1}}}${{x{i - 1}}}"' for i in range(1, 9)]
    doc = load_text("\n".join(reversed(lines)) + "\n", "m.yaml")
    assert doc.data["x8"] == "ab" * 3**8 and not doc.unresolved


def test_nested_multiply_interpolations(tmp_path, capsys):
    d = {"model_type": "llama", "a0": 2}
    for i in range(1, 40):
        d[f"a{i}"] = "${multiply:${a%d},${a%d}}" % (i - 1, i - 1)
    p = write(tmp_path / "config.json", d)
    rc, out, _ = run_cli(capsys, "check", p)
    line = error_line(out, p)
    assert rc == 2 and re.search(
        r":\d+:\d+: error: interpolation \$\{multiply:\$\{a5\},\$\{a5\}\} at 'a6' needs too "
        r"much work to resolve \(a number beyond 9\.22e\+18\)",
        line,
    ), line


def test_glob_with_thirty_double_stars(tmp_path, capsys):
    from colint.util.globs import glob_matches

    glob = "a/" + "**" * 30 + "b"
    assert glob_matches(glob, str(tmp_path / "a" / ("a" * 60 + "/c")), str(tmp_path)) is False
    assert glob_matches(glob, str(tmp_path / "a/x/y/b"), str(tmp_path)) is True
    assert glob_matches("**/" * 30 + "x", str(tmp_path / ("d/" * 200 + "y")), str(tmp_path)) is False
    write(tmp_path / ".colint.toml", f'[per-file-ignores]\n"{glob}/*.json" = ["CL0"]\n')
    p = write(tmp_path / "a" / ("a" * 40) / "config.json", llama_config())
    rc, out, _ = run_cli(capsys, "check", p)
    assert rc in (0, 1) and ": error: " not in out


@pytest.mark.parametrize("target,kind", [("/dev/zero", "a character device"), ("fifo", "a FIFO")])
def test_baseline_that_is_a_device_or_fifo_is_refused_unread(tmp_path, capsys, target, kind):
    if target == "fifo":
        target = str(tmp_path / "fifo")
        os.mkfifo(target)
    write(tmp_path / ".colint.toml", f'baseline = "{target}"\n')
    p = write(tmp_path / "config.json", llama_config())
    rc, out, err = run_cli(capsys, "check", p)
    assert rc == 2
    assert f"{target}: error: is {kind}, not a regular file: refused unread" in err


@pytest.mark.parametrize("name", ["config.json", "m.yaml", "fifo.json"])
def test_config_that_is_a_device_or_fifo_never_blocks(tmp_path, capsys, name):
    good = write(tmp_path / "good.json", llama_config(num_key_value_heads=6))
    if name == "fifo.json":
        os.mkfifo(tmp_path / name)
        bad, kind = tmp_path / name, "a FIFO"
    else:
        bad, kind = "/dev/zero", "a character device"
    rc, out, _ = run_cli(capsys, "check", bad, good)
    assert rc == 2
    assert f"{bad}: error: is {kind}, not a regular file: refused unread" in out
    assert f"{good}:" in out and " CL002 " in out  # the good file is still checked


def test_eight_mib_json_with_one_long_string(tmp_path, capsys):
    import tracemalloc

    from colint.loading import MAX_BYTES, load

    d = llama_config()
    d["blob"] = "a" * (MAX_BYTES - 2000)
    p = write(tmp_path / "config.json", d)
    tracemalloc.start()
    try:
        doc = load(str(p))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert doc.span(("blob",)).line == doc.text.count("\n", 0, doc.text.index('"blob"')) + 1
    assert peak < 200 * 1024 * 1024  # the position regex used 1.2 GB
    rc, out, _ = run_cli(capsys, "check", p)
    assert rc == 0, out


def test_yaml_with_a_long_list_is_refused_before_ruamel(tmp_path, capsys):
    from colint.loading.yaml_loader import MAX_TEXT_NODES

    p = write(tmp_path / "m.yaml", "model_type: llama\nx:\n" + "- 1\n" * 99_000)
    rc, out, _ = run_cli(capsys, "check", p)
    assert rc == 2 and re.fullmatch(
        rf"{re.escape(str(p))}:9998:3: error: more than {MAX_TEXT_NODES:,} YAML values "
        r"\(no model config has that many\): refused",
        error_line(out, p),
    )


def test_unknown_model_type_with_huge_layer_count_stops_before_transformers(tmp_path, capsys, monkeypatch):
    import colint.normalize.hf.fallback as fallback

    monkeypatch.setattr(fallback, "_transformers", lambda: pytest.fail("transformers was asked"))
    d = llama_config(model_type="persimmon", num_hidden_layers=10**8)
    p = write(tmp_path / "config.json", d)
    rc, out, _ = run_cli(capsys, "check", p)
    assert rc == 2
    assert error_line(out, p) == (f"{p}:17:3: error: 'num_hidden_layers' is 1e+08, beyond any real model (limit 1e+05)")


def test_suggest_with_a_million_experts(tmp_path, capsys):
    d = json.loads(MIXTRAL.read_text())
    d.update(num_local_experts=2**20, num_experts_per_tok=2**16)
    p = write(tmp_path / "config.json", d)
    rc, out, _ = run_cli(capsys, "suggest", p, "--select", "CL0,CL5")
    assert rc in (0, 1) and "num_local_experts kept" in out  # its variants (> 2^20) do not load


def test_report_states_its_layer_limit(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    p = write(tmp_path / "config.json", llama_config(num_hidden_layers=100_000))
    rc, _, err = run_cli(capsys, "report", p, "-o", tmp_path / "r.html")
    assert rc == 2 and err.strip() == (
        f"{p}:17:3: error: `colint report` charts stacks of up to 1,000 layers; this "
        "one has 100,000 (`colint check` reads it)"
    )
    assert not (tmp_path / "r.html").exists()
