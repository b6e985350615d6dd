"""Op models (issue 12): attention, MLA, MoE, collectives against the vendored measurements, the
`colint ops` command, and the step built from them (a layer's time is the sum of its parts)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from colint.analysis.collectives import collective, moe_dispatch_combine
from colint.analysis.ops_attention import context_attention, decode_attention, mla_decode
from colint.analysis.ops_moe import busiest_rank, moe_layer
from colint.hardware_profiles import load_profile

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

# Accuracy on the vendored sample (scripts/calibrate_ops.py): the targets (median <= 0.25,
# p90 <= 0.8, rho >= 0.95 of |log2(est/measured)|) where the model meets them; where it does not yet,
# the figure measured when this test was written (+0.05) so that a regression fails.
# docs/time-model.md "Op model accuracy" lists which families miss the target and by how much.
TARGET = (0.25, 0.8, 0.95)
KNOWN_MISSES = {  # (gpu, family): (median max, p90 max, rho min)
    ("b200", "generation_attention"): (0.25, 0.8, 0.93),
    ("b200", "moe_a2a deepep_ll"): (0.25, 0.8, 0.80),
    ("h100-sxm", "mla_generation"): (0.25, 0.8, 0.89),
    ("h100-sxm", "moe_a2a deepep_ll"): (0.25, 0.8, 0.73),
}


@pytest.fixture(scope="module")
def accuracy():
    import calibrate_ops

    return {(r["gpu"], r["family"]): r for r in calibrate_ops.evaluate(calibrate_ops.load(None))}


def test_every_family_measured_on_every_gpu(accuracy):
    fams = {f for _, f in accuracy}
    for gpu in ("a100-sxm-80gb", "h100-sxm", "b200"):
        for fam in (
            "generation_attention",
            "context_attention",
            "mla_generation",
            "mla_context",
            "moe",
            "all_reduce (custom)",
            "nccl all_reduce",
            "nccl all_gather",
            "nccl reduce_scatter",
            "nccl alltoall",
        ):
            assert (gpu, fam) in accuracy, (gpu, fam)
    assert {"moe_a2a deepep_ht", "moe_a2a deepep_ll"} <= fams  # H100 and B200 only (no A100 file)


def test_accuracy_within_target_or_recorded_bound(accuracy):
    for key, r in accuracy.items():
        med, p90, rho = KNOWN_MISSES.get(key, TARGET)
        m = r["model"]
        assert m["median"] <= med and m["p90"] <= p90 and m["rho"] >= rho, (key, m)
        # the model beats the plain roofline everywhere
        assert m["median"] < r["roofline"]["median"], key


def test_decode_attention_kv_bound_at_long_context_floor_at_short():
    h100 = load_profile("h100-sxm")
    short, _ = decode_attention(1, 2, 32, 8, 128, 0, "bfloat16", h100)
    assert short == pytest.approx(8.8e-6, rel=0.1)  # the launch/latency floor (measured 8.5 us)
    long_, sol = decode_attention(1, 65536, 32, 8, 128, 0, "bfloat16", h100)
    kv_bytes = 65536 * 2 * 8 * 128 * 2
    assert sol == pytest.approx(kv_bytes / h100.memory_bytes_per_s, rel=0.01)
    assert 1.0 < long_ / sol < 1.6  # measured 112.8 us = 1.41x the KV-read roofline
    # fp8 KV halves the bytes
    assert decode_attention(1, 65536, 32, 8, 128, 0, "fp8", h100)[1] == pytest.approx(sol / 2, rel=0.01)


def test_context_attention_causal_tiles_and_mla_absorbed_latent():
    b200 = load_profile("b200")
    full, sol_full = context_attention(1, 8192, 32, 8, 128, 0, "bfloat16", "bfloat16", b200, causal=False)
    causal, sol_causal = context_attention(1, 8192, 32, 8, 128, 0, "bfloat16", "bfloat16", b200)
    assert sol_causal / sol_full == pytest.approx(8193 / 2 / 8192, rel=1e-3)  # causal halves the FLOPs
    assert 0.45 < causal / full < 0.6
    # MLA decode reads 576 latent elements per token, whatever the heads
    _, sol = mla_decode(64, 32768, 16, 512, 64, "bfloat16", b200)
    assert sol == pytest.approx(64 * 32768 * 576 * 2 / b200.memory_bytes_per_s, rel=0.01)


def test_moe_busiest_rank_under_power_law():
    rows_bal, touched_bal = busiest_rank(1024, 8, 256, 8, 0.0)
    assert rows_bal == 1024 * 8 / 8 and touched_bal == 32
    rows_hot, _ = busiest_rank(1024, 8, 256, 8, 1.2)
    assert rows_hot > 1.5 * rows_bal  # the rank with the hottest expert does more
    assert busiest_rank(4096, 1, 256, 8, 1.2)[0] > busiest_rank(4096, 1, 256, 8, 1.01)[0]  # hotter with alpha


def test_collectives_latency_and_bandwidth_terms():
    h100 = load_profile("h100-sxm")
    small, _ = collective("all_reduce", 256 * 2, 8, h100)
    big, sol = collective("all_reduce", 2**28 * 2, 8, h100)
    assert 10e-6 < small < 20e-6  # latency-bound (measured 15 us)
    assert sol == pytest.approx(2 * 7 / 8 * 2**29 / 450e9, rel=1e-6)
    assert big / sol == pytest.approx(1 / 0.7, rel=0.03)  # bandwidth-bound at link_efficiency
    ag, _ = collective("all_gather", 2**28 * 2, 8, h100)
    assert ag < 0.6 * big  # (n-1)/n vs 2(n-1)/n
    assert collective("all_reduce", 2**20, 1, h100) == (0.0, 0.0)
    d, _ = moe_dispatch_combine("dispatch", 4096, 7168, 8, 8, "nvfp4", h100)
    d16, _ = moe_dispatch_combine("dispatch", 4096, 7168, 8, 8, "bfloat16", h100)
    assert d < d16  # NVFP4 on the wire


def test_layer_time_is_the_sum_of_its_parts():
    from colint.analysis.scenario import make_scenario
    from colint.analysis.workload import analyse
    from colint.loading import load
    from colint.normalize import normalize

    spec = normalize(load(str(ROOT / "tests/corpus/hf/deepseek__DeepSeek-V3.json")))
    w = analyse(spec, load_profile("b200"), make_scenario("throughput", dtype="fp8", tp=8, ep=8))
    for regime, field_ in (("decode", "decode_s"), ("prefill", "prefill_s")):
        for cost in w.layer_costs:
            parts = w.layer_parts[regime][cost.kind]
            assert sum(parts.values()) == pytest.approx(getattr(cost, field_), rel=1e-12)
            assert parts["collectives"] > 0 and parts["attention_core"] > 0
        step = w.steps[regime]
        layers = sum(sum(w.layer_parts[regime][c.kind].values()) for c in w.layer_costs)
        head = next(r.layer_s for r in w.gemms[regime] if r.kind == "")
        assert step.estimate_s == pytest.approx(layers + head, rel=1e-9)
        assert step.comm_s == pytest.approx(sum(w.layer_parts[regime][c.kind]["collectives"] for c in w.layer_costs))
        assert 0 < step.collective_share < 1


def _colint(*args):
    return subprocess.run([sys.executable, "-m", "colint", *args], capture_output=True, text=True, cwd=ROOT)


def test_ops_cli_adds_estimates_and_notes_unknown_ops(tmp_path):
    src = ROOT / "tests/data/measured/ops_generation_attention_b200_sxm.csv"
    r = _colint("ops", "--gpu", "b200", "--from-csv", str(src))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("# Measured generation_attention")
    assert lines[1].endswith(",latency,estimate_ms,sol_ms")
    assert len(lines) == 2 + 300
    first = lines[2].split(",")
    assert float(first[-2]) == pytest.approx(float(first[-3]), rel=0.5)  # estimate near the measured latency
    csv = tmp_path / "x.csv"
    csv.write_text("op_name,num_gpus,message_size,latency\nall_reduce,8,1048576,0.0355\nmystery_op,8,1,1\n")
    r = _colint("ops", "--gpu", "h100-sxm", "--from-csv", str(csv))
    assert r.returncode == 0
    assert r.stdout.splitlines()[2] == "mystery_op,8,1,1,,"
    assert "no model for op_name 'mystery_op'" in r.stderr
    csv.write_text("num_gpus\n8\n")
    r = _colint("ops", "--from-csv", str(csv))
    assert r.returncode != 0 and "op_name" in r.stderr and "Traceback" not in r.stderr


def test_a100_mla_decode_walks_the_context_without_split_kv():
    # sm80 has no FlashMLA / XQA-MLA: one CTA per sequence walks the context (MEAS: A100 0.116 us per
    # cached token at b=1 whatever the heads), where H100's split-KV kernel spreads it over the SMs
    from colint.analysis.ops_attention import mla_decode

    a100, h100 = load_profile("a100-sxm-80gb"), load_profile("h100-sxm")
    one_head = mla_decode(1, 65536, 1, 512, 64, "bfloat16", a100)[0]
    all_heads = mla_decode(1, 65536, 128, 512, 64, "bfloat16", a100)[0]
    assert all_heads == pytest.approx(one_head, rel=0.05)
    assert one_head == pytest.approx(65536 * 165 / 1410e6, rel=0.05)  # 7.7 ms (measured 7.76 ms)
    assert mla_decode(1, 65536, 128, 512, 64, "bfloat16", h100)[0] < one_head / 20


def test_nccl_alltoall_switches_from_ll_to_simple():
    # point-to-point slices ride LL until Simple's rendezvous pays: H100 n=2 measured 6.2 us at 512 B,
    # 14.5 us at 512 KB, 21.2 us at 4 MB (half elements x 2 B)
    from colint.analysis.collectives import collective

    h100 = load_profile("h100-sxm")
    small, mid, big = (collective("alltoall", b, 2, h100)[0] * 1e6 for b in (512, 512 * 1024, 4 * 1024 * 1024))
    assert small == pytest.approx(6.2, rel=0.25) and mid == pytest.approx(14.5, rel=0.25)
    assert big == pytest.approx(21.2, rel=0.25)


def test_deepep_high_throughput_is_sm_bound_on_b200():
    # 24 SMs copy the tokens: B200's NVLink 5 is twice H100's, its HT dispatch is not faster
    # (MEAS: 65,536 tokens x 7,168 BF16, top-8 over EP 8: H100 11.8 ms, B200 13.4 ms)
    from colint.analysis.collectives import moe_dispatch_combine

    h = moe_dispatch_combine("dispatch", 65536, 7168, 8, 8, "bfloat16", load_profile("h100-sxm"))[0]
    b = moe_dispatch_combine("dispatch", 65536, 7168, 8, 8, "bfloat16", load_profile("b200"))[0]
    assert b >= h * 0.95
    # within the family's p90 (0.8): 19 ms, the per-copy cycles fitted with the NVFP4 rows overshoot BF16 here
    assert abs(math.log2(b * 1e3 / 13.4)) < 0.6


def test_power_law_routing_is_the_benchmarks_generator():
    # aiconfigurator draws each expert's load from p(x) ∝ x^-α on [1, 0.8·tokens] and measures the busiest EP
    # rank. α ≈ 1 is log-uniform: the hottest of 256 experts is near 0.8·4096 against a mean of
    # (3277 - 1) / ln 3277 = 405, so it takes ~3,180 / (256·405) of the 32,768 picks: ~1,000 rows, not the
    # ranked (Zipf) share 1/H(256) = 5,300 rows capped at the 4,096 tokens
    rows, touched = busiest_rank(4096, 8, 256, 256, 1.01)
    assert 850 < rows < 1150 and touched == 1
    # one rank holds every pick; the coldest experts round to no rows
    rows, touched = busiest_rank(4096, 8, 256, 1, 1.01)
    assert rows == pytest.approx(32768, rel=0.001) and 200 < touched < 256
    assert busiest_rank(4096, 8, 256, 256, 1.01) == busiest_rank(4096, 8, 256, 256, 1.01)  # seeded by the shape


def test_deepgemm_masked_moe_pays_every_local_expert():
    b200 = load_profile("b200")

    def us(ep: int) -> float:
        return moe_layer(1, 2048, 512, 8, 256, 1, ep, "balanced", "fp8_block", b200, masked=True)[0] * 1e6

    # one token touches 8 experts either way; the masked layout walks all 256 local groups at ep 1
    # (measured 97 us) against one at ep 256 (measured ~27-32 us at 1 token)
    assert us(1) == pytest.approx(97.3, rel=0.15)
    assert us(256) == pytest.approx(30.0, rel=0.15)
    assert us(1) - us(256) == pytest.approx(255 * 0.28, rel=0.05)


def test_deepep_ll_fp4_combine_pays_its_quantize_steps():
    b200 = load_profile("b200")

    def us(dtype: str) -> float:
        return moe_dispatch_combine("combine", 8, 7168, 8, 8, dtype, b200, backend="deepep_ll", experts=256)[0] * 1e6

    assert us("fp4") == pytest.approx(60.9, rel=0.2)  # measured at 8 tokens per rank, ep 8
    assert us("bfloat16") == pytest.approx(43.9, rel=0.2)
    assert us("fp4") - us("bfloat16") == pytest.approx(12.5)  # the same bytes (BF16's), plus the fixed steps


@pytest.mark.parametrize(
    ("gpu", "hidden", "topk", "experts", "measured_us"),
    [
        # DeepEP LL combine at 2 tokens per rank, ep 8 (BF16): B200's floor rises with the top-k picks and the
        # warp groups per SM (256 experts: 2 per SM, 384: 3); H100's stays near flat
        ("b200", 4096, 6, 256, 36.8),
        ("b200", 7168, 8, 256, 43.5),
        ("b200", 7168, 8, 384, 49.1),
        ("h100-sxm", 4096, 6, 256, 26.7),
        ("h100-sxm", 7168, 8, 256, 29.0),
    ],
)
def test_deepep_ll_combine_floor_follows_topk_and_warp_groups(gpu, hidden, topk, experts, measured_us):
    p = load_profile(gpu)
    est = moe_dispatch_combine("combine", 2, hidden, topk, 8, "bfloat16", p, backend="deepep_ll", experts=experts)[0]
    assert est * 1e6 == pytest.approx(measured_us, rel=0.1)


def test_deepep_ll_combine_orders_b200_floors_by_topk_then_experts():
    b200 = load_profile("b200")

    def us(hidden: int, topk: int, experts: int) -> float:
        return moe_dispatch_combine(
            "combine", 1, hidden, topk, 8, "bfloat16", b200, backend="deepep_ll", experts=experts
        )[0]

    # measured at one token per rank: 36.8 (h4096 k6 E256) < 44.9 (h7168 k8 E256) < 49.9 (h7168 k8 E384) us
    assert us(4096, 6, 256) < us(7168, 8, 256) < us(7168, 8, 384)
    assert us(7168, 8, 384) - us(7168, 8, 256) == pytest.approx(2.0e-6)  # one more warp group per SM


def test_deepep_ll_dispatch_waits_then_sends():
    b200 = load_profile("b200")

    def us(tokens: int, dtype: str) -> float:
        return (
            moe_dispatch_combine("dispatch", tokens, 7168, 8, 8, dtype, b200, backend="deepep_ll", experts=256)[0] * 1e6
        )

    assert us(16, "bfloat16") == pytest.approx(70.0)  # flat: the fixed wait (measured 67-75 at <= 96 tokens)
    assert us(16, "nvfp4") == pytest.approx(73.0)  # plus the NVFP4 cast (measured median 72.7)
    assert us(256, "bfloat16") == pytest.approx(110.5, rel=0.15)  # the sends outlast the wait (measured 110.5)
    assert us(256, "nvfp4") == pytest.approx(73.0)  # NVFP4's bytes still hide under it (measured 74.5)


def test_moe_helper_kernels_pay_every_pick_of_every_token():
    b200 = load_profile("b200")
    # a wide-EP rank (ep 32: 16 local experts) of a top-k 22 layer: its GEMMs are small, but its helper
    # kernels sort all 1,024 x 22 picks; measured 121.7 us (NVFP4)
    args = (1024, 2048, 5120, 22, 512, 2, 32, "power_law_1.2", "nvfp4", b200)
    est = moe_layer(*args, gated=False)[0]
    assert est == pytest.approx(121.7e-6, rel=0.3)
    one_pick_ns = (moe_layer(*args, gated=False)[0] - moe_layer(512, *args[1:], gated=False)[0]) / (512 * 22)
    assert one_pick_ns > 1e-9  # at least the sort's 1 ns per pick, plus the rank's rows


def test_expert_k_tile_holds_128_bytes_of_packed_values():
    # block scales travel in their own tensor: NVFP4 / FP8-block tiles hold 256 / 128 values, not 227 / 124
    from colint.analysis.ops_moe import expert_k_padded, expert_k_tile

    tiles = {f: expert_k_tile(f) for f in ("bf16", "fp8", "fp8_block", "mxfp8", "nvfp4", "mxfp4", "int4_wo")}
    assert tiles == {"bf16": 64, "fp8": 128, "fp8_block": 128, "mxfp8": 128, "nvfp4": 256, "mxfp4": 256, "int4_wo": 256}
    assert [expert_k_padded(k, "nvfp4") for k in (96, 256, 257)] == [256, 256, 512]


def test_blackwell_ultra_context_attention_pays_half_the_softmax_exponentials():
    """B300's SFU runs twice B200's MUFU.EX2 per SM per clock (blackwell-ultra): a long causal prefill, where the
    exponentials rival the MMAs, is ~1.19x faster than on B200; with B200's SFU rate it would be 1.04x (the same
    148 SMs and per-SM MMA rate; the clocks and the fixed costs make the rest)."""
    from dataclasses import replace

    from colint.hardware_profiles import time_model

    b200, b300 = load_profile("b200"), load_profile("b300")
    ultra = time_model(b300)
    as_b200 = replace(ultra, softmax_exp_per_clk=time_model(b200).softmax_exp_per_clk)
    args = (1, 8192, 32, 8, 128, 0, "bfloat16", "bfloat16")
    on_b200 = context_attention(*args, b200)[0]
    assert on_b200 / context_attention(*args, b300, ultra)[0] == pytest.approx(1.191, abs=0.001)
    assert on_b200 / context_attention(*args, b300, as_b200)[0] == pytest.approx(1.036, abs=0.001)
