"""MoE Hugging Face decoder families read through ``decoder.TRAITS`` and the DSA / per-layer-geometry
builders: exact totals, and which layers are sparse (first-k dense, start/end/interval, a per-layer top-k).

Every expected ``total`` below came from the oracle, not from colint: scripts/gen_golden.py's
``build()`` (transformers 5.24.0 + torch 2.13.0 CPU, ``.venv-oracle``) building the config on the
meta device, ``sum(p.numel() for p in model.parameters())`` (tied weights once). Each family has a
config built from its class defaults (``*_defaults``: only ``model_type``, plus what transformers
cannot build without) and one or more with other dimensions.
"""

from __future__ import annotations

import pytest

from colint.analysis.inventory import param_counts
from colint.errors import SpecError
from tests.normalize.hf.oracle import assert_inspect_and_check, assert_total_equals_transformers, spec_from

# name -> (config, params_total from the oracle)
VARIANTS = {
    # Mixtral: every layer sparse (tests/normalize/hf/test_moe.py holds its corpus file and another variant)
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
    # GLM-4.5/4.6/4.7 MoE and GLM-4.5V's language model (tests/normalize/hf/test_moe.py: the corpus file, the wrapped form)
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
    # with the keys a published checkpoint carries (OLMoE-1B-7B 6.92B, as published)
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
    # GLM-5 (DeepSeek Sparse Attention; tests/normalize/test_dsa_layer_geometry.py holds the published config): an
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
    assert_total_equals_transformers(*VARIANTS[name])


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_inspect_and_check_exit_codes(name, tmp_path, capsys):
    assert_inspect_and_check(name, *VARIANTS[name], tmp_path, capsys)


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
