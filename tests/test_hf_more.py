"""More Hugging Face decoder families (colint/normalize/hf/decoder.py and the wrappers/hybrids added with it).

Every expected ``total`` below came from the oracle, not from colint: scripts/gen_golden.py's
``build()`` (transformers 5.24.0 + torch 2.13.0 CPU, ``.venv-oracle``) building the config on the
meta device, ``sum(p.numel() for p in model.parameters())`` (tied weights once). Each family has a
config built from its class defaults (``*_defaults``: only ``model_type``, plus what transformers
cannot build without) and one or more with other dimensions.
"""

from __future__ import annotations

import json

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.cli import main
from colint.errors import SpecError
from colint.loading import load_text
from colint.normalize import normalize


def spec_from(cfg: dict):
    return normalize(load_text(json.dumps(cfg, indent=1), "unseen.json"), "hf")


# name -> (config, params_total from the oracle)
VARIANTS = {
    # Mixtral: every layer sparse (test_hf_moe.py holds its corpus file and another variant)
    "mixtral_defaults": ({"model_type": "mixtral"}, 46_702_792_704),
    "mixtral": (
        {
            "model_type": "mixtral",
            "hidden_size": 1024,
            "intermediate_size": 2816,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 96,
            "num_local_experts": 6,
            "num_experts_per_tok": 2,
            "vocab_size": 32768,
            "sliding_window": 4096,
            "tie_word_embeddings": True,
        },
        201_090_048,
    ),
    # GLM-4.5/4.6/4.7 MoE and GLM-4.5V's language model (test_hf_moe.py: the corpus file, the wrapped form)
    "glm4_moe_defaults": ({"model_type": "glm4_moe"}, 103_481_200_640),
    "glm4_moe": (
        {
            "model_type": "glm4_moe",
            "hidden_size": 1024,
            "intermediate_size": 2816,
            "moe_intermediate_size": 384,
            "num_hidden_layers": 4,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 96,
            "n_routed_experts": 8,
            "num_experts_per_tok": 2,
            "n_shared_experts": 2,
            "first_k_dense_replace": 2,
            "use_qk_norm": True,
            "attention_bias": True,
            "num_nextn_predict_layers": 1,
            "vocab_size": 32768,
        },
        123_767_552,
    ),
    "glm4v_moe_text_defaults": ({"model_type": "glm4v_moe_text"}, 103_480_368_448),
    "glm4v_moe_text": (
        {
            "model_type": "glm4v_moe_text",
            "hidden_size": 1024,
            "intermediate_size": 2816,
            "moe_intermediate_size": 384,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "n_routed_experts": 8,
            "num_experts_per_tok": 2,
            "first_k_dense_replace": 1,
            "attention_bias": False,
            "vocab_size": 32768,
            "tie_word_embeddings": True,
        },
        71_326_720,
    ),
    # the wrapper's model_type with no text_config: the text config's defaults
    "glm4v_moe_defaults": ({"model_type": "glm4v_moe"}, 103_480_368_448),
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
    "olmoe_defaults": ({"model_type": "olmoe"}, 13_361_612_800),
    "olmoe": (
        {
            "model_type": "olmoe",
            "hidden_size": 1024,
            "intermediate_size": 512,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "num_experts": 32,
            "num_experts_per_tok": 4,
            "vocab_size": 50304,
            "attention_bias": True,
        },
        261_998_848,
    ),
    "phimoe_defaults": ({"model_type": "phimoe"}, 41_872_793_600),
    "phimoe": (
        {
            "model_type": "phimoe",
            "hidden_size": 2048,
            "intermediate_size": 1024,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
            "vocab_size": 32064,
            "attention_bias": True,
            "lm_head_bias": True,
            "sliding_window": 2047,
        },
        313_911_616,
    ),
    "granitemoe_defaults": ({"model_type": "granitemoe"}, 37_039_116_288),
    "granitemoe": (
        {
            "model_type": "granitemoe",
            "hidden_size": 1536,
            "intermediate_size": 512,
            "num_hidden_layers": 3,
            "num_attention_heads": 24,
            "num_key_value_heads": 8,
            "num_local_experts": 40,
            "num_experts_per_tok": 8,
            "vocab_size": 49155,
            "tie_word_embeddings": True,
        },
        377_687_040,
    ),
    "granitemoeshared_defaults": ({"model_type": "granitemoeshared"}, 37_039_116_288),
    "granitemoeshared": (
        {
            "model_type": "granitemoeshared",
            "hidden_size": 1536,
            "intermediate_size": 512,
            "shared_intermediate_size": 1024,
            "num_hidden_layers": 3,
            "num_attention_heads": 24,
            "num_key_value_heads": 8,
            "num_local_experts": 40,
            "num_experts_per_tok": 8,
            "vocab_size": 49155,
            "attention_bias": True,
        },
        467_357_184,
    ),
    "ernie4_5_moe_defaults": ({"model_type": "ernie4_5_moe"}, 21_825_437_888),
    "ernie4_5_moe": (
        {
            "model_type": "ernie4_5_moe",
            "hidden_size": 1024,
            "intermediate_size": 4096,
            "moe_intermediate_size": 512,
            "num_hidden_layers": 6,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 64,
            "moe_num_experts": 16,
            "moe_k": 4,
            "moe_num_shared_experts": 1,
            "moe_layer_start_index": 1,
            "moe_layer_end_index": 4,
            "moe_layer_interval": 2,
            "vocab_size": 103424,
            "use_bias": True,
            "tie_word_embeddings": False,
        },
        331_555_872,
    ),
    "hunyuan_v1_moe_defaults": ({"model_type": "hunyuan_v1_moe", "head_dim": 128}, 13_188_337_664),
    "hunyuan_v1_moe": (
        {
            "model_type": "hunyuan_v1_moe",
            "hidden_size": 1024,
            "intermediate_size": 768,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "num_experts": 16,
            "moe_topk": 4,
            "vocab_size": 128167,
            "attention_bias": True,
        },
        398_608_128,
    ),
    "dots1_defaults": (
        {"model_type": "dots1", "n_routed_experts": 128, "n_shared_experts": 2, "num_experts_per_tok": 6},
        163_585_920_960,
    ),
    "dots1": (
        {
            "model_type": "dots1",
            "hidden_size": 1024,
            "intermediate_size": 4096,
            "moe_intermediate_size": 256,
            "num_hidden_layers": 4,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 64,
            "n_routed_experts": 32,
            "n_shared_experts": 1,
            "num_experts_per_tok": 4,
            "first_k_dense_replace": 1,
            "vocab_size": 152064,
            "tie_word_embeddings": True,
        },
        256_747_008,
    ),
    # hybrids: LFM2 short convolutions; Bamba and Granite-4.0-H Mamba-2 layers (legacy "mamba" names too)
    "lfm2_defaults": ({"model_type": "lfm2"}, 2_705_497_600),
    "lfm2": (
        {
            "model_type": "lfm2",
            "hidden_size": 1024,
            "intermediate_size": 6656,
            "num_hidden_layers": 6,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "vocab_size": 65536,
            "conv_L_cache": 3,
            "block_ffn_dim_multiplier": 1.0,
            "block_multiple_of": 256,
            "layer_types": ["conv", "conv", "full_attention", "conv", "full_attention", "conv"],
        },
        175_138_048,
    ),
    "lfm2_no_adjust_conv_bias": (
        {
            "model_type": "lfm2",
            "hidden_size": 512,
            "block_ff_dim": 2000,
            "block_auto_adjust_ff_dim": False,
            "num_hidden_layers": 3,
            "num_attention_heads": 8,
            "num_key_value_heads": 2,
            "vocab_size": 1000,
            "conv_bias": True,
            "full_attn_idxs": [1],
            "tie_embedding": False,
        },
        13_004_416,
    ),
    "bamba_defaults": ({"model_type": "bamba"}, 9_992_765_440),
    "bamba": (
        {
            "model_type": "bamba",
            "hidden_size": 1024,
            "intermediate_size": 3072,
            "num_hidden_layers": 4,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "vocab_size": 128000,
            "attn_layer_indices": [1, 3],
            "mamba_n_heads": 32,
            "mamba_d_state": 128,
            "mamba_n_groups": 2,
            "mamba_d_conv": 4,
            "mamba_expand": 2,
            "mamba_proj_bias": True,
            "mamba_conv_bias": False,
            "tie_word_embeddings": True,
        },
        187_805_952,
    ),
    "granitemoehybrid_defaults": ({"model_type": "granitemoehybrid"}, 38_601_064_448),
    "granitemoehybrid": (
        {
            "model_type": "granitemoehybrid",
            "hidden_size": 1536,
            "intermediate_size": 512,
            "shared_intermediate_size": 1024,
            "num_hidden_layers": 4,
            "num_attention_heads": 12,
            "num_key_value_heads": 4,
            "num_local_experts": 32,
            "num_experts_per_tok": 8,
            "vocab_size": 100352,
            "layer_types": ["linear_attention", "full_attention", "linear_attention", "linear_attention"],
            "mamba_n_heads": 48,
            "mamba_d_state": 128,
            "mamba_d_head": 64,
            "mamba_expand": 2,
            "tie_word_embeddings": True,
        },
        525_434_544,
    ),
    "granitemoehybrid_dense": (
        {
            "model_type": "granitemoehybrid",
            "hidden_size": 2048,
            "intermediate_size": 8192,
            "shared_intermediate_size": 8192,
            "num_hidden_layers": 3,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "num_local_experts": 0,
            "num_experts_per_tok": 0,
            "vocab_size": 100352,
            "layer_types": ["linear_attention", "full_attention", "linear_attention"],
            "mamba_n_heads": 64,
            "mamba_d_state": 128,
            "mamba_n_groups": 1,
            "mamba_d_head": 64,
            "attention_bias": True,
        },
        624_236_416,
    ),
    "gmh_legacy": (
        {
            "model_type": "granitemoehybrid",
            "hidden_size": 1024,
            "intermediate_size": 512,
            "shared_intermediate_size": 1024,
            "num_hidden_layers": 2,
            "num_attention_heads": 16,
            "num_local_experts": 4,
            "num_experts_per_tok": 2,
            "vocab_size": 1000,
            "layer_types": ["mamba", "attention"],
            "mamba_n_heads": 32,
            "mamba_d_state": 64,
        },
        31_598_304,
    ),
    "gmh_lbt": (
        {
            "model_type": "granitemoehybrid",
            "hidden_size": 1024,
            "intermediate_size": 512,
            "shared_intermediate_size": 1024,
            "num_hidden_layers": 2,
            "num_attention_heads": 16,
            "num_local_experts": 4,
            "num_experts_per_tok": 2,
            "vocab_size": 1000,
            "layers_block_type": ["linear_attention", "full_attention"],
            "mamba_n_heads": 32,
            "mamba_d_state": 64,
        },
        31_598_304,
    ),
    "gmh_new": (
        {
            "model_type": "granitemoehybrid",
            "hidden_size": 1024,
            "intermediate_size": 512,
            "shared_intermediate_size": 1024,
            "num_hidden_layers": 2,
            "num_attention_heads": 16,
            "num_local_experts": 4,
            "num_experts_per_tok": 2,
            "vocab_size": 1000,
            "layer_types": ["linear_attention", "full_attention"],
            "mamba_n_heads": 32,
            "mamba_d_state": 64,
        },
        31_598_304,
    ),
    # plain Mamba-2 (Codestral Mamba): the same block under Mamba2Config's key names
    "mamba2_defaults": ({"model_type": "mamba2"}, 7_285_403_648),
    "mamba2": (
        {
            "model_type": "mamba2",
            "hidden_size": 1024,
            "num_hidden_layers": 3,
            "num_heads": 32,
            "head_dim": 64,
            "n_groups": 2,
            "state_size": 64,
            "conv_kernel": 4,
            "expand": 2,
            "use_bias": True,
            "use_conv_bias": False,
            "vocab_size": 50280,
            "tie_word_embeddings": True,
        },
        71_300_224,
    ),
    # with the keys published checkpoints carry (Pythia-1B 1,011,781,632 and OLMoE-1B-7B 6.92B, as published;
    # remote-code leftovers such as LFM2's block_dim/conv_dim and Granite-4.0-H's legacy "mamba" layer names)
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
    "olmoe-1b-7b": (
        {
            "architectures": ["OlmoeForCausalLM"],
            "attention_bias": False,
            "clip_qkv": None,
            "hidden_act": "silu",
            "hidden_size": 2048,
            "intermediate_size": 1024,
            "max_position_embeddings": 4096,
            "model_type": "olmoe",
            "norm_topk_prob": False,
            "num_attention_heads": 16,
            "num_experts": 64,
            "num_experts_per_tok": 8,
            "num_hidden_layers": 16,
            "num_key_value_heads": 16,
            "output_router_logits": False,
            "pad_token_id": 1,
            "eos_token_id": 50279,
            "rms_norm_eps": 1e-05,
            "rope_theta": 10000.0,
            "router_aux_loss_coef": 0.01,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "vocab_size": 50304,
        },
        6_919_161_856,
    ),
    "granite-4.0-h-like": (
        {
            "architectures": ["GraniteMoeHybridForCausalLM"],
            "model_type": "granitemoehybrid",
            "hidden_size": 1536,
            "intermediate_size": 512,
            "shared_intermediate_size": 1024,
            "num_hidden_layers": 8,
            "num_attention_heads": 12,
            "num_key_value_heads": 4,
            "num_local_experts": 64,
            "num_experts_per_tok": 6,
            "vocab_size": 100352,
            "layer_types": ["mamba", "mamba", "mamba", "attention", "mamba", "mamba", "mamba", "attention"],
            "mamba_n_heads": 48,
            "mamba_d_head": 64,
            "mamba_d_state": 128,
            "mamba_n_groups": 1,
            "mamba_d_conv": 4,
            "mamba_expand": 2,
            "mamba_chunk_size": 256,
            "mamba_conv_bias": True,
            "mamba_proj_bias": False,
            "position_embedding_type": "nope",
            "tie_word_embeddings": True,
            "attention_multiplier": 0.0078125,
            "embedding_multiplier": 12,
            "logits_scaling": 6,
            "residual_multiplier": 0.22,
            "rope_theta": 10000,
            "normalization_function": "rmsnorm",
            "init_method": "mup",
            "rms_norm_eps": 1e-05,
            "output_router_logits": False,
            "router_aux_loss_coef": 0.0,
            "max_position_embeddings": 131072,
        },
        1_501_099_872,
    ),
    "lfm2-like": (
        {
            "architectures": ["Lfm2ForCausalLM"],
            "block_auto_adjust_ff_dim": True,
            "block_dim": 2048,
            "block_ff_dim": 12288,
            "block_ffn_dim_multiplier": 1.0,
            "block_mlp_init_scale": 1.0,
            "block_multiple_of": 256,
            "block_norm_eps": 1e-05,
            "block_out_init_scale": 1.0,
            "block_use_swiglu": True,
            "block_use_xavier_init": True,
            "conv_L_cache": 3,
            "conv_bias": False,
            "conv_dim": 2048,
            "conv_dim_out": 2048,
            "conv_use_xavier_init": True,
            "eos_token_id": 7,
            "hidden_size": 2048,
            "initializer_range": 0.02,
            "max_position_embeddings": 128000,
            "model_type": "lfm2",
            "norm_eps": 1e-05,
            "num_attention_heads": 32,
            "num_heads": 32,
            "num_hidden_layers": 16,
            "num_key_value_heads": 8,
            "pad_token_id": 0,
            "rope_theta": 1000000.0,
            "torch_dtype": "bfloat16",
            "use_cache": True,
            "use_pos_enc": True,
            "vocab_size": 65536,
            "full_attn_idxs": [2, 5, 8, 10, 12, 14],
            "tie_embedding": True,
        },
        1_170_340_608,
    ),
    # GLM-5 (DeepSeek Sparse Attention; tests/test_dsa_layer_geometry.py holds the published config): an
    # index_topk_pattern whose "S" layers have no indexer
    "glm_moe_dsa_defaults": ({"model_type": "glm_moe_dsa"}, 743_911_199_232),
    "glm_moe_dsa": (
        {
            "model_type": "glm_moe_dsa",
            "hidden_size": 1024,
            "intermediate_size": 2816,
            "moe_intermediate_size": 384,
            "num_hidden_layers": 6,
            "num_attention_heads": 16,
            "num_key_value_heads": 16,
            "q_lora_rank": 384,
            "kv_lora_rank": 256,
            "qk_nope_head_dim": 64,
            "qk_rope_head_dim": 32,
            "v_head_dim": 96,
            "index_n_heads": 8,
            "index_head_dim": 64,
            "index_topk": 256,
            "n_routed_experts": 8,
            "num_experts_per_tok": 2,
            "n_shared_experts": 2,
            "first_k_dense_replace": 2,
            "vocab_size": 32000,
            "index_topk_pattern": "FFSFSF",
            "tie_word_embeddings": True,
        },
        119_424_256,
    ),
    # MiMo-V2-Flash (per-layer-type geometry): transformers' 1-in-6 full layers, sliding layers with 2x KV heads
    "mimo_v2_flash_defaults": ({"model_type": "mimo_v2_flash"}, 308_778_768_832),
    "mimo_v2_flash": (
        {
            "model_type": "mimo_v2_flash",
            "hidden_size": 1024,
            "intermediate_size": 2816,
            "moe_intermediate_size": 384,
            "num_hidden_layers": 12,
            "num_attention_heads": 16,
            "num_key_value_heads": 2,
            "head_dim": 128,
            "v_head_dim": 64,
            "n_routed_experts": 8,
            "num_experts_per_tok": 2,
            "vocab_size": 32000,
            "attention_bias": True,
            "mlp_layer_types": ["dense", "dense"] + ["sparse"] * 10,
            "tie_word_embeddings": True,
            "sliding_window": 64,
        },
        190_587_920,
    ),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_total_equals_transformers(name):
    cfg, total = VARIANTS[name]
    spec = spec_from(cfg)
    assert spec.model_type == cfg["model_type"]
    assert param_counts(spec).total == total


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_inspect_and_check_exit_codes(name, tmp_path, capsys):
    cfg, total = VARIANTS[name]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(cfg, indent=1), encoding="utf-8")
    assert main(["inspect", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["total"] == total
    assert main(["check", str(path)]) in (0, 1)


def test_every_decoder_family_has_a_defaults_and_a_sized_variant():
    from colint.normalize.hf import FAMILIES, WRAPPER_TEXT_TYPES

    for mt in (m for m, mod in FAMILIES.items() if mod in ("decoder", "lfm2", "hybrid")):
        mine = [cfg for cfg, _ in VARIANTS.values() if cfg["model_type"] == mt]
        if mt in WRAPPER_TEXT_TYPES:
            # a wrapper's model_type read flat: transformers builds its default text config and ignores
            # top-level sizes, so only the defaults variant is exact; the sized ones are the text type's
            assert {"model_type": mt} in mine, mt
            continue
        assert len(mine) >= 2, mt
        assert any("hidden_size" in c or "n_embd" in c for c in mine), mt


def _gemm(spec, name):
    found = [g for g in gemms(spec) if g.name == name]
    assert found, [g.name for g in gemms(spec)]
    return found[0]


def test_gpt_neox_fused_qkv_with_bias_and_untied_head():
    spec = spec_from(VARIANTS["gpt_neox"][0])
    g = _gemm(spec, "attn.qkv_proj")
    assert (g.k, g.n, g.bias) == (2560, 3 * 2560, True)
    assert _gemm(spec, "mlp.up_proj").bias and _gemm(spec, "attn.o_proj").bias
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


def test_ernie4_5_moe_sparse_layers_follow_start_end_interval():
    spec = spec_from(VARIANTS["ernie4_5_moe"][0])  # start 1, end 4, interval 2 over 6 layers
    assert [spec.kind_of(i).ffn.kind for i in range(6)] == ["dense", "moe", "dense", "moe", "dense", "dense"]
    moe = next(k.ffn for k in spec.layer_kinds if k.ffn.kind == "moe")
    assert (moe.num_experts, moe.top_k, moe.expert_intermediate_size) == (16, 4, 512)
    assert (moe.num_shared_experts, moe.shared_intermediate_size, moe.shared_bias) == (1, 512, True)


def test_dots1_first_k_dense_then_moe_with_shared_experts():
    spec = spec_from(VARIANTS["dots1"][0])
    assert [spec.kind_of(i).ffn.kind for i in range(4)] == ["dense", "moe", "moe", "moe"]
    assert spec.kind_of(1).ffn.num_shared_experts == 1


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


# Qwen3-Omni: the language model is thinker_config.text_config. Totals from the oracle building
# Qwen3OmniMoeThinkerForConditionalGeneration(cfg.thinker_config) on the meta device and counting
# model.language_model + lm_head (tied once); gen_golden.py has no nested-wrapper path.
_OMNI_TEXT = {
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "moe_intermediate_size": 256,
    "num_hidden_layers": 3,
    "num_attention_heads": 16,
    "num_key_value_heads": 4,
    "head_dim": 64,
    "num_experts": 16,
    "num_experts_per_tok": 4,
    "vocab_size": 152064,
    "mlp_only_layers": [0],
    "decoder_sparse_step": 1,
}
OMNI = {
    "defaults": ({"model_type": "qwen3_omni_moe"}, 17_201_485_816),
    "sized": (
        {
            "model_type": "qwen3_omni_moe",
            "thinker_config": {
                "model_type": "qwen3_omni_moe_thinker",
                "text_config": {**_OMNI_TEXT, "model_type": "qwen3_omni_moe_text"},
            },
        },
        353_934_720,
    ),
    # the thinker's tie_word_embeddings ties; the text config's and the top level's do not
    "thinker_tie": (
        {
            "model_type": "qwen3_omni_moe",
            "thinker_config": {"tie_word_embeddings": True, "text_config": dict(_OMNI_TEXT)},
        },
        198_221_184,
    ),
    "text_tie_ignored": (
        {
            "model_type": "qwen3_omni_moe",
            "thinker_config": {"text_config": {**_OMNI_TEXT, "tie_word_embeddings": True}},
        },
        353_934_720,
    ),
    "top_tie_ignored": (
        {
            "model_type": "qwen3_omni_moe",
            "tie_word_embeddings": True,
            "thinker_config": {"text_config": dict(_OMNI_TEXT)},
        },
        353_934_720,
    ),
}


@pytest.mark.parametrize("name", sorted(OMNI))
def test_qwen3_omni_thinker_text_model(name):
    cfg, total = OMNI[name]
    assert param_counts(spec_from(cfg)).total == total


def test_qwen3_omni_keys_keep_the_nested_prefix(tmp_path, capsys):
    spec = spec_from(OMNI["sized"][0])
    assert spec.model_type == "qwen3_omni_moe_text"
    assert spec.key_prefix == "thinker_config.text_config."
    assert spec.sources["hidden_size"].key == "thinker_config.text_config.hidden_size"
    assert spec.sources["hidden_size"].line is not None
    assert [spec.kind_of(i).ffn.kind for i in range(3)] == ["dense", "moe", "moe"]
    assert spec_from(OMNI["thinker_tie"][0]).sources["tie_word_embeddings"].key == "thinker_config.tie_word_embeddings"
    path = tmp_path / "omni.json"
    path.write_text(json.dumps(OMNI["sized"][0], indent=1), encoding="utf-8")
    assert main(["inspect", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["total"] == OMNI["sized"][1]
    assert main(["check", str(path)]) in (0, 1)


def test_lfm2_conv_layers_and_adjusted_ffn_width():
    spec = spec_from(VARIANTS["lfm2"][0])
    assert [spec.kind_of(i).mixer.kind for i in range(6)] == [
        "short_conv",
        "short_conv",
        "attention",
        "short_conv",
        "attention",
        "short_conv",
    ]
    assert spec.intermediate_size == 4608  # int(2/3 * 6656) = 4437, rounded up to a multiple of 256
    assert "intermediate_size" not in spec.sources  # the file's 6656 is not the width a fix would edit
    assert _gemm(spec, "conv.in_proj").n == 3 * 1024
    with pytest.raises(SpecError) as exc:
        spec_from({"model_type": "lfm2", "hidden_size": 512, "block_ffn_dim_multiplier": None})
    assert exc.value.key == "block_ffn_dim_multiplier"


def test_hybrid_mamba_layers():
    bamba = spec_from(VARIANTS["bamba"][0])  # attn_layer_indices [1, 3]
    assert [bamba.kind_of(i).mixer.kind for i in range(4)] == ["mamba", "attention"] * 2
    g = _gemm(bamba, "mamba.in_proj")  # 2 d_inner + 2 groups d_state + heads
    assert (g.k, g.n, g.bias) == (1024, 2 * 2048 + 2 * 2 * 128 + 32, True)
    dense = spec_from(VARIANTS["granitemoehybrid_dense"][0])  # no experts: the shared MLP is the FFN
    assert {k.ffn.kind for k in dense.layer_kinds} == {"dense"} and dense.layer_kinds[0].ffn.intermediate_size == 8192
    moe = spec_from(VARIANTS["granitemoehybrid"][0]).layer_kinds[0].ffn
    assert (moe.kind, moe.num_experts, moe.num_shared_experts, moe.shared_intermediate_size) == ("moe", 32, 1, 1024)


def test_mamba2_has_no_attention_and_no_kv_cache():
    spec = spec_from(VARIANTS["mamba2"][0])
    assert {(k.mixer.kind, k.ffn.kind) for k in spec.layer_kinds} == {("mamba", "none")}
    g = _gemm(spec, "mamba.in_proj")  # 2 d_inner + 2 n_groups state_size + num_heads
    assert (g.k, g.n, g.bias) == (1024, 2 * 2048 + 2 * 2 * 64 + 32, True)


def test_hunyuan_moe_topk_per_layer_list():
    # oracle total (transformers 5.24 reads moe_topk[layer_idx]): 267,352,832
    cfg = {
        "model_type": "hunyuan_v1_moe",
        "hidden_size": 1024,
        "intermediate_size": 768,
        "num_hidden_layers": 3,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "num_experts": 16,
        "moe_topk": [2, 4, 4],
        "vocab_size": 128167,
        "tie_word_embeddings": True,
    }
    spec = spec_from(cfg)
    assert param_counts(spec).total == 267_352_832
    assert [spec.kind_of(i).ffn.top_k for i in range(3)] == [2, 4, 4]
    assert spec.per_layer_lists["moe_topk"] == 3
    with pytest.raises(SpecError) as exc:
        spec_from({**cfg, "moe_topk": [2, "4", 4]})
    assert exc.value.key == "moe_topk[1]"
