"""Megatron-LM / NeMo adapter: every NeMo-launcher file in tests/corpus/megatron, exact.

Reference counts: HF counts quoted below come from colint's HF adapter on tests/corpus/hf (which
equals transformers' count) or, where the corpus has no HF file, from the published model card's
architecture with the same dims, and are restated as the arithmetic that reconciles them.
"""

from __future__ import annotations

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.errors import SpecError
from colint.loading import load, load_text
from colint.normalize import normalize

CORPUS = "tests/corpus/megatron/"

# file, model name, H, L, heads, query groups, kv_channels, ffn, tied, params without vocab,
# padded vocab for --vocab-size 32000 (at the file's TP), params with it, {layer kind: count}
NEMO = [
    (
        "chatglm3-6b",
        "megatron_chatglm3",
        4096,
        28,
        32,
        2,
        128,
        13696,
        False,
        5_710_907_392,
        32000,
        5_973_051_392,
        {"attention/full+dense": 28},
    ),
    (
        "falcon_7b",
        "megatron_falcon_gpt",
        4544,
        32,
        71,
        1,
        64,
        18176,
        False,
        6_626_251_648,
        32000,
        6_917_067_648,
        {"attention/full+dense": 32},
    ),
    (
        "gpt3_175b",
        "megatron_gpt",
        12288,
        96,
        96,
        96,
        128,
        49152,
        True,
        173_986_701_312,
        32256,
        174_383_063_040,
        {"attention/full+dense": 96},
    ),
    (
        "grok1_proxy",
        "megatron_grok1",
        6144,
        64,
        48,
        8,
        128,
        32768,
        False,
        314_878_728_192,
        32000,
        315_271_944_192,
        {"attention/full+moe": 64},
    ),
    (
        "llama2_70b",
        "megatron_llama",
        8192,
        80,
        64,
        8,
        128,
        28672,
        False,
        68_452_360_192,
        32256,
        68_980_842_496,
        {"attention/full+dense": 80},
    ),
    (
        "llama2_7b",
        "megatron_llama",
        4096,
        32,
        32,
        32,
        128,
        11008,
        False,
        6_476_271_616,
        32000,
        6_738_415_616,
        {"attention/full+dense": 32},
    ),
    (
        "llama3_1_405b",
        "megatron_llama",
        16384,
        126,
        128,
        16,
        128,
        53248,
        False,
        405_878_554_624,
        32768,
        406_952_296_448,
        {"attention/full+dense": 126},
    ),
    (
        "mistral_7b",
        "megatron_mistral",
        4096,
        32,
        32,
        8,
        128,
        14336,
        False,
        6_979_588_096,
        32768,
        7_248_023_552,
        {"attention/sliding+dense": 32},
    ),
    (
        "mistral_nemo_123b",
        "megatron_mistral",
        12288,
        88,
        96,
        8,
        128,
        28672,
        False,
        121_804_763_136,
        32768,
        122_610_069_504,
        {"attention/sliding+dense": 88},
    ),
    (
        "mistral_nemo_12b",
        "megatron_mistral_nemo_12b",
        5120,
        40,
        32,
        8,
        128,
        14336,
        False,
        10_905_605_120,
        32768,
        11_241_149_440,
        {"attention/sliding+dense": 40},
    ),
    (
        "mixtral_8x7b",
        "megatron_mixtral",
        4096,
        32,
        32,
        8,
        128,
        14336,
        False,
        46_440_648_704,
        32000,
        46_702_792_704,
        {"attention/full+moe": 32},
    ),
    (
        "nemotron_15b",
        "megatron_gpt",
        6144,
        32,
        48,
        8,
        128,
        24576,
        False,
        12_483_047_424,
        32256,
        12_879_409_152,
        {"attention/full+dense": 32},
    ),
    (
        "qwen2_72b",
        "megatron_qwen2",
        8192,
        80,
        64,
        64,
        128,
        24576,
        False,
        69_796_503_552,
        32256,
        70_324_985_856,
        {"attention/full+dense": 80},
    ),
]


def spec_of(name: str, **kw):
    return normalize(load(f"{CORPUS}nemo-launcher__{name}.yaml"), **kw)


def kinds(spec) -> dict:
    return {k.name: c for k, c in zip(spec.layer_kinds, spec.layer_counts())}


@pytest.mark.parametrize("row", NEMO, ids=[r[0] for r in NEMO])
def test_nemo_launcher_file(row):
    name, mtype, h, n_layers, heads, groups, hd, ffn, tied, params, vocab, params_v, layer_counts = row
    s = spec_of(name)
    assert (s.format, s.model_type, s.key_prefix) == ("megatron", mtype, "model.")
    assert (s.hidden_size, s.num_layers, s.num_heads, s.num_kv_heads, s.head_dim, s.intermediate_size) == (
        h,
        n_layers,
        heads,
        groups,
        hd,
        ffn,
    )
    assert s.tie_word_embeddings is tied
    assert s.vocab_size is None
    assert any("vocab size comes from the tokenizer" in n for n in s.notes)
    p = param_counts(s)
    assert (p.total, p.embedding, p.lm_head, p.known_vocab) == (params, s.position_embeddings * h, 0, False)
    assert kinds(s) == layer_counts
    qkv = next(g for g in gemms(s) if g.name == "attn.qkv_proj")
    assert (qkv.k, qkv.n, qkv.layers) == (h, (heads + 2 * groups) * hd, n_layers)
    sv = spec_of(name, vocab_size=32000)
    assert sv.vocab_size == vocab
    assert param_counts(sv).total == params_v


def test_llama2_7b_gemms_and_sources():
    s = spec_of("llama2_7b")
    assert [(g.name, g.k, g.n, g.layers, g.count) for g in gemms(s)] == [
        ("attn.qkv_proj", 4096, 12288, 32, 1),
        ("attn.o_proj", 4096, 4096, 32, 1),
        ("mlp.gate_proj", 4096, 11008, 32, 1),
        ("mlp.up_proj", 4096, 11008, 32, 1),
        ("mlp.down_proj", 11008, 4096, 32, 1),
    ]
    src = s.sources["intermediate_size"]
    assert (src.key, src.line, src.column) == ("model.ffn_hidden_size", 67, 3)
    assert s.sources["num_kv_heads"].default and s.sources["num_kv_heads"].key == "model.num_query_groups"
    assert s.hidden_act == "fast-swiglu"


def test_mixtral_moe_gemms_and_active_params():
    s = spec_of("mixtral_8x7b", vocab_size=32000)
    f = s.layer_kinds[0].ffn
    assert (f.num_experts, f.top_k, f.expert_intermediate_size, f.num_shared_experts) == (8, 2, 14336, 0)
    g = {x.name: (x.k, x.n, x.count) for x in gemms(s)}
    assert g["moe.router"] == (4096, 8, 1)
    assert g["moe.experts.gate_up"] == (4096, 2 * 14336, 8)
    assert g["moe.experts.down_proj"] == (14336, 4096, 8)
    assert g["lm_head"] == (4096, 32000, 1)
    assert param_counts(s).active_per_token == 12_879_925_248  # = HF Mixtral-8x7B's active count


def hf(name: str):
    return normalize(load(f"tests/corpus/hf/{name}.json"))


def test_counts_agree_with_hf_adapter_given_the_same_vocab():
    # Llama-2-7B: TP 1 keeps 32000 → identical to the HF config.
    assert (
        param_counts(spec_of("llama2_7b", vocab_size=32000)).total
        == param_counts(hf("llama2__Llama-2-7b-neuron-training")).total
        == 6_738_415_616
    )
    # Mixtral-8x7B: TP 1 → identical.
    assert (
        param_counts(spec_of("mixtral_8x7b", vocab_size=32000)).total
        == param_counts(hf("mixtral__Mixtral-8x7B-v0.1")).total
        == 46_702_792_704
    )
    # Llama-2-70B: TP 4 pads 32000 to 32256 (multiple of 128 x 4): + 2 x 256 x 8192 rows over HF.
    assert (
        param_counts(spec_of("llama2_70b", vocab_size=32000)).total
        == param_counts(hf("llama2__Llama-2-70b-neuron-training")).total + 2 * 256 * 8192
    )
    # Mistral-7B: TP 8 pads 32000 to 32768 — exactly Mistral-7B-v0.3's vocab, so identical.
    assert (
        param_counts(spec_of("mistral_7b", vocab_size=32000)).total
        == param_counts(hf("mistral__Mistral-7B-Instruct-v0.3")).total
    )
    # Llama-3.1-405B: NeMo says 16 query groups where the release has 8 KV heads: k and v
    # projections are twice as wide (126 layers x 2 x 8 x 128 x 16384 more); vocab 128256 at TP 8
    # stays 128256 (a multiple of 1024? no: padded to 129024), so compare with that padding.
    nemo = spec_of("llama3_1_405b", vocab_size=128256)
    assert nemo.vocab_size == 129024
    hf405 = param_counts(hf("llama3__Meta-Llama-3.1-405B")).total
    assert param_counts(nemo).total == hf405 + 126 * 2 * 8 * 128 * 16384 + 2 * (129024 - 128256) * 16384


def test_architectural_details():
    falcon = spec_of("falcon_7b", vocab_size=65024)
    # NeMo's Falcon layer (parallel_attention, not new_decoder_architecture): one LayerNorm with bias.
    assert falcon.layer_kinds[0].other_params == 2 * 4544
    # HF falcon-7b (6,921,720,704, tied) + the untied output layer this file asks for.
    assert param_counts(falcon).total == 6_921_720_704 + 65024 * 4544
    gpt3 = spec_of("gpt3_175b")
    assert gpt3.intermediate_size == 4 * 12288  # ${multiply:4, ${.hidden_size}} resolved
    assert gpt3.position_embeddings == 2048 and gpt3.tie_word_embeddings  # learned_absolute, shared (defaults)
    assert gpt3.layer_kinds[0].mixer.qkv_bias and gpt3.layer_kinds[0].ffn.bias  # NeMo's bias default: true
    nemotron = spec_of("nemotron_15b")
    assert not nemotron.layer_kinds[0].ffn.gated  # squared-relu
    assert nemotron.layer_kinds[0].other_params == 2 * 2 * 6144  # layernorm1p: weight and bias
    chatglm = spec_of("chatglm3-6b")
    assert chatglm.layer_kinds[0].mixer.qkv_bias and not chatglm.layer_kinds[0].mixer.o_bias
    mistral = spec_of("mistral_7b")
    assert mistral.sliding_window == 4096  # window_size: [4096, 0]
    # Its mcore_customization_config (parallel_attention: true) is only read by NeMo's Falcon model.
    assert mistral.layer_kinds[0].other_params == 2 * 4096


def yaml_doc(text: str):
    return load_text(text, "cfg.yaml")


def test_unresolved_interpolation_is_a_located_error():
    doc = yaml_doc(
        "model:\n  num_layers: 2\n  hidden_size: 64\n  num_attention_heads: 4\n  ffn_hidden_size: ${oc.env:FFN_SIZE}\n"
    )
    with pytest.raises(SpecError) as e:
        normalize(doc)
    assert e.value.located() == (
        "cfg.yaml:5:3: error: model.ffn_hidden_size: interpolation ${oc.env:FFN_SIZE} "
        "cannot be resolved offline; give the value"
    )


def test_bare_megatron_lm_arguments():
    doc = yaml_doc(
        "num_layers: 4\nhidden_size: 1024\nnum_attention_heads: 16\ngroup_query_attention: true\n"
        "num_query_groups: 4\nswiglu: true\nnormalization: RMSNorm\nposition_embedding_type: rope\n"
        "untie_embeddings_and_output_weights: true\ndisable_bias_linear: true\n"
        "tensor_model_parallel_size: 2\nnum_experts: 8\nmoe_router_topk: 2\nmoe_ffn_hidden_size: 512\n"
        "moe_shared_expert_intermediate_size: 1024\nmoe_layer_freq: ([0]*1+[1]*1)*2\n"
    )
    s = normalize(doc, vocab_size=50257)
    assert (s.format, s.key_prefix, s.num_kv_heads, s.head_dim) == ("megatron", "", 4, 64)
    assert s.intermediate_size == 2688  # int(4h·2/3 / 64)·64, Megatron-LM's swiglu default
    assert s.vocab_size == 50432  # 50257 padded to a multiple of 128 x tp 2
    assert not s.tie_word_embeddings
    assert [s.kind_of(i).ffn.kind for i in range(4)] == ["dense", "moe", "dense", "moe"]
    moe = s.kind_of(1).ffn
    assert (moe.expert_intermediate_size, moe.shared_intermediate_size, moe.expert_bias) == (512, 1024, False)
    assert s.kind_of(0).other_params == 2 * 1024  # RMSNorm: weight only


def test_integer_moe_layer_freq_and_bad_values():
    base = (
        "model:\n  num_layers: 4\n  hidden_size: 64\n  num_attention_heads: 4\n  num_moe_experts: 4\n"
        "  position_embedding_type: rope\n"
    )
    s = normalize(yaml_doc(base + "  moe_layer_freq: 2\n"))
    assert [s.kind_of(i).ffn.kind for i in range(4)] == ["moe", "dense", "moe", "dense"]
    with pytest.raises(SpecError) as e:
        normalize(yaml_doc(base + "  moe_layer_freq: __import__('os')\n"))
    assert e.value.located().startswith("cfg.yaml:7:3: error: model.moe_layer_freq: cannot read")
    with pytest.raises(SpecError) as e:
        normalize(yaml_doc(base + "  activation: mystery\n"))
    assert e.value.located().startswith("cfg.yaml:7:3: error: model.activation: unknown activation 'mystery'")
    with pytest.raises(SpecError) as e:
        normalize(yaml_doc("model:\n  num_layers: 4\n  hidden_size: 60\n  num_attention_heads: 8\n"))
    assert e.value.located() == (
        "cfg.yaml:4:3: error: model.num_attention_heads: hidden_size 60 is not divisible "
        "by num_attention_heads 8 and kv_channels is not given"
    )
    with pytest.raises(SpecError) as e:
        normalize(yaml_doc("model:\n  num_layers: 4\n  hidden_size: 64\n  num_attention_heads: 8\n"))
    assert e.value.located() == (
        "cfg.yaml:3:3: error: model.hidden_size: learned_absolute position embeddings need "
        "encoder_seq_length or max_position_embeddings (the rows of the position table)"
    )


def test_megatron_core_mla_section():
    # Megatron-core TransformerConfig keys for DeepSeek-V3-style MLA: the same shapes as the HF adapter.
    doc = yaml_doc(
        "model:\n  num_layers: 61\n  hidden_size: 7168\n  num_attention_heads: 128\n"
        "  multi_latent_attention: true\n  q_lora_rank: 1536\n  kv_lora_rank: 512\n  qk_head_dim: 128\n"
        "  qk_pos_emb_head_dim: 64\n  v_head_dim: 128\n  ffn_hidden_size: 18432\n  activation: swiglu\n"
        "  normalization: rmsnorm\n  bias: false\n  position_embedding_type: rope\n"
        "  share_embeddings_and_output_weights: false\n  num_moe_experts: 256\n  moe_router_topk: 8\n"
        "  moe_ffn_hidden_size: 2048\n  moe_shared_expert_intermediate_size: 2048\n"
        "  moe_layer_freq: '[0]*3+[1]*58'\n  make_vocab_size_divisible_by: 1280\n"
    )
    s = normalize(doc, vocab_size=129280)
    hf_v3 = hf("deepseek__DeepSeek-V3")
    assert s.vocab_size == 129280
    assert param_counts(s).total == param_counts(hf_v3).total
    assert {(g.name, g.k, g.n, g.layers, g.count) for g in gemms(s)} == {
        (g.name, g.k, g.n, g.layers, g.count) for g in gemms(hf_v3)
    }


def test_vocab_from_the_command_line_has_no_file_key():
    # The padded vocab is not a value in the file: no source may point a "vocab_size old → new" edit at
    # make_vocab_size_divisible_by (whose value is the multiple, 128).
    s = spec_of("llama2_70b", vocab_size=32000)
    assert "vocab_size" not in s.sources
    assert any("vocab 32000 (--vocab-size) padded to 32256" in n for n in s.notes)


def test_group_limited_routing_is_read_from_megatron_core_arguments():
    base = (
        "num_layers: 2\nhidden_size: 1024\nnum_attention_heads: 16\nswiglu: true\nposition_embedding_type: rope\n"
        "num_experts: 64\nmoe_router_topk: 8\nmoe_ffn_hidden_size: 512\n"
    )
    ffn = normalize(yaml_doc(base + "moe_router_num_groups: 8\nmoe_router_group_topk: 4\n"), vocab_size=1024)
    assert (ffn.kind_of(0).ffn.expert_groups, ffn.kind_of(0).ffn.groups_per_token) == (8, 4)
    assert not normalize(yaml_doc(base), vocab_size=1024).kind_of(0).ffn.group_limited
    with pytest.raises(SpecError) as e:
        normalize(yaml_doc(base + "moe_router_num_groups: 16\nmoe_router_group_topk: 1\n"), vocab_size=1024)
    assert e.value.key == "moe_router_group_topk" and "1 groups of 4 experts cannot hold a token's top-8" in str(
        e.value
    )
