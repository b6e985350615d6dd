"""Paths users have: directories (walked like the pre-commit hook, .gitignore honoured), checkpoint
folders, Hugging Face cache folders and Hub ids — all offline, against a cache each test builds."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from colint.engine import sources
from colint.cli.main import main
from colint.errors import UsageError
from colint.loading import hub

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "examples" / "llama-2-7b.json"
SHA = "0123456789abcdef0123456789abcdef01234567"
SHA2 = "fedcba9876543210fedcba9876543210fedcba98"
ARGS = ["--tp", "8", "--isolated", "--select", "CL201,CL202"]


def _touch(path: Path, text: str = "{}") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def make_cache(root: Path, repo_id: str, files: dict[str, str], *, sha: str = SHA, ref: str | None = "main") -> Path:
    """A Hugging Face hub cache as huggingface_hub writes it: blobs named by content hash, snapshot
    files linking to them, refs/<branch> holding the commit. Returns the snapshot folder."""
    repo = root / ("models--" + repo_id.replace("/", "--"))
    snap = repo / "snapshots" / sha
    snap.mkdir(parents=True)
    (repo / "blobs").mkdir(exist_ok=True)
    for name, text in files.items():
        digest = hashlib.sha256(text.encode()).hexdigest()
        (repo / "blobs" / digest).write_text(text)
        os.symlink(os.path.join("..", "..", "blobs", digest), snap / name)
    if ref:
        _touch(repo / "refs" / ref, sha)
    return snap


@pytest.fixture
def hf_cache(tmp_path, monkeypatch):
    """HF_HUB_CACHE at tmp_path/hub, offline (the env for subprocesses, the constants for this process)."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return cache


def _run(args, capsys):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def _line_of(text: str, key: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if f'"{key}"' in line)


# ------------------------------------------------------------------ walking directories


def test_walk_selects_the_hook_names(tmp_path):
    for rel in [
        "config.json",
        "a/config.json",
        "a/b/model.colint.yaml",
        "m/megatron_gpt.yaml",
        "m/nemo_x.yml",
        "other.json",
        "a/notes.yaml",
        "a/tokenizer_config.json",
        "a/my_config.json",
    ]:
        _touch(tmp_path / rel)
    got = [os.path.relpath(p, tmp_path) for p in sources.walk(str(tmp_path))]
    assert got == ["a/b/model.colint.yaml", "a/config.json", "config.json", "m/megatron_gpt.yaml", "m/nemo_x.yml"]


def test_walk_outside_git_skips_hidden_and_environment_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    for rel in [
        "config.json",
        ".cache/x/config.json",
        ".venv/lib/config.json",
        "node_modules/p/config.json",
        "venv/config.json",
        "models/m1/config.json",
    ]:
        _touch(tmp_path / rel)
    got = [os.path.relpath(p, tmp_path) for p in sources.walk(str(tmp_path))]
    assert got == ["config.json", "models/m1/config.json"]


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_walk_in_a_git_work_tree_honours_gitignore(tmp_path):
    _git(tmp_path, "init", "-q")
    _touch(tmp_path / ".gitignore", "ignored/\n*.local.json\nbuild-*/\n")
    for rel in [
        "config.json",
        "ignored/config.json",
        "keep/config.json",
        "x/config.local.json",
        "build-1/config.json",
        "sub/deep/megatron_a.yaml",
        "tracked/config.json",
    ]:
        _touch(tmp_path / rel)
    _git(tmp_path, "add", "-f", "tracked/config.json")  # tracked files count even when a rule would ignore them
    _touch(tmp_path / ".gitignore", "ignored/\n*.local.json\nbuild-*/\ntracked/\n")
    got = [os.path.relpath(p, tmp_path) for p in sources.walk(str(tmp_path))]
    assert got == ["config.json", "keep/config.json", "sub/deep/megatron_a.yaml", "tracked/config.json"]
    # a sub-folder: paths relative to it, the repository's ignore rules still apply
    assert [os.path.relpath(p, tmp_path) for p in sources.walk(str(tmp_path / "keep"))] == ["keep/config.json"]
    # the user named an ignored folder: walk it anyway
    assert [os.path.relpath(p, tmp_path) for p in sources.walk(str(tmp_path / "ignored"))] == ["ignored/config.json"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_walk_enters_a_nested_repository(tmp_path):
    """A model repository cloned inside a project is its own git repository: its files count."""
    _git(tmp_path, "init", "-q")
    _touch(tmp_path / "config.json")
    clone = tmp_path / "models" / "llama"
    _touch(clone / "config.json")
    _touch(clone / "sub" / "megatron_x.yaml")
    _touch(clone / "skipped" / "config.json")
    _touch(clone / ".gitignore", "skipped/\n")
    _git(clone, "init", "-q")
    got = [os.path.relpath(p, tmp_path) for p in sources.walk(str(tmp_path))]
    assert got == ["config.json", "models/llama/config.json", "models/llama/sub/megatron_x.yaml"]


def test_include_and_exclude_globs(tmp_path):
    for rel in ["config.json", "a/config.json", "a/arch.yaml", "b/arch.yaml", "tests/config.json", "c/x.json"]:
        _touch(tmp_path / rel)

    def walk(**kw):
        return [os.path.relpath(p, tmp_path) for p in sources.walk(str(tmp_path), **kw)]

    assert walk(include=["*.yaml"]) == ["a/arch.yaml", "b/arch.yaml"]
    assert walk(include=["a/*"]) == ["a/arch.yaml", "a/config.json"]
    assert walk(include=["**/*.json"]) == ["a/config.json", "c/x.json", "config.json", "tests/config.json"]
    assert walk(exclude=["tests"]) == ["a/config.json", "config.json"]
    assert walk(exclude=["a/*"]) == ["config.json", "tests/config.json"]
    assert walk(include=["*.yaml", "*.json"], exclude=["b", "c/x.json"]) == [
        "a/arch.yaml",
        "a/config.json",
        "config.json",
        "tests/config.json",
    ]


def test_hook_pattern_is_the_pre_commit_hooks(tmp_path):
    from ruamel.yaml import YAML

    hook = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]
    assert hook["files"] == sources.HOOK_FILES
    assert hook.get("exclude") == sources.HOOK_EXCLUDE


def test_cli_checks_a_directory_with_include_exclude(tmp_path, capsys):
    shutil.copy(LLAMA, _touch(tmp_path / "m1" / "config.json"))
    shutil.copy(LLAMA, _touch(tmp_path / "m2" / "config.json"))
    shutil.copy(LLAMA, _touch(tmp_path / "designs" / "llama.json"))
    rc, out, _ = _run(["check", str(tmp_path), *ARGS, "--format", "json"], capsys)
    paths = [os.path.relpath(f["path"], tmp_path) for f in json.loads(out)["files"]]
    assert (rc, paths) == (0, ["m1/config.json", "m2/config.json"])  # CL201/CL202 infos at tp=8
    rc, out, _ = _run(
        ["check", str(tmp_path), *ARGS, "--format", "json", "--include", "*.json", "--exclude", "m2"], capsys
    )
    paths = [os.path.relpath(f["path"], tmp_path) for f in json.loads(out)["files"]]
    assert paths == ["designs/llama.json", "m1/config.json"]
    # a file named twice (itself and through its folder) is checked once
    rc, out, _ = _run(
        ["check", str(tmp_path / "m1"), str(tmp_path / "m1" / "config.json"), *ARGS, "--format", "json"], capsys
    )
    assert len(json.loads(out)["files"]) == 1


def test_cli_directory_without_configs_warns(tmp_path, capsys):
    _touch(tmp_path / "notes.json")
    rc, out, err = _run(["check", str(tmp_path), "--isolated"], capsys)
    assert rc == 0
    assert err == (
        f"colint: warning: {tmp_path}: no config files found (looked for config.json, *.colint.yaml, "
        "megatron_*.yaml, nemo_*.yaml; --include GLOB selects others)\n"
    )
    assert out.startswith("0 findings")


# ------------------------------------------------------------------ checkpoint folders


def test_checkpoint_folder_is_its_config(tmp_path, capsys):
    ckpt = tmp_path / "ckpt"
    shutil.copy(LLAMA, _touch(ckpt / "config.json"))
    _touch(ckpt / "model-00001-of-00002.safetensors", "x")
    _touch(ckpt / "1_Pooling" / "config.json", '{"word_embedding_dimension": 4096}')  # not walked
    assert sources.checkpoint_config(str(ckpt)) == str(ckpt / "config.json")
    rc, out, _ = _run(["check", str(ckpt), *ARGS], capsys)
    text = LLAMA.read_text()
    assert rc == 0  # infos only
    assert out.splitlines()[0].startswith(f"{ckpt / 'config.json'}:{_line_of(text, 'intermediate_size')}:5: CL201 ")


def test_checkpoint_folder_with_params_json(tmp_path):
    meta = ROOT / "tests" / "corpus" / "meta" / "torchchat__Meta-Llama-3.2-1B.json"
    shutil.copy(meta, _touch(tmp_path / "params.json"))
    _touch(tmp_path / "consolidated.00.pth", "x")
    assert [s.path for s in sources.expand([str(tmp_path)]).sources] == [str(tmp_path / "params.json")]
    assert sources.checkpoint_config(str(tmp_path.parent)) is None  # no weights: a plain folder


# ------------------------------------------------------------------ Hugging Face cache folders


def test_cache_snapshot_positions_point_at_the_cached_file(hf_cache, capsys):
    text = LLAMA.read_text()
    snap = make_cache(hf_cache, "meta-llama/Llama-2-7b-hf", {"config.json": text, "model.safetensors": "w"})
    for folder in (snap, snap.parent.parent):  # a snapshot, and the repository folder (its main revision)
        found = sources.expand([str(folder)])
        assert [(s.path, s.kind) for s in found.sources] == [(str(snap / "config.json"), "cache")]
        assert found.sources[0].settings_dir == os.getcwd()
    rc, out, _ = _run(["check", str(snap), *ARGS], capsys)
    lines = [ln for ln in out.splitlines() if re.match(r"\S+:\d+:\d+: CL", ln)]
    assert [ln.split(": ")[0] for ln in lines] == [
        f"{snap / 'config.json'}:{_line_of(text, 'intermediate_size')}:5",
        f"{snap / 'config.json'}:{_line_of(text, 'vocab_size')}:5",
    ]


def test_cache_snapshot_without_a_config(hf_cache, capsys):
    snap = make_cache(hf_cache, "org/weights-only", {"model.safetensors": "w"})
    rc, _, err = _run(["check", str(snap), "--isolated"], capsys)
    assert rc == 2
    assert (
        err == f"{snap}: error: Hugging Face cache folder of org/weights-only: snapshot {SHA} holds no "
        "config.json or params.json\n"
    )


def test_fix_refuses_to_rewrite_the_cache(hf_cache, capsys):
    snap = make_cache(hf_cache, "org/m", {"config.json": LLAMA.read_text()})
    rc, _, err = _run(["check", str(snap), "--fix", *ARGS], capsys)
    assert rc == 2
    assert err.startswith(f"colint: error: {snap}: --fix does not rewrite the Hugging Face cache; copy ")
    assert os.path.islink(snap / "config.json")


# ------------------------------------------------------------------ Hub ids


@pytest.mark.parametrize(
    "arg,expected",
    [
        ("meta-llama/Llama-3.1-8B", ("meta-llama/Llama-3.1-8B", None)),
        ("org/name@v1.0", ("org/name", "v1.0")),
        (f"org/name@{SHA}", ("org/name", SHA)),
        ("org/name@refs/pr/1", ("org/name", "refs/pr/1")),
        ("hf://org/config.json", ("org/config.json", None)),  # hf:// forces a Hub id
        ("org/config.json", None),  # a config file's extension: a (missing) path
        ("configs/a.yaml", None),
        ("./org/name", None),
        ("org/name/extra", None),
        ("gpt2", None),  # a single name is a (missing) file, not a legacy Hub id
        ("org--x/name", None),
        ("-org/name", None),
    ],
)
def test_hub_id_or_path(arg, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert sources.hub_id(arg) == expected


def test_an_existing_path_wins_over_a_hub_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _touch(tmp_path / "org" / "name" / "config.json")
    assert sources.hub_id("org/name") is None  # the folder exists
    assert sources.hub_id("org/other") is None  # ./org exists: a mistyped local path, not a Hub id
    assert sources.hub_id("elsewhere/name") == ("elsewhere/name", None)


def test_hub_id_offline_from_the_cache(hf_cache, capsys, tmp_path, monkeypatch):
    text = LLAMA.read_text()
    snap = make_cache(hf_cache, "meta-llama/Llama-2-7b-hf", {"config.json": text})
    make_cache(
        hf_cache, "meta-llama/Llama-2-7b-hf", {"config.json": text.replace("11008", "11264")}, sha=SHA2, ref="v2"
    )
    monkeypatch.chdir(tmp_path)
    rc, out, _ = _run(["check", "meta-llama/Llama-2-7b-hf", *ARGS, "--format", "json"], capsys)
    report = json.loads(out)
    assert rc == 0  # infos only
    assert [f["path"] for f in report["files"]] == [str(snap / "config.json")]
    assert [(f["code"], f["line"]) for f in report["files"][0]["findings"]] == [
        ("CL201", _line_of(text, "intermediate_size")),
        ("CL202", _line_of(text, "vocab_size")),
    ]
    # a revision: a branch through refs/, a commit hash directly
    for rev in ("v2", SHA2):
        rc, out, _ = _run(["check", f"meta-llama/Llama-2-7b-hf@{rev}", *ARGS, "--format", "json"], capsys)
        assert [f["code"] for f in json.loads(out)["files"][0]["findings"]] == ["CL202"]
    rc, out, _ = _run(["inspect", "meta-llama/Llama-2-7b-hf", "--format", "json"], capsys)
    assert (rc, json.loads(out)["params"]["total"]) == (0, 6738415616)


def test_hub_id_offline_not_cached(hf_cache, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = _run(["check", "org/missing@v1", "--isolated"], capsys)
    assert (rc, out) == (2, "")
    assert err == (
        "org/missing@v1: error: HF_HUB_OFFLINE is set and config.json or params.json at revision 'v1' "
        f"is not in the Hugging Face cache ({hf_cache}); run once online, or unset HF_HUB_OFFLINE\n"
    )


def _hf_error(name: str):
    from huggingface_hub import errors

    cls = getattr(errors, name)
    exc = cls.__new__(cls)
    Exception.__init__(exc, f"{name} from the test")
    return exc


@pytest.mark.parametrize(
    "raised,message",
    [
        (
            "GatedRepoError",
            "gated repository: request access on https://huggingface.co/org/m and set HF_TOKEN (or run "
            "`hf auth login`) with a token of that account",
        ),
        (
            "RepositoryNotFoundError",
            "repository not found on the Hugging Face Hub (a private one needs HF_TOKEN); a local "
            "path of that name does not exist either",
        ),
        ("RevisionNotFoundError", "revision 'v9' not found in the repository"),
        (
            "EntryNotFoundError",
            "the repository has no config.json or params.json at revision 'v9': not a model colint can read",
        ),
    ],
)
def test_hub_errors_name_the_id_and_the_reason(raised, message, monkeypatch):
    import huggingface_hub

    calls = []

    def fake_download(repo_id, filename, **kw):
        calls.append(filename)
        raise _hf_error(raised)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    monkeypatch.setattr(hub, "_reachable", lambda: True)  # the probe of issue 30 would find no network here
    with pytest.raises(hub.HubError) as info:
        hub.fetch("org/m", "v9")
    assert info.value.located() == f"org/m@v9: error: {message}"
    assert set(calls) <= set(hub.HUB_FILES)


def test_only_allow_listed_files_are_requested(monkeypatch, tmp_path):
    import huggingface_hub

    calls = []

    def fake_download(repo_id, filename, *, revision=None, local_files_only=False):
        calls.append((repo_id, filename, revision, local_files_only))
        if filename == "config.json":
            raise _hf_error("EntryNotFoundError")
        return str(_touch(tmp_path / filename))

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    monkeypatch.setattr(hub, "_reachable", lambda: True)  # the probe of issue 30 would find no network here
    assert hub.fetch("mistralai/M", None) == str(tmp_path / "params.json")
    assert calls == [("mistralai/M", "config.json", None, False), ("mistralai/M", "params.json", None, False)]
    assert hub.HUB_FILES == ("config.json", "params.json")


def test_one_config_commands_reject_a_folder_of_several(tmp_path, capsys):
    _touch(tmp_path / "a" / "config.json")
    _touch(tmp_path / "b" / "config.json")
    with pytest.raises(UsageError, match="2 config files found in this folder"):
        sources.resolve_one(str(tmp_path))


def test_hub_id_from_the_command_line_offline(tmp_path):
    """The documented `HF_HUB_OFFLINE=1 colint check org/name`, in a fresh process with only the env set."""
    cache = tmp_path / "hf" / "hub"
    cache.mkdir(parents=True)
    text = LLAMA.read_text()
    snap = make_cache(cache, "meta-llama/Llama-2-7b-hf", {"config.json": text})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "colint", "check", "meta-llama/Llama-2-7b-hf", *ARGS],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr  # infos only
    assert proc.stdout.splitlines()[0].startswith(
        f"{snap / 'config.json'}:{_line_of(text, 'intermediate_size')}:5: CL201 info intermediate_size 11008 "
    )
