"""colint reads files nobody checked: it never runs code from them, never touches the network,
writes nothing, and refuses inputs built to exhaust memory or time (issue 7)."""

from __future__ import annotations

import builtins
import json
import os
import socket

import pytest

import colint.loading as loading
from colint.cli.main import main
from colint.loading import yaml_loader

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(TESTS, "corpus")
LLAMA = os.path.join(CORPUS, "hf", "llama3__Meta-Llama-3.1-8B.json")


def _run(capsys, *args: str) -> tuple[int, str]:
    rc = main(list(args))
    cap = capsys.readouterr()
    text = cap.out + cap.err
    assert "Traceback" not in text and "internal error" not in text, text
    return rc, text


# -- no code execution ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "tagged",
    [
        '!!python/object/apply:os.system ["touch {marker}"]',
        '!!python/object/apply:subprocess.call [["touch", "{marker}"]]',
        '!!python/object/new:os.system ["touch {marker}"]',
        "!!python/name:os.system",
        "!!python/module:os",
    ],
)
def test_yaml_python_tags_are_not_executed(tmp_path, capsys, tagged):
    marker = tmp_path / "PWNED"
    tagged = tagged.format(marker=marker)
    unused = tmp_path / "unused.yaml"
    unused.write_text(f"model_type: llama\nnum_hidden_layers: 2\npayload: {tagged}\n", encoding="utf-8")
    rc, _ = _run(capsys, "check", str(unused), "--select", "CL0")
    assert rc in (0, 1)  # the unknown key is data, not a call
    used = tmp_path / "used.yaml"
    used.write_text(f"model_type: llama\nhidden_size: {tagged}\n", encoding="utf-8")
    rc, text = _run(capsys, "check", str(used))
    assert rc == 2 and f"{used}:2:1: error: 'hidden_size' must be an integer, got " in text
    assert not marker.exists()


def test_remote_code_is_never_imported(tmp_path, capsys, monkeypatch):
    """An unknown model_type with ``auto_map`` pointing at code next to the config: transformers'
    fallback must not import it (no trust_remote_code), and the answer is a located error."""
    marker = tmp_path / "PWNED"
    (tmp_path / "configuration_evil.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    cfg = {
        "model_type": "evil_remote_model",
        "auto_map": {"AutoConfig": "configuration_evil.EvilConfig"},
        "architectures": ["EvilForCausalLM"],
        "hidden_size": 64,
        "num_hidden_layers": 2,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rc, text = _run(capsys, "check", str(path))
    assert rc == 2
    assert text.startswith(f"{path}:2:3: error: model_type 'evil_remote_model' is not supported by colint")
    assert not marker.exists()


# -- resource limits ------------------------------------------------------------------------------------
def _bomb(levels: int = 9) -> str:
    names = "abcdefghijklmnop"[:levels]
    text = f'{names[0]}: &{names[0]} ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for prev, name in zip(names, names[1:]):
        text += f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
    return text  # expands to 9**levels values


def test_alias_bomb_is_refused_before_expansion(tmp_path, capsys, monkeypatch):
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb(), encoding="utf-8")
    expanded = []
    real_plain = yaml_loader._plain
    monkeypatch.setattr(yaml_loader, "_plain", lambda *a: expanded.append(1) or real_plain(*a))
    rc, text = _run(capsys, "check", str(path))
    assert rc == 2
    # refused at the key whose value crosses the budget: e (9**5 = 59,049 x ... ) -> f
    assert text.splitlines()[0] == f"{path}:6:1: error: YAML expands to more than 200,000 values (alias bomb?)"
    assert expanded == []  # nothing was expanded


def test_moderate_aliases_are_fine(tmp_path, capsys):
    path = tmp_path / "ok.yaml"
    path.write_text(
        "base: &b {hidden_size: 4096, num_hidden_layers: 2}\nmodel_type: llama\n"
        "text_config:\n  <<: *b\n  model_type: llama\n",
        encoding="utf-8",
    )
    rc, text = _run(capsys, "inspect", str(path))
    assert rc == 0, text


def test_recursive_alias_does_not_hang(tmp_path, capsys):
    path = tmp_path / "loop.yaml"
    path.write_text("model_type: llama\nnum_hidden_layers: 2\nloop: &a [1, *a]\n", encoding="utf-8")
    rc, text = _run(capsys, "check", str(path), "--select", "CL0")
    assert rc in (0, 1), text


@pytest.mark.parametrize(
    "name,text,where",
    [
        ("deep.json", '{"a": ' * 100_000 + "1" + "}" * 100_000, (1, 1 + 64 * 6)),
        ("shallow-enough.json", '{"model_type": "llama", "x": ' + "[" * 63 + "]" * 63 + "}", None),
        ("deep-flow.yaml", "model_type: llama\nx: " + "[" * 100_000 + "]" * 100_000 + "\n", (2, 3 + 64)),
        ("deep-block.yaml", "".join("  " * i + f"k{i}:\n" for i in range(70)) + "  " * 70 + "v: 1\n", (64, 127)),
    ],
)
def test_deep_nesting_is_refused_without_parsing(tmp_path, capsys, monkeypatch, name, text, where):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    if name == "deep-flow.yaml":  # refused by the pre-scan: ruamel never sees it
        monkeypatch.setattr(yaml_loader, "_yaml", lambda: pytest.fail("YAML parser ran on a too-deep file"))
    rc, out = _run(capsys, "check", str(path), "--select", "CL0")
    if where is None:
        assert rc in (0, 1) and ": error: " not in out
    else:
        assert rc == 2
        assert out.splitlines()[0] == f"{path}:{where[0]}:{where[1]}: error: nesting deeper than 64 levels"


def test_huge_file_is_refused_without_being_opened(tmp_path, capsys, monkeypatch):
    path = tmp_path / "config.json"
    with open(path, "wb") as fh:
        fh.truncate(20 * 1024 * 1024)  # sparse: 20 MiB on paper, nothing on disk
    import colint.util.fileio as fileio

    monkeypatch.setattr(fileio.os, "read", lambda *a, **k: pytest.fail("read a file over the size limit"))
    rc, out = _run(capsys, "check", str(path))
    assert rc == 2
    assert out.splitlines()[0] == (
        f"{path}:1:1: error: file is 20,971,520 bytes, over the {loading.MAX_BYTES:,}-byte limit for a JSON config"
    )


# -- no network, no writes ------------------------------------------------------------------------------
_NETWORK_CASES = [
    ["check", LLAMA],
    ["check", os.path.join(CORPUS, "hf", "deepseek__DeepSeek-V3.json"), "--gpu", "h100-sxm", "--tp", "8"],
    ["check", os.path.join(CORPUS, "megatron", "nemo-launcher__llama2_7b.yaml"), "--vocab-size", "32000"],
    ["inspect", os.path.join(CORPUS, "hf", "gemma__gemma-3-27b.json")],
    ["inspect", os.path.join(CORPUS, "meta", "torchchat__llava-1.5.json")],
]


def test_no_socket_is_ever_opened(tmp_path, capsys, monkeypatch):
    """With HF_HUB_OFFLINE unset, neither the adapters nor transformers' fallback (an unknown
    model_type) may reach for the network."""
    attempts = []

    def no_network(*args, **kwargs):
        attempts.append(args)
        raise OSError("network access attempted")

    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    unknown = tmp_path / "config.json"
    # a model type transformers knows but colint has no adapter for: the fallback imports transformers
    unknown.write_text(
        json.dumps(
            {
                "model_type": "helium",
                "hidden_size": 256,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "num_key_value_heads": 4,
                "intermediate_size": 1024,
                "vocab_size": 1000,
            }
        ),
        encoding="utf-8",
    )
    for args in _NETWORK_CASES + [["check", str(unknown)], ["inspect", str(unknown)]]:
        rc, text = _run(capsys, *args)
        assert rc in (0, 1, 2) and "network access attempted" not in text, (args, text)
    assert attempts == []


def test_check_and_inspect_write_nothing(tmp_path, capsys, monkeypatch):
    config = tmp_path / "config.json"
    with open(LLAMA, encoding="utf-8") as fh:
        config.write_text(fh.read(), encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text("model_type: llama\nhidden_size: [\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    before = {p: (os.stat(p).st_mtime_ns, os.stat(p).st_size) for p in os.listdir(tmp_path)}
    writes = []
    real_open = builtins.open

    def watching_open(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            writes.append((file, mode))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", watching_open)
    for args in (
        ["check", str(config), str(bad)],
        ["check", str(config), "--format", "json"],
        ["inspect", str(config)],
        ["inspect", str(bad)],
    ):
        rc, _ = _run(capsys, *args)
        assert rc in (0, 1, 2)
    monkeypatch.setattr(builtins, "open", real_open)
    assert writes == []
    assert {p: (os.stat(p).st_mtime_ns, os.stat(p).st_size) for p in os.listdir(tmp_path)} == before


def test_fix_writes_only_the_linted_file(tmp_path, capsys, monkeypatch):
    with open(LLAMA, encoding="utf-8") as fh:
        fixable = fh.read().replace('"vocab_size": 128256', '"vocab_size": 128250')  # unsafe fix: pad to 128256
    target, bystander = tmp_path / "config.json", tmp_path / "other.json"
    target.write_text(fixable, encoding="utf-8")
    bystander.write_text(fixable, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    replaced = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: replaced.append(os.path.abspath(dst)) or real_replace(src, dst))
    rc, _ = _run(capsys, "check", "--fix", "--unsafe-fixes", "--select", "CL202", str(target))
    assert rc in (0, 1)
    assert replaced == [str(target)]
    assert sorted(os.listdir(tmp_path)) == ["config.json", "other.json"]  # no temp file left behind
    assert '"vocab_size": 128256' in target.read_text(encoding="utf-8")
    assert bystander.read_text(encoding="utf-8") == fixable
