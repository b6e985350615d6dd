"""Hugging Face adapters for MoE and hybrid families (colint/normalize/hf/{qwen2_moe,qwen3_moe,qwen3_next,
deepseek,dbrx,gpt_oss,jamba,nemotron_h,minimax,minimax_m2,llama4}.py and the mixtral / glm4_moe rows of decoder.TRAITS).

Where the numbers come from:
- ``total``: transformers 5.24.0 + torch 2.13.0 (CPU wheel) building the config on the meta
  device, ``sum(p.numel() for p in model.parameters())`` (tests/golden/*.json for the corpus
  files, written by scripts/gen_golden.py; the same oracle run by hand for the unseen configs
  below: ``with torch.device("meta"): AutoModelForCausalLM.from_config(AutoConfig.for_model(...))``).
- ``active_per_token``: colint's own figure — embedding, LM head, attention, norms, routers and
  shared experts fully, routed experts top-k times (not E times). Cross-checked against the
  publishers' "active" figures (Mixtral 12.9B, Qwen3-30B-A3B 3.3B, DeepSeek-V3 37B, gpt-oss-20b
  3.6B + 0.58B embedding, Llama 4 17B, Nemotron-3-Nano 3.6B with embeddings, Jamba 12B, DBRX 36B)
  and against the formula in ``test_active_is_total_minus_idle_experts``.
- ``mtp_params``: DeepSeek's MTP module (one MoE decoder layer + enorm + hnorm + eh_proj 2H->H +
  shared-head norm), derived by hand for DeepSeek-V3 in ``test_deepseek_v3_mtp_by_hand``.
"""

from __future__ import annotations

import json
import os

import pytest

from colint.analysis.inventory import gemms, kind_params, param_counts
from colint.cli.main import main
from colint.errors import SpecError
from colint.loading import load, load_text
from colint.normalize import normalize

TESTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(TESTS, "corpus", "hf")

_SPECS: dict = {}


def spec_of(stem: str):
    if stem not in _SPECS:
        _SPECS[stem] = normalize(load(os.path.join(CORPUS, stem + ".json")), "hf")
    return _SPECS[stem]


def spec_from(cfg: dict):
    return normalize(load_text(json.dumps(cfg, indent=1), "unseen.json"), "hf")


def gemm(spec, name: str):
    found = [g for g in gemms(spec) if g.name == name]
    assert found, f"no GEMM {name} in {[g.name for g in gemms(spec)]}"
    return found[0]


def key_gemm(spec, name: str) -> tuple:
    g = gemm(spec, name)
    return g.k, g.n, g.count, g.m_per_token, g.layers


# stem, params_total (transformers 5.24, meta device), active_per_token (colint), mtp_layers, mtp_params
CORPUS_FACTS = [
    ("dbrx__dbrx-16x13b-neuron-training", 131_596_523_520, 36_469_708_800, 0, 0),
    ("deepseek__DeepSeek-V3.2", 671_877_929_216, 38_403_807_488, 1, 11_624_027_392),
    ("deepseek__DeepSeek-V3", 671_026_404_352, 37_552_282_624, 1, 11_610_067_968),
    ("glm__GLM-4.7-FP8-abridged", 352_796_472_320, 33_630_909_440, 1, 3_988_055_040),  # MTP: transformers default 1
    ("gpt-oss__gpt-oss-120b", 116_829_156_672, 5_711_982_912, 0, 0),
    ("gpt-oss__gpt-oss-20b", 20_914_757_184, 4_187_440_704, 0, 0),
    ("jamba__Jamba-v0.1", 51_570_323_328, 12_110_311_296, 0, 0),
    ("llama4__Llama-4-Maverick-128E-4layer-FIXTURE", 35_289_216_000, 3_328_619_520, 0, 0),
    ("llama4__Llama-4-Maverick-17B-128E-Instruct", 400_711_848_960, 17_184_691_200, 0, 0),
    ("llama4__Llama-4-Scout-17B-16E-Instruct", 107_769_861_120, 17_172_894_720, 0, 0),
    ("minimax__MiniMax-M2.5", 228_689_748_992, 11_030_537_216, 3, 11_062_806_528),
    ("mixtral__Mixtral-8x7B-v0.1", 46_702_792_704, 12_879_925_248, 0, 0),
    ("nemotron-h__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31_577_937_344, 3_580_073_408, 0, 0),
    ("nemotron-h__NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 120_668_687_360, 12_770_216_960, 1, 2_942_324_736),
    ("qwen2-moe__Qwen1.5-MoE-A2.7B-Wikihow-finetune", 14_315_784_192, 2_689_173_504, 0, 0),
    ("qwen3-moe__Qwen3-30B-A3B", 30_532_122_624, 3_353_032_704, 0, 0),
    ("qwen3-moe__Qwen3-Coder-480B-A35B-Instruct", 480_154_875_392, 35_474_765_312, 0, 0),
    ("qwen3-next__Qwen3-Next-80B-A3B-Thinking", 79_674_391_296, 3_874_929_408, 0, 0),
    # Wrapper: the language model from text_config, the top-level tie_word_embeddings=false applies.
    ("qwen3-vl__Qwen3-VL-30B-A3B-Instruct", 30_532_122_624, 3_353_032_704, 0, 0),
]


@pytest.mark.parametrize("stem,total,active,mtp_layers,mtp_params", CORPUS_FACTS, ids=[c[0] for c in CORPUS_FACTS])
def test_corpus_counts(stem, total, active, mtp_layers, mtp_params):
    spec = spec_of(stem)
    p = param_counts(spec)
    assert (p.total, p.active_per_token, spec.mtp_layers, p.mtp) == (total, active, mtp_layers, mtp_params)


def test_known_figures_from_the_brief():
    assert param_counts(spec_of("mixtral__Mixtral-8x7B-v0.1")).total == 46_702_792_704
    assert param_counts(spec_of("qwen3-moe__Qwen3-30B-A3B")).total == 30_532_122_624
    assert param_counts(spec_of("gpt-oss__gpt-oss-20b")).total == 20_914_757_184
    assert param_counts(spec_of("gpt-oss__gpt-oss-120b")).total == 116_829_156_672
    assert param_counts(spec_of("deepseek__DeepSeek-V3")).total == 671_026_404_352


@pytest.mark.parametrize(
    "stem",
    [
        c[0]
        for c in CORPUS_FACTS
        if c[0].split("__")[0] in ("mixtral", "qwen3-moe", "deepseek", "gpt-oss", "jamba", "nemotron-h")
    ],
)
def test_active_is_total_minus_idle_experts(stem):
    """active = total - sum over MoE layers of (E - top_k) routed experts."""
    spec = spec_of(stem)
    idle = 0
    for kind, n in zip(spec.layer_kinds, spec.layer_counts()):
        if kind.ffn.kind == "moe":
            per_expert = sum(
                g.k * g.n + (g.n if g.bias else 0)
                for g in gemms(spec, merge=False)
                if g.kind == kind.name and g.parallel == "expert"
            )
            idle += n * (kind.ffn.num_experts - kind.ffn.top_k) * per_expert
    p = param_counts(spec)
    assert p.active_per_token == p.total - idle


def test_corpus_moe_and_hybrid_files_inspect_with_exit_0(capsys):
    for stem, *_ in CORPUS_FACTS:
        assert main(["inspect", os.path.join(CORPUS, stem + ".json"), "--format", "json"]) == 0, stem
        out = json.loads(capsys.readouterr().out)
        assert out["params"]["total"] == param_counts(spec_of(stem)).total


# -- layer patterns -------------------------------------------------------------------------------


def moe_layers(spec) -> list[int]:
    return [i for i in range(spec.num_layers) if spec.kind_of(i).ffn.kind == "moe"]


def test_deepseek_v3_three_dense_then_58_moe():
    spec = spec_of("deepseek__DeepSeek-V3")
    assert [k.name for k in spec.layer_kinds] == ["mla+dense", "mla+moe"]
    assert spec.layer_counts() == [3, 58]
    assert moe_layers(spec) == list(range(3, 61))


def test_glm47_first_three_dense():
    spec = spec_of("glm__GLM-4.7-FP8-abridged")
    assert spec.layer_counts() == [3, 89] and moe_layers(spec)[0] == 3


def test_jamba_attention_every_8th_from_4_and_moe_on_odd_layers():
    spec = spec_of("jamba__Jamba-v0.1")
    assert [i for i in range(32) if spec.kind_of(i).mixer.kind == "attention"] == [4, 12, 20, 28]
    assert moe_layers(spec) == list(range(1, 32, 2))
    mamba = spec.kind_of(0).mixer
    assert (mamba.mamba_version, mamba.d_inner, mamba.d_state, mamba.conv_kernel, mamba.dt_rank) == (
        1,
        8192,
        16,
        4,
        256,
    )


def test_nemotron_h_pattern_round_trips():
    chars = {"mamba": "M", "attention": "*", "none": None}
    for stem in (
        "nemotron-h__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
        "nemotron-h__NVIDIA-Nemotron-3-Super-120B-A12B-FP8",
    ):
        spec = spec_of(stem)
        with open(os.path.join(CORPUS, stem + ".json"), encoding="utf-8") as fh:
            pattern = json.load(fh)["hybrid_override_pattern"]
        got = "".join(
            chars[spec.kind_of(i).mixer.kind] or {"moe": "E", "dense": "-"}[spec.kind_of(i).ffn.kind]
            for i in range(spec.num_layers)
        )
        assert got == pattern and spec.num_layers == len(pattern)


def test_qwen3_next_full_attention_every_4th_layer():
    spec = spec_of("qwen3-next__Qwen3-Next-80B-A3B-Thinking")
    assert [i for i in range(48) if spec.kind_of(i).mixer.kind == "attention"] == list(range(3, 48, 4))
    assert moe_layers(spec) == list(range(48))


def test_gpt_oss_alternates_sliding_and_full():
    spec = spec_of("gpt-oss__gpt-oss-20b")
    assert [spec.kind_of(i).mixer.attention for i in range(4)] == ["sliding", "full", "sliding", "full"]
    assert spec.kind_of(0).mixer.window == 128 and spec.kind_of(1).mixer.window is None


def test_llama4_maverick_interleaves_moe_and_chunked_attention():
    spec = spec_of("llama4__Llama-4-Maverick-17B-128E-Instruct")
    assert moe_layers(spec) == list(range(1, 48, 2))  # interleave_moe_layer_step 2
    full = [i for i in range(48) if spec.kind_of(i).mixer.attention == "full"]
    assert full == list(range(3, 48, 4))  # NoPE layers; the RoPE layers use 8192-token chunks
    assert spec.kind_of(0).mixer.attention == "chunked" and spec.kind_of(0).mixer.window == 8192
    scout = spec_of("llama4__Llama-4-Scout-17B-16E-Instruct")
    assert moe_layers(scout) == list(range(48))


def test_qwen2_moe_sparse_step_and_mlp_only_layers():
    spec = spec_from(
        {
            "model_type": "qwen2_moe",
            "hidden_size": 256,
            "num_hidden_layers": 6,
            "num_attention_heads": 4,
            "decoder_sparse_step": 2,
            "mlp_only_layers": [5],
            "vocab_size": 1000,
        }
    )
    assert moe_layers(spec) == [1, 3]


# -- key GEMMs: (k, n, count, m_per_token, layers) -------------------------------------------------

# (k, n, count, m_per_token, layers) of a corpus file's GEMMs, by hand from its config
GEMM_SHAPES = {
    "deepseek_v3": (
        "deepseek__DeepSeek-V3",
        {
            "mla.q_a_proj": (7168, 1536, 1, 1.0, 61),
            "mla.kv_a_proj_with_mqa": (7168, 576, 1, 1.0, 61),
            "mla.kv_b_proj": (512, 128 * 256, 1, 1.0, 61),
            "moe.experts.gate_up": (7168, 4096, 256, 8 / 256, 58),
            "moe.experts.down_proj": (2048, 7168, 256, 8 / 256, 58),
            "moe.shared_experts.gate_proj": (7168, 2048, 1, 1.0, 58),
            "mlp.gate_proj": (7168, 18432, 1, 1.0, 3),
            "moe.router": (7168, 256, 1, 1.0, 58),
        },
    ),
    "deepseek_v32_indexer": (
        "deepseek__DeepSeek-V3.2",
        {
            "mla.indexer.wq_b": (1536, 64 * 128, 1, 1.0, 61),
            "mla.indexer.wk": (7168, 128, 1, 1.0, 61),
            "mla.indexer.weights_proj": (7168, 64, 1, 1.0, 61),
        },
    ),
    "qwen3_next": (
        "qwen3-next__Qwen3-Next-80B-A3B-Thinking",
        {
            "attn.q_proj": (2048, 2 * 16 * 256, 1, 1.0, 12),  # query + output gate
            "linear_attn.in_proj_qkvz": (2048, 2 * 16 * 128 + 2 * 32 * 128, 1, 1.0, 36),
            "linear_attn.in_proj_ba": (2048, 64, 1, 1.0, 36),
            "moe.experts.gate_up": (2048, 1024, 512, 10 / 512, 48),
            "moe.shared_expert_gate": (2048, 1, 1, 1.0, 48),
        },
    ),
    "nemotron_super_latent_moe": (
        "nemotron-h__NVIDIA-Nemotron-3-Super-120B-A12B-FP8",
        {
            "moe.fc1_latent_proj": (4096, 1024, 1, 1.0, 40),
            "moe.experts.up_proj": (1024, 2688, 512, 22 / 512, 40),  # relu2: no gate
            "moe.experts.down_proj": (2688, 1024, 512, 22 / 512, 40),
            "moe.fc2_latent_proj": (1024, 4096, 1, 1.0, 40),
            "moe.shared_experts.up_proj": (4096, 5376, 1, 1.0, 40),
            "mamba.in_proj": (4096, 2 * 8192 + 2 * 8 * 128 + 128, 1, 1.0, 40),
        },
    ),
    "llama4_shared_expert_and_dense_width": (
        "llama4__Llama-4-Maverick-17B-128E-Instruct",
        {
            "moe.experts.gate_up": (5120, 2 * 8192, 128, 1 / 128, 24),
            "moe.shared_experts.gate_proj": (5120, 8192, 1, 1.0, 24),
            "mlp.gate_proj": (5120, 16384, 1, 1.0, 24),
        },
    ),
}


@pytest.mark.parametrize("case", sorted(GEMM_SHAPES))
def test_corpus_gemm_shapes(case):
    stem, expected = GEMM_SHAPES[case]
    spec = spec_of(stem)
    assert {name: key_gemm(spec, name) for name in expected} == expected


def test_deepseek_v3_mtp_by_hand():
    h = 7168
    attn = h * 1536 + 1536 * 128 * 192 + h * 576 + 512 * 128 * 256 + 128 * 128 * h
    norms = 2 * h + 1536 + 512
    moe = 256 * h + 256 * 3 * h * 2048 + 3 * h * 2048  # router, routed experts, shared expert
    mtp = attn + norms + moe + 2 * h + 2 * h * h + h  # + enorm, hnorm, eh_proj, shared-head norm
    assert mtp == 11_610_067_968 == param_counts(spec_of("deepseek__DeepSeek-V3")).mtp
    # With the embedding and LM head it stores again, the checkpoint's MTP layer (13.5B) brings the 671B
    # main model to within 1B of DeepSeek's published "685B = 671B + 14B MTP".
    assert abs(671_026_404_352 + mtp + 2 * 129280 * h - 685e9) < 1e9


def test_dbrx_fused_qkv_and_gpt_oss_biases():
    dbrx = spec_of("dbrx__dbrx-16x13b-neuron-training")
    assert key_gemm(dbrx, "attn.qkv_proj") == (6144, 6144 + 2 * 8 * 128, 1, 1.0, 40)
    assert key_gemm(dbrx, "moe.experts.gate_up") == (6144, 2 * 10752, 16, 4 / 16, 40)
    oss = spec_of("gpt-oss__gpt-oss-20b")
    assert key_gemm(oss, "attn.q_proj") == (2880, 64 * 64, 1, 1.0, 24)
    assert gemm(oss, "moe.router").bias and gemm(oss, "moe.experts.gate_up").bias
    assert oss.layer_kinds[0].other_params == 2 * 2880 + 64  # two RMSNorms + one sink per head


def test_minimax_m25_mtp_and_full_width_qk_norm():
    spec = spec_of("minimax__MiniMax-M2.5")
    assert spec.layer_kinds[0].other_params == 2 * 3072 + 48 * 128 + 8 * 128
    assert spec.mtp_layers == 3  # num_mtp_modules 3 x mtp_transformer_layers 1
    assert param_counts(spec).mtp == 3 * (kind_params(spec.layer_kinds[0], 3072)[0] + 3 * 3072 + 2 * 3072**2)


def test_nemotron_infinity_in_time_step_limit_is_harmless():
    spec = spec_of("nemotron-h__NVIDIA-Nemotron-3-Super-120B-A12B-FP8")
    assert spec.num_layers == 88 and spec.kind_of(0).mixer.kind == "mamba"


# -- unseen but valid configs (one per family), totals from the transformers 5.24 meta-device oracle --

UNSEEN = [
    (
        "mixtral",
        199_123_968,
        dict(
            model_type="mixtral",
            hidden_size=1024,
            num_hidden_layers=3,
            num_attention_heads=16,
            num_key_value_heads=4,
            head_dim=80,
            intermediate_size=2816,
            num_local_experts=6,
            num_experts_per_tok=2,
            vocab_size=32768,
            sliding_window=4096,
            tie_word_embeddings=True,
        ),
    ),
    (
        "qwen2_moe",
        370_715_136,
        dict(
            model_type="qwen2_moe",
            hidden_size=1536,
            num_hidden_layers=6,
            num_attention_heads=12,
            num_key_value_heads=4,
            intermediate_size=4096,
            moe_intermediate_size=704,
            shared_expert_intermediate_size=2816,
            num_experts=12,
            num_experts_per_tok=3,
            decoder_sparse_step=2,
            mlp_only_layers=[5],
            qkv_bias=False,
            vocab_size=50000,
        ),
    ),
    (
        "qwen3_moe",
        206_302_144,
        dict(
            model_type="qwen3_moe",
            hidden_size=1024,
            num_hidden_layers=5,
            num_attention_heads=8,
            num_key_value_heads=2,
            head_dim=160,
            attention_bias=True,
            intermediate_size=3072,
            moe_intermediate_size=384,
            num_experts=24,
            num_experts_per_tok=4,
            mlp_only_layers=[0],
            tie_word_embeddings=True,
            vocab_size=65536,
        ),
    ),
    (
        "qwen3_next",
        335_550_720,
        dict(
            model_type="qwen3_next",
            hidden_size=1024,
            num_hidden_layers=8,
            num_attention_heads=8,
            num_key_value_heads=2,
            head_dim=128,
            linear_num_key_heads=8,
            linear_num_value_heads=16,
            linear_key_head_dim=64,
            linear_value_head_dim=96,
            linear_conv_kernel_dim=3,
            full_attention_interval=3,
            moe_intermediate_size=256,
            shared_expert_intermediate_size=384,
            num_experts=32,
            num_experts_per_tok=4,
            mlp_only_layers=[0],
            intermediate_size=2048,
            vocab_size=50000,
        ),
    ),
    (
        "qwen3_5_text",
        203_798_400,
        dict(
            model_type="qwen3_5_text",
            hidden_size=1024,
            num_hidden_layers=6,
            num_attention_heads=8,
            num_key_value_heads=2,
            head_dim=128,
            linear_num_key_heads=8,
            linear_num_value_heads=16,
            linear_key_head_dim=64,
            linear_value_head_dim=64,
            full_attention_interval=3,
            intermediate_size=3072,
            vocab_size=60000,
        ),
    ),
    (
        "qwen3_5_moe_text",
        208_565_984,
        dict(
            model_type="qwen3_5_moe_text",
            hidden_size=1024,
            num_hidden_layers=4,
            num_attention_heads=8,
            num_key_value_heads=2,
            head_dim=128,
            linear_num_key_heads=8,
            linear_num_value_heads=16,
            moe_intermediate_size=256,
            shared_expert_intermediate_size=512,
            num_experts=16,
            num_experts_per_tok=2,
            vocab_size=60000,
        ),
    ),
    (
        "deepseek_v2",
        2_839_898_816,
        dict(
            model_type="deepseek_v2",
            hidden_size=2048,
            num_hidden_layers=5,
            num_attention_heads=16,
            q_lora_rank=None,
            kv_lora_rank=512,
            qk_nope_head_dim=128,
            qk_rope_head_dim=64,
            v_head_dim=128,
            moe_intermediate_size=1408,
            n_shared_experts=2,
            n_routed_experts=64,
            num_experts_per_tok=6,
            first_k_dense_replace=1,
            intermediate_size=10944,
            mlp_bias=True,
            attention_bias=True,
            vocab_size=102400,
            moe_layer_freq=1,
        ),
    ),
    (
        "deepseek_v3",
        1_017_649_664,
        dict(
            model_type="deepseek_v3",
            hidden_size=2560,
            num_hidden_layers=6,
            num_attention_heads=20,
            q_lora_rank=768,
            kv_lora_rank=256,
            qk_nope_head_dim=64,
            qk_rope_head_dim=32,
            v_head_dim=64,
            moe_intermediate_size=512,
            n_shared_experts=2,
            n_routed_experts=32,
            num_experts_per_tok=4,
            first_k_dense_replace=2,
            intermediate_size=6912,
            num_nextn_predict_layers=2,
            vocab_size=64000,
            n_group=4,
            topk_group=2,
        ),
    ),
    (
        "deepseek_v32",
        480_237_056,
        dict(
            model_type="deepseek_v32",
            hidden_size=2048,
            num_hidden_layers=4,
            num_attention_heads=16,
            q_lora_rank=512,
            kv_lora_rank=256,
            qk_nope_head_dim=64,
            qk_rope_head_dim=32,
            v_head_dim=64,
            moe_intermediate_size=512,
            n_shared_experts=1,
            n_routed_experts=16,
            num_experts_per_tok=4,
            first_k_dense_replace=1,
            intermediate_size=5632,
            index_n_heads=16,
            index_head_dim=64,
            vocab_size=64000,
            n_group=4,
            topk_group=2,
        ),
    ),
    # kimi_k2 has no transformers config; the oracle built it as deepseek_v3 (what kimi_k25 does with it).
    (
        "kimi_k2",
        2_581_808_128,
        dict(
            model_type="kimi_k2",
            architectures=["DeepseekV3ForCausalLM"],
            hidden_size=3072,
            num_hidden_layers=4,
            num_attention_heads=32,
            q_lora_rank=1024,
            kv_lora_rank=512,
            qk_nope_head_dim=128,
            qk_rope_head_dim=64,
            v_head_dim=128,
            moe_intermediate_size=1024,
            n_shared_experts=1,
            n_routed_experts=48,
            num_experts_per_tok=8,
            first_k_dense_replace=1,
            intermediate_size=8192,
            num_nextn_predict_layers=0,
            vocab_size=163840,
            n_group=1,
            topk_group=1,
        ),
    ),
    (
        "glm4_moe",
        1_396_474_112,
        dict(
            model_type="glm4_moe",
            hidden_size=2048,
            num_hidden_layers=5,
            num_attention_heads=32,
            num_key_value_heads=4,
            head_dim=128,
            attention_bias=True,
            use_qk_norm=True,
            intermediate_size=8192,
            moe_intermediate_size=768,
            n_routed_experts=40,
            num_experts_per_tok=6,
            n_shared_experts=1,
            first_k_dense_replace=2,
            vocab_size=151552,
        ),
    ),
    (
        "dbrx",
        1_305_298_944,
        dict(
            model_type="dbrx",
            d_model=2048,
            n_heads=16,
            n_layers=4,
            attn_config=dict(kv_n_heads=4, clip_qkv=6, rope_theta=500000),
            ffn_config=dict(ffn_hidden_size=5376, moe_num_experts=8, moe_top_k=2),
            vocab_size=50368,
        ),
    ),
    (
        "gpt_oss",
        925_605_888,
        dict(
            model_type="gpt_oss",
            hidden_size=1440,
            num_hidden_layers=6,
            num_attention_heads=32,
            num_key_value_heads=4,
            head_dim=64,
            num_local_experts=16,
            num_experts_per_tok=2,
            intermediate_size=1440,
            sliding_window=256,
            vocab_size=100000,
        ),
    ),
    (
        "jamba",
        1_802_665_856,
        dict(
            model_type="jamba",
            hidden_size=2048,
            num_hidden_layers=12,
            num_attention_heads=16,
            num_key_value_heads=4,
            attn_layer_period=6,
            attn_layer_offset=2,
            expert_layer_period=3,
            expert_layer_offset=2,
            num_experts=8,
            num_experts_per_tok=2,
            intermediate_size=5632,
            mamba_d_state=32,
            mamba_d_conv=3,
            mamba_expand=2,
            mamba_dt_rank="auto",
            mamba_proj_bias=True,
            mamba_conv_bias=False,
            vocab_size=32000,
        ),
    ),
    (
        "nemotron_h",
        300_206_464,
        dict(
            model_type="nemotron_h",
            hidden_size=2048,
            hybrid_override_pattern="M-M*EM-",
            mamba_num_heads=32,
            mamba_head_dim=64,
            n_groups=4,
            ssm_state_size=64,
            conv_kernel=3,
            num_attention_heads=16,
            num_key_value_heads=4,
            head_dim=128,
            intermediate_size=5120,
            moe_intermediate_size=1024,
            moe_shared_expert_intermediate_size=2048,
            n_routed_experts=16,
            num_experts_per_tok=4,
            mlp_bias=True,
            use_bias=True,
            use_conv_bias=False,
            vocab_size=32000,
        ),
    ),
    # Latent MoE with mlp_bias: fc1/fc2_latent_proj carry biases (FFN.latent_bias).
    (
        "nemotron_h_latent",
        46_975_792,
        dict(
            model_type="nemotron_h",
            hidden_size=1024,
            hybrid_override_pattern="ME*E",
            mamba_num_heads=16,
            mamba_head_dim=64,
            n_groups=2,
            ssm_state_size=64,
            num_attention_heads=8,
            num_key_value_heads=2,
            head_dim=64,
            moe_intermediate_size=512,
            moe_shared_expert_intermediate_size=1024,
            moe_latent_size=256,
            n_routed_experts=8,
            num_experts_per_tok=2,
            mlp_bias=True,
            vocab_size=16000,
            num_nextn_predict_layers=1,
            mtp_hybrid_override_pattern="*E",
        ),
    ),
    # layers_block_type list with legacy names; mamba_* aliases win over n_groups/conv_kernel/use_conv_bias;
    # num_hidden_layers (7) is ignored: the list has 4 layers.
    (
        "nemotron_h_list",
        13_447_704,
        dict(
            model_type="nemotron_h",
            hidden_size=512,
            layers_block_type=["mamba", "mlp", "attention", "moe"],
            mamba_num_heads=8,
            mamba_head_dim=64,
            n_groups=2,
            ssm_state_size=32,
            num_attention_heads=8,
            num_key_value_heads=2,
            head_dim=64,
            intermediate_size=1024,
            moe_intermediate_size=256,
            moe_shared_expert_intermediate_size=512,
            n_routed_experts=8,
            num_experts_per_tok=2,
            vocab_size=8000,
            num_hidden_layers=7,
            mamba_n_groups=4,
            mamba_d_conv=2,
            mamba_conv_bias=False,
        ),
    ),
    (
        "minimax_m2",
        1_680_909_312,
        dict(
            model_type="minimax_m2",
            hidden_size=2048,
            num_hidden_layers=6,
            num_attention_heads=16,
            num_key_value_heads=4,
            head_dim=128,
            intermediate_size=1024,
            num_local_experts=32,
            num_experts_per_tok=4,
            vocab_size=100000,
        ),
    ),
    (
        "minimax",
        1_445_153_280,
        dict(
            model_type="minimax",
            hidden_size=1536,
            num_hidden_layers=8,
            num_attention_heads=12,
            num_key_value_heads=4,
            head_dim=128,
            intermediate_size=2048,
            num_local_experts=16,
            num_experts_per_tok=2,
            vocab_size=50000,
            layer_types=(["linear_attention"] * 3 + ["full_attention"]) * 2,
        ),
    ),
    # Remote-code attn_type_list is ignored by transformers: default alternating full / lightning layers.
    (
        "minimax_attn_type_list",
        185_101_312,
        dict(
            model_type="minimax",
            hidden_size=1024,
            num_hidden_layers=4,
            num_attention_heads=8,
            intermediate_size=2048,
            num_local_experts=4,
            num_experts_per_tok=2,
            vocab_size=32000,
            attn_type_list=[0, 0, 0, 1],
        ),
    ),
    # Wrapper: the oracle built Glm4vMoeTextModel from text_config plus an untied lm_head.
    (
        "glm4v_moe",
        193_661_952,
        dict(
            model_type="glm4v_moe",
            tie_word_embeddings=False,
            text_config=dict(
                model_type="glm4v_moe_text",
                hidden_size=1024,
                num_hidden_layers=4,
                num_attention_heads=16,
                num_key_value_heads=2,
                head_dim=128,
                intermediate_size=4096,
                moe_intermediate_size=512,
                n_routed_experts=16,
                num_experts_per_tok=4,
                first_k_dense_replace=1,
                vocab_size=40000,
            ),
        ),
    ),
    # Qwen3.5-MoE wrapper: text_config with layer_types and mtp_num_hidden_layers; vision tower not counted.
    (
        "qwen3_5_moe_wrapper",
        368_273_856,
        {
            "model_type": "qwen3_5_moe",
            "architectures": ["Qwen3_5MoeForConditionalGeneration"],
            "tie_word_embeddings": False,
            "text_config": {
                "model_type": "qwen3_5_moe_text",
                "hidden_size": 1024,
                "num_hidden_layers": 8,
                "layer_types": [
                    "linear_attention",
                    "linear_attention",
                    "linear_attention",
                    "full_attention",
                    "linear_attention",
                    "linear_attention",
                    "linear_attention",
                    "full_attention",
                ],
                "num_attention_heads": 8,
                "num_key_value_heads": 2,
                "head_dim": 128,
                "linear_num_key_heads": 8,
                "linear_num_value_heads": 16,
                "linear_key_head_dim": 128,
                "linear_value_head_dim": 128,
                "moe_intermediate_size": 256,
                "shared_expert_intermediate_size": 256,
                "num_experts": 32,
                "num_experts_per_tok": 4,
                "vocab_size": 50000,
                "mtp_num_hidden_layers": 1,
                "attn_output_gate": True,
            },
        },
    ),
    # kimi_k25 wrapper: transformers builds its kimi_k2 text_config as deepseek_v3. The LM head is tied by the
    # wrapper's tie_word_embeddings (KimiK25Config default true), not the text config's false: the oracle built
    # Kimi_K25ForConditionalGeneration (language model + lm_head, tied once) = 71,148,416.
    (
        "kimi_k25_wrapper",
        71_148_416,
        {
            "model_type": "kimi_k25",
            "architectures": ["KimiK25ForConditionalGeneration"],
            "text_config": {
                "model_type": "kimi_k2",
                "hidden_size": 1024,
                "num_hidden_layers": 3,
                "num_attention_heads": 8,
                "q_lora_rank": 384,
                "kv_lora_rank": 256,
                "qk_nope_head_dim": 64,
                "qk_rope_head_dim": 32,
                "v_head_dim": 64,
                "moe_intermediate_size": 256,
                "n_shared_experts": 1,
                "n_routed_experts": 16,
                "num_experts_per_tok": 4,
                "first_k_dense_replace": 1,
                "intermediate_size": 2048,
                "num_nextn_predict_layers": 0,
                "vocab_size": 32000,
                "n_group": 1,
                "topk_group": 1,
                "tie_word_embeddings": False,
            },
        },
    ),
    # llama4 wrapper: explicit moe_layers and no_rope_layers, chunked attention off (null).
    (
        "llama4_wrapper",
        104_360_960,
        {
            "model_type": "llama4",
            "text_config": {
                "model_type": "llama4_text",
                "hidden_size": 1024,
                "num_hidden_layers": 4,
                "num_attention_heads": 8,
                "num_key_value_heads": 2,
                "head_dim": 128,
                "intermediate_size": 512,
                "intermediate_size_mlp": 2048,
                "num_local_experts": 4,
                "moe_layers": [0, 3],
                "no_rope_layers": [1, 0, 1, 0],
                "attention_chunk_size": None,
                "vocab_size": 32000,
                "attention_bias": True,
            },
        },
    ),
    (
        "llama4_text",
        717_957_120,
        dict(
            model_type="llama4_text",
            hidden_size=2048,
            num_hidden_layers=6,
            num_attention_heads=16,
            num_key_value_heads=4,
            head_dim=128,
            intermediate_size=1024,
            intermediate_size_mlp=4096,
            num_local_experts=8,
            num_experts_per_tok=1,
            interleave_moe_layer_step=2,
            attention_chunk_size=4096,
            no_rope_layer_interval=3,
            vocab_size=100000,
        ),
    ),
]


@pytest.mark.parametrize("family,total,cfg", UNSEEN, ids=[u[0] for u in UNSEEN])
def test_unseen_config_total(family, total, cfg):
    assert param_counts(spec_from(cfg)).total == total


def test_unseen_layouts():
    by = {f: spec_from(c) for f, _, c in UNSEEN}
    assert moe_layers(by["qwen2_moe"]) == [1, 3]
    assert moe_layers(by["qwen3_next"]) == list(range(1, 8))  # mlp_only_layers [0]
    assert [i for i in range(8) if by["qwen3_next"].kind_of(i).mixer.kind == "attention"] == [2, 5]
    assert key_gemm(by["qwen3_5_text"], "linear_attn.in_proj_qkv") == (1024, 2 * 8 * 64 + 16 * 64, 1, 1.0, 4)
    assert key_gemm(by["qwen3_5_text"], "linear_attn.in_proj_z") == (1024, 16 * 64, 1, 1.0, 4)
    assert key_gemm(by["deepseek_v2"], "mla.q_proj") == (2048, 16 * 192, 1, 1.0, 5)  # q_lora_rank null
    assert gemm(by["deepseek_v2"], "moe.shared_experts.gate_proj").n == 2 * 1408  # n_shared_experts 2
    assert by["deepseek_v3"].mtp_layers == 2
    assert moe_layers(by["kimi_k2"]) == [1, 2, 3]
    assert [i for i in range(12) if by["jamba"].kind_of(i).mixer.kind == "attention"] == [2, 8]
    assert moe_layers(by["jamba"]) == [2, 5, 8, 11]
    assert by["jamba"].kind_of(0).mixer.dt_rank == 128  # "auto" = ceil(2048 / 16)
    assert moe_layers(by["llama4_text"]) == [1, 3, 5]
    assert [by["llama4_text"].kind_of(i).mixer.attention for i in range(3)] == ["chunked", "chunked", "full"]
    assert by["qwen3_5_moe_wrapper"].mtp_layers == 1 and by["qwen3_5_moe_wrapper"].key_prefix == "text_config."
    assert moe_layers(by["llama4_wrapper"]) == [0, 3]
    assert {by["llama4_wrapper"].kind_of(i).mixer.attention for i in range(4)} == {"full"}
    assert by["kimi_k25_wrapper"].model_type == "kimi_k2"
    nl = by["nemotron_h_list"]
    assert nl.num_layers == 4 and any("num_hidden_layers 7" in n for n in nl.notes)
    assert (nl.kind_of(0).mixer.n_groups, nl.kind_of(0).mixer.conv_kernel) == (4, 2)
    lat = by["nemotron_h_latent"]
    assert gemm(lat, "moe.fc1_latent_proj").bias and gemm(lat, "moe.fc2_latent_proj").bias
    assert key_gemm(lat, "moe.experts.up_proj") == (256, 512, 8, 2 / 8, 2)
    # MTP "*E": an attention block and a MoE block (each with its norm) + enorm, hnorm, eh_proj, final norm.
    blocks = sum(kind_params(lat.kind_of(i), 1024)[0] for i in (1, 2))
    assert (lat.mtp_layers, param_counts(lat).mtp) == (1, blocks + 3 * 1024 + 2 * 1024 * 1024)
    assert [by["minimax"].kind_of(i).mixer.kind for i in range(4)] == ["linear_attention"] * 3 + ["attention"]
    assert key_gemm(by["minimax"], "linear_attn.qkv_proj") == (1536, 3 * 12 * 128, 1, 1.0, 6)
    assert key_gemm(by["minimax"], "linear_attn.output_gate") == (1536, 12 * 128, 1, 1.0, 6)
    assert any("attn_type_list" in n for n in by["minimax_attn_type_list"].notes)
    assert by["glm4v_moe"].layer_counts() == [1, 3] and gemm(by["glm4v_moe"], "attn.q_proj").bias
    assert [by["nemotron_h"].kind_of(i).name for i in range(5)] == [
        "mamba+none",
        "none+dense",
        "mamba+none",
        "attention/full+none",
        "none+moe",
    ]


# -- bad input: a located one-line error ------------------------------------------------------------


@pytest.mark.parametrize(
    "cfg,key",
    [
        (dict(model_type="nemotron_h", hidden_size=64, hybrid_override_pattern="MX*"), "hybrid_override_pattern"),
        (dict(model_type="deepseek_v32", hidden_size=64, q_lora_rank=None), "q_lora_rank"),
        (dict(model_type="qwen2_moe", hidden_size=64, mlp_only_layers=["3"]), "mlp_only_layers[0]"),
    ],
)
def test_bad_values_raise_located_errors(cfg, key):
    with pytest.raises(SpecError) as exc:
        spec_from(cfg)
    assert exc.value.key == key and exc.value.line is not None


@pytest.mark.parametrize("model_type,key", [("deepseek_v2", "num_experts_per_tok"), ("dots1", "n_routed_experts")])
def test_a_none_class_default_is_a_missing_key_error(model_type, key):
    # transformers' class default is None (kept in the generated defaults table); it used to reach the
    # FLOP model as None and end in an internal TypeError
    with pytest.raises(SpecError) as exc:
        spec_from(dict(model_type=model_type, hidden_size=64, num_attention_heads=4))
    assert exc.value.key == key and f"missing key '{key}'" in str(exc.value)


@pytest.mark.parametrize(
    "cfg,words",
    [
        (
            dict(model_type="jamba", hidden_size=64, num_attention_heads=4, attn_layer_period=4, attn_layer_offset=4),
            "attn_layer_offset 4 >= attn_layer_period 4",
        ),
        (dict(model_type="dbrx", d_model=64, n_heads=4, tie_word_embeddings=True), "tie_word_embeddings"),
        (
            dict(model_type="deepseek_v2", hidden_size=100, num_attention_heads=8, num_experts_per_tok=2),
            "hidden_size 100 not divisible by num_attention_heads 8",
        ),
    ],
)
def test_values_transformers_rejects_reach_cl008(cfg, words):
    spec = spec_from(cfg)
    assert len(spec.loader_rejects) == 1 and words in spec.loader_rejects[0]


@pytest.mark.parametrize(
    "cfg,key",
    [
        (
            dict(
                model_type="gpt_oss", hidden_size=64, num_attention_heads=4, num_experts_per_tok=4, experts_per_token=2
            ),
            "experts_per_token",
        ),
        (
            dict(
                model_type="deepseek_v2", hidden_size=64, num_attention_heads=4, num_experts_per_tok=2, moe_layer_freq=2
            ),
            "moe_layer_freq",
        ),
        (
            dict(model_type="minimax_m2", hidden_size=64, num_attention_heads=4, shared_intermediate_size=512),
            "shared_intermediate_size",
        ),
        (
            dict(model_type="nemotron_h", hidden_size=64, hybrid_override_pattern="M*E", n_shared_experts=2),
            "n_shared_experts",
        ),
    ],
)
def test_keys_transformers_ignores_are_key_issues(cfg, key):
    spec = spec_from(cfg)
    assert [(i.kind, i.source.key) for i in spec.key_issues] == [("ignored", key)]
    assert spec.key_issues[0].source.line is not None


def test_official_configs_raise_no_ignored_key_issue():
    for stem in (
        "gpt-oss__gpt-oss-20b",
        "deepseek__DeepSeek-V3",
        "minimax__MiniMax-M2.5",
        "nemotron-h__NVIDIA-Nemotron-3-Super-120B-A12B-FP8",
    ):
        assert [i for i in spec_of(stem).key_issues if i.kind == "ignored"] == []


# -- group-limited routing (n_group / topk_group) ----------------------------------------------------------------


def test_group_limited_routers_read_their_groups():
    """DeepSeek-V3's router picks a token's top-8 within its best 4 of 8 groups (node-limited routing); V2's only
    with topk_method group_limited_greedy; families whose groups are all one group (GLM-5, GLM-4.5: n_group 1) and
    families whose router has no groups (Qwen3-MoE) stay unlimited."""
    v3 = spec_of("deepseek__DeepSeek-V3").kind_of(3).ffn
    assert (v3.expert_groups, v3.groups_per_token, v3.group_limited) == (8, 4, True)
    assert spec_of("deepseek__DeepSeek-V3").sources["expert_groups"].key == "n_group"
    assert not spec_of("glm__GLM-5-reconstructed").kind_of(3).ffn.group_limited
    v2 = dict(model_type="deepseek_v2", hidden_size=64, num_attention_heads=4, num_experts_per_tok=6)
    v2.update(n_routed_experts=160, n_group=8, topk_group=3, first_k_dense_replace=0, num_hidden_layers=2)
    assert not spec_from(v2).kind_of(0).ffn.group_limited  # topk_method defaults to greedy
    ffn = spec_from({**v2, "topk_method": "group_limited_greedy"}).kind_of(0).ffn
    assert (ffn.expert_groups, ffn.groups_per_token) == (8, 3)
    glm = dict(model_type="glm4_moe", hidden_size=64, num_attention_heads=4, n_routed_experts=64, n_group=8)
    ffn = spec_from({**glm, "topk_group": 2, "num_experts_per_tok": 4, "first_k_dense_replace": 0}).kind_of(0).ffn
    assert (ffn.expert_groups, ffn.groups_per_token) == (8, 2)
    # the bespoke adapters of families in GROUP_LIMITED_ROUTERS read them too (Nemotron-H's n_groups is Mamba's)
    small = dict(hidden_size=64, num_attention_heads=4, num_hidden_layers=2, n_routed_experts=16)
    small.update(num_experts_per_tok=4, n_group=4, topk_group=2, moe_intermediate_size=64)
    nemotron = dict(model_type="nemotron_h", hybrid_override_pattern="ME", moe_shared_expert_intermediate_size=64)
    nemotron.update(mamba_num_heads=4, mamba_head_dim=16, ssm_state_size=16, n_groups=2)
    mimo = dict(model_type="mimo_v2_flash", moe_layer_freq=[0, 1])
    for cfg in (nemotron, mimo):
        ffn = spec_from({**small, **cfg}).kind_of(1).ffn
        assert (ffn.kind, ffn.expert_groups, ffn.groups_per_token) == ("moe", 4, 2), cfg["model_type"]


@pytest.mark.parametrize(
    "extra,key,message",
    [
        (dict(n_group=6), "n_group", "'n_group' 6 does not divide the 256 routed experts"),
        (dict(topk_group=9), "topk_group", "'topk_group' 9 is more than the 8 groups of 'n_group'"),
        (
            dict(n_group=64, topk_group=1),
            "topk_group",
            "'topk_group' 1 groups of 4 experts cannot hold a token's top-8",
        ),
    ],
)
def test_group_limits_a_router_cannot_run_are_located_errors(extra, key, message):
    with pytest.raises(SpecError) as exc:
        spec_from(dict(model_type="deepseek_v3", hidden_size=64, num_attention_heads=4, **extra))
    assert (exc.value.key, exc.value.line is not None) == (key, True)
    assert message in str(exc.value)


def test_inspect_names_a_group_limited_router(capsys):
    """The text inspection says what the router limits, beside the layer kind it belongs to."""
    assert main(["inspect", os.path.join(CORPUS, "deepseek__DeepSeek-V3.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:4] == ["     3 x mla+dense", "    58 x mla+moe (top-8 within 4 of 8 expert groups)"]
    assert main(["inspect", os.path.join(CORPUS, "glm__GLM-5-reconstructed.json")]) == 0
    assert "expert groups" not in capsys.readouterr().out
