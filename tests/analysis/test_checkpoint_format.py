"""The checkpoint's own format is the default (issue 29): quantization_config, or ModelOpt's hf_quant_config.json beside
config.json, decides the weights, activations and KV cache unless --dtype is given, and the estimate line says so."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from colint.analysis.checkpoint_format import checkpoint_format, native_or_weight_only
from colint.engine.checking import build_targets, check_file
from colint.hardware_profiles import load_profile
from colint.loading import load
from colint.normalize import normalize
from colint.engine.settings import Settings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLAMA = os.path.join(ROOT, "examples", "llama-3.1-8b.json")
NVFP4 = {"producer": {"name": "modelopt", "version": "0.31.0"}, "quantization": {"quant_algo": "NVFP4",
         "kv_cache_quant_algo": "FP8", "group_size": 16, "exclude_modules": ["lm_head"]}}  # fmt: skip


def _checkpoint(tmp_path, quant, config=LLAMA) -> str:
    shutil.copy(config, tmp_path / "config.json")
    if quant is not None:
        (tmp_path / "hf_quant_config.json").write_text(quant if isinstance(quant, str) else json.dumps(quant))
    return str(tmp_path / "config.json")


def _label(path: str, **settings) -> str:
    opts = Settings(**settings)
    r = check_file(path, build_targets(opts), opts)
    (label,) = r.labels
    return label


def test_modelopt_hf_quant_config_beside_the_config_is_the_default_format(tmp_path):
    path = _checkpoint(tmp_path, NVFP4)
    spec = normalize(load(path))
    assert (spec.quantization.quant_method, spec.quantization.origin) == ("modelopt", "hf_quant_config.json")
    assert "quantization from hf_quant_config.json: NVFP4" in spec.notes
    ck = checkpoint_format(spec)
    assert (ck.weights, ck.kv_cache) == ("nvfp4", "fp8")
    label = _label(path, gpus=["b200"])
    assert "scenario: nvfp4," in label and ", KV fp8 " in label
    assert "(nvfp4 from the checkpoint's hf_quant_config.json: modelopt;" in label
    # Hopper has no NVFP4: the engines run the same 4-bit weights weight-only, and the label says so
    assert "run weight-only (int4_wo): h100-sxm has no native nvfp4" in _label(path, gpus=["h100-sxm"])
    # --dtype decides when given
    assert "scenario: bf16," in _label(path, gpus=["b200"], dtype="bf16")


@pytest.mark.parametrize(
    "algo, weights", [("FP8", "fp8"), ("NVFP4", "nvfp4"), ("W4A16_AWQ", "int4_wo"), ("MIXED_PRECISION", None)]
)
def test_modelopt_algorithms(tmp_path, algo, weights):
    path = _checkpoint(tmp_path, {"quantization": {"quant_algo": algo}})
    ck = checkpoint_format(normalize(load(path)))
    assert (ck.weights if ck else None) == weights


def test_the_configs_own_quantization_config_wins_and_a_broken_file_is_ignored(tmp_path):
    dsv3 = os.path.join(ROOT, "tests", "corpus", "hf", "deepseek__DeepSeek-V3.json")
    (tmp_path / "a").mkdir()
    spec = normalize(load(_checkpoint(tmp_path / "a", NVFP4, config=dsv3)))
    assert (spec.quantization.quant_method, spec.quantization.origin) == ("fp8", "quantization_config")
    assert checkpoint_format(spec).weights == "fp8_block"
    (tmp_path / "b").mkdir()
    assert normalize(load(_checkpoint(tmp_path / "b", "{not json"))).quantization is None
    (tmp_path / "c").mkdir()
    assert normalize(load(_checkpoint(tmp_path / "c", None))).quantization is None


def test_a_format_the_gpu_lacks_runs_weight_only():
    assert native_or_weight_only(load_profile("h100-sxm"), "nvfp4") == ("int4_wo", True)
    assert native_or_weight_only(load_profile("a100-sxm-80gb"), "fp8_block") == ("int8_wo", True)
    assert native_or_weight_only(load_profile("b200"), "mxfp4") == ("mxfp4", False)
