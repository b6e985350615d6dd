"""Dense Hugging Face families: corpus files, unseen configs, family semantics, the fallback."""

from __future__ import annotations

import glob
import json
import os

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.cli.main import main
from colint.errors import FormatNotRecognized, SpecError
from colint.loading import load, load_text
from colint.normalize import normalize
from colint.normalize.hf.nemotron_nas import ffn_mult_to_intermediate_size

TESTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(TESTS, "corpus", "hf")

DENSE_FILES = [
    "bloom__BLOOMChat-176B-v1",
    "falcon__falcon-40b-instruct-legacy-RW",
    "gemma__gemma-3-27b",
    "gpt2__gpt2-medium-early-revision",
    "llama2__Llama-2-70b-neuron-training",
    "llama2__Llama-2-7b-neuron-training",
    "llama3__Llama-3.2-1B-Instruct",
    "llama3__Llama-3.2-3B-Instruct",
    "llama3__Llama-3.3-70B-Instruct",
    "llama3__Meta-Llama-3.1-405B",
    "llama3__Meta-Llama-3.1-8B",
    "mimo__MiMo-7B-Base",
    "mistral__Devstral-Small-2-24B-Instruct",
    "mistral__Mistral-7B-Instruct-v0.3",
    "mobilellm__MobileLLM-1.5B",
    "mobilellm__MobileLLM-125M",
    "nemotron-nas__Llama-3_3-Nemotron-Super-49B-v1",
    "opt__opt-125m",
    "phi__phi-1",
    "phi__phi-4",
    "qwen2.5-vl__Qwen2.5-VL-7B-Instruct",
    "qwen2.5__Qwen2.5-7B-Instruct",
    "qwen3__Qwen3-0.6B",
    "qwen3__Qwen3-1.7B",
    "qwen3__Qwen3-32B",
    "qwen3__Qwen3-8B",
    "gemma2__gemma-2-9b-it",
    "gemma__gemma-3-4b-it",
    "mistral__Devstral-2-123B-Instruct",
    "mistral__Mistral-Nemo-Base-2407",
    "olmo3__Olmo-3.1-32B-Instruct",
    "voxtral__Voxtral-Mini-3B-2507",
    "qwen2.5-vl__olmOCR-2-7B-1025",
]


def _spec(stem: str):
    return normalize(load(os.path.join(CORPUS, stem + ".json")))


def _spec_of(cfg: dict, name: str = "variant.json"):
    return normalize(load_text(json.dumps(cfg, indent=2), name))


@pytest.mark.parametrize("stem", DENSE_FILES)
def test_dense_corpus_file_inspects_with_exact_params(stem, capsys):
    assert main(["inspect", os.path.join(CORPUS, stem + ".json"), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    with open(os.path.join(TESTS, "golden", stem + ".json"), encoding="utf-8") as fh:
        golden = json.load(fh)
    if "error" in golden:  # nemotron-nas: remote code only, see test_nemotron_nas_* below
        assert out["params"]["total"] == NEMOTRON_SUPER_49B_PARAMS
    else:
        assert out["params"]["total"] == golden["params_total"]


def test_dense_list_covers_every_dense_corpus_file():
    from colint.normalize.hf import FAMILIES

    dense_modules = {
        "llama",
        "gemma",
        "gemma4",
        "phi",
        "gpt2",
        "opt",
        "bloom",
        "falcon",
        "minicpm3",
        "nemotron_nas",
    }
    dense_rows = {
        "olmo",
        "olmo2",
        "olmo3",
        "phi3",
    }  # decoder.TRAITS rows with corpus files here (variants: test_dense_variants.py)
    stems = []
    for p in sorted(glob.glob(os.path.join(CORPUS, "*.json"))):
        spec = normalize(load(p))
        if FAMILIES.get(spec.model_type) in dense_modules or spec.model_type in dense_rows:
            stems.append(os.path.splitext(os.path.basename(p))[0])
    assert stems == sorted(DENSE_FILES)


# Unseen-but-valid configs of each family. The expected totals came from scripts/gen_golden.py
# (`.venv-oracle/bin/python scripts/gen_golden.py --count cfg.json`: transformers 5.24.0 + torch 2.13.0
# building the config on the meta device, tied weights once).
VARIANTS = {
    "llama": (
        {
            "model_type": "llama",
            "hidden_size": 1536,
            "intermediate_size": 4096,
            "num_hidden_layers": 6,
            "num_attention_heads": 12,
            "num_key_value_heads": 4,
            "vocab_size": 50000,
            "attention_bias": True,
            "mlp_bias": True,
            "tie_word_embeddings": True,
        },
        227_897_856,
    ),
    "mistral": (
        {
            "model_type": "mistral",
            "hidden_size": 2048,
            "intermediate_size": 5632,
            "num_hidden_layers": 5,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "head_dim": 96,
            "vocab_size": 32768,
            "sliding_window": 4096,
        },
        354_441_216,
    ),
    "ministral3": (
        {
            "model_type": "ministral3",
            "hidden_size": 3072,
            "intermediate_size": 9216,
            "num_hidden_layers": 3,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 131072,
            "tie_word_embeddings": True,
        },
        751_850_496,
    ),
    "qwen2": (
        {
            "model_type": "qwen2",
            "hidden_size": 896,
            "intermediate_size": 4864,
            "num_hidden_layers": 3,
            "num_attention_heads": 14,
            "num_key_value_heads": 2,
            "vocab_size": 151936,
            "tie_word_embeddings": True,
            "use_sliding_window": True,
            "sliding_window": 4096,
            "max_window_layers": 2,
        },
        180_872_704,
    ),
    "qwen3": (
        {
            "model_type": "qwen3",
            "hidden_size": 1024,
            "intermediate_size": 3072,
            "num_hidden_layers": 4,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 151936,
            "tie_word_embeddings": True,
            "attention_bias": True,
        },
        218_527_744,
    ),
    "gemma": (
        {
            "model_type": "gemma",
            "hidden_size": 2048,
            "intermediate_size": 16384,
            "num_hidden_layers": 3,
            "num_attention_heads": 8,
            "num_key_value_heads": 1,
            "head_dim": 256,
            "vocab_size": 256000,
        },
        854_603_776,
    ),
    "gemma2": (
        {
            "model_type": "gemma2",
            "hidden_size": 2304,
            "intermediate_size": 9216,
            "num_hidden_layers": 4,
            "num_attention_heads": 8,
            "num_key_value_heads": 4,
            "head_dim": 256,
            "vocab_size": 256000,
            "sliding_window": 4096,
        },
        901_290_240,
    ),
    "gemma3_text": (
        {
            "model_type": "gemma3_text",
            "hidden_size": 640,
            "intermediate_size": 2048,
            "num_hidden_layers": 7,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 256,
            "vocab_size": 262144,
            "sliding_window": 512,
        },
        206_788_224,
    ),
    "phi": (
        {
            "model_type": "phi",
            "hidden_size": 2560,
            "intermediate_size": 10240,
            "num_hidden_layers": 3,
            "num_attention_heads": 32,
            "vocab_size": 51200,
            "qk_layernorm": True,
        },
        498_215_360,
    ),
    "gpt2": (
        {
            "model_type": "gpt2",
            "n_embd": 1280,
            "n_layer": 3,
            "n_head": 20,
            "n_positions": 2048,
            "n_inner": 3000,
            "vocab_size": 50257,
        },
        109_697_320,
    ),
    "opt_projected": (
        {
            "model_type": "opt",
            "hidden_size": 1024,
            "ffn_dim": 4096,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "word_embed_proj_dim": 512,
            "max_position_embeddings": 2048,
            "vocab_size": 50272,
        },
        66_677_760,
    ),
    "opt_untied_post_ln": (
        {
            "model_type": "opt",
            "hidden_size": 768,
            "ffn_dim": 3072,
            "num_hidden_layers": 2,
            "num_attention_heads": 12,
            "word_embed_proj_dim": 512,
            "max_position_embeddings": 1024,
            "vocab_size": 50272,
            "tie_word_embeddings": False,
            "do_layer_norm_before": False,
        },
        67_228_672,
    ),
    "bloom": (
        {"model_type": "bloom", "hidden_size": 1024, "n_layer": 3, "n_head": 16, "vocab_size": 250880},
        294_693_888,
    ),
    "falcon_multi_query": (
        {
            "model_type": "falcon",
            "hidden_size": 4544,
            "num_hidden_layers": 2,
            "num_attention_heads": 71,
            "multi_query": True,
            "parallel_attn": True,
            "vocab_size": 65024,
        },
        709_618_304,
    ),
    "falcon_new_arch": (
        {
            "model_type": "falcon",
            "hidden_size": 2048,
            "num_hidden_layers": 2,
            "num_attention_heads": 32,
            "num_kv_heads": 4,
            "new_decoder_architecture": True,
            "bias": True,
            "ffn_hidden_size": 6000,
            "vocab_size": 65024,
            "tie_word_embeddings": False,
        },
        334_410_464,
    ),
    "falcon_sequential_alibi": (
        {
            "model_type": "falcon",
            "hidden_size": 1024,
            "num_hidden_layers": 2,
            "num_attention_heads": 16,
            "multi_query": False,
            "parallel_attn": False,
            "alibi": True,
            "vocab_size": 65024,
        },
        91_760_640,
    ),
    "refinedweb_legacy": (
        {
            "model_type": "RefinedWeb",
            "hidden_size": 2048,
            "n_head": 32,
            "n_head_kv": 4,
            "n_layer": 3,
            "parallel_attn": True,
            "bias": False,
            "vocab_size": 65024,
        },
        262_172_672,
    ),
    "minicpm3": (
        {
            "model_type": "minicpm3",
            "hidden_size": 2560,
            "intermediate_size": 6400,
            "num_hidden_layers": 3,
            "num_attention_heads": 40,
            "num_key_value_heads": 40,
            "q_lora_rank": 768,
            "kv_lora_rank": 256,
            "qk_nope_head_dim": 64,
            "qk_rope_head_dim": 32,
            "v_head_dim": 64,
            "vocab_size": 73448,
        },
        376_054_272,
    ),
    # Gemma-4 text (per-layer head_dim/KV heads, KV sharing, per-layer embeddings, MoE beside the MLP)
    "gemma4_text": (
        {
            "model_type": "gemma4_text",
            "hidden_size": 512,
            "intermediate_size": 1024,
            "num_hidden_layers": 7,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 64,
            "vocab_size": 1000,
            "hidden_size_per_layer_input": 0,
            "global_head_dim": 128,
        },
        15_076_992,
    ),
    "gemma4_text_per_layer_embeddings": (
        {
            "model_type": "gemma4_text",
            "hidden_size": 512,
            "intermediate_size": 1024,
            "num_hidden_layers": 7,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 64,
            "vocab_size": 1000,
        },
        492_315_520,
    ),
    "gemma4_text_kv_shared_double_wide": (
        {
            "model_type": "gemma4_text",
            "hidden_size": 512,
            "intermediate_size": 1024,
            "num_hidden_layers": 8,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 64,
            "vocab_size": 1000,
            "hidden_size_per_layer_input": 32,
            "vocab_size_per_layer_input": 500,
            "num_kv_shared_layers": 3,
            "use_double_wide_mlp": True,
            "layer_types": [
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
                "sliding_attention",
                "full_attention",
            ],
            "global_head_dim": 96,
        },
        21_764_640,
    ),
    "gemma4_text_moe_k_eq_v": (
        {
            "model_type": "gemma4_text",
            "hidden_size": 512,
            "intermediate_size": 1024,
            "num_hidden_layers": 7,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 64,
            "vocab_size": 1000,
            "enable_moe_block": True,
            "num_experts": 8,
            "top_k_experts": 2,
            "moe_intermediate_size": 256,
            "attention_k_eq_v": True,
            "num_global_key_value_heads": 1,
            "hidden_size_per_layer_input": 0,
            "attention_bias": True,
        },
        40_298_680,
    ),
    "gemma4_text_per_layer_config": (
        {
            "model_type": "gemma4_text",
            "hidden_size": 512,
            "intermediate_size": 1024,
            "num_hidden_layers": 4,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 64,
            "vocab_size": 1000,
            "hidden_size_per_layer_input": 0,
            "per_layer_config": {
                "1": {"head_dim": 192, "num_key_value_heads": 1},
                "3": {"head_dim": 192, "num_key_value_heads": 1},
            },
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
        },
        9_565_696,
    ),
    "gemma4_wrapper": (
        {
            "model_type": "gemma4",
            "text_config": {
                "model_type": "gemma4_text",
                "hidden_size": 512,
                "intermediate_size": 1024,
                "num_hidden_layers": 7,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "head_dim": 64,
                "vocab_size": 1000,
                "hidden_size_per_layer_input": 0,
            },
            "tie_word_embeddings": False,
        },
        20_309_120,
    ),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_unseen_config_counts_like_transformers(name):
    cfg, expected = VARIANTS[name]
    assert param_counts(_spec_of(cfg)).total == expected


# -- family semantics ---------------------------------------------------------------------------


def test_gpt2_2019_file_without_model_type():
    spec = _spec("gpt2__gpt2-medium-early-revision")
    assert (spec.model_type, spec.hidden_size, spec.num_layers, spec.intermediate_size) == ("gpt2", 1024, 24, 4096)
    assert spec.position_embeddings == 1024 and spec.tie_word_embeddings
    assert spec.layer_kinds[0].mixer.fused_qkv
    src = spec.sources["hidden_size"]
    assert (src.key, src.line, src.column) == ("n_embd", 10, 3)
    src = spec.sources["num_layers"]
    assert (src.key, src.line, src.column) == ("n_layer", 12, 3)


def test_opt_positions_carry_the_offset_of_two():
    spec = _spec("opt__opt-125m")
    assert spec.position_embeddings == 2048 + 2


def test_legacy_refinedweb_reads_n_head_kv():
    spec = _spec("falcon__falcon-40b-instruct-legacy-RW")
    assert (spec.model_type, spec.num_heads, spec.num_kv_heads, spec.head_dim) == ("falcon", 128, 8, 64)
    qkv = {g.name: g for g in gemms(spec)}["attn.qkv_proj"]
    assert (qkv.k, qkv.n, qkv.layers) == (8192, (128 + 2 * 8) * 64, 60)
    src = spec.sources["num_kv_heads"]
    assert (src.key, src.line, src.column) == ("n_head_kv", 21, 3)


def test_gemma3_wrapper_reads_text_config():
    spec = _spec("gemma__gemma-3-27b")
    assert spec.model_type == "gemma3_text" and spec.key_prefix == "text_config."
    assert (spec.hidden_size, spec.num_heads, spec.head_dim) == (5376, 32, 128)  # head_dim != 5376 / 32
    assert [k.mixer.attention for k in spec.layer_kinds] == ["sliding", "full"]
    assert spec.layer_counts() == [52, 10] and spec.sliding_window == 1024
    src = spec.sources["hidden_size"]
    assert (src.key, src.line, src.column) == ("text_config.hidden_size", 24, 5)


def test_gemma3_without_layer_types_uses_the_pattern_of_six():
    spec = _spec_of(
        {
            "model_type": "gemma3_text",
            "hidden_size": 640,
            "intermediate_size": 2048,
            "num_hidden_layers": 12,
            "num_attention_heads": 4,
            "vocab_size": 1000,
            "sliding_window": 512,
        }
    )
    full = [i for i in range(12) if spec.kind_of(i).mixer.attention == "full"]
    assert full == [5, 11]


def test_mistral3_wrapper_reads_ministral3_text_config():
    spec = _spec("mistral__Devstral-Small-2-24B-Instruct")
    assert (spec.model_type, spec.key_prefix, spec.tie_word_embeddings) == ("ministral3", "text_config.", False)


def test_llava_wrapper_without_text_model_type_is_llama():
    # Expected total from scripts/gen_golden.py (the language model built from text_config; the
    # wrapper's tie_word_embeddings applies).
    cfg = {
        "model_type": "llava",
        "architectures": ["LlavaForConditionalGeneration"],
        "text_config": {
            "hidden_size": 1024,
            "intermediate_size": 2816,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "vocab_size": 32064,
        },
        "vision_config": {"model_type": "clip_vision_model"},
        "tie_word_embeddings": False,
    }
    spec = _spec_of(cfg)
    assert (spec.model_type, spec.key_prefix) == ("llama", "text_config.")
    assert param_counts(spec).total == 99_490_816


def test_qwen2_5_vl_nested_text_config():
    cfg = {
        "model_type": "qwen2_5_vl",
        "text_config": {
            "model_type": "qwen2_5_vl_text",
            "hidden_size": 1024,
            "intermediate_size": 2816,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 2,
            "vocab_size": 151936,
            "tie_word_embeddings": True,
        },
    }
    assert param_counts(_spec_of(cfg)).total == 188_623_616  # scripts/gen_golden.py


def test_qwen2_5_vl_flat_layout_is_qwen2():
    spec = _spec("qwen2.5-vl__Qwen2.5-VL-7B-Instruct")
    m = spec.layer_kinds[0].mixer
    assert (spec.key_prefix, m.qkv_bias, m.o_bias) == ("", True, False)


def test_mimo_mtp_layers_reported_apart():
    spec = _spec("mimo__MiMo-7B-Base")
    p = param_counts(spec)
    assert spec.mtp_layers == 1
    # One Qwen2 layer (q/k/v with bias, o, gated MLP, 2 norms) + 3 RMSNorms + input_proj 2H -> H.
    h, kv, inter = 4096, 8 * 128, 11008
    layer = h * h + h + 2 * (h * kv + kv) + h * h + 3 * h * inter + 2 * h
    assert p.mtp == layer + 3 * h + 2 * h * h
    assert p.total == 7_622_619_136  # Qwen2 build of the same config (golden); MTP not included


def test_phi_lm_head_has_bias():
    spec = _spec_of(
        {
            "model_type": "phi",
            "hidden_size": 64,
            "intermediate_size": 256,
            "num_hidden_layers": 1,
            "num_attention_heads": 4,
            "vocab_size": 100,
        }
    )
    assert spec.extra_params == 2 * 64 + 100  # final LayerNorm weight+bias and the LM head bias


def test_gemma4_kv_shared_and_k_eq_v_layers_drop_projections():
    spec = _spec_of(VARIANTS["gemma4_text_kv_shared_double_wide"][0])
    last = [g.name for g in gemms(spec, merge=False) if g.kind == spec.kind_of(7).name]
    assert "attn.k_proj" not in last and "attn.v_proj" not in last
    assert spec.kind_of(7).ffn.intermediate_size == 2 * 1024  # use_double_wide_mlp on KV-sharing layers
    spec = _spec_of(VARIANTS["gemma4_text_moe_k_eq_v"][0])
    full = spec.kind_of(5)
    assert (full.mixer.head_dim, full.mixer.num_kv_heads, full.mixer.v_from_k) == (512, 1, True)
    assert full.ffn.kind == "moe" and full.ffn.num_shared_experts == 1


# -- nemotron-nas (DeciLM: remote code, no transformers class) ------------------------------------

# Sum over block_configs of the DeciLM layer shapes (attention q/k/v/o with n_heads_in_group KV
# groups, gated FFN of _ffn_mult_to_intermediate_size width, one RMSNorm per non-no-op sublayer),
# plus embedding, untied LM head and final norm; matches the published "49.9B".
NEMOTRON_SUPER_49B_PARAMS = 49_867_145_216


def test_nemotron_nas_ffn_width_rule():
    assert ffn_mult_to_intermediate_size(2.625, 8192) == 14336  # exact multiple of 256
    assert ffn_mult_to_intermediate_size(1.3125, 8192) == 7168
    assert ffn_mult_to_intermediate_size(1.0, 4096) == 2816  # int(2730.67) = 2730 -> next multiple of 256
    assert ffn_mult_to_intermediate_size(0.5, 8192) == 2816


def test_nemotron_nas_corpus_file():
    path = os.path.join(CORPUS, "nemotron-nas__Llama-3_3-Nemotron-Super-49B-v1.json")
    spec = normalize(load(path))
    with open(path, encoding="utf-8") as fh:
        blocks = json.load(fh)["block_configs"]
    h, heads, hd, vocab = 8192, 64, 128, 128256
    total = 2 * vocab * h + h
    for b in blocks:
        a, f = b["attention"], b["ffn"]
        if not a["no_op"]:
            kv = heads // a["n_heads_in_group"]
            total += h * heads * hd * 2 + 2 * h * kv * hd + h
        if not f["no_op"]:
            total += 3 * h * ffn_mult_to_intermediate_size(f["ffn_mult"], h) + h
    assert param_counts(spec).total == total == NEMOTRON_SUPER_49B_PARAMS
    no_attention = sum(1 for b in blocks if b["attention"]["no_op"])
    assert no_attention == sum(1 for i in range(80) if spec.kind_of(i).mixer.kind == "none") > 0


def test_nemotron_nas_linear_and_no_op_sublayers():
    blocks = [
        {"attention": {"n_heads_in_group": 4, "window_length": 4096}, "ffn": {"ffn_mult": 1.0}},
        {"attention": {"replace_with_linear": True}, "ffn": {"no_op": True}},
        {"attention": {"no_op": True}, "ffn": {"replace_with_linear": True}},
    ]
    spec = _spec_of(
        {
            "model_type": "nemotron-nas",
            "hidden_size": 256,
            "num_hidden_layers": 3,
            "num_attention_heads": 8,
            "vocab_size": 1000,
            "block_configs": blocks,
        }
    )
    kinds = [(spec.kind_of(i).mixer.kind, spec.kind_of(i).ffn.kind) for i in range(3)]
    assert kinds == [("attention", "dense"), ("linear", "none"), ("none", "linear")]
    assert (spec.kind_of(0).mixer.attention, spec.kind_of(0).mixer.window) == ("sliding", 4096)
    h, inter = 256, ffn_mult_to_intermediate_size(1.0, 256)
    layer0 = 2 * h * h + 2 * h * (2 * 32) + 3 * h * inter + 2 * h
    assert param_counts(spec).total == 2 * 1000 * h + h + layer0 + (h * h + h) + (h * h + h)


def test_nemotron_nas_bad_ffn_mult_is_located():
    text = json.dumps(
        {
            "model_type": "nemotron-nas",
            "hidden_size": 256,
            "num_hidden_layers": 1,
            "num_attention_heads": 8,
            "vocab_size": 10,
            "block_configs": [{"attention": {"n_heads_in_group": 4}, "ffn": {"ffn_mult": "wide"}}],
        },
        indent=1,
    )
    with pytest.raises(SpecError) as exc:
        normalize(load_text(text, "nas.json"))
    assert exc.value.key == "block_configs[0].ffn.ffn_mult"
    assert (exc.value.line, exc.value.column) == (13, 5)  # indent=1: "ffn_mult" sits 4 levels deep


# -- the transformers fallback ------------------------------------------------------------------


def test_unknown_model_type_is_a_clear_error(tmp_path, capsys):
    p = tmp_path / "c.json"
    p.write_text('{\n  "model_type": "nonexistent_xyz",\n  "hidden_size": 10\n}\n')
    assert main(["inspect", str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        f"{p}:2:3: error: model_type 'nonexistent_xyz' is not supported by colint (neither colint nor transformers "
        "knows it, and no family colint reads can size it from its keys; its shape keys: hidden_size; "
    )
    assert err.endswith("model types (`colint formats` lists them)") and "\n" not in err
    assert main(["formats"]) == 0
    listed = capsys.readouterr().out
    assert "llama, " in listed and "gpt2, " in listed


def test_fallback_reads_a_standard_decoder_through_transformers(tmp_path):
    pytest.importorskip("transformers")
    # vaultgemma: a family without an adapter (cohere, used here before, has one in decoder.py now)
    cfg = {
        "model_type": "vaultgemma",
        "hidden_size": 1024,
        "intermediate_size": 4096,
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "vocab_size": 32000,
    }
    spec = _spec_of(cfg, str(tmp_path / "vaultgemma.json"))
    assert (spec.model_type, spec.hidden_size, spec.num_layers, spec.intermediate_size) == ("vaultgemma", 1024, 4, 4096)
    assert spec.notes == [
        "read through transformers' generic config by the key conventions its families share "
        "(no colint adapter for this model type); parameter counts approximate"
    ]
    assert spec.tie_word_embeddings  # VaultGemmaConfig's default, not Llama's


def test_fallback_refuses_a_non_decoder():
    pytest.importorskip("transformers")
    with pytest.raises(FormatNotRecognized) as exc:
        _spec_of({"model_type": "t5", "d_model": 512, "num_layers": 6})
    assert "model_type 't5' is not supported by colint (not a standard decoder" in exc.value.message
    assert (exc.value.line, exc.value.column) == (2, 3)
