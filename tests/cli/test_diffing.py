"""`colint check --base REF` and `colint diff BASE HEAD` on a real git repository made in each test: the deltas of a
change (exact parameter and memory deltas computed here from the shapes), renames, added and removed configs, a
base that does not parse, only new findings blocking, and the action's step-summary table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from colint.cli.main import main

REPO = Path(__file__).resolve().parents[2]
LLAMA_70B = REPO / "tests" / "corpus" / "hf" / "llama3__Llama-3.3-70B-Instruct.json"  # SOURCES.md row
MOBILELLM_125M = REPO / "tests" / "corpus" / "hf" / "mobilellm__MobileLLM-125M.json"  # SOURCES.md row
BASE_CONFIG = json.loads(LLAMA_70B.read_text(encoding="utf-8"))


def llama_params(c: dict) -> int:
    """Llama's parameter count from its shapes (untied embeddings, no biases): embedding + lm_head, per layer q/o
    (h x h), k/v (h x kv_heads * head_dim), gate/up/down (h x I), two RMSNorms; the final norm."""
    h, i, layers = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    kv = c["num_key_value_heads"] * (h // c["num_attention_heads"])
    per_layer = 2 * h * h + 2 * h * kv + 3 * h * i + 2 * h
    return 2 * c["vocab_size"] * h + layers * per_layer + h


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def write(path: Path, config: dict | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config if isinstance(config, str) else json.dumps(config, indent=2) + "\n", encoding="utf-8")


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    r = tmp_path / "models"
    r.mkdir()
    git(r, "init", "-q")
    git(r, "config", "user.name", "colint test")
    git(r, "config", "user.email", "test@example.invalid")
    git(r, "config", "commit.gpgsign", "false")
    monkeypatch.chdir(r)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("COLINT_OUTPUT_FORMAT", raising=False)
    return r


def run_json(capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["check", "--isolated", "--format", "json", *args])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def by_path(data: dict) -> dict[str, dict]:
    return {c["path"]: c for c in data["configs"]}


def test_two_commits_of_a_config_give_exact_deltas(repo, capsys):
    write(repo / "llama" / "config.json", BASE_CONFIG)
    base_sha = commit(repo, "base")
    head_config = {**BASE_CONFIG, "intermediate_size": 28000}
    write(repo / "llama" / "config.json", head_config)
    commit(repo, "narrow the FFN")

    code, data, _err = run_json(capsys, "--base", "HEAD~1")
    assert code == 0 and data["base"] == "HEAD~1" and data["commit"] == base_sha
    (c,) = data["configs"]
    assert (c["path"], c["base"], c["status"]) == ("llama/config.json", "HEAD~1:llama/config.json", "modified")
    before, after = llama_params(BASE_CONFIG), llama_params(head_config)
    assert before == 70_553_706_496  # Llama 3.3 70B
    assert c["params_total"]["before"] == before and c["params_total"]["after"] == after
    assert c["params_total"]["delta"] == after - before == 80 * 3 * 8192 * (28000 - 28672) == -1_321_205_760
    kv = 2 * 80 * 8 * 128 * 2  # K and V, 80 layers, 8 KV heads of 128, bf16
    assert c["kv_cache_bytes_per_token_bf16"] == {"before": kv, "after": kv, "delta": 0, "delta_pct": 0.0}
    (step,) = c["steps"]  # the default target: b200
    assert step["gpu"] == "b200"
    # one GPU at tp=1 holds every weight in bf16: two bytes per parameter
    assert step["weight_bytes_per_gpu"]["delta"] == 2 * (after - before)
    # a narrower FFN does fewer FLOPs and reads fewer weights: both steps get faster
    assert step["decode_s"]["after"] < step["decode_s"]["before"]
    assert step["prefill_s"]["after"] < step["prefill_s"]["before"]
    assert step["prefill_s"]["delta_pct"] == pytest.approx(
        100 * (step["prefill_s"]["after"] - step["prefill_s"]["before"]) / step["prefill_s"]["before"]
    )
    assert [(f["code"], f["key"]) for f in c["findings"]["new"]] == [("CL201", "intermediate_size")]
    assert c["findings"]["fixed"] == [] and c["findings"]["unchanged"] == []
    assert c["frontier"] is None  # opt-in
    assert data["summary"] == {"configs": 1, "new": 1, "fixed": 0, "unchanged": 0, "regressions": 0}

    main(["check", "--isolated", "--base", "HEAD~1"])  # the text format shows the same figures
    text = capsys.readouterr().out
    assert "llama/config.json (modified; base HEAD~1:llama/config.json)" in text
    assert "parameters           70.554B -> 69.233B (-1.87%)" in text
    assert "findings: 1 new, 0 fixed, 0 unchanged" in text


def test_findings_present_at_the_base_never_block(repo, capsys):
    misaligned = {**BASE_CONFIG, "vocab_size": 128257}  # CL202 warning: not a multiple of 8
    write(repo / "config.json", misaligned)
    commit(repo, "base with a warning")
    write(repo / "config.json", {**misaligned, "intermediate_size": 28000})
    commit(repo, "an unrelated change")

    assert main(["check", "--isolated", "--format", "concise", "config.json"]) == 1  # the whole file: it blocks
    capsys.readouterr()
    code, data, _ = run_json(capsys, "--base", "HEAD~1")
    assert code == 0
    (c,) = data["configs"]
    assert [f["code"] for f in c["findings"]["unchanged"]] == ["CL202"]
    assert [f["code"] for f in c["findings"]["new"]] == ["CL201"]

    # text: the deltas, then the new finding; the estimate context of the one GPU is printed once, by the deltas
    assert main(["check", "--isolated", "--base", "HEAD~1", "--output-format", "concise"]) == 0
    text = capsys.readouterr().out
    assert "CL201" in text and "CL202" not in text
    assert [ln for ln in text.splitlines() if ln.startswith("estimate: ")] == [
        next(ln for ln in text.splitlines() if ln.startswith("estimate: b200"))
    ]

    # annotations: the new finding only
    assert main(["check", "--isolated", "--base", "HEAD~1", "--format", "github"]) == 0
    out = capsys.readouterr().out
    assert "CL201" in out and "CL202" not in out

    # a change that introduces the warning blocks
    write(repo / "config.json", BASE_CONFIG)
    commit(repo, "aligned")
    write(repo / "config.json", misaligned)
    commit(repo, "misaligned again")
    code, data, _ = run_json(capsys, "--base", "HEAD~1")
    assert code == 1
    assert [f["code"] for f in by_path(data)["config.json"]["findings"]["new"]] == ["CL202"]
    code, data, _ = run_json(capsys, "--base", "HEAD~1", "config.json")
    assert code == 1
    # and the change that removes it (the work tree back to the aligned text) reports it fixed
    git(repo, "checkout", "-q", "HEAD~1", "--", "config.json")
    code, data, _ = run_json(capsys, "--base", "HEAD")
    assert code == 0
    assert [f["code"] for f in by_path(data)["config.json"]["findings"]["fixed"]] == ["CL202"]


def test_a_rename_is_followed_and_its_findings_stay_existing(repo, capsys):
    misaligned = {**BASE_CONFIG, "vocab_size": 128257}
    write(repo / "old" / "config.json", misaligned)
    commit(repo, "base")
    git(repo, "mv", "old", "new")
    write(repo / "new" / "config.json", {**misaligned, "num_hidden_layers": 81})
    commit(repo, "move and deepen")

    code, data, _ = run_json(capsys, "--base", "HEAD~1")
    (c,) = data["configs"]
    assert (c["path"], c["base"], c["status"]) == ("new/config.json", "HEAD~1:old/config.json", "renamed")
    h, i, kv = 8192, 28672, 1024
    assert c["params_total"]["delta"] == 2 * h * h + 2 * h * kv + 3 * h * i + 2 * h  # one more layer
    assert [f["code"] for f in c["findings"]["unchanged"]] == ["CL202"]
    assert c["findings"]["new"] == [] and code == 0


def test_added_and_removed_configs(repo, capsys):
    write(repo / "keep" / "config.json", BASE_CONFIG)
    write(repo / "gone" / "config.json", BASE_CONFIG)
    commit(repo, "two models")
    (repo / "gone" / "config.json").unlink()
    # a different model, on one line: git's rename detection (-M, 50% of lines alike) does not pair it with gone/
    small = json.loads(MOBILELLM_125M.read_text(encoding="utf-8"))
    write(repo / "added" / "config.json", json.dumps(small))
    commit(repo, "one gone, one added")

    code, data, _ = run_json(capsys, "--base", "HEAD~1")
    configs = by_path(data)
    assert sorted(configs) == ["added/config.json", "gone/config.json"]  # keep/ did not change
    added, gone = configs["added/config.json"], configs["gone/config.json"]
    assert (added["status"], added["base"]) == ("added", None)
    assert added["params_total"] == {"before": None, "after": llama_params(small), "delta": None, "delta_pct": None}
    # an added file's findings are all new: hidden_size 576 is not a multiple of 128 (CL201 warning)
    new = [(f["code"], f["key"], f["severity"]) for f in added["findings"]["new"]]
    assert ("CL201", "hidden_size", "warning") in new and len(new) == 4 and code == 1
    assert (gone["status"], gone["base"]) == ("removed", "HEAD~1:gone/config.json")
    assert gone["params_total"]["before"] == llama_params(BASE_CONFIG) and gone["params_total"]["after"] is None
    assert gone["steps"][0]["decode_s"]["after"] is None and gone["steps"][0]["decode_s"]["before"] > 0

    # with PATH arguments: only what lies under them; an untracked new file counts as added
    write(repo / "keep" / "draft" / "config.json", json.dumps(small))
    code, data, _ = run_json(capsys, "--base", "HEAD~1", "keep")
    assert [(c["path"], c["status"]) for c in data["configs"]] == [("keep/draft/config.json", "added")]
    assert data["unchanged_files"] == 1  # keep/config.json: identical at HEAD~1, not checked


def test_a_base_that_does_not_parse(repo, capsys):
    write(repo / "config.json", '{"model_type": "llama", "hidden_size": 8192,,}\n')
    commit(repo, "broken")
    write(repo / "config.json", {**BASE_CONFIG, "vocab_size": 128257})
    commit(repo, "repaired")

    code, data, err = run_json(capsys, "--base", "HEAD~1")
    (c,) = data["configs"]
    assert c["base_error"].startswith("HEAD~1:config.json:1:")
    assert "error:" in c["base_error"] and "\n" not in c["base_error"]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "HEAD~1:config.json:1:" in lines[0]  # one line on stderr
    # the head is still linted: every finding counts as new, the run is not an error
    assert c["head_error"] is None and c["params_total"]["after"] == llama_params({**BASE_CONFIG, "vocab_size": 128257})
    assert [f["code"] for f in c["findings"]["new"]] == ["CL202"] and code == 1

    # the other way round: a head that does not parse is the run's error (exit 2), located in the file
    write(repo / "config.json", '{"model_type": "llama",,}\n')
    code, data, _ = run_json(capsys, "--base", "HEAD")
    (c,) = data["configs"]
    assert code == 2 and c["head_error"].startswith("config.json:1:") and c["params_total"]["after"] is None


def test_git_errors_are_one_line_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert main(["check", "--base", "HEAD~1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "needs a git repository" in err
    git(tmp_path, "init", "-q")
    assert main(["check", "--base", "no-such-branch"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("colint: error: --base no-such-branch: unknown git revision")
    assert main(["check"]) == 2  # no PATH and no --base
    assert "Missing argument" in capsys.readouterr().err


def test_fail_on_regression_and_the_markdown_table(repo, capsys):
    write(repo / "config.json", BASE_CONFIG)
    commit(repo, "base")
    write(repo / "config.json", {**BASE_CONFIG, "intermediate_size": 32768})  # a wider FFN: slower steps
    commit(repo, "widen")

    code, data, _ = run_json(capsys, "--base", "HEAD~1", "--fail-on-regression", "2%")
    step = data["configs"][0]["steps"][0]
    slower = {s: step[f"{s}_s"]["delta_pct"] for s in ("decode", "prefill")}
    assert all(p > 2 for p in slower.values())
    assert code == 1 and data["regression_threshold_pct"] == 2.0
    assert {(r["step"], r["gpu"]) for r in data["configs"][0]["regressions"]} == {
        ("decode", "b200"),
        ("prefill", "b200"),
    }
    # without the flag the same change does not fail (its findings are the base's)
    assert run_json(capsys, "--base", "HEAD~1")[0] == 0
    # a threshold above both: no regression
    assert run_json(capsys, "--base", "HEAD~1", "--fail-on-regression", f"{max(slower.values()) + 1:.1f}")[0] == 0

    assert main(["check", "--isolated", "--base", "HEAD~1", "--format", "markdown", "--fail-on-regression", "2%"]) == 1
    out = capsys.readouterr()
    assert "the prefill step on b200 is" in out.err
    table = [line for line in out.out.splitlines() if line.startswith("| `config.json`")]
    assert len(table) == 1
    cells = [c.strip() for c in table[0].strip("|").split("|")]
    assert cells[:2] == ["`config.json` (modified)", "b200"]
    assert cells[6].startswith("**") and cells[7].startswith("**")  # decode and prefill: slower by more than 2%
    wider = llama_params({**BASE_CONFIG, "intermediate_size": 32768})
    weights = f"{2 * llama_params(BASE_CONFIG) / 1e9:.4g} GB → {2 * wider / 1e9:.4g} GB"  # bf16 at tp=1
    assert cells[4].startswith(weights)

    # one row per target GPU, each at its own deployment
    main(["check", "--isolated", "--base", "HEAD~1", "--format", "markdown", "--gpu", "b200", "--gpu", "h100-sxm"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| `config.json`")]
    assert [r.split("|")[2].strip() for r in rows] == ["b200", "h100-sxm"]


def test_diff_of_two_files_and_the_frontier(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.json", BASE_CONFIG)
    write(tmp_path / "b.json", {**BASE_CONFIG, "intermediate_size": 28000})
    assert main(["diff", "a.json", "b.json", "--isolated", "--format", "json", "--frontier"]) == 0
    data = json.loads(capsys.readouterr().out)
    (c,) = data["configs"]
    assert c["base"] == "a.json" and c["params_total"]["delta"] == -1_321_205_760
    (f,) = c["frontier"]
    assert [level["tokens_per_s_per_user"] for level in f["levels"]] == [20.0, 50.0, 100.0]
    # a smaller model on the same GPU: at least as many tokens/s per GPU at each level
    for level in f["levels"]:
        tps = level["tokens_per_s_per_gpu"]
        assert tps["before"] > 0 and tps["after"] >= tps["before"]

    import jsonschema

    schema = json.loads((REPO / "docs" / "diff.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)


def test_the_published_diff_schema_is_current():
    from colint.reporters.json_schema import diff_schema

    assert json.loads((REPO / "docs" / "diff.schema.json").read_text(encoding="utf-8")) == json.loads(
        json.dumps(diff_schema())
    ), "regenerate: colint schema diff -o docs/diff.schema.json"


def _action_script() -> tuple[str, dict]:
    from ruamel.yaml import YAML

    action = YAML(typ="safe").load((REPO / "action.yml").read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if s["name"] == "Run colint")
    return step["run"], step["env"]


def test_the_action_on_a_pull_request_writes_the_step_summary_table(repo, tmp_path):
    """The action's own script, run as GitHub runs it on a pull_request: the base commit found from the event, the
    annotations of the new findings only, the deltas table in $GITHUB_STEP_SUMMARY, and fail-on-regression."""
    misaligned = {**BASE_CONFIG, "vocab_size": 128257}
    write(repo / "m" / "config.json", misaligned)
    base_sha = commit(repo, "base")
    write(repo / "m" / "config.json", {**misaligned, "intermediate_size": 32768})
    commit(repo, "widen the FFN")

    script, env_spec = _action_script()
    assert set(env_spec) >= {"COLINT_BASE", "COLINT_EVENT", "COLINT_PR_BASE_SHA", "COLINT_FAIL_ON_REGRESSION"}
    runner = tmp_path / "runner"
    (runner / "colint-venv" / "bin").mkdir(parents=True)
    wrapper = runner / "colint-venv" / "bin" / "colint"  # what the install step puts there: this colint
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m colint "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "RUNNER_TEMP": str(runner),
        "GITHUB_STEP_SUMMARY": str(summary),
        "COLINT_PATHS": "",
        "COLINT_ARGS": "--isolated",
        "COLINT_SARIF": "",
        "COLINT_BASE": "",
        "COLINT_FRONTIER": "false",
        "COLINT_EVENT": "pull_request",
        "COLINT_PR_BASE_SHA": base_sha,
        "COLINT_FAIL_ON_REGRESSION": "2%",
    }
    env.pop("GITHUB_ACTIONS", None)
    proc = subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr  # the step got slower by more than 2%
    assert "CL202" not in proc.stdout  # present at the base: no annotation
    assert "slower (more than --fail-on-regression 2%)" in proc.stderr
    text = summary.read_text(encoding="utf-8")
    assert f"changed since `{base_sha}`" in text
    header = "| config | GPU | deployment | parameters | weights per GPU | KV cache per token (bf16) | decode step"
    assert header in text
    (row,) = [line for line in text.splitlines() if line.startswith("| `m/config.json` (modified)")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "b200" and cells[6].startswith("**") and cells[7].startswith("**")
    assert cells[8] == "0 / 0 / 1"  # new / fixed / existing: the vocab warning existed at the base

    # on a push (no base): the whole files, as before
    env.update(COLINT_EVENT="push", COLINT_PR_BASE_SHA="", COLINT_FAIL_ON_REGRESSION="")
    summary.unlink()
    proc = subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and "CL202" in proc.stdout  # the existing warning blocks a full lint
    assert "changed since" not in summary.read_text(encoding="utf-8")
