"""MaxText model YAML adapter: every maxtext file in tests/corpus/megatron, exact."""

from __future__ import annotations

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.errors import SpecError
from colint.loading import load, load_text
from colint.normalize import normalize
from tests.normalize.file_rows import assert_file_row

# file, decoder_block, H, L, heads, kv, head_dim, mlp, vocab, tied, total, active, {kind: count}
MAXTEXT = [
    (
        "deepseek2-16b",
        "deepseek",
        2048,
        27,
        16,
        16,
        192,
        10944,
        102_400,
        False,
        15_706_484_224,
        2_661_150_208,
        {"mla+dense": 1, "mla+moe": 26},
    ),
    (
        "gemma2-27b",
        "gemma2",
        4608,
        46,
        32,
        16,
        128,
        36864,
        256_128,
        True,
        27_227_718_144,
        27_227_718_144,
        {"attention/sliding+dense": 23, "attention/full+dense": 23},
    ),
    (
        "gpt3-175b",
        "gpt3",
        12288,
        96,
        96,
        96,
        128,
        49152,
        50304,
        True,
        174_780_997_632,
        174_780_997_632,
        {"attention/full+dense": 96},
    ),
    (
        "llama2-13b",
        "llama2",
        5120,
        40,
        40,
        40,
        128,
        13824,
        32000,
        False,
        13_015_864_320,
        13_015_864_320,
        {"attention/full+dense": 40},
    ),
    (
        "qwen3-next-80b-a3b",
        "qwen3_next",
        2048,
        48,
        16,
        2,
        256,
        512,
        151_936,
        False,
        79_674_391_296,
        3_874_929_408,
        {"linear_attention+moe": 36, "attention/full+moe": 12},
    ),
]


def spec_of(name):
    return normalize(load(f"tests/corpus/megatron/maxtext__{name}.yaml"))


@pytest.mark.parametrize("row", MAXTEXT, ids=[r[0] for r in MAXTEXT])
def test_maxtext_file(row):
    assert_file_row(spec_of(row[0]), "maxtext", row)


def test_gemma2_counts_pairs():
    s = spec_of("gemma2-27b")
    # base_num_decoder_layers 23 is (local, global) pairs: 46 layers alternating, window 4096.
    assert [s.kind_of(i).mixer.attention for i in range(4)] == ["sliding", "full", "sliding", "full"]
    assert s.kind_of(0).mixer.window == 4096
    # base_num_decoder_layers holds 23, the pair count: findings point at it, but it is a derived source,
    # which no layer-count fix edits (tests/normalize/test_derived_sources.py).
    src = s.sources["num_layers"]
    assert (src.key, src.line, src.default, src.derived) == ("base_num_decoder_layers", 21, False, True)
    # HF Gemma-2-27B has 27,227,128,320 parameters with vocab 256000; MaxText pads it to 256128.
    assert param_counts(s).total == 27_227_128_320 + 128 * 4608


def test_counts_agree_with_hf_adapter():
    hf = normalize(load("tests/corpus/hf/qwen3-next__Qwen3-Next-80B-A3B-Thinking.json"))
    s = spec_of("qwen3-next-80b-a3b")
    assert (param_counts(s).total, param_counts(s).active_per_token) == (
        param_counts(hf).total,
        param_counts(hf).active_per_token,
    )
    assert {(g.name, g.k, g.n, g.layers, g.count) for g in gemms(s)} == {
        (g.name, g.k, g.n, g.layers, g.count) for g in gemms(hf)
    }
    # DeepSeek-V2-Lite: same count as the DeepSeek reference-inference ModelArgs of the same model.
    assert (
        param_counts(spec_of("deepseek2-16b")).total
        == param_counts(normalize(load("tests/corpus/meta/deepseek-native__config_16B.json"))).total
    )


def test_gpt3_learned_positions_and_biases():
    s = spec_of("gpt3-175b")
    assert s.position_embeddings == 16384
    k = s.kind_of(0)
    assert k.mixer.fused_qkv and k.mixer.qkv_bias and k.ffn.bias and not k.ffn.gated
    assert param_counts(s).embedding == (50304 + 16384) * 12288


def test_deepseek_underscore_literal_and_moe_shape():
    s = spec_of("deepseek2-16b")
    f = s.kind_of(1).ffn
    assert (f.num_experts, f.top_k, f.expert_intermediate_size, f.num_shared_experts, f.shared_intermediate_size) == (
        64,
        6,
        1408,
        2,
        1408,
    )
    assert s.kind_of(0).mixer.q_lora_rank is None and s.kind_of(0).mixer.kv_lora_rank == 512


def test_defaults_and_errors():
    s = normalize(load_text("base_emb_dim: 1024\nbase_num_decoder_layers: 4\n", "m.yml"))
    # base.yml defaults: 16 heads x 128, mlp 7168, vocab 32000, llama2 block.
    assert (s.num_heads, s.head_dim, s.intermediate_size, s.vocab_size, s.model_type) == (
        16,
        128,
        7168,
        32000,
        "llama2",
    )
    with pytest.raises(SpecError) as e:
        normalize(load_text("base_emb_dim: 1024\nbase_num_decoder_layers: 4\ndecoder_block: mystery\n", "m.yml"))
    assert e.value.located().startswith("m.yml:3:1: error: decoder_block: decoder_block 'mystery' is not one")


def test_mixtral_keys_count_like_hf_mixtral():
    # The keys of MaxText's models/mixtral-8x7b.yml (not in the corpus; typed here as a fixture).
    s = normalize(
        load_text(
            "base_emb_dim: 4096\nbase_num_query_heads: 32\nbase_num_kv_heads: 8\nbase_mlp_dim: 14336\n"
            'base_num_decoder_layers: 32\nhead_dim: 128\nmlp_activations: ["silu","linear"]\nvocab_size: 32000\n'
            "enable_dropout: false\nlogits_via_embedding: false\nnormalization_layer_epsilon: 1.0e-5\n"
            'num_experts: 8\nnum_experts_per_tok: 2\nrope_max_timescale: 1_000_000\ndecoder_block: "mistral"\n',
            "mixtral-8x7b.yml",
        )
    )
    hf = normalize(load("tests/corpus/hf/mixtral__Mixtral-8x7B-v0.1.json"))
    assert (
        (param_counts(s).total, param_counts(s).active_per_token)
        == (param_counts(hf).total, param_counts(hf).active_per_token)
        == (46_702_792_704, 12_879_925_248)
    )
    assert s.sources["moe_intermediate_size"].key == "base_mlp_dim"  # base_moe_mlp_dim -1: experts use base_mlp_dim


def test_gemma3_block_repeats_five_local_one_global():
    s = normalize(
        load_text(
            "base_emb_dim: 1152\nbase_num_query_heads: 4\nbase_num_kv_heads: 1\n"
            "base_mlp_dim: 6912\nbase_num_decoder_layers: 26\nhead_dim: 256\nvocab_size: 262144\n"
            "decoder_block: gemma3\nsliding_window_size: 512\nlogits_via_embedding: true\n"
            "mlp_activations: [gelu, linear]\n",
            "g3.yml",
        )
    )
    assert [s.kind_of(i).mixer.attention for i in range(12)] == (["sliding"] * 5 + ["full"]) * 2
    # = HF Gemma-3-1B (999,885,952): four norms and q/k norms per layer, tied embeddings.
    assert param_counts(s).total == 999_885_952


@pytest.mark.parametrize("name", ["qwen3-next-80b-a3b", "deepseek2-16b"])
def test_an_unset_expert_width_is_the_dense_width_located_there(name):
    """Without base_moe_mlp_dim (or with it at -1) the experts take base_mlp_dim, and a finding on their width
    points there, in the MoE block and the Qwen3-Next block alike."""
    path = f"tests/corpus/megatron/maxtext__{name}.yaml"
    with open(path, encoding="utf-8") as fh:
        text = "".join(line for line in fh if not line.startswith("base_moe_mlp_dim:"))
    spec = normalize(load_text(text + "base_moe_mlp_dim: -1\n", path))
    mlp = {"qwen3-next-80b-a3b": 512, "deepseek2-16b": 10944}[name]
    moe = next(k.ffn for k in spec.layer_kinds if k.ffn.kind == "moe")
    assert moe.expert_intermediate_size == mlp
    assert spec.sources["moe_intermediate_size"].key == "base_mlp_dim"
