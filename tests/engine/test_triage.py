"""colint.triage: a model repository's config.json files that are not decoder LLMs are skipped (or, for
encoders, reported as out of scope) instead of failing the run; --strict checks them as before.

The fixtures in tests/data/model_repos/ are small copies of real repositories' files (README there)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from colint.cli.main import main
from colint.loading import load, load_text
from colint.triage import triage

REPOS = Path(__file__).resolve().parents[1] / "data" / "model_repos"
HOOK_PATTERN = re.compile(r"(^|/)(config\.json|[^/]+\.colint\.ya?ml|(megatron|nemo)_[^/]*\.ya?ml)$")

EXPECTED = {
    "embedder/config.json": ("out-of-scope", "encoder-only model (model_type 'bert')"),
    "embedder/1_Pooling/config.json": ("skip", "sentence-transformers pooling config"),
    "embedder/tokenizer_config.json": ("skip", "tokenizer config"),
    "embedder/config_sentence_transformers.json": ("skip", "no model-architecture keys"),
    "diffusion/model_index.json": ("skip", "diffusers StableDiffusionPipeline config"),
    "diffusion/unet/config.json": ("skip", "diffusers UNet2DConditionModel config"),
    "diffusion/vae/config.json": ("skip", "diffusers AutoencoderKL config"),
    "diffusion/scheduler/scheduler_config.json": ("skip", "diffusers PNDMScheduler config"),
    "diffusion/text_encoder/config.json": ("skip", "vision/speech model config (model_type 'clip_text_model')"),
    "vit/config.json": ("skip", "vision/speech model config (model_type 'vit')"),
    "bert/config.json": ("out-of-scope", "encoder-only model (model_type 'bert')"),
    "t5/config.json": ("out-of-scope", "encoder-decoder model (model_type 't5')"),
    "llm/generation_config.json": ("skip", "generation config"),
    "llm/tokenizer_config.json": ("skip", "tokenizer config"),
    "llm/config.json": None,
}


def test_every_fixture_is_listed():
    assert sorted(p.relative_to(REPOS).as_posix() for p in REPOS.rglob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_triage_of_repository_files(rel):
    t = triage(load(str(REPOS / rel)))
    assert (None if t is None else (t.kind, t.what)) == EXPECTED[rel]


@pytest.mark.parametrize(
    "data, expected",
    [
        ({"model_type": "llama", "architectures": ["LlamaForSequenceClassification"], "hidden_size": 4096}, None),
        (
            {"architectures": ["RobertaForMaskedLM"], "hidden_size": 768},
            ("out-of-scope", "encoder-only model (RobertaForMaskedLM)"),
        ),
        (
            {"model_type": "t5", "architectures": ["T5EncoderModel"], "d_model": 4096},
            ("out-of-scope", "encoder model (model_type 't5')"),
        ),
        (
            {"architectures": ["SwinForImageClassification"], "embed_dim": 96},
            ("skip", "vision/speech model config (SwinForImageClassification)"),
        ),
        (
            {"peft_type": "LORA", "r": 16, "target_modules": ["q_proj"]},
            ("skip", "PEFT adapter config (LORA); lint the base model's config"),
        ),
        ({"in_features": 768, "out_features": 256, "bias": True}, ("skip", "sentence-transformers Dense layer config")),
        ({"port": 8080, "debug": True}, ("skip", "no model-architecture keys")),
        # an LLM config with a problem is not skipped: the adapters report it (exit 2)
        ({"model_type": "llama", "hidden_size": 4096}, None),
        ({"hidden_size": 4096, "num_hidden_layers": 32}, None),
        ({"dim": 4096, "n_layers": 32, "n_heads": 32, "vocab_size": 128256}, None),  # Meta params.json
        ({"colint": 1, "model": {"hidden_size": 1024}}, None),
        ({"model_type": "qwen2_5_vl", "vision_config": {"depth": 32}}, None),  # a VLM whose language model is linted
        ({"model_type": "blip-2", "text_config": {"model_type": "opt", "hidden_size": 2560}}, None),
        (
            {
                "model_type": "clip",
                "text_config": {"model_type": "clip_text_model", "hidden_size": 512},
                "vision_config": {"hidden_size": 768},
            },
            ("skip", "vision/speech model config (model_type 'clip')"),
        ),
    ],
)
def test_triage_by_keys(data, expected):
    t = triage(load_text(json.dumps(data), "config.json"))
    assert (None if t is None else (t.kind, t.what)) == expected


def _run(args, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("COLINT_OUTPUT_FORMAT", raising=False)
    monkeypatch.chdir(REPOS)
    rc = main(args)
    out, err = capsys.readouterr()
    return rc, out, err


def _hook_files() -> list[str]:
    return sorted(
        p.relative_to(REPOS).as_posix()
        for p in REPOS.rglob("*")
        if HOOK_PATTERN.search(p.relative_to(REPOS).as_posix())
    )


def test_hook_run_over_a_repository_lints_only_the_llm(capsys, monkeypatch):
    files = _hook_files()
    assert len(files) == 9  # the 9 config.json files
    rc, out, err = _run(["check", *files, "--isolated", "--output-format", "concise"], capsys, monkeypatch)
    assert rc == 0, out + err
    lines = out.splitlines()
    assert lines == [
        "bert/config.json: note: not checked: encoder-only model (model_type 'bert'); colint lints decoder LLMs "
        "(--strict to check it anyway)",
        "embedder/config.json: note: not checked: encoder-only model (model_type 'bert'); colint lints decoder LLMs "
        "(--strict to check it anyway)",
        "llm/config.json:9:3: CL203 info head_dim 64 is not a multiple of 128: attention kernels with 128-wide head "
        "tiles run it as 128 (50% of their QKᵀ/PV tensor-core work is padding) [b200]",
        "t5/config.json: note: not checked: encoder-decoder model (model_type 't5'); colint lints decoder LLMs "
        "(--strict to check it anyway)",
        "1 finding: 0 errors, 0 warnings, 1 info; 3 out of scope (not decoder LLMs); 5 skipped (not LLM "
        "architecture configs)",
        "estimate: b200, throughput scenario: bf16, decode 256 seq, prefill 8192 tok, context 8192 (auto: tp=1 "
        "(1 GPU), 256 sequences of 8,192 tokens on b200, smallest that fits) (colint's GEMM time model; every est. "
        "figure is an estimate, not a measurement)",
    ]
    assert err == ""


def test_verbose_lists_the_skipped_files_and_quiet_only_findings(capsys, monkeypatch):
    files = _hook_files()
    rc, out, _ = _run(
        ["check", *files, "--isolated", "--output-format", "concise", "-v", "--select", "CL0"], capsys, monkeypatch
    )
    assert rc == 0
    assert (
        "diffusion/unet/config.json: note: skipped: diffusers UNet2DConditionModel config, not a decoder LLM "
        "architecture (--strict to check it anyway)"
    ) in out.splitlines()
    assert "embedder/1_Pooling/config.json: note: skipped: sentence-transformers pooling config" in out
    assert "vit/config.json: note: skipped: vision/speech model config (model_type 'vit')" in out
    rc, out, _ = _run(["check", *files, "--isolated", "-q", "--select", "CL0"], capsys, monkeypatch)
    assert (rc, out) == (0, "")


def test_strict_keeps_the_old_behaviour(capsys, monkeypatch):
    rc, out, _ = _run(
        ["check", "embedder/1_Pooling/config.json", "vit/config.json", "--isolated", "--strict"], capsys, monkeypatch
    )
    assert rc == 2
    assert out.startswith("embedder/1_Pooling/config.json:1:1: error: format not recognized")
    rc, out, _ = _run(
        ["check", "embedder/1_Pooling/config.json", "--isolated", "--input-format", "hf"], capsys, monkeypatch
    )
    assert rc == 2  # a forced format is checked as that format, never triaged


def test_json_and_sarif_say_why_a_file_was_not_checked(capsys, monkeypatch):
    rc, out, _ = _run(
        ["check", "bert/config.json", "diffusion/unet/config.json", "--isolated", "--format", "json"],
        capsys,
        monkeypatch,
    )
    data = json.loads(out)
    assert rc == 0
    assert [f["skipped"] for f in data["files"]] == [
        {"kind": "out-of-scope", "reason": "encoder-only model (model_type 'bert')"},
        {"kind": "skip", "reason": "diffusers UNet2DConditionModel config"},
    ]
    assert [f["findings"] for f in data["files"]] == [[], []]
    assert data["summary"]["skipped"] == 2
    rc, out, _ = _run(["check", "bert/config.json", "--isolated", "--format", "sarif"], capsys, monkeypatch)
    run = json.loads(out)["runs"][0]
    assert run["results"] == [] and run["invocations"][0]["executionSuccessful"] is True
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "note" and note["message"]["text"].startswith("not checked: encoder-only model")
