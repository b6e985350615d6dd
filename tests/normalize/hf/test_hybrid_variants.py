"""Hybrid Hugging Face families (colint/normalize/hf/lfm2.py, hybrid.py): LFM2's short convolutions, Bamba's
and Granite-4.0-H's Mamba-2 layers beside attention, and plain Mamba-2: exact totals and the layer pattern.

Every expected ``total`` below came from the oracle, not from colint: scripts/gen_golden.py's
``build()`` (transformers 5.24.0 + torch 2.13.0 CPU, ``.venv-oracle``) building the config on the
meta device, ``sum(p.numel() for p in model.parameters())`` (tied weights once). Each family has a
config built from its class defaults (``*_defaults``: only ``model_type``, plus what transformers
cannot build without) and one or more with other dimensions.
"""

from __future__ import annotations

import pytest

from colint.errors import SpecError
from tests.normalize.hf.oracle import gemm, assert_inspect_and_check, assert_total_equals_transformers, spec_from

# name -> (config, params_total from the oracle)
VARIANTS = {
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
    # with the keys published checkpoints carry (remote-code leftovers such as LFM2's block_dim/conv_dim and
    # Granite-4.0-H's legacy "mamba" layer names)
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
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_total_equals_transformers(name):
    assert_total_equals_transformers(*VARIANTS[name])


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_inspect_and_check_exit_codes(name, tmp_path, capsys):
    assert_inspect_and_check(name, *VARIANTS[name], tmp_path, capsys)


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
    assert gemm(spec, "conv.in_proj").n == 3 * 1024
    with pytest.raises(SpecError) as exc:
        spec_from({"model_type": "lfm2", "hidden_size": 512, "block_ffn_dim_multiplier": None})
    assert exc.value.key == "block_ffn_dim_multiplier"


def test_hybrid_mamba_layers():
    bamba = spec_from(VARIANTS["bamba"][0])  # attn_layer_indices [1, 3]
    assert [bamba.kind_of(i).mixer.kind for i in range(4)] == ["mamba", "attention"] * 2
    g = gemm(bamba, "mamba.in_proj")  # 2 d_inner + 2 groups d_state + heads
    assert (g.k, g.n, g.bias) == (1024, 2 * 2048 + 2 * 2 * 128 + 32, True)
    dense = spec_from(VARIANTS["granitemoehybrid_dense"][0])  # no experts: the shared MLP is the FFN
    assert {k.ffn.kind for k in dense.layer_kinds} == {"dense"} and dense.layer_kinds[0].ffn.intermediate_size == 8192
    moe = spec_from(VARIANTS["granitemoehybrid"][0]).layer_kinds[0].ffn
    assert (moe.kind, moe.num_experts, moe.num_shared_experts, moe.shared_intermediate_size) == ("moe", 32, 1, 1024)


def test_mamba2_has_no_attention_and_no_kv_cache():
    spec = spec_from(VARIANTS["mamba2"][0])
    assert {(k.mixer.kind, k.ffn.kind) for k in spec.layer_kinds} == {("mamba", "none")}
    g = gemm(spec, "mamba.in_proj")  # 2 d_inner + 2 n_groups state_size + num_heads
    assert (g.k, g.n, g.bias) == (1024, 2 * 2048 + 2 * 2 * 64 + 32, True)
