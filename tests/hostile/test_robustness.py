"""Every input gets a clear answer, never a traceback (issue 7).

Bad input → exit 2 and one line ``path:line:col: error: message`` (line and column where they
apply, the key named); a valid but strange config → findings (exit 0/1). Each case runs
``colint.cli.main.main`` in-process; three run the installed console script to prove that nothing
reaches stderr as a traceback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from colint.cli.main import main

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLAMA = os.path.join(TESTS, "corpus", "hf", "llama3__Meta-Llama-3.1-8B.json")
MIXTRAL = os.path.join(TESTS, "corpus", "hf", "mixtral__Mixtral-8x7B-v0.1.json")
_SCRIPT = os.path.join(os.path.dirname(sys.executable), "colint")
COLINT = [_SCRIPT] if os.path.exists(_SCRIPT) else [sys.executable, "-m", "colint"]  # the console script


def _base(path: str = LLAMA) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _dump(d: dict) -> str:
    return json.dumps(d, indent=2) + "\n"


def _mutated(path: str = LLAMA, **changes) -> str:
    d = _base(path)
    d.update(changes)
    return _dump(d)


def _loc(text: str, key: str) -> tuple[int, int]:
    """1-based line and column of the JSON key ``"key":`` in ``text``."""
    m = re.search(r'"%s"\s*:' % re.escape(key), text)
    assert m, key
    line = text.count("\n", 0, m.start()) + 1
    return line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1


def _write(tmp_path, name: str, content) -> str:
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return str(p)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    cap = capsys.readouterr()
    for stream in (cap.out, cap.err):
        assert "Traceback" not in stream and "internal error" not in stream, stream
    return rc, cap.out, cap.err


def _check_error(capsys, path: str, *flags: str) -> str:
    """`colint check PATH` must exit 2 with the located error as its first output line."""
    rc, out, err = _run(capsys, "check", path, *flags)
    assert rc == 2, out + err
    lines = out.splitlines()
    assert lines[-1].startswith("0 findings: 0 errors, 0 warnings, 0 infos; 1 file could not be checked"), out
    return lines[0]


def _inspect_error(capsys, path: str) -> str:
    rc, out, err = _run(capsys, "inspect", path)
    assert rc == 2 and out == "", out + err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- malformed files: (file name, content, expected message after "path:line:col: error: ") ---------------
_LLAMA_TEXT = _dump(_base())
_CUT = _LLAMA_TEXT.index('"intermediate_size"') + 5  # inside the key string

MALFORMED = [
    (
        "truncated.json",
        _LLAMA_TEXT[:_CUT],
        _loc(_LLAMA_TEXT, "intermediate_size"),
        "invalid JSON: Unterminated string starting at",
    ),
    # "file ends" points just after the last character, not at the empty line after the last newline
    (
        "unclosed.json",
        _LLAMA_TEXT.rstrip()[:-1],
        (_LLAMA_TEXT.rstrip().count("\n"), len('  "vocab_size": 128256') + 1),
        "invalid JSON: file ends before the document is complete (Expecting ',' delimiter)",
    ),
    ("missing-colon.json", '{\n  "hidden_size" 4096\n}\n', (2, 17), "invalid JSON: Expecting ':' delimiter"),
    ("empty.json", "", (1, 1), "empty file: expected a mapping of model keys"),
    ("blank.json", " \n\n\t\n", (1, 1), "empty file: expected a mapping of model keys"),
    ("empty.yaml", "", (1, 1), "empty file: expected a mapping of model keys"),
    ("comment-only.yaml", "# nothing here\n", (1, 1), "empty file: expected a mapping of model keys"),
    ("list.json", "[1, 2]\n", (1, 1), "expected a JSON object of model keys at the top level, found a list"),
    ("null.json", "null\n", (1, 1), "expected a JSON object of model keys at the top level, found null"),
    ("string.json", '"llama"\n', (1, 1), "expected a JSON object of model keys at the top level, found a string"),
    ("number.json", "7\n", (1, 1), "expected a JSON object of model keys at the top level, found a number"),
    ("list.yaml", "- 1\n- 2\n", (1, 1), "expected a mapping of model keys at the top level, found a list"),
    ("scalar.yaml", "just text\n", (1, 1), "expected a mapping of model keys at the top level, found a string"),
    (
        "tab.yaml",
        "model_type: llama\n\thidden_size: 3\n",
        (2, 1),
        "invalid YAML: found character '\\t' that cannot start any token",
    ),
    (
        "unclosed.yaml",
        "hidden_size: 4096\nnum_hidden_layers: [1, 2\n",
        (2, 25),
        "invalid YAML: expected ',' or ']', but got '<stream end>'",
    ),
    (
        "duplicate.yaml",
        "model_type: llama\nhidden_size: 4096\nhidden_size: 8192\n",
        (3, 1),
        "invalid YAML: duplicate key 'hidden_size' (YAML forbids it; readers disagree on which value wins)",
    ),
    (
        "binary.json",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        (1, 1),
        "binary file (NUL bytes), not a JSON or YAML config",
    ),
    (
        "latin1.json",
        '{\n  "model_type": "caf\u00e9"\n}\n'.encode("latin-1"),
        (2, 21),
        "not UTF-8 text (byte 0xe9 at offset 22)",
    ),
    (
        "utf16.json",
        '{"model_type": "llama"}'.encode("utf-16"),
        (1, 1),
        "binary file (NUL bytes), not a JSON or YAML config",
    ),
]


@pytest.mark.parametrize("name,content,where,message", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_file_is_one_located_line(tmp_path, capsys, name, content, where, message):
    path = _write(tmp_path, name, content)
    line, col = where
    expected = f"{path}:{line}:{col}: error: {message}"
    assert _check_error(capsys, path) == expected
    assert _inspect_error(capsys, path) == expected


# -- wrong types, zero, negative, huge and non-finite values: (case id, key, JSON value text, message) ------
BAD_VALUES = [
    ("string", "hidden_size", '"4096"', "'hidden_size' must be an integer, got the string '4096'"),
    ("float", "hidden_size", "4096.5", "'hidden_size' must be an integer, got 4096.5"),
    ("bool", "hidden_size", "true", "'hidden_size' must be an integer, got true"),
    ("list", "hidden_size", "[4096]", "'hidden_size' must be an integer, got a list"),
    ("mapping", "hidden_size", '{"value": 4096}', "'hidden_size' must be an integer, got a mapping"),
    ("null", "hidden_size", "null", "'hidden_size' must be an integer, got null"),
    ("null-vocab", "vocab_size", "null", "'vocab_size' must be an integer, got null"),
    ("null-layers", "num_hidden_layers", "null", "'num_hidden_layers' must be an integer, got null"),
    ("string-heads", "num_attention_heads", '"32"', "'num_attention_heads' must be an integer, got the string '32'"),
    ("bool-layers", "num_hidden_layers", "false", "'num_hidden_layers' must be an integer, got false"),
    ("float-ffn", "intermediate_size", "14336.7", "'intermediate_size' must be an integer, got 14336.7"),
    ("zero", "hidden_size", "0", "'hidden_size' must be at least 1, got 0"),
    ("zero-heads", "num_attention_heads", "0", "'num_attention_heads' must be at least 1, got 0"),
    ("zero-kv", "num_key_value_heads", "0", "'num_key_value_heads' must be at least 1, got 0"),
    ("negative", "hidden_size", "-4096", "'hidden_size' must be at least 1, got -4096"),
    ("negative-layers", "num_hidden_layers", "-1", "'num_hidden_layers' must be at least 1, got -1"),
    ("huge", "hidden_size", "1" + "0" * 100, "'hidden_size' is 1e+100, beyond any real model (limit 1.1e+12)"),
    (
        "huge-float",
        "intermediate_size",
        "1e300",
        "'intermediate_size' is 1e+300, beyond any real model (limit 1.1e+12)",
    ),
    (
        "huge-layers",
        "num_hidden_layers",
        "1000000",
        "'num_hidden_layers' is 1e+06, beyond any real model (limit 1e+05)",
    ),
    (
        "huge-heads",
        "num_attention_heads",
        "1000000000000",
        "'num_attention_heads' is 1e+12, beyond any real model (limit 1.05e+06)",
    ),
    ("nan", "hidden_size", "NaN", "'hidden_size' must be an integer, got nan"),
    ("inf", "hidden_size", "Infinity", "'hidden_size' must be an integer, got inf"),
    ("-inf", "num_hidden_layers", "-Infinity", "'num_hidden_layers' must be an integer, got -inf"),
    ("bool-tie", "tie_word_embeddings", '"yes"', "'tie_word_embeddings' must be true or false, got the string 'yes'"),
    ("model-type-int", "model_type", "3", "'model_type' must be a string, got 3"),
    (
        "layer-types-string",
        "layer_types",
        '"full_attention"',
        "'layer_types' must be a list, got the string 'full_attention'",
    ),
]


def _with_value(key: str, value_text: str, path: str = LLAMA) -> str:
    """The corpus config with ``key`` set to the literal JSON text ``value_text`` (NaN allowed)."""
    d = _base(path)
    d[key] = "@@VALUE@@"
    return _dump(d).replace('"@@VALUE@@"', value_text)


@pytest.mark.parametrize("case,key,value,message", BAD_VALUES, ids=[c[0] for c in BAD_VALUES])
def test_bad_value_names_file_line_and_key(tmp_path, capsys, case, key, value, message):
    text = _with_value(key, value)
    path = _write(tmp_path, "config.json", text)
    line, col = _loc(text, key)
    expected = f"{path}:{line}:{col}: error: {message}"
    assert _check_error(capsys, path) == expected
    assert _inspect_error(capsys, path) == expected


def test_bad_list_item_points_at_the_item(tmp_path, capsys):
    text = _with_value("layer_types", '[\n    "full_attention",\n    7\n  ]')
    path = _write(tmp_path, "config.json", text)
    line, _ = _loc(text, "layer_types")
    assert _check_error(capsys, path) == f"{path}:{line + 2}:5: error: 'layer_types[1]' must be a string"


@pytest.mark.parametrize(
    "value,message",
    [
        (".inf", "'hidden_size' must be an integer, got inf"),
        (".nan", "'hidden_size' must be an integer, got nan"),
        ("'4096'", "'hidden_size' must be an integer, got the string '4096'"),
        ("~", "'hidden_size' must be an integer, got null"),
        ("4096.5", "'hidden_size' must be an integer, got 4096.5"),
    ],
)
def test_bad_value_in_yaml(tmp_path, capsys, value, message):
    path = _write(tmp_path, "config.yaml", f"model_type: llama\nnum_hidden_layers: 2\nhidden_size: {value}\n")
    assert _check_error(capsys, path) == f"{path}:3:1: error: {message}"


def test_null_means_default_where_transformers_says_so(tmp_path, capsys):
    """num_key_value_heads: null is "as many KV heads as query heads" in transformers — not an error."""
    path = _write(tmp_path, "config.json", _with_value("num_key_value_heads", "null"))
    rc, out, _ = _run(capsys, "inspect", path, "--format", "json")
    assert rc == 0
    spec = json.loads(out)["spec"]
    assert (spec["num_heads"], spec["num_kv_heads"]) == (32, 32)


# -- files that cannot be read ---------------------------------------------------------------------------
def test_directory(tmp_path, capsys):
    """A directory is walked (tests/engine/test_sources.py): one with no config is a warning for check, an error for
    a command that reads one config."""
    d = tmp_path / "config.json"
    d.mkdir()
    rc, out, err = _run(capsys, "check", str(d))
    assert (rc, out.splitlines()[0]) == (0, "0 findings: 0 errors, 0 warnings, 0 infos")
    assert err.startswith(f"colint: warning: {d}: no config files found (looked for config.json, ")
    assert _inspect_error(capsys, str(d)) == (
        f"{d}: error: no config file found in this folder; name one file (this command reads one config)"
    )


def test_missing_file(tmp_path, capsys):
    p = str(tmp_path / "nope.json")
    assert _check_error(capsys, p) == f"{p}: error: no such file"
    assert _inspect_error(capsys, p) == f"{p}: error: no such file"


def test_unreadable_file(tmp_path, capsys):
    path = _write(tmp_path, "config.json", _LLAMA_TEXT)
    os.chmod(path, 0)
    try:
        if os.geteuid() == 0:
            # root reads a mode-000 file anyway: colint must then simply check it.
            rc, out, _ = _run(capsys, "check", path)
            assert rc in (0, 1) and ": error: " not in out
        else:
            assert _check_error(capsys, path) == f"{path}: error: permission denied"
    finally:
        os.chmod(path, 0o644)


def test_permission_error_message_even_as_root(tmp_path, capsys, monkeypatch):
    """The message for an unreadable file, independent of who runs the test."""
    import colint.util.fileio as fileio

    path = _write(tmp_path, "config.json", _LLAMA_TEXT)
    real_open = os.open

    def deny(file, *a, **kw):
        if os.fspath(file) == path:
            raise PermissionError(13, "Permission denied", path)
        return real_open(file, *a, **kw)

    monkeypatch.setattr(fileio.os, "open", deny)
    assert _check_error(capsys, path) == f"{path}: error: permission denied"


def test_yaml_over_its_size_limit_is_refused_before_parsing(tmp_path, capsys):
    from colint.loading import MAX_YAML_BYTES

    body = "model_type: llama\n" + "".join(f"k{i}: {i}\n" for i in range(60_000))
    assert len(body) > MAX_YAML_BYTES
    path = _write(tmp_path, "big.yaml", body)
    assert _check_error(capsys, path) == (
        f"{path}:1:1: error: file is {len(body):,} bytes, over the {MAX_YAML_BYTES:,}-byte limit for a YAML config"
    )


def test_large_json_under_the_limit_is_checked(tmp_path, capsys):
    """A 1 MB config.json (a huge id2label table) is read, not refused."""
    d = _base()
    d["id2label"] = {str(i): f"LABEL_{i}" for i in range(40_000)}
    path = _write(tmp_path, "config.json", _dump(d))
    assert os.path.getsize(path) > 1_000_000
    rc, out, _ = _run(capsys, "check", path, "--select", "CL0")
    assert rc in (0, 1) and ": error: " not in out


# -- valid but strange: findings, not errors -------------------------------------------------------------
def test_bom_is_ignored(tmp_path, capsys):
    plain = _write(tmp_path, "plain.json", _LLAMA_TEXT)
    bom = _write(tmp_path, "bom.json", "\ufeff" + _LLAMA_TEXT)
    rc_plain, out_plain, _ = _run(capsys, "check", plain, "--format", "json")
    rc_bom, out_bom, _ = _run(capsys, "check", bom, "--format", "json")
    assert rc_bom == rc_plain in (0, 1)
    a, b = json.loads(out_plain)["files"][0], json.loads(out_bom)["files"][0]
    assert b["error"] is None and b["findings"] == a["findings"]


def test_bom_yaml(tmp_path, capsys):
    path = _write(tmp_path, "config.yaml", "\ufeffmodel_type: llama\nhidden_size: 0\n")
    assert _check_error(capsys, path) == f"{path}:2:1: error: 'hidden_size' must be at least 1, got 0"


def _findings(capsys, path: str) -> tuple[int, list[dict]]:
    rc, out, _ = _run(capsys, "check", path, "--format", "json", "--select", "CL0")
    f = json.loads(out)["files"][0]
    assert f["error"] is None
    return rc, f["findings"]


@pytest.mark.parametrize(
    "changes,code,key",
    [
        ({"num_key_value_heads": 12}, "CL002", "num_key_value_heads"),
        ({"hidden_size": 4000, "num_attention_heads": 48}, "CL001", "num_attention_heads"),
        ({"layer_types": ["full_attention"] * 3}, None, "layer_types"),
    ],
)
def test_inconsistent_dims_are_findings(tmp_path, capsys, changes, code, key):
    text = _mutated(**changes)
    path = _write(tmp_path, "config.json", text)
    rc, findings = _findings(capsys, path)
    assert rc == 1
    hit = [f for f in findings if f["key"] == key and (code is None or f["code"] == code)]
    assert hit, findings
    assert (hit[0]["line"], hit[0]["column"]) == _loc(text, key)
    assert hit[0]["severity"] == "error"


def test_top_k_above_experts_is_a_finding(tmp_path, capsys):
    text = _mutated(MIXTRAL, num_experts_per_tok=9)
    path = _write(tmp_path, "config.json", text)
    rc, findings = _findings(capsys, path)
    assert rc == 1
    assert [(f["code"], f["line"]) for f in findings if f["code"] == "CL003"] == [
        ("CL003", _loc(text, "num_experts_per_tok")[0])
    ]


def test_duplicate_json_key_is_a_finding(tmp_path, capsys):
    text = _LLAMA_TEXT.replace('"hidden_size": 4096,', '"hidden_size": 4096,\n  "hidden_size": 4096,')
    path = _write(tmp_path, "config.json", text)
    rc, findings = _findings(capsys, path)
    assert rc == 1
    dup = [f for f in findings if f["key"] == "hidden_size"]
    assert dup and dup[0]["line"] == _loc(text, "hidden_size")[0]


# -- unknown architectures and formats -------------------------------------------------------------------
def test_unknown_model_type(tmp_path, capsys):
    """A Llama's keys under a model_type nobody knows are read by their structure (issue 30); a file that states
    no head count is refused, located at model_type."""
    text = _mutated(model_type="nonexistent_xyz", architectures=["NonexistentForCausalLM"])
    path = _write(tmp_path, "config.json", text)
    line, col = _loc(text, "model_type")
    rc, findings = _findings(capsys, path)
    said = [f for f in findings if f["code"] == "CL007" and f["key"] == "model_type"]
    assert [(f["severity"], f["line"], f["column"]) for f in said] == [("info", line, col)]
    assert "read by its structure as llama" in said[0]["message"]
    headless = json.loads(text)
    del headless["num_attention_heads"]
    path = _write(tmp_path, "config.json", json.dumps(headless, indent=2))
    first = _check_error(capsys, path)
    assert first.startswith(f"{path}:{line}:{col}: error: model_type 'nonexistent_xyz' is not supported by colint")
    assert first.endswith("model types (`colint formats` lists them)")


def test_unrecognized_format(tmp_path, capsys):
    path = _write(tmp_path, "config.json", '{"foo": 1, "bar": [1, 2]}\n')
    # no model-architecture key at all: by default a skipped file (colint.triage), with --strict an error
    assert _check_error(capsys, path, "--strict").startswith(f"{path}:1:1: error: format not recognized: ")
    rc, out, _ = _run(capsys, "check", path, "-v")
    assert rc == 0 and out.startswith(f"{path}: note: skipped: no model-architecture keys"), out


def test_no_model_type(tmp_path, capsys):
    d = _base()
    del d["model_type"], d["architectures"]
    path = _write(tmp_path, "config.json", _dump(d))
    assert _check_error(capsys, path) == (
        f"{path}:1:1: error: no 'model_type' and no known 'architectures' entry: cannot tell the model family"
    )


def test_one_bad_file_does_not_stop_the_others(tmp_path, capsys):
    good = _write(tmp_path, "good.json", _LLAMA_TEXT)
    bad = _write(tmp_path, "bad.json", "{")
    rc, out, _ = _run(capsys, "check", bad, good, "--format", "json")
    assert rc == 2
    files = json.loads(out)["files"]
    assert files[0]["error"] == {
        "message": "invalid JSON: file ends before the document is complete "
        "(Expecting property name enclosed in double quotes)",
        "line": 1,
        "column": 2,
    }
    assert files[1]["error"] is None


# -- the installed console script: no traceback on stderr ------------------------------------------------
@pytest.mark.parametrize(
    "name,content,args",
    [
        ("truncated.json", _LLAMA_TEXT[:_CUT], ["check"]),
        ("binary.yaml", b"\x00\x01\x02garbage", ["inspect"]),
        (
            "bomb.yaml",
            'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
            + "".join(f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]\n" for p, n in zip("abcdefgh", "bcdefghi")),
            ["check"],
        ),
    ],
)
def test_console_script_never_prints_a_traceback(tmp_path, name, content, args):
    path = _write(tmp_path, name, content)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLINT")}
    proc = subprocess.run([*COLINT, *args, path], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout and "internal error" not in proc.stderr + proc.stdout
    located = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.startswith(path)]
    assert len(located) == 1 and re.match(re.escape(path) + r":\d+:\d+: error: ", located[0]), located


def test_very_deep_irregular_stack_is_checked_not_hung(tmp_path):
    """3,000 layers in an irregular sliding/full pattern: the rules' pattern-period search was O(L^3)
    (minutes); a hang fails here through the subprocess timeout instead of stalling CI."""
    import random

    rng = random.Random(7)
    cfg = {
        "model_type": "mistral",
        "architectures": ["MistralForCausalLM"],
        "hidden_size": 256,
        "intermediate_size": 1024,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 64,
        "num_hidden_layers": 3000,
        "vocab_size": 32000,
        "sliding_window": 4096,
        "layer_types": [rng.choice(["sliding_attention", "full_attention"]) for _ in range(3000)],
    }
    path = _write(tmp_path, "config.json", json.dumps(cfg))
    proc = subprocess.run([*COLINT, "check", path], capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "internal error" not in proc.stdout + proc.stderr
