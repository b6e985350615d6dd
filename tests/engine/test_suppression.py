"""Suppression: `# colint: ignore[...]` in YAML, the baseline for config.json, unused suppressions (CL000)."""

from __future__ import annotations

import json
from pathlib import Path

from colint.cli.main import main
from colint.engine.suppression import parse_directives

YAML = """\
# design sketch, Hugging Face keys
model_type: mistral
hidden_size: 1024
intermediate_size: 2816
num_hidden_layers: 8
num_attention_heads: 16
num_key_value_heads: 6{kv_comment}
max_position_embeddings: 4096
sliding_window: 4096
vocab_size: 32000
"""

JSON = (
    '{\n  "model_type": "llama",\n  "hidden_size": 2048,\n  "intermediate_size": 5632,\n'
    '  "num_hidden_layers": 4,\n  "num_attention_heads": 32,\n  "num_key_value_heads": 12,\n'
    '  "vocab_size": 32000\n}\n'
)


def _check(args, monkeypatch, capsys, cwd: Path):
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    rc = main(["check", *args, "--isolated", "--format", "json"])
    out, err = capsys.readouterr()
    report = json.loads(out) if out.strip() else None
    found = [(f["code"], f["line"]) for r in report["files"] for f in r["findings"]] if report else None
    return rc, found, err


def test_yaml_comment_on_the_line_suppresses_that_code(tmp_path, monkeypatch, capsys):
    (tmp_path / "m.colint.yaml").write_text(YAML.format(kv_comment=""))
    rc, found, _ = _check(["m.colint.yaml", "--select", "CL0"], monkeypatch, capsys, tmp_path)
    assert found == [("CL002", 7), ("CL009", 9)] and rc == 1
    (tmp_path / "m.colint.yaml").write_text(YAML.format(kv_comment="  # colint: ignore[CL002]  # 6 is deliberate"))
    rc, found, _ = _check(["m.colint.yaml", "--select", "CL0"], monkeypatch, capsys, tmp_path)
    assert found == [("CL009", 9)] and rc == 0  # CL009 is info, below fail-on warning


def test_own_line_comment_covers_the_next_key_and_ignore_file_the_whole_file(tmp_path, monkeypatch, capsys):
    text = YAML.format(kv_comment="").replace("num_key_value_heads", "# colint: ignore[CL002]\n\nnum_key_value_heads")
    (tmp_path / "a.yaml").write_text(text)
    _, found, _ = _check(["a.yaml", "--select", "CL0"], monkeypatch, capsys, tmp_path)
    assert found == [("CL009", 11)]
    (tmp_path / "b.yaml").write_text("# colint: ignore-file[CL009, CL002]\n" + YAML.format(kv_comment=""))
    _, found, _ = _check(["b.yaml", "--select", "CL0"], monkeypatch, capsys, tmp_path)
    assert found == []
    (tmp_path / "c.yaml").write_text(YAML.format(kv_comment="  # colint: ignore"))  # bare: every code on the line
    _, found, _ = _check(["c.yaml", "--select", "CL0"], monkeypatch, capsys, tmp_path)
    assert found == [("CL009", 9)]


def test_unused_unknown_and_malformed_suppressions_are_reported(tmp_path, monkeypatch, capsys):
    text = (
        YAML.format(kv_comment="  # colint: ignore[CL002, CL004]")
        .replace("hidden_size: 1024", "hidden_size: 1024  # colint: ignore[CL777]")
        .replace("vocab_size: 32000", "vocab_size: 32000  # colint: ignore CL009")
        .replace("intermediate_size: 2816", "intermediate_size: 2816  # colint: ignore[CL201]")
    )
    (tmp_path / "m.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    rc = main(["check", "m.yaml", "--select", "CL0", "--isolated"])
    out = capsys.readouterr().out.splitlines()
    assert out[:4] == [
        "m.yaml:3:20: CL000 warning suppression names unknown rule code CL777 (see `colint rules`)",
        "m.yaml:7:25: CL000 warning unused suppression: no CL004 finding on the line it covers",
        "m.yaml:10:20: CL000 warning malformed suppression comment: expected `# colint: ignore[CODE, ...]`, "
        "got `# colint: ignore CL009`",
        "m.yaml:9:1: CL009 info sliding window 4096 ≥ max_position_embeddings 4096: the window layers are full "
        "attention in practice",
    ]
    assert rc == 1
    # CL201 did not run under --select CL0, so its suppression is not judged; with CL000 ignored nothing is judged
    _, found, _ = _check(["m.yaml", "--select", "CL0", "--ignore", "CL000"], monkeypatch, capsys, tmp_path)
    assert found == [("CL009", 9)]


def test_comments_in_json_are_not_read(tmp_path, monkeypatch, capsys):
    # a JSON string that looks like a directive is data, not a comment
    (tmp_path / "config.json").write_text(JSON.replace("{\n", '{\n  "_comment": "# colint: ignore-file[CL002]",\n', 1))
    rc, found, _ = _check(["config.json", "--select", "CL002"], monkeypatch, capsys, tmp_path)
    assert (rc, found) == (1, [("CL002", 8)])


def test_baseline_accepts_current_findings_and_reports_only_new_ones(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    (repo / "ckpt").mkdir(parents=True)
    cfg = repo / "ckpt" / "config.json"
    cfg.write_text(JSON)
    monkeypatch.chdir(repo)
    assert (
        main(["check", "ckpt/config.json", "--select", "CL0", "--isolated", "--write-baseline", "colint-baseline.json"])
        == 0
    )
    assert capsys.readouterr().err.strip() == "colint: recorded 1 finding in colint-baseline.json"
    data = json.loads((repo / "colint-baseline.json").read_text())
    assert data == {
        "colint_baseline": 1,
        "findings": [
            {
                "path": "ckpt/config.json",
                "code": "CL002",
                "key": "num_key_value_heads",
                "message": "12 KV heads do not divide 32 query heads",
            }
        ],
    }

    rc, found, _ = _check(
        ["ckpt/config.json", "--select", "CL0", "--baseline", "colint-baseline.json"], monkeypatch, capsys, repo
    )
    assert (rc, found) == (0, [])

    # reformatted (every line moved) and run from another directory: the entry still matches
    cfg.write_text(JSON.replace("{\n", '{\n  "torch_dtype": "bfloat16",\n\n', 1))
    rc, found, _ = _check(
        ["config.json", "--select", "CL0", "--baseline", "../colint-baseline.json"], monkeypatch, capsys, repo / "ckpt"
    )
    assert (rc, found) == (0, [])

    # a new finding is reported; the accepted one is not
    cfg.write_text(JSON.replace('"vocab_size": 32000', '"vocab_size": 32000,\n  "rope_theta": NaN'))
    rc, found, _ = _check(
        ["ckpt/config.json", "--select", "CL0", "--baseline", "colint-baseline.json"], monkeypatch, capsys, repo
    )
    assert found == [("CL006", 9)]

    # once the accepted finding is fixed, the stale entry is reported where its key is
    cfg.write_text(JSON.replace('"num_key_value_heads": 12', '"num_key_value_heads": 8'))
    rc, found, _ = _check(
        ["ckpt/config.json", "--select", "CL0", "--baseline", "colint-baseline.json"], monkeypatch, capsys, repo
    )
    assert found == [("CL000", 7)] and rc == 1
    monkeypatch.chdir(repo)
    main(["check", "ckpt/config.json", "--select", "CL0", "--isolated", "--baseline", "colint-baseline.json"])
    assert "baseline entry CL002 at num_key_value_heads no longer matches a finding" in capsys.readouterr().out


def test_baseline_from_the_config_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(JSON)
    (tmp_path / "base.json").write_text(
        json.dumps(
            {
                "colint_baseline": 1,
                "findings": [{"path": "m/config.json", "code": "CL002", "key": "num_key_value_heads"}],
            }
        )
    )
    (tmp_path / ".colint.toml").write_text('select = ["CL0"]\nbaseline = "base.json"\n')
    monkeypatch.chdir(tmp_path / "m")
    assert main(["check", "config.json", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["findings"] == []


def test_bad_baseline_is_exit_2(tmp_path, monkeypatch, capsys):
    (tmp_path / "config.json").write_text(JSON)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "config.json", "--isolated", "--select", "CL0", "--baseline", "missing.json"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == "missing.json: error: baseline file not found (create it with `colint check --write-baseline FILE`)"
    )
    (tmp_path / "bad.json").write_text('{"findings": []}')
    assert main(["check", "config.json", "--isolated", "--select", "CL0", "--baseline", "bad.json"]) == 2
    assert "not a colint baseline" in capsys.readouterr().err


def test_parse_directives():
    text = (
        "a: 1  # colint: ignore[cl002,CL005]\n# colint: ignore[CL009]\n\n# other comment\nb: 2\n# colint: ignore-file\n"
    )
    d = parse_directives(text)
    assert [(x.line, x.column, x.file_wide, x.target_line, x.codes, x.error) for x in d] == [
        (1, 7, False, 1, ("CL002", "CL005"), None),
        (2, 1, False, 5, ("CL009",), None),
        (6, 1, True, None, (), None),
    ]
    assert parse_directives("a: 1  # colint: ignore[]\n")[0].error == "suppression comment names no code inside [ ]"
