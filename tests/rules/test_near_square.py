"""CL1xx near-square: limit intensity vs ridge, memory-bound by shape, tiny experts (real engine)."""

from __future__ import annotations

import math

import pytest

from colint.analysis.scenario import make_scenario
from colint.analysis.workload import analyse
from colint.checking import CheckOptions, Target, check_spec
from colint.hardware_profiles import load_profile
from colint.rules.near_square import limit_intensity, square_m_star
from tests.rules.helpers import corpus, run

CORPUS = "tests/corpus"
THIN_MOE = "tests/rules/fixtures/moe_thin_experts.json"  # H = 8192, moe_intermediate_size = 512, 256 experts, top-8


def blog_target(ep: int) -> Target:
    """GB300, NVFP4 in, FP8 out (the blog's Table 2 assumptions); prefill M per expert = 8192·ep·8/256."""
    p = load_profile("gb300")
    return Target("gb300", p, make_scenario("throughput", dtype="nvfp4", out_dtype="fp8", ep=ep, gpu="gb300"))


@pytest.mark.parametrize("ep, m, math_us, read_us, write_us", [
    (1, 256, 0.14, 0.30, 0.26), (8, 2048, 1.15, 0.37, 2.10), (64, 16384, 9.16, 0.89, 16.8)])
def test_blog_table2_ffn2_is_memory_bound_at_every_m(ep, m, math_us, read_us, write_us):
    spec = corpus(THIN_MOE)
    t = blog_target(ep)
    row = next(r for r in analyse(spec, t.profile, t.scenario).gemms["prefill"] if r.name == "moe.experts.down_proj")
    assert (row.m, row.n, row.k) == (m, 8192, 512)
    assert row.time.math_s * 1e6 == pytest.approx(math_us, abs=0.01)
    assert row.time.read_s * 1e6 == pytest.approx(read_us, abs=0.01)
    assert row.time.write_s * 1e6 == pytest.approx(write_us, abs=0.05)
    assert row.time.bound == "memory" and math.isinf(row.time.m_star)

    fs = check_spec(spec, [t], CheckOptions(select=["CL101"]))
    (f,) = fs
    assert (f.code, f.severity, f.key, f.line) == ("CL101", "warning", "moe_intermediate_size", 6)
    assert f.message == ("moe_intermediate_size 512: moe.experts.down_proj memory-bound at every M on gb300 in nvfp4 "
                         "(I∞ 989 FLOP/B <= ridge 1875 FLOP/B)")
    assert f.evidence["limit_intensity_flop_per_byte"] == 989.2  # 2·8192·512 / (512·0.5625 + 8192·1)
    assert f.evidence["ridge_flop_per_byte"] == 1875.0  # 15 PFLOP/s / 8 TB/s
    assert f.evidence["est_m_star_tokens"] is None and f.evidence["memory_bound_at_any_m"] is True
    assert f.fixes[0].safety == "display" and "K=1003" in f.fixes[0].title  # 16384·K > 1875·(0.5625·K + 8192)


def test_limit_intensity_formula():
    # (2/b)·NK/(N+K) with b_a = b_out: BF16 square 8192 -> 8192/2 = 4096... = 2·8192²/(8192·2 + 8192·2)
    assert limit_intensity(8192, 8192, "bf16", "bf16") == pytest.approx(4096.0)
    # the blog's FFN-2 (N = H = 8192, K = H'ₑ = 512), NVFP4 in (0.5625 B with scales), FP8 out: K pairs with the
    # input bytes and N with the output bytes, 2·8192·512 / (512·0.5625 + 8192·1) = 989 FLOP/B (N, K swapped: 1638)
    assert limit_intensity(8192, 512, "nvfp4", "fp8") == pytest.approx(2 * 8192 * 512 / (512 * 0.5625 + 8192))
    assert square_m_star("bf16", 281.25) == pytest.approx(281.25)


def test_tiny_expert_width_is_info():
    t = blog_target(1)
    (f,) = check_spec(corpus(THIN_MOE), [t], CheckOptions(select=["CL103"]))
    assert (f.code, f.severity, f.key, f.line) == ("CL103", "info", "moe_intermediate_size", 6)
    assert f.message == "moe_intermediate_size 512 is 1/16 of hidden size 8192: expert GEMMs are thin by construction"
    assert f.evidence["ratio"] == 0.0625


@pytest.mark.parametrize("tp", [1, 8])
@pytest.mark.parametrize("name", ["llama3__Meta-Llama-3.1-8B", "llama3__Llama-3.3-70B-Instruct", "qwen3__Qwen3-8B"])
def test_well_shaped_models_get_nothing(name, tp):
    assert run(f"{CORPUS}/hf/{name}.json", ["CL1"], tp=tp) == []


def test_deepseek_v3_experts_under_tp8_are_memory_bound_forever():
    fs = run(f"{CORPUS}/hf/deepseek__DeepSeek-V3.json", ["CL101"], tp=8)
    routed = next(f for f in fs if f.message.startswith("moe_intermediate_size"))
    assert (routed.severity, routed.key, routed.line) == ("warning", "moe_intermediate_size", 23)
    assert routed.evidence["gemms"] == [{"gemm": "moe.experts.down_proj", "n": 7168, "k": 256,
                                         "limit_intensity_flop_per_byte": 247.2}]
    # at tp=1 (or with EP) the expert K is 2048: no finding
    assert run(f"{CORPUS}/hf/deepseek__DeepSeek-V3.json", ["CL101"]) == []
    # tp=8, ep=8 is one attention group (experts see 256 x 8 / 256 tokens, not 8x that): the routed experts
    # now take little of the step and the TP8 shared expert (K 256) crosses the 1% reporting threshold
    fs = run(f"{CORPUS}/hf/deepseek__DeepSeek-V3.json", ["CL101"], tp=8, ep=8)
    assert [f.message.split(":")[0] for f in fs] == ["shared expert width 2048 at tp=8"]


def test_memory_bound_by_shape_in_prefill():
    (f,) = run(f"{CORPUS}/hf/mobilellm__MobileLLM-125M.json", ["CL102"])
    assert (f.severity, f.key, f.line) == ("warning", "num_attention_heads", 14)
    assert f.evidence["regime"] == "prefill" and f.evidence["m_tokens"] == 8192  # the scenario's: exact
    (g,) = f.evidence["gemms"]
    assert (g["gemm"], g["n"], g["k"]) == ("attn.o_proj", 576, 576)  # I∞ 288 FLOP/B, just above B200's 281
    assert g["est_m_star_tokens"] > 8192 >= 2 * f.evidence["square_m_star_tokens"]
    # M* comes from the roofline: it reads as an estimate; the prefill M is the scenario's, exact
    assert f.message == ("num_heads 9: attn.o_proj memory-bound in prefill at M=8192 tokens on b200; compute-bound "
                         f"only from est. M*={g['est_m_star_tokens']:.0f} ({f.evidence['square_m_star_tokens']:.0f} "
                         "for a square GEMM)")
    assert f.details[0].endswith(f"at M=8192 vs ridge 281 FLOP/B, est. M*={g['est_m_star_tokens']:.0f}")


def test_memory_bound_by_shape_rows_per_expert_read_as_an_estimate():
    # gpt-oss-20b at tp=8 (no EP): prefill gives 8192 x top-4 / 32 = 1024 rows per expert under uniform routing
    (f,) = run(f"{CORPUS}/hf/gpt-oss__gpt-oss-20b.json", ["CL102"], tp=8)
    g = f.evidence["gemms"][0]  # once, though its sliding and full attention layer kinds share the expert FFN
    assert [(x["gemm"], x["est_m_tokens"]) for x in f.evidence["gemms"]] == [("moe.experts.down_proj", 1024)]
    assert f.evidence["est_m_tokens"] == 1024 and "m_tokens" not in f.evidence
    assert len(f.details) == 2 and f.details[0].startswith("moe.experts.down_proj N=2880, K=360: ")
    assert f.message == ("moe_intermediate_size 2880: moe.experts.down_proj memory-bound in prefill at est. M=1024 "
                         f"tokens per expert on b200; compute-bound only from est. M*={g['est_m_star_tokens']:.0f} "
                         "(281 for a square GEMM)")


def test_expert_batch_near_a_square_gemms_m_star_is_not_a_shape_finding():
    # Qwen3-30B-A3B prefill: 512 tokens per expert, M* 567 vs 281 for a square GEMM: the batch, not the shape
    assert run(f"{CORPUS}/hf/qwen3-moe__Qwen3-30B-A3B.json", ["CL102"]) == []


def test_decode_at_concurrency_one_is_never_a_shape_finding():
    # at M = 1 every GEMM is memory-bound: a fact of decoding, not of the design
    for name in ("qwen3-moe__Qwen3-30B-A3B", "mobilellm__MobileLLM-125M", "llama3__Meta-Llama-3.1-8B"):
        fs = run(f"{CORPUS}/hf/{name}.json", ["CL102"], scenario="latency")
        assert [f for f in fs if f.evidence["regime"] == "decode"] == []


def test_routers_are_not_reported():
    fs = check_spec(corpus(THIN_MOE), [blog_target(8)], CheckOptions(select=["CL1"]))
    assert not any("router" in f.message for f in fs)


def test_near_ridge_limit_is_info():
    # Pythia-70M's o_proj (512 x 512, BF16) has I∞ 256 FLOP/B, within 10% of B200's 281: on the ridge
    fs = run(f"{CORPUS}/megatron/gpt-neox__pythia-70m.yaml", ["CL101"])
    assert [(f.severity, f.message) for f in fs] == [
        ("info", "num_heads 8: attn.o_proj on the ridge even at unbounded M on b200 in bf16 "
                 "(I∞ 256 FLOP/B <= ridge 281 FLOP/B)")]


def test_experts_thinned_by_expert_tp_get_the_ep_fix_first():
    # Qwen3-30B-A3B at tp=8: down_proj K = 768 / 8 = 96 (I∞ 92 FLOP/B); a whole expert (K=768) has I∞ 559 FLOP/B,
    # above B200's BF16 ridge, so EP over the same 8 GPUs is the first fix
    (f,) = [f for f in run(f"{CORPUS}/hf/qwen3-moe__Qwen3-30B-A3B.json", ["CL101"], tp=8)
            if f.key == "moe_intermediate_size"]
    assert f.severity == "warning"
    assert f.fixes[0].title == ("deploy the experts with ep=8 instead of expert tp=8: a whole expert's "
                                "moe.experts.down_proj has N=2048, K=768, I∞ 559 FLOP/B above the ridge 281")
    assert f.fixes[0].safety == "display" and f.fixes[1].title.startswith("widen K=96 of moe.experts.down_proj")
    # rows per expert (uniform routing) and the roofline times are estimates and say so
    assert f.details[1].startswith("moe.experts.down_proj N=2048, K=96: I∞ 92 FLOP/B; at prefill est. M=512: "
                                   "intensity 78 FLOP/B, est. math ")


def test_memory_bound_at_any_batch_lists_each_distinct_gemm_once():
    # Gemma-3-4B at tp=8: o_proj K = 8 heads x 256 / 8 = 256; its sliding and full layer kinds share the shape
    (f,) = run(f"{CORPUS}/hf/gemma__gemma-3-4b-it.json", ["CL101"], tp=8)
    assert [(g["gemm"], g["n"], g["k"]) for g in f.evidence["gemms"]] == [("attn.o_proj", 2560, 256)]
    assert [d.split(":")[0] for d in f.details] == ["attn.o_proj N=2560, K=256", "est. 3.2% of the prefill step, "
                                                   "1.9% of the decode step (estimate"]
