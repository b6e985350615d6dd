"""Dense Hugging Face decoder families read through ``decoder.TRAITS`` (colint/normalize/hf/decoder.py):
exact totals, and what each family builds beyond Llama's layer (fused or biased projections, parallel
residuals, sliding layers, the config class's defaults).

Every expected ``total`` below came from the oracle, not from colint: scripts/gen_golden.py's
``build()`` (transformers 5.24.0 + torch 2.13.0 CPU, ``.venv-oracle``) building the config on the
meta device, ``sum(p.numel() for p in model.parameters())`` (tied weights once). Each family has a
config built from its class defaults (``*_defaults``: only ``model_type``, plus what transformers
cannot build without) and one or more with other dimensions.
"""

from __future__ import annotations

import pytest

from colint.analysis.inventory import param_counts
from tests.normalize.hf.oracle import gemm, assert_inspect_and_check, assert_total_equals_transformers, spec_from

# name -> (config, params_total from the oracle)
VARIANTS = {
    "phi3_defaults": ({"model_type": "phi3"}, 3_821_079_552),
    "phi3": (
        {
            "model_type": "phi3",
            "hidden_size": 3072,
            "intermediate_size": 8192,
            "num_hidden_layers": 3,
            "num_attention_heads": 24,
            "num_key_value_heads": 8,
            "vocab_size": 200064,
            "tie_word_embeddings": True,
        },
        916_608_000,
    ),
    # Helium (kyutai): Llama's layer with o_proj never biased
    "helium_defaults": ({"model_type": "helium"}, 2_172_643_840),
    "helium": (
        {
            "model_type": "helium",
            "hidden_size": 1536,
            "intermediate_size": 4096,
            "num_hidden_layers": 3,
            "num_attention_heads": 12,
            "num_key_value_heads": 4,
            "vocab_size": 32000,
            "attention_bias": True,
            "mlp_bias": True,
            "tie_word_embeddings": True,
        },
        124_697_088,
    ),
    # OLMo (defaults: transformers 5.24 + torch 2.13 on the meta device, scripts/gen_golden.py --count)
    "olmo_defaults": ({"model_type": "olmo"}, 6_888_095_744),
    "olmo2_defaults": ({"model_type": "olmo2"}, 6_888_624_128),
    "olmo3_defaults": ({"model_type": "olmo3"}, 6_888_624_128),
    "olmo": (
        {
            "model_type": "olmo",
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "vocab_size": 50304,
        },
        407_371_776,
    ),
    "olmo2": (
        {
            "model_type": "olmo2",
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "vocab_size": 100352,
        },
        593_516_032,
    ),
    "olmo3": (
        {
            "model_type": "olmo3",
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "num_hidden_layers": 4,
            "num_attention_heads": 16,
            "vocab_size": 100352,
            "sliding_window": 4096,
        },
        679_512_064,
    ),
    "granite_defaults": ({"model_type": "granite"}, 6_738_415_616),
    "granite": (
        {
            "model_type": "granite",
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "num_hidden_layers": 3,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "vocab_size": 49155,
            "tie_word_embeddings": True,
            "attention_bias": True,
            "mlp_bias": True,
            "embedding_multiplier": 12.0,
        },
        283_206_656,
    ),
    "smollm3_defaults": ({"model_type": "smollm3"}, 3_075_098_624),
    "smollm3": (
        {
            "model_type": "smollm3",
            "hidden_size": 1536,
            "intermediate_size": 4096,
            "num_hidden_layers": 4,
            "num_attention_heads": 12,
            "num_key_value_heads": 4,
            "vocab_size": 128256,
            "use_sliding_window": True,
            "sliding_window": 2048,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
            "tie_word_embeddings": False,
        },
        494_679_552,
    ),
    "arcee_defaults": ({"model_type": "arcee"}, 4_022_766_080),
    "arcee": (
        {
            "model_type": "arcee",
            "hidden_size": 2048,
            "intermediate_size": 12288,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 96,
            "vocab_size": 128000,
            "mlp_bias": True,
        },
        698_933_248,
    ),
    "seed_oss_defaults": ({"model_type": "seed_oss"}, 28_921_040_896),
    "seed_oss": (
        {
            "model_type": "seed_oss",
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "vocab_size": 155136,
            "attention_out_bias": True,
            "mlp_bias": True,
        },
        780_213_248,
    ),
    "cohere_defaults": ({"model_type": "cohere"}, 34_980_831_232),
    "cohere": (
        {
            "model_type": "cohere",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_hidden_layers": 2,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "vocab_size": 256000,
            "use_qk_norm": True,
            "attention_bias": True,
        },
        1_484_826_624,
    ),
    "cohere2_defaults": ({"model_type": "cohere2"}, 34_980_831_232),
    "cohere2": (
        {
            "model_type": "cohere2",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_hidden_layers": 5,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 96,
            "vocab_size": 256000,
            "sliding_window": 4096,
            "sliding_window_pattern": 4,
            "tie_word_embeddings": False,
        },
        3_135_266_816,
    ),
    "starcoder2_defaults": ({"model_type": "starcoder2"}, 3_030_371_328),
    "starcoder2": (
        {
            "model_type": "starcoder2",
            "hidden_size": 4608,
            "intermediate_size": 18432,
            "num_hidden_layers": 2,
            "num_attention_heads": 36,
            "num_key_value_heads": 4,
            "vocab_size": 49152,
            "sliding_window": 4096,
            "use_bias": True,
            "tie_word_embeddings": False,
        },
        887_207_936,
    ),
    "starcoder2_nobias": (
        {
            "model_type": "starcoder2",
            "hidden_size": 1024,
            "intermediate_size": 4096,
            "num_hidden_layers": 2,
            "num_attention_heads": 16,
            "num_key_value_heads": 2,
            "vocab_size": 49152,
            "use_bias": False,
        },
        71_837_696,
    ),
    "gpt_neox_defaults": ({"model_type": "gpt_neox"}, 20_554_567_680),
    "gpt_neox": (
        {
            "model_type": "gpt_neox",
            "hidden_size": 2560,
            "intermediate_size": 10240,
            "num_hidden_layers": 3,
            "num_attention_heads": 32,
            "vocab_size": 50304,
            "rotary_pct": 0.25,
            "use_parallel_residual": True,
        },
        493_591_040,
    ),
    "gpt_neox_sequential_tied": (
        {
            "model_type": "gpt_neox",
            "hidden_size": 512,
            "intermediate_size": 2048,
            "num_hidden_layers": 2,
            "num_attention_heads": 8,
            "vocab_size": 50304,
            "use_parallel_residual": False,
            "attention_bias": False,
            "tie_word_embeddings": True,
        },
        32_057_344,
    ),
    "gptj_defaults": ({"model_type": "gptj"}, 6_050_882_784),
    "gptj": (
        {
            "model_type": "gptj",
            "n_embd": 2048,
            "n_layer": 3,
            "n_head": 16,
            "n_inner": 6000,
            "rotary_dim": 32,
            "vocab_size": 50400,
            "n_positions": 2048,
        },
        330_588_976,
    ),
    "stablelm_defaults": ({"model_type": "stablelm"}, 2_795_443_200),
    "stablelm": (
        {
            "model_type": "stablelm",
            "hidden_size": 2048,
            "intermediate_size": 5632,
            "num_hidden_layers": 3,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "vocab_size": 100352,
            "use_qkv_bias": True,
            "qk_layernorm": True,
            "use_parallel_residual": True,
        },
        546_341_376,
    ),
    "glm_defaults": ({"model_type": "glm"}, 9_399_951_360),
    "glm": (
        {
            "model_type": "glm",
            "hidden_size": 2048,
            "intermediate_size": 6000,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 64,
            "vocab_size": 151552,
            "attention_bias": False,
        },
        747_091_968,
    ),
    "glm4_defaults": ({"model_type": "glm4"}, 9_400_279_040),
    "glm4": (
        {
            "model_type": "glm4",
            "hidden_size": 6144,
            "intermediate_size": 23040,
            "num_hidden_layers": 2,
            "num_attention_heads": 48,
            "num_key_value_heads": 2,
            "head_dim": 128,
            "vocab_size": 151552,
            "attention_bias": True,
        },
        2_868_972_544,
    ),
    "exaone4_defaults": ({"model_type": "exaone4"}, 9_429_069_824),
    "exaone4": (
        {
            "model_type": "exaone4",
            "hidden_size": 5120,
            "intermediate_size": 27392,
            "num_hidden_layers": 4,
            "num_attention_heads": 40,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 102400,
            "sliding_window": 4096,
            "sliding_window_pattern": 3,
            "tie_word_embeddings": False,
        },
        2_983_245_824,
    ),
    "ernie4_5_defaults": ({"model_type": "ernie4_5"}, 360_748_032),
    "ernie4_5": (
        {
            "model_type": "ernie4_5",
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "vocab_size": 103424,
            "use_bias": True,
            "tie_word_embeddings": False,
        },
        568_400_896,
    ),
    "hunyuan_v1_dense_defaults": ({"model_type": "hunyuan_v1_dense", "head_dim": 128}, 8_859_684_864),
    "hunyuan_v1_dense": (
        {
            "model_type": "hunyuan_v1_dense",
            "hidden_size": 3072,
            "intermediate_size": 8192,
            "num_hidden_layers": 3,
            "num_attention_heads": 24,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 128256,
            "attention_bias": True,
            "tie_word_embeddings": True,
        },
        696_039_168,
    ),
    "apertus_defaults": ({"model_type": "apertus"}, 6_979_596_352),
    "apertus": (
        {
            "model_type": "apertus",
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "vocab_size": 131072,
            "attention_bias": True,
        },
        675_316_486,
    ),
    "apertus_relu2": (
        {
            "model_type": "apertus",
            "hidden_size": 512,
            "intermediate_size": 1024,
            "num_hidden_layers": 2,
            "num_attention_heads": 8,
            "vocab_size": 1000,
            "hidden_act": "relu2",
        },
        5_221_120,
    ),
    # with the keys published checkpoints carry (Pythia-1B 1,011,781,632, as published)
    "pythia-1b": (
        {
            "architectures": ["GPTNeoXForCausalLM"],
            "bos_token_id": 0,
            "eos_token_id": 0,
            "hidden_act": "gelu",
            "hidden_size": 2048,
            "initializer_range": 0.02,
            "intermediate_size": 8192,
            "layer_norm_eps": 1e-05,
            "max_position_embeddings": 2048,
            "model_type": "gpt_neox",
            "num_attention_heads": 8,
            "num_hidden_layers": 16,
            "rotary_emb_base": 10000,
            "rotary_pct": 0.25,
            "tie_word_embeddings": False,
            "torch_dtype": "float16",
            "transformers_version": "4.24.0",
            "use_cache": True,
            "use_parallel_residual": True,
            "vocab_size": 50304,
        },
        1_011_781_632,
    ),
    "command-r": (
        {
            "architectures": ["CohereForCausalLM"],
            "attention_bias": False,
            "hidden_act": "silu",
            "hidden_size": 8192,
            "intermediate_size": 22528,
            "layer_norm_eps": 1e-05,
            "logit_scale": 0.0625,
            "max_position_embeddings": 8192,
            "model_type": "cohere",
            "num_attention_heads": 64,
            "num_hidden_layers": 40,
            "num_key_value_heads": 64,
            "rope_theta": 8000000.0,
            "torch_dtype": "float16",
            "use_cache": True,
            "use_qk_norm": False,
            "vocab_size": 256000,
            "bos_token_id": 5,
            "eos_token_id": 255001,
            "pad_token_id": 0,
        },
        34_980_831_232,
    ),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_total_equals_transformers(name):
    assert_total_equals_transformers(*VARIANTS[name])


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_inspect_and_check_exit_codes(name, tmp_path, capsys):
    assert_inspect_and_check(name, *VARIANTS[name], tmp_path, capsys)


def test_gpt_neox_fused_qkv_with_bias_and_untied_head():
    spec = spec_from(VARIANTS["gpt_neox"][0])
    g = gemm(spec, "attn.qkv_proj")
    assert (g.k, g.n, g.bias) == (2560, 3 * 2560, True)
    assert gemm(spec, "mlp.up_proj").bias and gemm(spec, "attn.o_proj").bias
    assert not spec.tie_word_embeddings and param_counts(spec).lm_head == 2560 * 50304
    assert [k.mixer.head_dim for k in spec.layer_kinds] == [80]


def test_gptj_lm_head_bias_and_default_inner_width():
    spec = spec_from(VARIANTS["gptj_defaults"][0])
    assert spec.intermediate_size == 4 * 4096
    assert spec.sources["intermediate_size"].key == "n_inner" and spec.sources["intermediate_size"].default
    # one LayerNorm (weight + bias) per layer; the final ln_f and the LM head's bias are outside layers
    assert spec.layer_kinds[0].other_params == 2 * 4096
    assert spec.extra_params == 2 * 4096 + 50400


def test_stablelm_parallel_residual_drops_a_norm_and_qk_layernorm_is_per_head():
    cfg = dict(VARIANTS["stablelm"][0])
    par = spec_from(cfg).layer_kinds[0].other_params
    seq = spec_from({**cfg, "use_parallel_residual": False}).layer_kinds[0].other_params
    assert seq - par == 2 * 2048  # post_attention_layernorm, weight + bias
    no_qk = spec_from({**cfg, "qk_layernorm": False}).layer_kinds[0].other_params
    assert par - no_qk == (32 + 8) * 64


def test_sliding_layers():
    cohere2 = spec_from(VARIANTS["cohere2"][0])  # sliding_window_pattern 4: every 4th layer full
    assert [cohere2.kind_of(i).mixer.attention for i in range(5)] == ["sliding"] * 3 + ["full", "sliding"]
    smol = spec_from(VARIANTS["smollm3"][0])
    assert [smol.kind_of(i).mixer.attention for i in range(4)] == ["sliding", "full"] * 2
    assert spec_from({**VARIANTS["smollm3"][0], "use_sliding_window": False}).layer_kinds[0].mixer.window is None
    assert {k.mixer.attention for k in spec_from(VARIANTS["starcoder2"][0]).layer_kinds} == {"sliding"}


def test_defaults_use_the_config_class_kv_heads_and_head_dim():
    glm = spec_from({"model_type": "glm", "hidden_size": 1024, "num_attention_heads": 8})
    assert (glm.num_kv_heads, glm.head_dim) == (2, 128)  # GlmConfig's defaults, not H / heads
    granite = spec_from({"model_type": "granite", "hidden_size": 1024, "num_attention_heads": 8})
    assert (granite.num_kv_heads, granite.head_dim) == (8, 128)  # kv None -> heads; head_dim = H / heads
    assert granite.sources["num_kv_heads"].default
