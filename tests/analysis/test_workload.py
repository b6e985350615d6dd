"""Workload: KV bytes, step estimates and shares (docs/design.md §5)."""

import math
from dataclasses import replace

import pytest

from colint.analysis.gemm_model import FORMATS
from colint.analysis.scenario import make_scenario
from colint.analysis.workload import analyse
from colint.errors import ProfileError
from colint.hardware_profiles import load_profile
from colint.loading import load
from colint.normalize import normalize


def _spec(path):
    return normalize(load(path))


# bytes of K and V per token over all layers, at the KV cache's data type (GPU-independent)
@pytest.mark.parametrize(
    "path, gpu, kv_cache, kv",
    [
        ("tests/corpus/hf/deepseek__DeepSeek-V3.json", "h100-sxm", None, 70_272),
        ("tests/corpus/hf/llama3__Meta-Llama-3.1-405B.json", "h100-sxm", None, 516_096),
        ("tests/corpus/hf/llama3__Meta-Llama-3.1-405B.json", "b200", "fp8", 516_096 // 2),  # fp8 halves bf16
    ],
    ids=["deepseek_v3_bf16", "llama_405b_bf16", "llama_405b_fp8"],
)
def test_kv_bytes_per_token(path, gpu, kv_cache, kv):
    scenario = make_scenario("throughput") if kv_cache is None else make_scenario("throughput", kv_cache=kv_cache)
    w = analyse(_spec(path), load_profile(gpu), scenario)
    assert w.kv_bytes_per_token == kv


def test_shares_sum_to_one_and_regimes():
    w = analyse(_spec("examples/llama-3.1-8b.json"), load_profile("b200"), make_scenario("throughput"))
    for step in w.steps.values():
        assert step.attention_share + step.ffn_share + step.other_share == pytest.approx(1.0)
        assert step.estimate_s > step.sol_s > 0
    decode = {r.name: r for r in w.gemms["decode"]}
    assert decode["mlp.gate_up"].members == ("mlp.gate_proj", "mlp.up_proj")
    assert (decode["mlp.gate_up"].m, decode["mlp.gate_up"].n, decode["mlp.gate_up"].k) == (256, 28672, 4096)
    assert decode["mlp.gate_up"].bound == "memory"
    prefill = {r.name: r for r in w.gemms["prefill"]}
    assert prefill["mlp.gate_up"].bound == "compute"
    assert len(w.layer_costs) == 32


def test_tp_shards_column_and_row():
    w = analyse(_spec("examples/llama-3.1-8b.json"), load_profile("h100-sxm"), make_scenario("latency", tp=8))
    rows = {r.name: r for r in w.gemms["decode"]}
    assert (rows["attn.qkv_proj"].n, rows["attn.qkv_proj"].k) == (6144 // 8, 4096)
    assert (rows["mlp.down_proj"].n, rows["mlp.down_proj"].k) == (4096, 14336 // 8)
    assert w.steps["decode"].comm_s > 0


def test_long_context_decode_is_attention_dominated():
    spec = _spec("examples/llama-3.1-8b.json")
    short = analyse(spec, load_profile("h200"), make_scenario("latency", context=1024))
    long = analyse(spec, load_profile("h200"), make_scenario("long-context"))
    assert long.steps["decode"].attention_share > 0.8 > short.steps["decode"].attention_share


def test_moe_expert_m_under_ep():
    spec = _spec("tests/corpus/hf/deepseek__DeepSeek-V3.json")
    w = analyse(spec, load_profile("b200"), make_scenario("throughput", dtype="fp8", ep=8))
    experts = [r for r in w.gemms["decode"] if r.parallel == "expert" and r.name.endswith("gate_up")][0]
    assert experts.m == 64  # 256 seq x 8 ranks x top-8 / 256 experts (the mean: what the rules read)
    assert experts.instances == pytest.approx(32.0)  # every local expert touched


def _expected_max_binomial_by_comb(n: int, p: float, ranks: int) -> float:
    """E[max of ``ranks`` independent Binomial(n, p)] summed over the whole support with math.comb (an
    implementation apart from colint.analysis.moe's)."""
    cdf, total = 0.0, 0.0
    for m in range(n + 1):
        cdf += math.comb(n, m) * p**m * (1 - p) ** (n - m)
        total += 1 - min(1.0, cdf) ** ranks
    return total


def test_busiest_rank_factor():
    from colint.analysis.moe import busiest_rank_factor

    assert busiest_rank_factor(2048, 8, 256, 1) == 1.0  # one rank: no imbalance
    # 1 token, top-8 over 8 ranks: 8 picks, each rank Binomial(8, 1/8); the busiest holds 2.44 of them (mean 1)
    assert busiest_rank_factor(1, 8, 256, 8) == pytest.approx(_expected_max_binomial_by_comb(8, 1 / 8, 8), rel=1e-12)
    assert busiest_rank_factor(1, 8, 256, 8) == pytest.approx(2.43796, abs=1e-5)
    # 4 tokens: 32 picks, mean 4 a rank, the busiest 6.80 (1.70x): the raw balls-into-bins bound said 2.02x
    assert busiest_rank_factor(4, 8, 256, 8) == pytest.approx(_expected_max_binomial_by_comb(32, 1 / 8, 8) / 4)
    assert busiest_rank_factor(4, 8, 256, 8) == pytest.approx(1.69968, abs=1e-5)
    # 1 token, top-8 over 64 ranks: mean 1/8 pick per rank, the busiest 1.35 picks (10.8x the mean)
    assert busiest_rank_factor(1, 8, 256, 64) == pytest.approx(_expected_max_binomial_by_comb(8, 1 / 64, 64) * 8)
    # 2048 tokens: sd 42.3 picks past NORMAL_SD, the normal limit, mean + sd x 1.4236 (8 standard normals' max)
    sd = math.sqrt(2048 * 8 * (1 / 8) * (7 / 8))
    assert busiest_rank_factor(2048, 8, 256, 8) == pytest.approx(1 + sd * 1.4236003 / 2048, rel=1e-7)
    # 1 token, top-8 of 16 experts on 16 ranks: a rank holds one expert, so at most 1 pick (mean 1/2): 2x
    assert busiest_rank_factor(1, 8, 16, 16) == 2.0


def test_expected_max_normal_limit_is_close_to_the_binomial_sum_where_it_takes_over():
    from colint.analysis import moe

    assert moe._expected_max_normal(8) == pytest.approx(1.4236003, abs=1e-7)
    assert moe._expected_max_normal(2) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-9)  # E[max of 2] = 1/sqrt(pi)
    # 330 picks over 8 ranks (sd 6.008, just past NORMAL_SD): the normal limit within 0.4% of the exact sum
    exact = _expected_max_binomial_by_comb(330, 1 / 8, 8)
    assert moe._expected_max_binomial(330, 1 / 8, 8) == pytest.approx(exact, rel=4e-3)
    assert moe._expected_max_binomial(330, 1 / 8, 8) != exact  # it is the limit, not the sum


def test_format_not_native_is_an_error():
    with pytest.raises(ProfileError):
        analyse(_spec("examples/llama-3.1-8b.json"), load_profile("h200"), make_scenario("throughput", dtype="nvfp4"))


def test_shared_expert_fused_name():
    w = analyse(_spec("tests/corpus/hf/deepseek__DeepSeek-V3.json"), load_profile("b200"), make_scenario("latency"))
    names = {r.name for r in w.gemms["decode"]}
    assert "moe.shared_experts.gate_up" in names and "mlp.gate_up" in names


def test_cli_inspect_with_gpu(capsys):
    import json

    from colint.cli.main import main

    assert (
        main(
            [
                "inspect",
                "examples/llama-3.1-8b.json",
                "--gpu",
                "h200",
                "--scenario",
                "latency",
                "--tp",
                "2",
                "--format",
                "json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    est = out["estimates"]
    assert est["gpu"] == "h200" and est["scenario"]["tp"] == 2 and est["scenario"]["decode_concurrency"] == 1
    rows = {r["name"]: r for r in est["gemms"]["decode"]}
    assert (rows["mlp.down_proj"]["m"], rows["mlp.down_proj"]["n"], rows["mlp.down_proj"]["k"]) == (1, 4096, 7168)
    assert rows["mlp.down_proj"]["bound"] == "memory"
    step = est["steps"]["decode"]
    assert step["attention_share"] + step["ffn_share"] + step["other_share"] == pytest.approx(1.0)
    assert main(["inspect", "examples/llama-3.1-8b.json"]) == 0
    assert "estimate" not in capsys.readouterr().out  # no --gpu: no estimates
    assert main(["inspect", "examples/llama-3.1-8b.json", "--gpu", "h200", "--dtype", "nvfp4"]) == 2
    assert "nvfp4 is not native on h200" in capsys.readouterr().err


def test_llama_1b_decode_on_h100_matches_hazy_figures():
    # Hazy Research "No Bubbles" (docs/design.md §9.5, V23): Llama-3.2-1B BF16 on H100, batch 1: memory limit
    # ~1350 forward passes/s (0.74 ms); real engines ~770/s (1.3 ms) with per-kernel stalls.
    spec = _spec("tests/corpus/hf/llama3__Llama-3.2-1B-Instruct.json")
    w = analyse(spec, load_profile("h100-sxm"), make_scenario("latency", context=1024))
    step = w.steps["decode"]
    assert 0.70e-3 < step.sol_s < 0.78e-3
    assert 1.0e-3 < step.estimate_s < 1.8e-3


def test_memory_footprint():
    spec = _spec("tests/corpus/hf/deepseek__DeepSeek-V3.json")
    w = analyse(spec, load_profile("b200"), make_scenario("throughput", dtype="fp8", ep=8))
    # experts 654B FP8 / 8 = 82 GB + replicated attention, dense and shared layers (~15 GB FP8) + BF16
    # embedding and FP8 LM head (~2.8 GB) ~ 100 GB; 256 seq x 8192 tok x 70,272 B = 147 GB of KV: too much
    assert 95e9 < w.weight_bytes_per_gpu < 105e9
    assert w.kv_cache_bytes_per_gpu == pytest.approx(256 * 8192 * 70_272)
    assert not w.memory_fits and any("does not fit" in n for n in w.notes)
    assert 0 < w.max_decode_concurrency < 256
    small = analyse(_spec("examples/llama-3.1-8b.json"), load_profile("h200"), make_scenario("latency"))
    assert small.memory_fits and small.max_decode_concurrency > 100


def test_sliding_window_caps_kv_reads_and_footprint():
    spec = _spec("tests/corpus/hf/gemma__gemma-3-27b.json")
    w = analyse(spec, load_profile("h200"), make_scenario("long-context"))
    by_kind = {a.kind: a for a in w.attention["decode"]}
    sliding, full = by_kind["attention/sliding+dense"], by_kind["attention/full+dense"]
    assert (sliding.attended_tokens, full.attended_tokens) == (1024, 131072)
    assert sliding.bytes == 16 * 1024 * sliding.kv_bytes_per_token
    assert w.kv_cache_bytes_per_gpu == pytest.approx(16 * (52 * 1024 + 10 * 131072) * full.kv_bytes_per_token)


def test_mamba_state_not_kv():
    w = analyse(_spec("tests/corpus/hf/jamba__Jamba-v0.1.json"), load_profile("h200"), make_scenario("latency"))
    mamba = [a for a in w.attention["decode"] if a.mixer == "mamba"]
    assert mamba and all(a.kv_bytes_per_token == 0 and a.bytes > 0 for a in mamba)
    assert w.kv_bytes_per_token == 4 * 4096 and w.state_bytes_per_sequence > 0


def test_expert_all_to_all_matches_deepseek_isca_figure():
    # DeepSeek ISCA'25 §2.3.2 (docs/design.md §9.5, V15): 32 tokens/device, FP8 dispatch + BF16 combine, H~7K,
    # 9 experts per token over 900 GB/s NVLink (NVL72): 6.72 us per layer step (their 9 = 8 routed + 1
    # shared; colint sends only the 8 routed, and only the (ep-1)/ep that leave the GPU).
    from colint.analysis.step_extras import expert_all_to_all_s
    from colint.hardware_profiles import time_model

    gb200 = load_profile("gb200")
    tm = time_model(gb200)
    sc = make_scenario("latency", dtype="fp8", ep=72, concurrency=32)
    from colint.analysis.collectives import moe_dispatch_combine

    # DeepEP low-latency kernels at 32 tokens/rank: one copy per routed expert, FP8 (+1/128 scales) out, BF16 back;
    # their wire time (bytes / link) is the paper's figure
    d_s, d_sol = moe_dispatch_combine("dispatch", 32, 7168, 8, 72, "fp8", gb200, tm, backend="deepep_ll", experts=256)
    c_s, c_sol = moe_dispatch_combine("combine", 32, 7168, 8, 72, "fp8", gb200, tm, backend="deepep_ll", experts=256)
    assert (d_sol + c_sol) * (1 + 4 / 128 + 2) / (1 + 2) == pytest.approx(
        6.72e-6 * (8 / 9) * (7168 / 7000) * (71 / 72), rel=0.03
    )
    # the dispatch's sends hide under its fixed wait at 32 tokens; the combine's transfer adds to its fixed time,
    # its 8 picks and its 2 warp groups per SM (256 experts over 152 SMs)
    assert d_s == pytest.approx(tm.a2a_latency_us["ll_dispatch"] * 1e-6)
    fixed_us = tm.a2a_latency_us["ll_combine"] + 8 * tm.a2a_ll_pick_us + 2 * tm.a2a_ll_group_us
    assert c_s == pytest.approx(fixed_us * 1e-6 + c_sol / tm.link_efficiency)
    assert expert_all_to_all_s(32, 8, 7168, sc, gb200, 256) == pytest.approx(d_s + c_s)
    w = analyse(_spec("tests/corpus/hf/deepseek__DeepSeek-V3.json"), gb200, sc)
    assert w.steps["decode"].comm_s == pytest.approx(58 * expert_all_to_all_s(32, 8, 7168, sc, gb200, 256))


# -- Gemma-4 KV sharing (kv_shared) and K=V full layers (v_from_k) --------------------------------
GEMMA4_SHARED = {
    "model_type": "gemma4_text",
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_hidden_layers": 8,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "global_head_dim": 96,
    "vocab_size": 1000,
    "hidden_size_per_layer_input": 0,
    "num_kv_shared_layers": 3,
    "sliding_window": 128,
    "attention_k_eq_v": True,
    "num_global_key_value_heads": 1,
    "layer_types": ["sliding_attention", "full_attention"] * 4,
}


def test_gemma4_kv_sharing_stores_nothing_and_k_eq_v_stores_k_only():
    import json

    from colint.analysis.kv_cache import kv_cache_bytes_per_token
    from colint.loading import load_text

    spec = normalize(load_text(json.dumps(GEMMA4_SHARED), "g4.json"), "hf")
    # layers 0..4 store (S F S F S), 5..7 reuse (F S F). Sliding: 2 KV heads x (64 K + 64 V) x 2 B = 512 B;
    # full with attention_k_eq_v: 1 KV head x 96 (K only) x 2 B = 192 B; KV-sharing layers: 0 B.
    assert kv_cache_bytes_per_token(spec, 2.0) == 3 * 512 + 2 * 192 == 1920
    w = analyse(spec, load_profile("h200"), make_scenario("latency", context=8192))
    assert w.kv_bytes_per_token == 1920 and w.kv_bytes_per_token_per_gpu == 1920
    by_kind = {a.kind: a for a in w.attention["decode"]}
    assert {k: a.kv_bytes_per_token for k, a in by_kind.items()} == {
        "attention/sliding+dense": 512,
        "attention/full+dense": 192,
        "attention/full(kv-shared)+dense": 0,
        "attention/sliding(kv-shared)+dense": 0,
    }
    # a KV-sharing layer still reads its producer's cache each step: layer 6 reads layer 4's sliding
    # window (128 tokens x 512 B), layers 5 and 7 read layer 3's K-only full cache (8192 x 192 B)
    assert by_kind["attention/sliding(kv-shared)+dense"].bytes == 128 * 512
    assert by_kind["attention/full(kv-shared)+dense"].bytes == 8192 * 192
    assert by_kind["attention/full+dense"].bytes == 8192 * 192
    # footprint of one sequence: 3 sliding layers x 128 tokens x 512 B + 2 full layers x 8192 x 192 B
    assert w.kv_cache_bytes_per_gpu == 3 * 128 * 512 + 2 * 8192 * 192 == 3_342_336


# -- experts under tp > 1 with ep: sequences per attention-DP group, ep // tp groups per EP domain ------
@pytest.mark.parametrize("tp, ep, groups", [(1, 8, 8), (8, 8, 1), (2, 8, 4), (8, 64, 8), (8, 1, 1), (8, 4, 1)])
def test_attention_dp_groups(tp, ep, groups):
    assert make_scenario("throughput", tp=tp, ep=ep).attention_dp_groups == groups


def test_moe_helpers_take_tp():
    import math

    from colint.analysis.moe import ep_for_m, tokens_per_expert

    assert tokens_per_expert(256, 8, 8, 256, tp=8) == 8.0  # one TP8 group: 256 x 8 / 256
    assert tokens_per_expert(256, 8, 8, 256) == 64.0  # eight TP1 groups
    assert ep_for_m(382, 256, 8, 256, tp=4) == 4 * math.ceil(382 * 32 / 256)  # 48 groups of 4 GPUs


def test_expert_tokens_under_tp_and_ep():
    from colint.analysis.step_extras import expert_all_to_all_s, tp_all_reduce_s

    spec = _spec("tests/corpus/hf/deepseek__DeepSeek-V3.json")
    prof = load_profile("b200")

    def experts(tp, ep, regime="decode"):
        w = analyse(spec, prof, make_scenario("throughput", dtype="fp8", tp=tp, ep=ep))
        return w, [r for r in w.gemms[regime] if r.parallel == "expert" and r.name.endswith("gate_up")][0]

    # tp=8, ep=8: ONE attention group of 256 sequences -> 256 x 8 / 256 = 8 tokens per expert on average;
    # 1 - (31/32)^256 of the 32 local experts are touched, each by 8 / 0.9997 -> 9 rows (ceil)
    w, r = experts(8, 8)
    touched = 1 - (31 / 32) ** 256
    assert r.m == 9 and r.instances == pytest.approx(32 * touched)
    assert experts(8, 8, "prefill")[1].m == 8192 * 8 // 256  # 256, not 8x that
    assert experts(2, 8)[1].m == 32  # four TP2 groups: 1024 x 8 / 256
    assert experts(1, 8)[1].m == 64  # eight TP1 groups (unchanged)
    assert experts(8, 64)[1].m == 64 and experts(8, 64)[1].instances == pytest.approx(4.0)  # 8 groups, 4 experts/GPU
    # the layer's time is the busiest rank's grouped GEMM: 256 picks per rank on average (sd 14.97), the busiest
    # 256 + 14.97 x 1.4236 = 277.3 (1.083x) -> 9 rows per touched expert, over the experts that rank's 1.083x
    # picks touch: 1 - (31/32)^(256 x 1.083) of its 32
    from colint.analysis.gemm_model import estimate
    from colint.analysis.ops_moe import grouped_model

    factor = 1 + math.sqrt(2048 * (1 / 8) * (7 / 8)) * 1.4236003 / 256
    busy_touched = 1 - (31 / 32) ** (256 * factor)
    busy_m = math.ceil(8 / busy_touched * factor)
    n_step = round(r.n * 32 * busy_touched)
    grouped = estimate(busy_m, n_step, r.k, "fp8", prof, standalone=False, model=grouped_model(prof))
    # the rows report the mean rank (31.991 experts touched); the time, the busiest (31.995: 131,052 columns)
    assert busy_m == 9 and n_step == 131052 and round(r.n * r.instances) == 131033
    assert r.layer_s == pytest.approx(grouped.estimate_s)
    # comm: TP all-reduce (2 per layer, 61 layers) and no EP exchange: ep = tp, so every EP rank already holds the
    # group's 256 tokens after the attention all-reduce and the FFN's all-reduce sums the experts' outputs
    allreduce = 2 * tp_all_reduce_s(256, 7168, 8, prof)
    assert w.steps["decode"].comm_s == pytest.approx(61 * allreduce)
    # tp=2, ep=8: four attention groups meet in the EP domain: + the exchange of 256 / 2 = 128 tokens per GPU
    w2 = experts(2, 8)[0]
    allreduce2 = 2 * tp_all_reduce_s(256, 7168, 2, prof)
    assert w2.steps["decode"].comm_s == pytest.approx(
        61 * allreduce2 + 58 * expert_all_to_all_s(128, 8, 7168, w2.scenario, prof, 256)
    )
    # pipeline cost vector: one TP8 group's experts spread over its 8 GPUs by EP or by expert TP do the
    # same FLOPs per GPU per prefill step (before: ep=8 counted 8 groups' tokens)
    assert w.layer_costs[3].prefill_flops == pytest.approx(experts(8, 1)[0].layer_costs[3].prefill_flops)


def test_lm_head_prefill_cost_is_last_token_per_sequence():
    # inference prefill: logits only for each sequence's last token. 8192 tokens of 1024-token prompts =
    # 8 sequences; tp=2 shards the 128,256-row head
    spec = _spec("examples/llama-3.1-8b.json")
    w = analyse(spec, load_profile("h200"), make_scenario("throughput", tp=2, context=1024))
    assert w.lm_head_cost.prefill_flops == 2 * 8 * 4096 * 64_128
    assert w.lm_head_all_tokens_prefill_flops == 2 * 8192 * 4096 * 64_128  # training / prompt log-probs
    assert [r.m for r in w.gemms["prefill"] if r.name == "lm_head"] == [8]


@pytest.mark.parametrize("tp", [2, 8])
def test_suggest_search_model_mirrors_expert_tokens_under_tp_and_ep(tp):
    """colint suggest's vectorized step model mirrors _gemm_rows' expert M (attention-DP groups, not ep)."""
    import numpy as np

    from colint.engine.checking import build_targets
    from colint.engine.settings import Settings
    from colint.loading import load
    from colint.suggesting.axes import design_axes
    from colint.suggesting.model import SearchModel

    doc = load("examples/deepseek-v3.json")
    spec = normalize(doc)
    target = build_targets(Settings(gpus=["b200"], tp=tp, ep=8))[0]
    axes, tie, _ = design_axes(spec, doc, target.scenario)
    est = SearchModel(axes, tie, doc, spec, target.profile, target.scenario, None, None).estimate(
        np.array([[a.original for a in axes]])
    )
    w = analyse(spec, target.profile, target.scenario)
    # attention cores: the op models' estimate interpolated over the search nodes (not exact off the
    # polynomial flops/bytes the roofline used); the candidates shown are re-analysed exactly
    assert est["decode_s"][0] == pytest.approx(w.steps["decode"].estimate_s, rel=0.1)
    assert est["prefill_s"][0] == pytest.approx(w.steps["prefill"].estimate_s, rel=0.1)


def test_routed_expert_rows_uniform_routing_and_top_k_above_experts():
    from colint.analysis.gemm_rows import routed_expert_rows

    # 256 tokens x top-8 over 256 experts: 1 - (1 - 1/32)^256 of them touched, 2048 rows over those
    touched, rows = routed_expert_rows(256, 8, 256)
    assert touched == 1.0 - (1.0 - 8 / 256) ** 256 and rows == 9  # ceil(2048 / (256 * 0.99970...)) = ceil(8.002)
    assert routed_expert_rows(1, 1, 64) == (1.0 / 64, 1)  # one token touches one expert, one row
    assert routed_expert_rows(4, 8, 4) == (1.0, 8)  # top-k > E (CL003) clamps: every expert, 4 x 8 / 4 rows


def test_the_busiest_rank_touches_the_experts_its_extra_picks_reach():
    """4 tokens, top-8 of 256 experts over 8 ranks: the mean rank holds 4 picks on 3.8 of its 32 experts; the
    busiest holds 6.80 (busiest_rank_factor 1.700) and so touches 1 - (31/32)^(4 x 1.700 x 8 / 8) of its 32:
    6.21 experts, each read once: 2 rows (ceil of 6.80 / 6.21). A step at small batch reads the busiest rank's
    touched experts' weights, not the mean rank's."""
    from colint.analysis.gemm_rows import routed_expert_rows
    from colint.analysis.moe import busiest_rank_factor

    factor = busiest_rank_factor(4, 8, 256, 8)
    touched, rows = routed_expert_rows(4, 8, 256, 8)
    assert touched == pytest.approx(1 - (1 - 8 / 256) ** (4 * factor), rel=1e-12)
    assert 32 * touched == pytest.approx(6.2126, abs=1e-4) and rows == 2
    assert 32 * routed_expert_rows(4, 8, 256)[0] == pytest.approx(3.8164, abs=1e-4)  # the mean rank
    # one rank: nothing is busier than the mean
    assert routed_expert_rows(4, 8, 256, 1) == routed_expert_rows(4, 8, 256)


@pytest.mark.parametrize(
    "name",
    [
        "deepseek__DeepSeek-V3.json",
        "qwen3.5-moe__Qwen3.5-397B-A17B.json",
        "gemma__gemma-3-27b.json",
        "nemotron-h__NVIDIA-Nemotron-3-Super-120B-A12B-FP8.json",
        "llama3__Meta-Llama-3.1-405B.json",
        "gpt-oss__gpt-oss-120b.json",
    ],
)
def test_memory_at_is_analyse_memory(name):
    """CL801's deployment search prices candidates with memory_at: the very MemoryFit analyse computes (MLA,
    sliding windows, Mamba state, MoE shards, pp splits; two GPUs, two scenarios, two concurrencies); and the
    floor that lets it skip candidates never exceeds that footprint (else a fitting deployment could be skipped)."""
    import os

    from colint.analysis.footprint import footprint_floor, memory_at
    from colint.analysis.deployments import deployments

    spec = normalize(
        load(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpus", "hf", name))
    )
    compared, tight = 0, 0.0
    for gpu in ("b200", "h100-sxm"):
        profile = load_profile(gpu)
        for scenario in ("throughput", "latency"):
            base = make_scenario(scenario, gpu=profile.name)
            for tp, ep, pp in deployments(spec, profile, base)[:24]:
                for conc, kvp in ((1, 1), (base.decode_concurrency, 1), (base.decode_concurrency, 2)):
                    sc = replace(base, tp=tp, ep=ep, pp=pp, decode_concurrency=conc, kvp=kvp)
                    fit = memory_at(spec, profile, sc)
                    assert fit == analyse(spec, profile, sc).memory, (gpu, scenario, tp, ep, pp, kvp)
                    floor = footprint_floor(spec, sc).bytes_per_gpu(spec, sc)
                    assert floor <= fit.total_bytes * (1 + 1e-12), (gpu, scenario, tp, ep, pp, kvp)
                    tight = max(tight, floor / fit.total_bytes)
                    compared += 1
    assert compared >= 40
    assert tight > 0.5  # a floor that bounds something: the weights, KV or activations share of a candidate


@pytest.mark.parametrize("gpu, ep, overlap", [("b200", 64, "auto"), ("b200", 16, "off"), ("h100-sxm", 32, "on")])
def test_steps_on_a_wider_domain_equal_a_second_analysis(gpu, ep, overlap):
    """CL504's counterfactual (workload.steps_on_domain) re-prices only the step's sum from the workload's own rows:
    it must equal analysing again on the widened profile, regime by regime, to the last bit."""
    from colint.analysis.scale_out import _widened
    from colint.analysis.workload import _analyse, steps_on_domain

    spec = _spec("tests/corpus/hf/deepseek__DeepSeek-V3.json")
    p = load_profile(gpu)
    sc = replace(make_scenario("throughput", ep=ep, gpu=gpu), ep_overlap=overlap)
    wide = _widened(p, ep)
    assert wide.domain_size == ep and p.domain_size == 8
    again = _analyse(spec, wide, sc).steps
    fast = steps_on_domain(analyse(spec, p, sc), wide)
    assert {r: s.estimate_s for r, s in fast.items()} == {r: s.estimate_s for r, s in again.items()}
    assert {r: s.comm_s for r, s in fast.items()} == {r: s.comm_s for r, s in again.items()}
    assert fast["prefill"].estimate_s < analyse(spec, p, sc).steps["prefill"].estimate_s  # the domain costs


def test_weight_bytes_count_each_gemm_in_the_format_its_row_runs():
    # the shared expert's scalar gate (N = 1) runs in BF16 like the router (inventory.is_gate): the footprint
    # counts its weights in BF16 too (it counted them in NVFP4 while the step timed them in BF16)
    spec = _spec("tests/corpus/hf/qwen2-moe__Qwen1.5-MoE-A2.7B-Wikihow-finetune.json")
    w = analyse(spec, load_profile("b200"), make_scenario("throughput", dtype="nvfp4"))
    kind = next(k for k in spec.layer_kinds if k.ffn.kind == "moe")
    rows = [r for r in w.gemms["prefill"] if r.kind == kind.name]
    assert {r.name: r.dtype for r in rows if r.dtype != "nvfp4"} == {
        "moe.router": "bf16",
        "moe.shared_expert_gate": "bf16",
    }
    held = sum(r.n * r.k * (r.gemm.count if r.parallel == "expert" else 1) * FORMATS[r.dtype][2] for r in rows)
    (cost,) = {c.weight_bytes for c in w.layer_costs if c.kind == kind.name}
    assert cost == held


@pytest.mark.parametrize(
    "gpu, dtype, wider_i",
    [
        # BF16 K tiles are 64 deep: an expert's 768 / 8 = 96-deep down GEMM runs as 128, as does 1024 / 8
        ("h100-sxm", "bf16", 1024),
        # NVFP4 tiles hold 256 packed values (128 B; the scales travel apart): 96 runs as 256, as does 2048 / 8
        ("b200", "nvfp4", 2048),
    ],
)
def test_expert_down_gemm_pads_its_k_to_whole_tiles(tmp_path, gpu, dtype, wider_i):
    # a K tile never spans two experts (ops_moe.expert_k_padded, as the MoE op model calibrated on the
    # measured kernels): Qwen3-30B-A3B's experts at tp=8 cost the step what wider ones filling the tile do
    import json

    cfg = json.loads(open("tests/corpus/hf/qwen3-moe__Qwen3-30B-A3B.json").read())
    wider = tmp_path / "config.json"
    wider.write_text(json.dumps({**cfg, "moe_intermediate_size": wider_i}))
    prof = load_profile(gpu)
    sc = make_scenario("throughput", dtype=dtype, tp=8)

    def down(path):
        w = analyse(_spec(path), prof, sc)
        (row,) = {r for r in w.gemms["decode"] if r.parallel == "expert" and "down" in r.name}
        return row

    narrow, full = down("tests/corpus/hf/qwen3-moe__Qwen3-30B-A3B.json"), down(str(wider))
    assert (narrow.k, full.k) == (96, wider_i // 8)  # the row reports the expert's own K
    assert (narrow.m, narrow.n, narrow.instances) == (full.m, full.n, full.instances)
    assert narrow.layer_s == full.layer_s and narrow.time.estimate_s == full.time.estimate_s


def test_kvp_exchange_leaves_the_domain_with_its_group():
    # a KV-parallel group's GPUs sit tp apart: at tp=8 x kvp=2 on an 8-GPU HGX domain each pair spans two
    # domains, so its decode exchange runs at the NIC's bandwidth, not NVLink's (it was priced on NVLink)
    from colint.analysis.collectives import link_bytes_per_s
    from colint.analysis.step_extras import kvp_exchange_s

    h100 = load_profile("h100-sxm")
    nv, nic = h100.interconnect_gbps * 1e9 / 2, h100.scale_out_gbps * 1e9 / 2
    assert link_bytes_per_s(h100, 2, all_to_all=True, span=8) == nv  # tp=4 x kvp=2: one domain
    assert link_bytes_per_s(h100, 2, all_to_all=True, span=16) == nic  # the peer is in the other domain
    assert link_bytes_per_s(h100, 4, all_to_all=True, span=16) == pytest.approx(1.5 * nic)  # 2 of 3 peers out
    assert link_bytes_per_s(h100, 16, all_to_all=True, span=16) == link_bytes_per_s(h100, 16, all_to_all=True)
    # the step's exchange at tp=8 x kvp=2 is the one of a 16-GPU domain whose links run at the NIC's speed
    kind = _spec("tests/corpus/hf/llama3__Llama-3.3-70B-Instruct.json").layer_kinds[0]
    sc = make_scenario("throughput", tp=8, kvp=2)
    nic_domain = replace(h100, interconnect_gbps=h100.scale_out_gbps, domain_size=16)
    assert kvp_exchange_s(kind, 256, sc, h100) == kvp_exchange_s(kind, 256, sc, nic_domain)
    assert kvp_exchange_s(kind, 256, sc, h100) > 1.2 * kvp_exchange_s(kind, 256, sc, replace(h100, domain_size=16))


def test_mtp_layers_count_in_weight_memory():
    # issue 29: DeepSeek-V3's nextn (MTP) layer is loaded by serving engines for speculative decoding: its weights sit
    # on the last stage beside the LM head. One layer like the last decoder layer (sharded as it is) + eh_proj 2H -> H
    from colint.analysis.footprint import _layer_weight_bytes, memory_at

    spec = _spec("tests/corpus/hf/deepseek__DeepSeek-V3.json")
    assert spec.mtp_layers == 1
    no_mtp = replace(spec, mtp_layers=0, mtp_params=0)
    profile = load_profile("b200")
    sc = make_scenario("throughput", dtype="fp8_block", ep=8, concurrency=1, gpu="b200")
    with_, without = analyse(spec, profile, sc), analyse(no_mtp, profile, sc)
    h, b_w = spec.hidden_size, FORMATS["fp8_block"][2]
    # the last decoder layer's share on one GPU: routed experts split over ep=8, attention and shared expert whole
    last_layer = _layer_weight_bytes(spec, sc)[-1]
    assert 1.0e9 < last_layer < 2.0e9  # ~11.5B params of one MoE layer, 256 experts over 8 GPUs, in FP8 blocks
    delta = with_.memory.weight_bytes_per_gpu - without.memory.weight_bytes_per_gpu
    assert delta == pytest.approx(last_layer + 2.0 * h * h * b_w)
    # the deployment search's footprint (memory_at) agrees with the time model's to the byte
    assert memory_at(spec, profile, sc).weight_bytes_per_gpu == with_.memory.weight_bytes_per_gpu
