"""The hook at default settings over the corpus (issue 29): released designs pass, misdesigns block.

Each GPU is checked with only ``--gpu`` (colint chooses the deployment, the checkpoint's format and the concurrency),
and the makers' own deployments are checked as named. The files that still block are listed with the finding
that blocks them: each is a true defect of that file, not a deployment nobody chose.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "corpus")
COLINT = os.path.join(os.path.dirname(sys.executable), "colint")

# file -> why it blocks at defaults on every GPU below (its blocking finding)
BLOCKS_EVERYWHERE = {
    "gpt2__gpt2-medium-early-revision.json": "CL202: vocab 50257 is off the 16-byte aligned path",
    "phi__phi-1.json": "CL202: vocab 50295 is off the 16-byte aligned path",
    "olmo3__Olmo-3.1-32B-Instruct.json": "CL202: vocab 100278 is off the 16-byte aligned path",
    "executorch__granite-3-2b.json": "CL202: vocab 49159 is off the 16-byte aligned path",
    "torchchat__Granite-3.0-8B-Instruct.json": "CL202: vocab 49155 is off the 16-byte aligned path",
    "executorch__LFM2-1.2B.json": "CL004: layer_types has 17 entries for 16 layers",
}
MOBILELLM = {"mobilellm__MobileLLM-1.5B.json", "mobilellm__MobileLLM-125M.json"}  # 1600 / 576 wide: CL201
NEMOTRON_NANO = "nemotron-h__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"  # experts 1856 wide (14.5 x 128): CL201

EXPECTED_BLOCKING = {
    "b200": MOBILELLM,
    "b300": MOBILELLM,
    "gb200": MOBILELLM,
    "gb300": MOBILELLM,
    "h100-sxm": MOBILELLM,
    "h100-nvl": MOBILELLM,
    "h200": MOBILELLM,
    "a100-sxm-80gb": MOBILELLM | {NEMOTRON_NANO},
}


def _files() -> list[str]:
    out = []
    for d, _, names in os.walk(CORPUS):
        out += [os.path.join(d, n) for n in names if n.endswith((".json", ".yaml"))]
    return sorted(out)


def _blocking(args: list[str], files: list[str]) -> set[str]:
    p = subprocess.run(
        [COLINT, "check", "--isolated", "--format", "json", "--fail-on", "never", *args, *files],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    rep = json.loads(p.stdout)
    return {
        os.path.basename(f["path"])
        for f in rep["files"]
        if f.get("error") or any(x["severity"] in ("error", "warning") for x in f["findings"])
    }


@pytest.mark.slow
@pytest.mark.parametrize("gpu", sorted(EXPECTED_BLOCKING))
def test_released_designs_pass_at_defaults(gpu):
    files = _files()
    assert len(files) >= 90
    assert _blocking(["--gpu", gpu], files) == set(BLOCKS_EVERYWHERE) | EXPECTED_BLOCKING[gpu]


def _corpus(name: str) -> str:
    for d in ("hf", "megatron", "meta"):
        p = os.path.join(CORPUS, d, name)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(name)


@pytest.mark.slow
def test_makers_deployments_pass():
    seventy = [_corpus(n) for n in ("llama3__Llama-3.3-70B-Instruct.json", "llama2__Llama-2-70b-neuron-training.json")]
    assert _blocking(["--gpu", "h100-sxm", "--tp", "8"], seventy) == set()
    r1 = [
        _corpus(n)
        for n in ("deepseek__DeepSeek-V3.json", "deepseek__DeepSeek-V3.2.json", "deepseek-native__config_671B.json")
    ] + [os.path.join(ROOT, "examples", "kimi-k2.json")]
    assert _blocking(["--gpu", "b200", "--ep", "8"], r1) == set()


def test_deepseek_r1_is_priced_in_its_fp8_format_on_an_automatic_deployment():
    p = subprocess.run(
        [COLINT, "check", "--isolated", "--fail-on", "never", "--gpu", "b200", _corpus("deepseek__DeepSeek-V3.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    estimate = [ln for ln in p.stdout.splitlines() if ln.startswith("estimate: b200")]
    assert len(estimate) == 1
    assert "throughput scenario: fp8_block" in estimate[0]
    assert "fp8_block from the checkpoint's quantization_config: fp8, 128x128 blocks" in estimate[0]
    # concurrency counts per attention group: tp=1 attention under ep=8 is eight groups (808 sequences per replica; the MTP layer counts)
    assert "decode 101 seq per attention group x 8," in estimate[0]
    assert (
        "auto: tp=1, ep=8 (8 GPUs), 101 sequences per attention group x 8 of 8,192 tokens fit (of 256) on b200"
        in (estimate[0])
    )


def _variant(tmp_path, base: str, name: str, **over) -> str:
    with open(base) as fh:
        cfg = json.load(fh)
    cfg.update(over)
    path = tmp_path / name
    path.write_text(json.dumps(cfg, indent=1))
    return str(path)


def test_misdesigns_still_block_at_defaults(tmp_path):
    gpt2_xl = _variant(
        tmp_path, _corpus("gpt2__gpt2-medium-early-revision.json"), "gpt2-xl.json", n_embd=1600, n_layer=48, n_head=25
    )
    bad_llama = _variant(
        tmp_path,
        os.path.join(ROOT, "examples", "llama-3.1-8b.json"),
        "llama-bad.json",
        hidden_size=8000,
        intermediate_size=28000,
        vocab_size=128001,
        num_attention_heads=64,
        num_key_value_heads=8,
        head_dim=125,
    )
    for path, code in ((gpt2_xl, "CL201"), (bad_llama, "CL202")):
        p = subprocess.run([COLINT, "check", "--isolated", "--format", "json", path], capture_output=True, text=True)
        assert p.returncode == 1, path
        rep = json.loads(p.stdout)
        assert code in {x["code"] for x in rep["files"][0]["findings"] if x["severity"] == "warning"}


def test_tp_auto_is_the_tp_every_rule_prices():
    # issue 29: --tp auto reported tp=8 (CL204) while CL801 priced tp=1 and refused the model; decoded once per model
    # (colint.analysis.deployments.aligned_tp), every rule prices the tp CL204 reports
    p = subprocess.run(
        [COLINT, "check", "--isolated", "--format", "json", "--gpu", "h100-sxm", "--tp", "auto"]
        + [_corpus("llama3__Llama-3.3-70B-Instruct.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stdout
    (f,) = json.loads(p.stdout)["files"]
    by_code = {x["code"]: x for x in f["findings"]}
    assert by_code["CL204"]["evidence"]["largest_aligned_tp"] == 8
    assert by_code["CL202"]["message"].startswith("vocab_size 128256 is 16032 per shard at tp=8")
    assert "CL801" not in by_code  # 70B at tp=8 fits h100-sxm's 80 GB (at the sequences that fit)


def test_aligned_tp_is_capped_by_kv_heads_and_the_domain():
    from colint.analysis.deployments import aligned_tp
    from colint.loading import load
    from colint.normalize import normalize

    spec = normalize(load(_corpus("llama3__Llama-3.3-70B-Instruct.json")))
    # 28672 / 128 = 224 = 2^5 x 7: the FFN aligns up to tp=32; heads 64 x 128 up to 64; 8 KV heads cap it at 8
    a = aligned_tp(spec, domain=72)
    assert (a.tp, a.capped_by, a.per_width) == (8, "kv_heads", {"intermediate_size": 32, "num_heads": 64})
    assert aligned_tp(spec, domain=4).tp == 4 and aligned_tp(spec, domain=4).capped_by == "domain"
    # Llama-2-7B: 11008 = 86 x 128 aligns at tp=2 only
    spec7 = normalize(load(os.path.join(ROOT, "examples", "llama-2-7b.json")))
    assert aligned_tp(spec7, domain=8)[:2] == (2, "intermediate_size")


def test_tp_auto_honours_cl204s_max_tp():
    # the engine prices the tp CL204 reports, also when its max_tp option caps it
    from colint.engine.checking import build_targets, check_file
    from colint.engine.settings import Settings

    opts = Settings(gpus=["h100-sxm"], tp="auto", rules={"CL204": {"max_tp": 4}})
    r = check_file(_corpus("llama3__Llama-3.3-70B-Instruct.json"), build_targets(opts), opts)
    (f,) = [f for f in r.findings if f.code == "CL204"]
    assert f.evidence["largest_aligned_tp"] == 4
    assert r.labels[0].startswith("estimate: h100-sxm, throughput scenario: bf16,") and ", tp=4 " in r.labels[0]
