"""Serving modes of `colint pareto` (issue 31): aggregated serving charges each request's prefill to the decode
GPUs, disaggregated sizes a prefill pool beside the decode pool, decode is the decode step alone; --total-gpus
bounds the deployments and pools; --ttft-limit leaves out slow first tokens. Each figure is checked against
analyse's own step times, recomputed here."""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace

import pytest

from colint.analysis.frontier import Deployment, frontier, scenario_for
from colint.analysis.scenario import make_scenario
from colint.analysis.serving import Serving, choose_pools, prefill_cost
from colint.analysis.workload import analyse
from colint.cli.main import main
from colint.hardware_profiles import load_profile
from colint.loading import load
from colint.normalize import normalize
from colint.design.pareto import serving_for

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLAMA70B = os.path.join(ROOT, "examples", "llama-3.3-70b.json")
QWEN30B = os.path.join(ROOT, "tests", "corpus", "hf", "qwen3-moe__Qwen3-30B-A3B.json")
ISL, OSL = 4000, 500


def _setup(path, gpu):
    spec, profile = normalize(load(path)), load_profile(gpu)
    return spec, profile, make_scenario("throughput", gpu=profile.name, context=ISL + OSL)


@pytest.fixture(scope="module")
def llama_h100():
    spec, profile, sc = _setup(LLAMA70B, "h100-sxm")
    served = {m: frontier(spec, profile, sc, LLAMA70B, serving=Serving(m, ISL, OSL)) for m in ("aggregated", "decode")}
    return spec, profile, sc, served


def test_aggregated_throughput_is_decode_throughput_times_the_step_ratio(llama_h100):
    """At every aggregated frontier point: a step carrying one 4000-token chunk is the decode step at B + 4000
    tokens with its attention cores swapped for B sequences' decode cores and the chunk's prefill cores;
    B / OSL prompts start per step, so the step averages T = ITL + B / OSL x (mixed - ITL); tok/s/GPU is the
    decode-only figure x ITL / T; a user's TPOT carries the other B - 1 sequences' prompts, ITL + (B - 1) / OSL x
    (mixed - ITL) (1 / ITL for one sequence alone); TTFT is the one mixed step the prompt rides in."""
    spec, profile, sc, served = llama_h100
    front = served["aggregated"].frontier
    assert len(front) >= 5
    for p in front:
        d, b = p.deployment, p.concurrency
        w = analyse(spec, profile, scenario_for(sc, d, b))
        wc = analyse(spec, profile, scenario_for(sc, d, b + ISL))  # ISL <= 8192 prefill tokens: one chunk
        wp = analyse(spec, profile, replace(scenario_for(sc, d, 1), context=ISL))
        seqs = 8192 // ISL  # prompts per prefill forward of 8192 tokens
        core_per_token = wp.steps["prefill"].attention_core_s / (ISL * seqs)
        itl = w.steps["decode"].estimate_s
        mixed = (
            wc.steps["decode"].estimate_s
            - wc.steps["decode"].attention_core_s
            + w.steps["decode"].attention_core_s
            + ISL * core_per_token
        )
        step = itl + b / OSL * (mixed - itl)
        decode_only = b / itl / d.group_gpus
        assert p.itl_s == pytest.approx(itl, rel=1e-9)
        assert p.tokens_per_s_per_gpu == pytest.approx(decode_only * itl / step, rel=1e-9)
        tpot = itl + (b - 1) / OSL * (mixed - itl)
        assert p.tokens_per_s_per_user == pytest.approx(1 / tpot, rel=1e-9)
        assert p.tpot_s == pytest.approx(tpot, rel=1e-9) and p.tpot_s < p.step_s and (p.tpot_s == p.itl_s) == (b == 1)
        assert p.ttft_s == pytest.approx(mixed, rel=1e-9)
        assert mixed > itl  # the chunk costs time: aggregated is never faster than decode alone


def test_aggregated_frontier_is_below_the_decode_frontier(llama_h100):
    """Charging prefill lowers throughput at every interactivity both reach (same deployments, same grid)."""
    _spec, _profile, _sc, served = llama_h100
    agg, dec = served["aggregated"], served["decode"]
    for u in (20.0, 50.0):
        assert agg.throughput_at(u) < dec.throughput_at(u)
    assert [(p.deployment, p.concurrency, p.itl_s) for p in agg.points] == [
        (p.deployment, p.concurrency, p.itl_s) for p in dec.points
    ]
    assert all(p.prefill_charge_s == 0.0 and p.ttft_s == p.ftl_s for p in dec.points)


def test_decode_mode_is_the_frontier_without_serving(llama_h100):
    spec, profile, sc, served = llama_h100
    plain = frontier(spec, profile, sc, LLAMA70B)
    assert [(p.deployment, p.concurrency, p.tokens_per_s_per_gpu) for p in plain.frontier] == [
        (p.deployment, p.concurrency, p.tokens_per_s_per_gpu) for p in served["decode"].frontier
    ]


def test_disaggregated_pools_balance_prefill_and_decode():
    """Each point's pools are the best whole counts within --total-gpus (checked by brute force over every
    count), the prefill pool's requests/s meet the decode pool's within one prefill instance, and tok/s/GPU is
    the served tokens over all --total-gpus GPUs: those the pools leave idle count (a user holds them)."""
    spec, profile, sc = _setup(LLAMA70B, "h100-sxm")
    total = 24
    f = frontier(spec, profile, sc, LLAMA70B, serving=Serving("disaggregated", ISL, OSL, total_gpus=total))
    prefills = {}
    for d in f.deployments:
        if d.pp > 1:
            continue  # pipeline stages decode only: a prefill pool is priced unstaged
        w = analyse(spec, profile, replace(scenario_for(sc, d, 1), context=ISL))
        if w.max_decode_concurrency >= 1 and w.weight_bytes_per_gpu < 0.9 * profile.memory_gb * 1e9:
            prefills[d.label()] = prefill_cost(w)
    assert f.frontier
    for p in f.frontier:
        pool = p.pool
        assert pool is not None and pool.gpus <= total
        pc = prefills[pool.prefill]
        prefill_rate = pool.prefill_instances * pc.instance_gpus * pc.tokens_per_s_per_gpu  # prompt tokens/s
        decode_rate = pool.decode_gpus * p.decode_tokens_per_s_per_gpu  # output tokens/s
        served = min(decode_rate, prefill_rate * OSL / ISL)
        assert p.tokens_per_s_per_gpu == pytest.approx(served / total, rel=1e-9)
        assert pool.idle_gpus == total - pool.gpus >= 0 and pool.public()["idle_gpus"] == pool.idle_gpus
        # one prefill instance fewer could not keep up (the pool is no larger than the balance needs) ...
        assert (pool.prefill_instances - 1) * pc.instance_gpus * pc.tokens_per_s_per_gpu < decode_rate * ISL / OSL
        # ... and no whole-count split of the same options within the budget serves more per GPU
        best = 0.0
        for q in prefills.values():
            rate = q.instance_gpus * q.tokens_per_s_per_gpu
            for n_d in range(1, total // p.deployment.gpus + 1):
                for n_p in range(1, (total - n_d * p.deployment.gpus) // q.instance_gpus + 1):
                    dec = n_d * p.deployment.gpus * p.decode_tokens_per_s_per_gpu
                    best = max(best, min(dec, n_p * rate * OSL / ISL) / total)
        assert p.tokens_per_s_per_gpu == pytest.approx(best, rel=1e-9)
        # 24 H100 span three nodes: the KV cache crosses a 50 GB/s NIC
        assert p.ttft_s == pytest.approx(pc.ftl_s + pc.kv_bytes_per_gpu / 50e9, rel=1e-12)


def test_choose_pools_ratio_follows_isl_over_osl():
    """More prompt per output token needs more prefill GPUs (a decode instance of 8 GPUs at 100 tok/s/GPU, a
    prefill instance of 1 GPU at 1,000 tok/s): ISL/OSL = 2 asks 1,600 prompt tok/s, met by 2 prefill GPUs
    (0.8 of the decode rate per GPU of 10; 1 GPU would serve 0.625 of it); ISL/OSL = 8 asks 6,400 on 16 GPUs: 7
    serve it all (800 tok/s, 50 per GPU of the 16), 6 would serve 15/16 of it with one more GPU idle (46.9: per GPU
    the two pools use, 6 were the better, 53.6 against 53.3, and 16 GPUs served 750 where they could serve 800)."""
    from colint.analysis.serving import PrefillCost

    pc = PrefillCost(step_s=1.0, tokens=1000, ftl_s=1.0, group_gpus=1, instance_gpus=1, attention_core_per_token_s=0)
    two = choose_pools(100.0, 8, [("tp1", pc)], Serving("disaggregated", 1000, 500), 10)
    assert (two.prefill_gpus, two.decode_gpus, two.idle_gpus, two.served_share) == (2, 8, 0, 1.0)
    eight = choose_pools(100.0, 8, [("tp1", pc)], Serving("disaggregated", 4000, 500), 16)
    assert (eight.prefill_gpus, eight.decode_gpus, eight.idle_gpus, eight.served_share) == (7, 8, 1, 1.0)
    assert eight.throughput_factor == pytest.approx(8 / 16)
    short = choose_pools(100.0, 8, [("tp1", pc)], Serving("disaggregated", 4000, 500), 12)
    assert (short.prefill_gpus, short.decode_gpus) == (4, 8)
    assert short.served_share == pytest.approx(4000 / 6400)  # the prefill pool sets the pace
    assert short.throughput_factor == pytest.approx(4000 / 6400 * 8 / 12)
    assert choose_pools(100.0, 8, [("tp1", pc)], Serving("disaggregated", 4000, 500), 8) is None


def test_choose_pools_leaves_no_gpu_busy_for_nothing():
    """Among pools that serve the same tokens/s, the fewest GPUs: a prefill instance of 1 GPU at 10,000 tok/s
    meets a decode instance of 8 at 100 tok/s/GPU (6,400 prompt tok/s asked at ISL/OSL 8), so 16 GPUs hold one of
    each and 7 idle, not 8 prefill instances that serve the same 800 tok/s."""
    from colint.analysis.serving import PrefillCost

    pc = PrefillCost(step_s=1.0, tokens=10000, ftl_s=1.0, group_gpus=1, instance_gpus=1, attention_core_per_token_s=0)
    pool = choose_pools(100.0, 8, [("tp1", pc)], Serving("disaggregated", 4000, 500), 16)
    assert (pool.prefill_instances, pool.decode_instances, pool.idle_gpus, pool.served_share) == (1, 1, 7, 1.0)
    assert pool.throughput_factor == pytest.approx(8 / 16)


def test_prefill_forward_counts_the_whole_prompts_it_carries():
    """A prefill forward of 8,192 tokens carries two 4,000-token prompts: 8,000 tokens prefilled per step (it was
    counted as 8,192, 2.4% more prefill than the step does); a prompt past the budget is prefilled in chunks of
    8,192, each step 8,192 tokens."""
    spec, profile, sc = _setup(LLAMA70B, "h100-sxm")
    d = scenario_for(sc, Deployment(4), 1)
    pc = prefill_cost(analyse(spec, profile, replace(d, context=ISL)))
    assert pc.tokens == 8000
    assert pc.tokens_per_s_per_gpu == pytest.approx(8000 / pc.step_s / 4, rel=1e-12)
    assert pc.ftl_s == pc.step_s  # both prompts' first tokens come with the one forward
    long = prefill_cost(analyse(spec, profile, replace(d, context=20000)))
    assert long.tokens == 8192 and long.ftl_s == pytest.approx(3 * long.step_s, rel=1e-12)


def test_total_gpus_bounds_the_deployments():
    spec, profile, sc = _setup(LLAMA70B, "h100-sxm")
    f = frontier(spec, profile, sc, LLAMA70B, serving=Serving("aggregated", ISL, OSL, total_gpus=4))
    assert f.total_gpus == 4
    assert {d.gpus for d in f.deployments} == {1, 2, 4}
    assert f.frontier and all(p.deployment.gpus <= 4 for p in f.points)
    spec, profile, sc = _setup(QWEN30B, "h100-sxm")  # an MoE: the EP domain is bounded too
    f = frontier(spec, profile, sc, QWEN30B, serving=Serving("aggregated", ISL, OSL, total_gpus=4))
    assert max(d.ep for d in f.deployments) == 4 and all(d.gpus <= 4 for d in f.deployments)


def test_ttft_limit_leaves_out_exactly_the_slow_first_tokens(llama_h100):
    spec, profile, sc, served = llama_h100
    every = served["aggregated"].points
    limit = sorted(p.ttft_s for p in every)[len(every) // 2]
    f = frontier(spec, profile, sc, LLAMA70B, serving=Serving("aggregated", ISL, OSL, ttft_limit_s=limit))
    assert f.dropped_ttft == sum(1 for p in every if p.ttft_s > limit) > 0
    assert [(p.deployment, p.concurrency) for p in f.points] == [
        (p.deployment, p.concurrency) for p in every if p.ttft_s <= limit
    ]


def test_serving_for_defaults():
    assert serving_for("aggregated", 8192) == Serving("aggregated", 7168, 1024)
    assert serving_for("aggregated", 8192, isl=4000, osl=500) == Serving("aggregated", 4000, 500)
    assert serving_for("aggregated", 1000) == Serving("aggregated", 500, 500)
    assert serving_for("decode", 8192) == Serving("decode", 0, 0)


def _run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_says_mode_gpus_and_charge(capsys):
    argv = ["pareto", LLAMA70B, "--gpu", "h100-sxm", "--isl", "4000", "--osl", "500", "--format", "json"]
    code, out, _ = _run(capsys, argv)
    assert code == 0
    g = json.loads(out)["designs"][0]["gpus"][0]
    assert {k: g["serving"][k] for k in ("mode", "isl", "osl", "total_gpus", "ttft_limit_s")} == {
        "mode": "aggregated",
        "isl": 4000,
        "osl": 500,
        "total_gpus": 8,
        "ttft_limit_s": None,
    }
    assert "4000-token prefill" in g["serving"]["charged"]
    p = g["frontier"][0]
    assert p["step_s"] == pytest.approx(p["itl_s"] + p["prefill_charge_s"], rel=1e-12)
    b = p["concurrency"]
    assert p["tpot_s"] == pytest.approx(p["itl_s"] + p["prefill_charge_s"] * (b - 1) / b, rel=1e-12)
    assert p["tokens_per_s_per_user"] == pytest.approx(1 / p["tpot_s"], rel=1e-12)
    assert p["tokens_per_s_per_gpu"] == pytest.approx(
        p["decode_tokens_per_s_per_gpu"] * p["itl_s"] / p["step_s"], rel=1e-12
    )
    assert p["ttft_s"] > 0 and p["pool"] is None
    code, out, _ = _run(capsys, argv + ["--serving", "disaggregated", "--total-gpus", "16"])
    g = json.loads(out)["designs"][0]["gpus"][0]
    assert g["serving"]["mode"] == "disaggregated" and g["serving"]["total_gpus"] == 16
    pool = g["frontier"][0]["pool"]
    assert pool["prefill_gpus"] + pool["decode_gpus"] + pool["idle_gpus"] == 16
    assert pool["prefill_to_decode_gpus"] == pool["prefill_gpus"] / pool["decode_gpus"]


def test_cli_text_and_chart_say_the_mode(capsys):
    code, out, _ = _run(capsys, ["pareto", LLAMA70B, "--gpu", "h100-sxm", "--isl", "4000", "--osl", "500"])
    assert code == 0
    assert "  aggregated serving, ISL 4000 / OSL 500, up to 8 GPUs: decode step + the 4000-token prefill" in out
    assert "+prefill" in out.splitlines()[4] and "TPOT" in out.splitlines()[4] and "TTFT" in out.splitlines()[4]
    assert "FTL with pp" not in out  # the pipelined-prefill column and its footnote belong to decode mode
    code, out, _ = _run(capsys, ["pareto", LLAMA70B, "--gpu", "h100-sxm", "--serving", "decode"])
    assert "  decode serving, up to 8 GPUs: decode step only (prefill not charged)" in out
    code, _, err = _run(capsys, ["pareto", LLAMA70B, "--serving", "both"])
    assert code == 2 and "both" in err
    from colint.design.reporting import frontier_chart

    spec, profile, sc = _setup(LLAMA70B, "h100-sxm")
    f = frontier(spec, profile, sc, LLAMA70B, serving=Serving("disaggregated", ISL, OSL, total_gpus=16))
    assert frontier_chart([f])["serving"] == (
        "disaggregated serving, ISL 4000 / OSL 500, up to 16 GPUs: decode pool + a prefill pool sized to "
        "prefill 4000 tokens per 500 output tokens; tokens/s per GPU over all the GPUs, those the pools leave idle too"
    )
    assert not math.isnan(f.frontier[0].tokens_per_s_per_gpu)


@pytest.mark.parametrize("path,gpu", [(LLAMA70B, "h100-sxm"), (QWEN30B, "h100-sxm")])
def test_vectorized_aggregated_price_equals_analyse_at_every_point(path, gpu):
    """The fast path prices every point's mixed step (decode at B + chunk, cores swapped) as analyse does."""
    spec, profile, sc = _setup(path, gpu)
    sv = Serving("aggregated", ISL, OSL)
    fast = frontier(spec, profile, sc, path, serving=sv)
    exact = frontier(spec, profile, sc, path, exact=True, serving=sv)
    assert not [n for n in fast.notes if "not affine" in n]
    assert [(p.deployment, p.concurrency) for p in fast.points] == [(p.deployment, p.concurrency) for p in exact.points]
    for a, b in zip(fast.points, exact.points):
        assert a.mixed_s == pytest.approx(b.mixed_s, rel=1e-9)
        assert a.tokens_per_s_per_gpu == pytest.approx(b.tokens_per_s_per_gpu, rel=1e-9)
        assert a.ttft_s == pytest.approx(b.ttft_s, rel=1e-9)


def test_cli_says_when_total_gpus_or_the_ttft_limit_leave_no_frontier(capsys):
    code, out, _ = _run(capsys, ["pareto", LLAMA70B, "--gpu", "h100-sxm", "--total-gpus", "2"])
    assert code == 0
    assert "  no deployment of up to 2 GPUs (--total-gpus) holds the weights and one sequence: no frontier" in out
    code, out, _ = _run(capsys, ["pareto", LLAMA70B, "--gpu", "h100-sxm", "--ttft-limit", "0.01"])
    assert "points left out: TTFT above 0.01 s" in out
    assert "or serves within the TTFT limit: no frontier" in out


def test_disaggregated_ttft_carries_the_kv_cache_transfer():
    """A prefill instance sends the KV cache its forward left on each GPU to the decode pool over that GPU's own
    link: Llama-3.3-70B BF16 holds 327,680 B per token (80 layers x 8 KV heads x 128 x K,V x 2 B); a tp1 prefill
    on B200 carries two 4,000-token prompts, 2.62 GB, over a 400 Gb/s NIC (50 GB/s one way) when the 16 GPUs span
    two HGX nodes: 52.4 ms on top of the 745 ms forward; within one node over NVLink (900 GB/s one way), 2.9 ms.
    Its prefill (8,000 tokens per 0.745 s) outruns no link here, so the pools' tokens/s stay as they were."""
    from colint.analysis.frontier import kv_link_bytes_per_s

    spec, profile, sc = _setup(LLAMA70B, "b200")
    assert kv_link_bytes_per_s(profile, 16) == 50e9 and kv_link_bytes_per_s(profile, 8) == 900e9
    # a PCIe card's NIC traffic crosses its own PCIe link: an A10 (Gen4 x16) past its host sends at 31.5 GB/s, not
    # the assumed 400 Gb/s NIC's 50
    a10 = load_profile("a10")
    assert kv_link_bytes_per_s(a10, 16) == pytest.approx(a10.pcie_bytes_per_s) and a10.pcie_bytes_per_s < 50e9
    pc = prefill_cost(analyse(spec, profile, replace(scenario_for(sc, Deployment(1), 1), context=ISL)))
    assert pc.kv_bytes_per_gpu == 2 * ISL * 327_680
    for total, link in ((16, 50e9), (8, 900e9)):
        f = frontier(spec, profile, sc, LLAMA70B, serving=Serving("disaggregated", ISL, OSL, total_gpus=total))
        tp1 = [p for p in f.frontier if p.pool.prefill == "tp1"]
        assert tp1
        for p in tp1:
            assert p.pool.kv_transfer_s == pytest.approx(pc.kv_bytes_per_gpu / link, rel=1e-12)
            assert p.ttft_s == pytest.approx(pc.ftl_s + pc.kv_bytes_per_gpu / link, rel=1e-12)
            assert p.pool.public()["kv_transfer_s"] == p.pool.kv_transfer_s
    assert pc.kv_bytes_per_gpu / 50e9 == pytest.approx(0.0524288, rel=1e-12)


def test_a_slow_link_paces_the_prefill_pool():
    """Where the link carries a forward's KV cache away slower than the next forward runs, it sets the prefill
    instance's pace: 1,000 tokens a 1 s step leaving 100 GB on the GPU, sent at 50 GB/s, prefill 500 tokens/s."""
    from colint.analysis.serving import PrefillCost, with_kv_transfer

    pc = PrefillCost(1.0, 1000, 1.0, 1, 1, 0.0, kv_bytes_per_gpu=100e9)
    assert pc.tokens_per_s_per_gpu == 1000 and pc.ttft_s == 1.0
    slow = with_kv_transfer(pc, 50e9)
    assert slow.kv_transfer_s == 2.0 and slow.tokens_per_s_per_gpu == 500 and slow.ttft_s == 3.0
    fast = with_kv_transfer(pc, 200e9)
    assert fast.tokens_per_s_per_gpu == 1000 and fast.ttft_s == 1.5
