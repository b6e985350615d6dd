"""`colint pareto` (issue 14): the frontier's points are `inspect --gpu`'s numbers at their deployment
and concurrency, none is dominated, none exceeds memory, a faster HBM never lowers it, and a 4x
larger KV cache lowers it."""

from __future__ import annotations

import json
import os
import re

import pytest

from colint.analysis.frontier import (
    USABLE_HBM_SHARE,
    Deployment,
    Point,
    compare,
    concurrency_grid,
    deployments,
    frontier,
    pareto,
    throughput_at,
)
from colint.analysis.scenario import make_scenario
from colint.analysis.serving import serving_for
from colint.cli.main import main
from colint.hardware_profiles import load_profile
from colint.loading import load
from colint.design.pareto import load_design
from colint.normalize import normalize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLAMA8B = os.path.join(ROOT, "examples", "llama-3.1-8b.json")
LLAMA70B = os.path.join(ROOT, "examples", "llama-3.3-70b.json")
DEEPSEEK = os.path.join(ROOT, "examples", "deepseek-v3.json")
KIMI = os.path.join(ROOT, "examples", "kimi-k2.json")


def _spec(path):
    return normalize(load(path))


def _front(path, gpu, **kw):
    profile = load_profile(gpu)
    return frontier(_spec(path), profile, make_scenario("throughput", gpu=profile.name, **kw), path)


@pytest.fixture(scope="module")
def deepseek_gb200():
    return _front(DEEPSEEK, "gb200")


@pytest.fixture(scope="module")
def llama70b_h100():
    return _front(LLAMA70B, "h100-sxm")


def _run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


# ------------------------------------------------------------------------------ enumeration
def test_deployments_dense_are_tp_that_divide_the_heads():
    assert deployments(_spec(LLAMA70B), load_profile("h100-sxm")) == [Deployment(t) for t in (1, 2, 4, 8)]
    assert deployments(_spec(LLAMA70B), load_profile("h100-nvl")) == [Deployment(1), Deployment(2)]


def test_deployments_moe_cross_tp_with_ep_and_attention_dp():
    deps = deployments(_spec(DEEPSEEK), load_profile("gb200"))  # 128 heads, 256 experts, NVL72
    assert Deployment(1, 1) in deps and Deployment(1, 72) in deps and Deployment(8, 64) in deps
    assert Deployment(8, 72) in deps and Deployment(16, 64) in deps and Deployment(64, 64) in deps
    assert Deployment(8, 4) not in deps  # ep < tp would copy experts inside an attention group
    assert Deployment(16, 72) not in deps  # 72 GPUs do not split into groups of 16
    assert all(d.gpus <= 72 for d in deps)
    assert Deployment(8, 64).attention_dp == 8 and Deployment(8, 64).label() == "tp8 ep64 dp8"
    assert Deployment(4, 1).label() == "tp4" and Deployment(8, 8).label() == "tp8 ep8"


def test_total_gpus_past_the_domain_lets_a_replica_span_it():
    """--total-gpus wider than the scale-up domain: one replica may span it (an 8-GPU PCIe host of NVLink-bridged
    H100 pairs; two HGX nodes for a model one node does not hold), by tp and ep or by pipeline stages each within
    a domain; without it, one domain as before."""
    pcie = load_profile("h100-pcie")  # NVLink bridges join pairs
    assert deployments(_spec(LLAMA70B), pcie) == [Deployment(1), Deployment(2)]
    staged = [Deployment(1, pp=4), Deployment(1, pp=8), Deployment(2, pp=2), Deployment(2, pp=4)]
    assert deployments(_spec(LLAMA70B), pcie, 8) == [Deployment(t) for t in (1, 2, 4, 8)] + staged
    assert deployments(_spec(LLAMA70B), pcie, 1) == [Deployment(1)]
    deps = deployments(_spec(DEEPSEEK), load_profile("h100-sxm"), 16)
    assert Deployment(16) in deps and Deployment(8, 16) in deps and Deployment(1, 16) in deps
    assert Deployment(8, pp=2) in deps and Deployment(8, 8, pp=2) in deps and Deployment(4, pp=4) in deps
    assert Deployment(4, pp=2) not in deps  # 8 GPUs: one domain, where tp serves
    assert max(d.gpus for d in deps) == 16 and Deployment(8, 16).label() == "tp8 ep16 dp2"
    assert Deployment(8, 8, pp=2).label() == "tp8 ep8 pp2" and Deployment(8, 8, pp=2).gpus == 16
    assert all(d.pp == 1 for d in deployments(_spec(DEEPSEEK), load_profile("h100-sxm")))


def test_a_replica_past_the_domain_pays_the_link_past_it(capsys):
    """Llama-3.3-70B BF16 on 8 H100 PCIe (pairs bridged by NVLink, 8 cards to a server): nothing fits in one pair,
    so colint pareto had no frontier; with --total-gpus 8 its tp4 / tp8 replicas span the bridged pairs, the
    all-reduces past a pair priced over the server's PCIe Gen5 (slower than if NVLink joined all eight) and said in
    a note, and pipeline stages of bridged pairs (tp2 pp2, tp2 pp4) serve the low-interactivity end."""
    from dataclasses import replace

    pcie = load_profile("h100-pcie")
    sc = make_scenario("throughput", gpu=pcie.name, dtype="bf16")
    serving = serving_for("aggregated", 4500, isl=4000, osl=500, total_gpus=8)
    f = frontier(_spec(LLAMA70B), pcie, sc, LLAMA70B, serving=serving)
    assert {p.deployment for p in f.frontier} == {
        Deployment(4),
        Deployment(8),
        Deployment(2, pp=2),
        Deployment(2, pp=4),
    }
    assert f.notes[0] == (
        f"{len(f.frontier)} of the {len(f.frontier)} frontier points span more than one 2-GPU NVLink domain: what "
        "their collectives send past it crosses PCIe Gen5 between the NVLink groups of one host at 63 GB/s per GPU "
        "each way"
    )
    linked = frontier(_spec(LLAMA70B), replace(pcie, domain_size=8), sc, LLAMA70B, serving=serving)
    assert not any("span more than one" in n for n in linked.notes)
    tp8 = {p.concurrency: p.itl_s for p in f.points if p.deployment == Deployment(8)}
    tp8_linked = {p.concurrency: p.itl_s for p in linked.points if p.deployment == Deployment(8)}
    assert tp8 and all(tp8[b] > tp8_linked[b] for b in tp8)
    # without --total-gpus: one bridged pair, and the text says what would help
    code, out, _ = _run(capsys, ["pareto", LLAMA70B, "--gpu", "h100-pcie", "--isl", "4000", "--osl", "500"])
    assert code == 0
    assert (
        "  no deployment within one 2-GPU domain holds the weights and one sequence: no frontier (a narrower "
        "format, --dtype fp8 or nvfp4, or more --total-gpus may)"
    ) in out.splitlines()


def test_pipeline_stages_past_the_domain_decode_micro_batches():
    """tp8 pp2 of Llama-3.1-405B BF16 on two HGX H100 nodes (--total-gpus 16), a deployment the 405B's weights
    need: a point at b sequences is one of two micro-batches in flight, one in each stage. Its ITL is analyse's
    step at b with pp=2 (the stages in sequence), a GPU holds the KV cache of 2b sequences over its half of the
    layers (analyse's figure at b, twice), and its tokens/s per GPU are 2b sequences over 16 GPUs, b / ITL / 8."""
    from colint.analysis.frontier import scenario_for
    from colint.analysis.workload import analyse

    path = os.path.join(ROOT, "tests", "corpus", "hf", "llama3__Meta-Llama-3.1-405B.json")
    spec, h100 = _spec(path), load_profile("h100-sxm")
    sc = make_scenario("throughput", gpu=h100.name, dtype="bf16")
    f = frontier(spec, h100, sc, path, serving=serving_for("decode", 4500, total_gpus=16))
    staged = [p for p in f.points if p.deployment == Deployment(8, pp=2)]
    assert len(staged) > 4 and any(p.deployment == Deployment(8, pp=2) for p in f.frontier)
    assert not any(p.deployment.gpus <= 8 for p in f.points)  # 810 GB of weights: one node holds none
    for p in staged[:2] + staged[-2:]:
        w = analyse(spec, h100, scenario_for(sc, p.deployment, p.concurrency))
        assert w.scenario.pp == 2 and p.deployment.gpus == 16
        assert p.itl_s == pytest.approx(w.steps["decode"].estimate_s, rel=1e-6)
        assert p.kv_cache_bytes_per_gpu == pytest.approx(2 * w.kv_cache_bytes_per_gpu, rel=1e-6)
        assert p.tokens_per_s_per_gpu == pytest.approx(p.concurrency / p.itl_s / 8, rel=1e-12)
        assert 2 * p.concurrency <= w.max_decode_concurrency
        assert p.memory_bytes_per_gpu <= USABLE_HBM_SHARE * h100.memory_gb * 1e9
    assert "tp8 pp2" in f.public()["deployments"]


def test_disaggregated_instances_leave_room_for_the_other_pool():
    """Disaggregated within --total-gpus 16 on HGX: an instance of 16 could never have the other pool beside it, so
    none is enumerated (the largest power of two under the total: 8); aggregated spans all 16."""
    h100 = load_profile("h100-sxm")
    sc = make_scenario("throughput", gpu=h100.name, dtype="bf16")
    for mode, widest in (("disaggregated", 8), ("aggregated", 16)):
        f = frontier(_spec(LLAMA70B), h100, sc, LLAMA70B, serving=serving_for(mode, 4500, 4000, 500, total_gpus=16))
        assert max(d.gpus for d in f.deployments) == widest, mode
        assert not any("no prefill instance" in n for n in f.notes)


def test_concurrency_grid():
    assert concurrency_grid(1) == [1]
    assert concurrency_grid(100) == [*range(1, 9), 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 100]
    assert concurrency_grid(7) == [1, 2, 3, 4, 5, 6, 7]
    # at most 1.25x between neighbours past 8, so a frontier read between points stays close to the points between
    grid = concurrency_grid(16384)
    assert max(b / a for a, b in zip(grid[7:], grid[8:])) == 1.25 and grid[-1] == 16384


# ------------------------------------------------------------------------------ the frontier's figures
def _inspect(capsys, path, gpu, p: Point, extra=()):
    argv = [
        "inspect",
        path,
        "--gpu",
        gpu,
        "--tp",
        str(p.deployment.tp),
        "--ep",
        str(p.deployment.ep),
        "--kvp",
        str(p.deployment.kvp),
        "--concurrency",
        str(p.concurrency),
        "--format",
        "json",
        *extra,
    ]
    code, out, _ = _run(capsys, argv)
    assert code == 0
    return json.loads(out)["estimates"]


@pytest.mark.parametrize("case", ["deepseek", "llama"])
def test_frontier_points_equal_inspect_gpu(capsys, case, deepseek_gb200, llama70b_h100):
    f, path, gpu = (deepseek_gb200, DEEPSEEK, "gb200") if case == "deepseek" else (llama70b_h100, LLAMA70B, "h100-sxm")
    picks = {0, len(f.frontier) // 2, len(f.frontier) - 1}
    picks |= set([i for i, p in enumerate(f.frontier) if p.deployment.kvp > 1][:1])  # a KV-parallel point too
    for i in sorted(picks):
        p = f.frontier[i]
        e = _inspect(capsys, path, gpu, p)
        assert p.itl_s == pytest.approx(e["steps"]["decode"]["estimate_s"], rel=1e-12)
        assert p.ftl_s == pytest.approx(e["steps"]["prefill"]["ftl_s"], rel=1e-12)
        assert p.weight_bytes_per_gpu == pytest.approx(e["weight_bytes_per_gpu"], rel=1e-12)
        assert p.kv_cache_bytes_per_gpu == pytest.approx(e["kv_cache_bytes_per_gpu"], rel=1e-12)
        assert e["memory_fits"] is True
        assert p.tokens_per_s_per_gpu == pytest.approx(
            p.concurrency / e["steps"]["decode"]["estimate_s"] / p.deployment.group_gpus, rel=1e-12
        )


@pytest.mark.parametrize(
    "path,gpu",
    [
        (DEEPSEEK, "gb200"),
        (LLAMA70B, "h100-sxm"),
        (os.path.join(ROOT, "tests", "corpus", "hf", "qwen3-next__Qwen3-Next-80B-A3B-Thinking.json"), "b200"),
    ],
)
def test_vectorized_pricing_equals_analyse_at_every_point(path, gpu, total=None):
    """The fast path prices every (deployment, concurrency) as analyse does (within float-order noise)."""
    serving = serving_for("decode", 8192, total_gpus=total) if total else None
    sc = make_scenario("throughput", gpu=gpu)
    fast = frontier(_spec(path), load_profile(gpu), sc, path, serving=serving)
    exact = frontier(_spec(path), load_profile(gpu), sc, path, exact=True, serving=serving)
    assert not [n for n in fast.notes if "not affine" in n]  # no fallback: the vectorized price matched
    assert [(p.deployment, p.concurrency) for p in fast.points] == [(p.deployment, p.concurrency) for p in exact.points]
    for a, b in zip(fast.points, exact.points):
        assert a.itl_s == pytest.approx(b.itl_s, rel=1e-9)
        assert a.kv_cache_bytes_per_gpu == pytest.approx(b.kv_cache_bytes_per_gpu, rel=1e-9)
        assert a.activation_bytes_per_gpu == pytest.approx(b.activation_bytes_per_gpu, rel=1e-9)
    assert [(p.deployment, p.concurrency) for p in fast.frontier] == [
        (p.deployment, p.concurrency) for p in exact.frontier
    ]


def test_vectorized_pricing_equals_analyse_with_pipeline_stages():
    """The same past one domain, where pipeline stages hold pp micro-batches (Llama-3.1-405B on 16 H100)."""
    path = os.path.join(ROOT, "tests", "corpus", "hf", "llama3__Meta-Llama-3.1-405B.json")
    test_vectorized_pricing_equals_analyse_at_every_point(path, "h100-sxm", total=16)


def test_no_frontier_point_is_dominated(deepseek_gb200, llama70b_h100):
    for f in (deepseek_gb200, llama70b_h100):
        assert len(f.frontier) >= 10
        for p in f.frontier:
            for q in f.points:
                better_or_equal = q.tokens_per_s_per_user >= p.tokens_per_s_per_user * (
                    1 + 1e-12
                ) and q.tokens_per_s_per_gpu >= p.tokens_per_s_per_gpu * (1 + 1e-12)
                assert not better_or_equal, (p, q)
        # and every other point is dominated by a frontier point
        for q in f.points:
            assert any(
                p.tokens_per_s_per_user >= q.tokens_per_s_per_user * (1 - 1e-12)
                and p.tokens_per_s_per_gpu >= q.tokens_per_s_per_gpu * (1 - 1e-12)
                for p in f.frontier
            )


def test_nothing_that_does_not_fit_appears(deepseek_gb200, llama70b_h100):
    for f in (deepseek_gb200, llama70b_h100):
        assert f.dropped > 0
        for p in f.points:
            assert p.memory_bytes_per_gpu <= USABLE_HBM_SHARE * f.hbm_bytes
    # Llama-70B in BF16: 141 GB of weights do not fit one 80 GB H100; on two, 70.6 GB each leave no room
    # for the prefill activations (8192 x (8192 + 28672) x 2 B = 0.6 GB) and one sequence's KV cache
    assert llama70b_h100.unfit_deployments == ["tp1", "tp2"]
    assert {p.deployment.tp for p in llama70b_h100.points} == {4, 8}
    # 1T parameters in BF16 do not fit 8 x 80 GB at all: no frontier, said so
    kimi = _front(KIMI, "h100-sxm")
    assert kimi.points == [] and kimi.frontier == [] and len(kimi.unfit_deployments) == len(kimi.deployments)


def test_dropped_points_are_the_ones_past_memory(llama70b_h100):
    f = llama70b_h100
    best = max(p.concurrency for p in f.points if p.deployment.tp == 8)
    # one sequence more than the largest kept would not fit next to the weights and activations
    p = next(p for p in f.points if p.deployment.tp == 8 and p.concurrency == best)
    per_seq = p.kv_cache_bytes_per_gpu / p.concurrency
    assert p.memory_bytes_per_gpu + per_seq > USABLE_HBM_SHARE * f.hbm_bytes


def test_faster_hbm_never_lowers_the_frontier(tmp_path):
    src = os.path.join(ROOT, "colint", "hardware_profiles", "h100-sxm.yaml")
    text = open(src, encoding="utf-8").read()
    fast = re.sub(r"^memory_tbps: .*$", "memory_tbps: 4.8", text, flags=re.M).replace(
        "name: h100-sxm", "name: h100-fast-hbm"
    )
    assert fast != text
    path = tmp_path / "h100-fast-hbm.yaml"
    path.write_text(fast, encoding="utf-8")
    spec = _spec(LLAMA70B)
    sc = make_scenario("throughput")
    base = frontier(spec, load_profile("h100-sxm"), sc)
    faster = frontier(spec, load_profile(str(path)), sc)
    for p in base.frontier:
        assert faster.throughput_at(p.tokens_per_s_per_user) >= p.tokens_per_s_per_gpu
    assert max(p.tokens_per_s_per_user for p in faster.frontier) > max(p.tokens_per_s_per_user for p in base.frontier)


def test_mha_kv_cache_lowers_the_decode_frontier():
    """Llama-3.1-8B with 32 KV heads (MHA) instead of 8 (GQA-8): 4x the KV cache per token."""
    profile = load_profile("h100-sxm")
    sc = make_scenario("throughput", gpu=profile.name)
    gqa = frontier(load_design(LLAMA8B), profile, sc)
    mha = frontier(load_design(LLAMA8B, {"num_key_value_heads": 32}), profile, sc)
    assert mha.frontier and gqa.frontier
    for p in mha.frontier:
        assert gqa.throughput_at(p.tokens_per_s_per_user) >= p.tokens_per_s_per_gpu
    top_gqa = max(p.tokens_per_s_per_gpu for p in gqa.frontier)
    top_mha = max(p.tokens_per_s_per_gpu for p in mha.frontier)
    assert top_mha < 0.6 * top_gqa  # the KV cache caps concurrency and its reads lengthen the step
    rows = compare(gqa, mha, levels=(20.0, 50.0))
    assert all(r["gain"] is not None and r["gain"] < 1.0 for r in rows)


# ------------------------------------------------------------------------------ pareto and interpolation
def test_pareto_keeps_exactly_the_non_dominated():
    pts = [
        Point(Deployment(1), b, itl, 0.0, 0.0, 0.0, 0.0)
        for b, itl in [(1, 0.010), (2, 0.011), (4, 0.020), (4, 0.012), (8, 0.014), (8, 0.020), (16, 0.025), (3, 0.010)]
    ]
    front = pareto(pts)
    # (tok/s/user, tok/s/GPU): (100, 100) (90.9, 181.8) (50, 200) (83.3, 333) (71.4, 571) (50, 400) (40, 640)
    # (100, 300): (4, 0.020) and (8, 0.020) fall behind (8, 0.014); (1, 0.010) behind (3, 0.010)
    assert [(p.concurrency, p.itl_s) for p in front] == [(3, 0.010), (4, 0.012), (8, 0.014), (16, 0.025)]


def test_throughput_at_interpolates_log_log_and_says_out_of_reach():
    a = Point(Deployment(1), 100, 0.02, 0, 0, 0, 0)  # 50 tok/s/user, 5000 tok/s/GPU
    b = Point(Deployment(1), 2, 0.005, 0, 0, 0, 0)  # 200 tok/s/user, 400 tok/s/GPU
    front = pareto([a, b])
    assert throughput_at(front, 50) == pytest.approx(5000)
    assert throughput_at(front, 200) == pytest.approx(400)
    assert throughput_at(front, 100) == pytest.approx(5000 * (400 / 5000) ** 0.5)  # halfway in log
    assert throughput_at(front, 20) == pytest.approx(5000)  # slower users: the max-throughput point serves them
    assert throughput_at(front, 201) is None
    assert throughput_at([], 10) is None


# ------------------------------------------------------------------------------ the command
def test_cli_text_lists_the_frontier_as_estimates(capsys):
    code, out, err = _run(capsys, ["pareto", LLAMA70B, "--gpu", "h100-sxm"])
    assert code == 0 and err == ""
    assert "deployment  GPUs  concurrency  tok/s/user  tok/s/GPU" in out
    assert "no room for one sequence next to the weights: tp1, tp2" in out
    assert re.search(r"^  tp8 +8 +1 ", out, flags=re.M)
    assert "every figure is an estimate of colint's step model (h100-sxm, bf16 weights" in out
    assert "not a measurement" in out


def test_cli_json_has_points_and_frontier(capsys):
    code, out, _ = _run(capsys, ["pareto", LLAMA70B, "--gpu", "h100-sxm", "--gpu", "b200", "--format", "json"])
    assert code == 0
    data = json.loads(out)
    assert [g["gpu"] for g in data["designs"][0]["gpus"]] == ["h100-sxm", "b200"]
    g = data["designs"][0]["gpus"][0]
    assert g["points_priced"] == len(g["points"]) + g["points_dropped_not_fit"]
    keys = {
        "deployment",
        "tp",
        "ep",
        "attention_dp",
        "gpus",
        "concurrency",
        "itl_s",
        "tokens_per_s_per_user",
        "tokens_per_s_per_gpu",
        "ftl_s",
        "memory_bytes_per_gpu",
        "bound",
    }
    assert keys <= set(g["frontier"][0])
    assert "estimate" in data and "comparison" not in data


def test_cli_compare_and_variant(capsys):
    code, out, _ = _run(
        capsys, ["pareto", LLAMA8B, "--gpu", "h100-sxm", "--variant", "num_key_value_heads=32", "--format", "json"]
    )
    assert code == 0
    data = json.loads(out)
    assert data["designs"][1]["name"].endswith("[num_key_value_heads=32]")
    assert data["designs"][1]["gpus"][0]["variant"] == {"num_key_value_heads": 32}
    levels = data["comparison"][0]["levels"]
    assert [lv["tokens_per_s_per_user"] for lv in levels] == [20, 50, 100, 200]
    assert levels[0]["gain"] < 1.0
    code, out, _ = _run(capsys, ["pareto", DEEPSEEK, "--gpu", "gb200", "--compare", KIMI])
    assert code == 0
    assert "at equal interactivity on gb200: B = " in out and "B / A" in out


def test_cli_compare_says_out_of_reach(capsys):
    # on one L40S (no NVLink domain, 48 GB) a 8B model in BF16 does not reach 200 tok/s/user
    code, out, _ = _run(capsys, ["pareto", LLAMA8B, "--gpu", "l40s", "--variant", "num_key_value_heads=32"])
    assert code == 0
    assert re.search(r"^ +200 +out of reach +out of reach +out of reach$", out, flags=re.M)


def test_cli_bad_variant_is_one_line_exit_2(capsys):
    code, out, err = _run(capsys, ["pareto", LLAMA8B, "--gpu", "h100-sxm", "--variant", "no_such_key=3"])
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "no_such_key" in err
    code, _, err = _run(capsys, ["pareto", LLAMA8B, "--variant", "num_key_value_heads"])
    assert code == 2 and "key=value" in err
    code, _, err = _run(capsys, ["pareto", LLAMA8B, "--gpu", "nope"])
    assert code == 2 and err.count("\n") == 1


# ------------------------------------------------------------------------------ suggest --objective frontier
def test_suggest_ranks_variants_by_their_frontier_at_the_target_interactivity(capsys):
    code, out, _ = _run(
        capsys, ["suggest", LLAMA8B, "--gpu", "h100-sxm", "--at-interactivity", "150", "--format", "json", "--isolated"]
    )
    assert code == 0
    data = json.loads(out)
    assert data["search"]["objective"] == "frontier" and data["search"]["at_interactivity"] == 150
    cands = data["candidates"]
    assert 1 <= len(cands) <= 5
    tps = [c["estimates"]["frontier_tokens_per_s_per_gpu"] for c in cands]
    assert tps == sorted(tps, reverse=True)
    profile = load_profile("h100-sxm")
    sc = make_scenario("throughput", gpu=profile.name)
    # ranked on the frontier colint pareto prices by default: aggregated serving, each request's prefill charged
    sv = serving_for("aggregated", sc.context)
    base = frontier(load_design(LLAMA8B), profile, sc, serving=sv).throughput_at(150)
    assert data["original"]["estimates"]["frontier_tokens_per_s_per_gpu"] == pytest.approx(base, rel=1e-12)
    for c in cands[:2]:  # each figure is the frontier of the variant its edits build
        t = frontier(load_design(LLAMA8B, c["edits"]), profile, sc, serving=sv).throughput_at(150)
        assert c["estimates"]["frontier_tokens_per_s_per_gpu"] == pytest.approx(t, rel=1e-12)
        assert c["estimates"]["score_delta_pct"] == pytest.approx(round((1 - t / base) * 100, 3))
    code, out, _ = _run(capsys, ["suggest", LLAMA8B, "--gpu", "h100-sxm", "--objective", "frontier", "--isolated"])
    assert code == 0 and "frontier at 50 tok/s/user on h100-sxm" in out and "tok/s/GPU@50" in out


def test_cli_reads_the_project_settings(tmp_path, capsys):
    import shutil

    (tmp_path / "pyproject.toml").write_text('[tool.colint]\ngpus = ["h100-sxm"]\ndtype = "fp8"\n', encoding="utf-8")
    path = shutil.copy(LLAMA70B, tmp_path / "config.json")
    code, out, _ = _run(capsys, ["pareto", str(path)])
    assert code == 0 and "on h100-sxm" in out and "(h100-sxm, fp8 weights" in out
    code, out, _ = _run(capsys, ["pareto", str(path), "--isolated"])
    assert code == 0 and "on b200" in out and "(b200, bf16 weights" in out
    code, out, _ = _run(capsys, ["pareto", DEEPSEEK, "--gpu", "h100-sxm"])  # 1.3 TB of BF16 weights, 640 GB
    assert code == 0 and "no deployment within one 8-GPU domain holds the weights and one sequence" in out
    code, _, err = _run(capsys, ["pareto", LLAMA70B, "--gpu", "h100-sxm", "--dtype", "nvfp4"])
    assert code == 2 and err.count("\n") == 1 and "nvfp4" in err


# ------------------------------------------------------------------------------ pp for prefill
def test_pipelined_prefill_ftl():
    from colint.analysis.frontier import best_pipelined_ftl, scenario_for
    from colint.analysis.frontier_pricing import pipelined_ftl
    from colint.analysis.pipeline import best_partition
    from colint.analysis.workload import analyse

    profile = load_profile("gb200")
    spec = _spec(LLAMA70B)
    long = analyse(spec, profile, scenario_for(make_scenario("long-context"), Deployment(8), 1))  # 16 chunks
    assert pipelined_ftl(long, 1) == long.steps["prefill"].ftl_s
    part = best_partition(
        [c.prefill_s for c in long.layer_costs], 4, long.embedding_cost.prefill_s, long.lm_head_cost.prefill_s
    )
    send_s = 8192 * 8192 * 2.0 / (profile.interconnect_gbps * 1e9 / 2)
    assert pipelined_ftl(long, 4) == pytest.approx((16 + 3) * (part.max + send_s), rel=1e-12)
    ftl, pp = best_pipelined_ftl(long, Deployment(8), 72)
    assert pp == 8 and ftl < long.steps["prefill"].ftl_s / 4  # 80 layers over 8 stages: 23 stage times, not 16 x 8
    # a prompt of one chunk gains nothing from stages: every stage waits for the one before
    short = analyse(spec, profile, scenario_for(make_scenario("throughput"), Deployment(8), 1))
    assert best_pipelined_ftl(short, Deployment(8), 72) == (short.steps["prefill"].ftl_s, 1)
    assert best_pipelined_ftl(long, Deployment(8), 8) == (long.steps["prefill"].ftl_s, 1)  # no room for a stage
    f = frontier(spec, profile, make_scenario("long-context", gpu="gb200"))
    assert all(p.ftl_pipelined_s <= p.ftl_s for p in f.frontier) and any(p.ftl_pp > 1 for p in f.frontier)


def test_kv_replication_is_reported_where_helix_would_shard_it(deepseek_gb200, llama70b_h100):
    # MLA keeps one latent KV per token that every tp rank holds; Llama-70B at tp8 has 8 KV heads: no copies
    assert all(p.kv_replication == p.deployment.tp for p in deepseek_gb200.frontier)
    n = sum(p.deployment.tp > 1 for p in deepseek_gb200.frontier)
    assert any(
        note.startswith(
            f"{n} of the {len(deepseek_gb200.frontier)} frontier points hold the same KV cache on up to 64 GPUs"
        )
        for note in deepseek_gb200.notes
    )
    assert all(p.kv_replication == 1 for p in llama70b_h100.frontier) and llama70b_h100.notes == []
    assert all(p.kv_replication == p.deployment.tp for p in deepseek_gb200.points)


def test_a_wrong_vectorized_price_falls_back_to_analyse(monkeypatch):
    """The fast path's guard: when the vectorized price stops matching analyse (an op model in
    step_extras.py that is no longer affine in the concurrency), every point is priced by analyse."""
    import colint.analysis.frontier as fr

    real = fr.decode_prices

    def skewed(spec, profile, grid, w1, w2):  # right at the probes, 10 % slow in between
        p = real(spec, profile, grid, w1, w2)
        p.itl_s[: len(grid) - 2] *= [1.0 if b in fr.PROBE_CONCURRENCY else 1.1 for b in grid[: len(grid) - 2]]
        return p

    exact = frontier(_spec(LLAMA70B), load_profile("h100-sxm"), make_scenario("throughput"), exact=True)
    monkeypatch.setattr(fr, "decode_prices", skewed)
    f = frontier(_spec(LLAMA70B), load_profile("h100-sxm"), make_scenario("throughput"))
    assert f.notes[0].startswith("every point priced by analyse (slower): tp8 at concurrency ")
    assert [(p.deployment, p.concurrency, p.itl_s) for p in f.frontier] == [
        (p.deployment, p.concurrency, p.itl_s) for p in exact.frontier
    ]
    monkeypatch.setattr(fr, "decode_prices", lambda *a: None)
    f = frontier(_spec(LLAMA70B), load_profile("h100-sxm"), make_scenario("throughput"))
    assert "the vectorized price does not reproduce analyse at the probe concurrencies" in f.notes[0]
    assert [p.itl_s for p in f.frontier] == [p.itl_s for p in exact.frontier]


# ------------------------------------------------------------------------------ KV (Helix) parallelism
def test_kv_parallel_deployments_only_where_tp_reaches_the_kv_heads_or_mla():
    llama = deployments(_spec(LLAMA70B), load_profile("gb200"))  # 8 KV heads, 64 query heads
    assert sorted({(d.tp, d.kvp) for d in llama if d.kvp > 1}) == [(8, 2), (8, 4), (8, 8), (16, 2), (16, 4), (32, 2)]
    assert all(d.kvp == 1 for d in deployments(_spec(LLAMA70B), load_profile("h100-sxm")))  # tp8 fills HGX
    ds = deployments(_spec(DEEPSEEK), load_profile("gb200"))  # MLA: from tp1
    assert Deployment(1, 1, 2) in ds and Deployment(2, 64, 4) in ds and Deployment(8, 1, 8) in ds
    assert all(d.gpus <= 72 and d.ep % d.group_gpus == 0 for d in ds if d.ep > 1)


def test_kv_parallel_point_equals_inspect_and_says_kvp(capsys, deepseek_gb200):
    p = next(p for p in deepseek_gb200.frontier if p.deployment.kvp > 1)
    e = _inspect(capsys, DEEPSEEK, "gb200", p)
    assert e["scenario"]["kvp"] == p.deployment.kvp
    assert p.itl_s == pytest.approx(e["steps"]["decode"]["estimate_s"], rel=1e-12)
    assert p.kv_cache_bytes_per_gpu == pytest.approx(e["kv_cache_bytes_per_gpu"], rel=1e-12)
    assert f"kvp{p.deployment.kvp}" in p.deployment.label()


def test_kv_bytes_per_gpu_divide_by_kvp():
    from colint.analysis.workload import analyse

    spec, profile = _spec(LLAMA70B), load_profile("gb200")
    w = {
        k: analyse(spec, profile, make_scenario("throughput", tp=8, kvp=k, context=131072, concurrency=16))
        for k in (1, 2, 4, 8)
    }
    for k in (2, 4, 8):
        assert w[k].kv_cache_bytes_per_gpu == pytest.approx(w[1].kv_cache_bytes_per_gpu / k, rel=1e-12)
        assert w[k].max_decode_concurrency > w[1].max_decode_concurrency
        # each GPU reads 1/kvp of the context: the attention cores get cheaper, an all-to-all is added
        assert w[k].steps["decode"].attention_core_s < w[k // 2].steps["decode"].attention_core_s
        assert w[k].steps["decode"].comm_s > 0
    # the FFN runs tensor-parallel over tp x kvp GPUs: its weights per GPU shrink, attention's do not
    assert w[4].weight_bytes_per_gpu < w[1].weight_bytes_per_gpu


def test_long_context_gqa8_frontier_gains_from_kvp():
    """At 128k tokens on GB200 NVL72, Llama-3.3-70B (GQA-8: tp stops sharding the KV cache at 8) reaches
    more tok/s/GPU at 100 tok/s/user with KV (Helix) parallelism than without it."""
    f = _front(LLAMA70B, "gb200", context=131072)
    without = pareto([p for p in f.points if p.deployment.kvp == 1])
    assert any(p.deployment.kvp > 1 for p in f.frontier)
    assert throughput_at(f.frontier, 100.0) > 1.05 * throughput_at(without, 100.0)
    assert all((throughput_at(f.frontier, u) or 0) >= (throughput_at(without, u) or 0) for u in (20, 50, 100, 200))


def test_kvp_from_the_project_settings_and_the_flag(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.colint]\ntp = 8\nkvp = 4\n")
    cfg = tmp_path / "c.json"
    cfg.write_text(open(LLAMA70B).read())
    code, out, _ = _run(capsys, ["inspect", str(cfg), "--gpu", "gb200", "--format", "json"])
    assert code == 0 and json.loads(out)["estimates"]["scenario"]["kvp"] == 4
    code, out, _ = _run(capsys, ["inspect", str(cfg), "--gpu", "gb200", "--kvp", "2", "--format", "json"])
    assert code == 0 and json.loads(out)["estimates"]["scenario"]["kvp"] == 2  # the flag wins
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "pyproject.toml").write_text("[tool.colint]\nkvp = 0\n")
    (bad / "c.json").write_text(cfg.read_text())
    code, out, _ = _run(capsys, ["check", str(bad / "c.json"), "--gpu", "gb200"])
    assert code == 2 and "pyproject.toml:2:1 is invalid: kvp: Input should be greater than or equal to 1" in out


def test_vectorized_price_pads_the_expert_down_gemm_k_as_analyse():
    """Kimi-K2 with its 2048-wide experts tensor-parallel over 64 GPUs (tp1 kvp64 on GB200): the down GEMM's
    K of 32 runs padded to whole expert K tiles in analyse; the vectorized price pads it too, so the frontier
    stays on its fast path instead of pricing every point through analyse."""
    from colint.analysis.frontier import scenario_for
    from colint.analysis.frontier_pricing import decode_prices
    from colint.analysis.workload import analyse

    spec, profile = _spec(KIMI), load_profile("gb200")
    base = make_scenario("throughput", gpu=profile.name)
    d = Deployment(1, 1, 64)
    w1, w2 = (analyse(spec, profile, scenario_for(base, d, b)) for b in (1, 64))
    priced = decode_prices(spec, profile, [1, 64], w1, w2)
    assert float(priced.itl_s[0]) == pytest.approx(w1.steps["decode"].estimate_s, rel=1e-9)
    assert float(priced.itl_s[1]) == pytest.approx(w2.steps["decode"].estimate_s, rel=1e-9)
    assert not [n for n in frontier(spec, profile, base, KIMI).notes if "not affine" in n]
