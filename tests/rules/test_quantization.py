"""CL4xx quantization: native format, scale blocks per shard, quantization_config, high-precision share."""

from __future__ import annotations

import pytest

from colint.engine.checking import check_paths, exit_code
from colint.engine.settings import Settings
from colint.errors import ProfileError
from tests.rules.helpers import run

CORPUS = "tests/corpus"
LLAMA31 = f"{CORPUS}/hf/llama3__Meta-Llama-3.1-8B.json"
GPTQ = "tests/rules/fixtures/llama_gptq_bad_ignore.json"  # Llama-2-7B shape, GPTQ group 128, bad ignore entry


def brief(findings):
    return [(f.code, f.severity, f.key, f.line) for f in findings]


# --------------------------------------------------------------------------- CL401
def test_nvfp4_on_hopper_is_a_located_finding_not_a_run_error():
    opts = Settings(gpus=["h100-sxm"], dtype="nvfp4", select=["CL4"])
    (res,) = check_paths([LLAMA31], opts)
    assert res.error is None
    (f,) = res.findings
    assert (f.code, f.severity, f.gpu) == ("CL401", "error", "h100-sxm")
    assert f.message == "--dtype nvfp4 is not native on h100-sxm (hopper): no nvfp4 Tensor Core path"
    assert [fx.title for fx in f.fixes] == ["use --dtype fp8", "use --dtype bf16"]
    assert exit_code([res], "error") == 1


def test_all_rules_with_a_format_the_gpu_lacks_report_only_cl401():
    fs = run(LLAMA31, [], gpus=["h100-sxm"], dtype="nvfp4")
    assert [f.code for f in fs] == ["CL401"]


def test_without_cl401_selected_the_format_stays_a_run_error():
    with pytest.raises(ProfileError):
        run(LLAMA31, ["CL2"], gpus=["h100-sxm"], dtype="nvfp4")


def test_native_format_is_clean_and_a_foreign_checkpoint_format_is_info():
    assert run(LLAMA31, ["CL401"], dtype="nvfp4") == []
    (f,) = run(f"{CORPUS}/hf/gpt-oss__gpt-oss-20b.json", ["CL401"], gpus=["h100-sxm"])
    assert (f.severity, f.key) == ("info", "quantization_config")
    assert f.message == (
        "the checkpoint's quantization_config is mxfp4, not native on h100-sxm (hopper): engines "
        "dequantize it (weight-only) and run the GEMMs in BF16"
    )
    assert run(f"{CORPUS}/hf/gpt-oss__gpt-oss-20b.json", ["CL401"]) == []  # B200 has MXFP4


# --------------------------------------------------------------------------- CL402
def test_nvfp4_k_per_shard_not_a_whole_number_of_16_blocks():
    (f,) = run(f"{CORPUS}/hf/gpt-oss__gpt-oss-20b.json", ["CL402"], dtype="nvfp4", tp=8)
    assert brief([f]) == [("CL402", "error", "intermediate_size", 14)]  # gpt-oss: intermediate_size = expert width
    assert f.message == (
        "moe.experts.down_proj K=360 per shard at tp=8 not a multiple of nvfp4's 16-element scale "
        "block (360 = 22.5 x 16)"
    )
    assert f.evidence["gemms"] == [{"gemm": "moe.experts.down_proj", "dim": "k", "per_shard": 360}]
    # with expert parallelism each expert keeps K = 2880 = 180 x 16
    assert run(f"{CORPUS}/hf/gpt-oss__gpt-oss-20b.json", ["CL402"], dtype="nvfp4", tp=8, ep=8) == []


@pytest.mark.parametrize("tp", [1, 8])
def test_llama31_8b_fits_every_block_format(tp):
    for dtype in ("nvfp4", "mxfp4", "fp8_block"):
        assert run(LLAMA31, ["CL402"], dtype=dtype, tp=tp) == []


def test_fp8_128_blocks_cut_by_tensor_parallel_shards():
    fs = run(f"{CORPUS}/hf/llama2__Llama-2-7b-neuron-training.json", ["CL402"], dtype="fp8_block", tp=8)
    assert [(f.severity, f.key, f.message) for f in fs] == [
        (
            "error",
            "intermediate_size",
            "mlp.down_proj K=1376 per shard at tp=8 not a multiple of fp8_block's "
            "128-element scale block (1376 = 10.75 x 128)",
        ),
        (
            "error",
            "intermediate_size",
            "mlp.gate_up N=1376 per shard at tp=8 not a multiple of fp8_block's "
            "128-element scale block (1376 = 10.75 x 128)",
        ),
    ]
    assert run(f"{CORPUS}/hf/llama2__Llama-2-7b-neuron-training.json", ["CL402"], dtype="fp8_block") == []


def test_unsharded_partial_fp8_block_is_a_warning():
    (f,) = [
        f
        for f in run(f"{CORPUS}/hf/mobilellm__MobileLLM-125M.json", ["CL402"], dtype="fp8_block")
        if f.key == "hidden_size"
    ]
    assert f.severity == "warning"
    assert f.message == (
        "attn.qkv_proj K=576, mlp.gate_up K=576 not a multiple of fp8_block's 128-element scale block (576 = 4.5 x 128)"
    )


# --------------------------------------------------------------------------- CL403
def test_minimax_fp8_blocks_at_tp8_need_expert_parallelism():
    path = f"{CORPUS}/hf/minimax__MiniMax-M2.5.json"
    (f,) = run(path, ["CL403"], tp=8)
    assert brief([f]) == [("CL403", "error", "intermediate_size", 11)]
    assert f.message == (
        "weight_block_size [128, 128] does not divide the shards at tp=8: moe.experts.down_proj K=192, "
        "moe.experts.gate_up N=192"
    )
    assert f.fixes[0].title == "deploy with EP for the experts"
    assert run(path, ["CL403"], tp=8, ep=8) == []
    assert run(path, ["CL403"]) == []  # tp=1: nothing is cut


def test_deepseek_v3_blocks_fit_tp8():
    assert run(f"{CORPUS}/hf/deepseek__DeepSeek-V3.json", ["CL403"], tp=8) == []


def test_group_size_and_ignore_list():
    fs = run(GPTQ, ["CL403"], tp=8)
    assert [(f.severity, f.key, f.message) for f in fs] == [
        (
            "error",
            "quantization_config.group_size",
            "group_size 128 does not divide K per shard at tp=8: mlp.down_proj K=1376",
        ),
        (
            "warning",
            "quantization_config.modules_to_not_convert[1]",
            "modules_to_not_convert entry 'model.layers.40.mlp' names layer 40, but the model has 32 layers (0..31)",
        ),
    ]
    assert [f.key for f in run(GPTQ, ["CL403"])] == ["quantization_config.modules_to_not_convert[1]"]


# --------------------------------------------------------------------------- CL404
def test_small_model_with_large_tied_vocab_caps_the_gain():
    (f,) = run(f"{CORPUS}/hf/qwen3__Qwen3-0.6B.json", ["CL404"], dtype="nvfp4")
    assert (f.severity, f.key) == ("info", "vocab_size")
    assert f.message == (
        "41% of the weights a decode step reads stay in BF16 under nvfp4: decode weight reads shrink "
        "1.73x instead of 3.56x"
    )
    assert f.evidence["high_precision_params"] == {"embedding": 151936 * 1024}  # tied: the LM head is the table


def test_excluded_modules_count_as_high_precision():
    (f,) = run(f"{CORPUS}/hf/gpt-oss__gpt-oss-20b.json", ["CL404"], dtype="nvfp4")
    hp = f.evidence["high_precision_params"]
    assert set(hp) == {"modules_to_not_convert", "routers", "LM head", "embedding"}  # attention kept in BF16


def test_no_share_finding_for_large_models_or_bf16():
    assert run(f"{CORPUS}/hf/llama3__Llama-3.3-70B-Instruct.json", ["CL404"], dtype="nvfp4") == []
    assert run(f"{CORPUS}/hf/qwen3__Qwen3-0.6B.json", ["CL404"]) == []


@pytest.mark.parametrize("tp", [1, 8])
def test_llama31_8b_has_no_cl4_warning_or_error(tp):
    for dtype in (None, "fp8", "nvfp4"):
        assert [f for f in run(LLAMA31, ["CL4"], dtype=dtype, tp=tp) if f.severity != "info"] == []


def test_spec_only_findings_appear_once_with_several_gpus():
    # the ignore-list entry, the group size and the weight blocks depend on the spec and tp alone: once, no GPU
    fs = run(GPTQ, ["CL403"], tp=8, gpus=["b200", "h100-sxm"])
    assert [(f.severity, f.key, f.gpu) for f in fs] == [
        ("error", "quantization_config.group_size", None),
        ("warning", "quantization_config.modules_to_not_convert[1]", None),
    ]
    (f,) = run(f"{CORPUS}/hf/minimax__MiniMax-M2.5.json", ["CL403"], tp=8, gpus=["b200", "h100-sxm", "mi300x"])
    assert (f.severity, f.key, f.gpu) == ("error", "intermediate_size", None)
    assert "gpu" not in f.evidence


def test_keys_outside_the_spec_sources_get_their_line_from_the_file():
    # quantization_config is not a spec source: the engine locates the named key in the Document
    (res,) = check_paths([GPTQ], Settings(select=["CL403"], tp=8))
    assert [(f.key, f.line, f.column) for f in res.findings] == [
        ("quantization_config.group_size", 14, 5),
        ("quantization_config.modules_to_not_convert[1]", 15, 43),
    ]
    (res,) = check_paths([f"{CORPUS}/hf/gpt-oss__gpt-oss-20b.json"], Settings(select=["CL401"], gpus=["h100-sxm"]))
    assert [(f.code, f.key, f.line) for f in res.findings] == [("CL401", "quantization_config", 50)]
