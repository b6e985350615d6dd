"""moe_tp x moe_ep mixes (issue 31): routed experts split moe_tp ways (gate/up on N, down on K) and spread over
ep / moe_tp groups of GPUs, as TensorRT-LLM's moe_tp_size x moe_ep_size. A small MoE fixture (10 experts of
width 512 on hidden 1024, top-2, two layers) pins each expert GEMM's shape and the bytes per GPU exactly; the
frontier enumerates the mixes and names them; the committed aiconfigurator decode-step grid parses and compares
(scripts/frontier_vs_aic.py, without aiconfigurator)."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from colint.analysis.frontier import Deployment, deployments, frontier, moe_tp_mixes, scenario_for
from colint.analysis.gemm_rows import _shard, gemm_entries, routed_expert_rows
from colint.analysis.scenario import make_scenario
from colint.analysis.step_extras import ep_all_to_all, expert_all_to_all_s
from colint.analysis.workload import analyse
from colint.cli.main import main
from colint.hardware_profiles import load_profile
from colint.loading import load
from colint.normalize import normalize
from tests.scripts import load_script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIXTRAL = os.path.join(ROOT, "tests", "corpus", "hf", "mixtral__Mixtral-8x7B-v0.1.json")
QWEN = os.path.join(ROOT, "tests", "corpus", "hf", "qwen3-moe__Qwen3-235B-A22B.json")
H, W_EXPERT, E, LAYERS = 1024, 512, 10, 2  # the fixture: hidden, expert width, experts, layers
B_W = 2  # BF16 weight bytes


@pytest.fixture(scope="module")
def small_moe(tmp_path_factory):
    cfg = json.load(open(MIXTRAL, encoding="utf-8"))
    cfg.update(
        hidden_size=H, intermediate_size=W_EXPERT, num_local_experts=E, num_hidden_layers=LAYERS, num_attention_heads=8,
        num_key_value_heads=8,
    )  # fmt: skip
    path = tmp_path_factory.mktemp("moe") / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return normalize(load(str(path)))


def _expert_shards(spec, sc):
    entry = gemm_entries(spec)[0]
    return {f[0]: _shard(f[2], f[3], sc) for f in entry.fused if f[2].parallel == "expert"}


def test_mix_shards_each_expert_moe_tp_ways_and_spreads_them_over_moe_ep(small_moe):
    mix = replace(make_scenario(tp=2, ep=8), moe_tp=2)  # experts tp2 x ep4, attention tp2 x DP 4
    assert (mix.moe_ep, mix.attention_dp_groups, mix.experts_label()) == (4, 4, "experts tp2 x ep4")
    # gate/up (N = 2 x 512) split on N, down (K = 512) on K, ceil(10 / 4) = 3 experts per GPU
    assert _expert_shards(small_moe, mix) == {
        "moe.experts.gate_up": (512, 1024, 3.0),
        "moe.experts.down_proj": (1024, 256, 3.0),
    }
    assert _expert_shards(small_moe, make_scenario(tp=2, ep=8)) == {  # all-EP: ceil(10 / 8) = 2 whole experts
        "moe.experts.gate_up": (1024, 1024, 2.0),
        "moe.experts.down_proj": (1024, 512, 2.0),
    }


def test_mix_weight_bytes_per_gpu_exactly(small_moe):
    prof = load_profile("h100-sxm")

    def weights(sc):
        return analyse(small_moe, prof, replace(sc, decode_concurrency=1)).weight_bytes_per_gpu

    all_ep = weights(make_scenario(tp=2, ep=8))
    mix = weights(replace(make_scenario(tp=2, ep=8), moe_tp=2))
    all_tp = weights(make_scenario(tp=2))
    expert = (2 * W_EXPERT * H + H * W_EXPERT) * B_W  # one whole expert's gate, up and down
    # per GPU: 3 half experts (mix), 2 whole experts (all-EP), 10 half experts (experts tensor-parallel over tp2)
    assert mix - all_ep == LAYERS * (3 * expert / 2 - 2 * expert) == -3_145_728
    assert all_tp - all_ep == LAYERS * (10 * expert / 2 - 2 * expert) == 18_874_368


def test_mix_grouped_gemm_rows_wait_for_the_busiest_expert_group(small_moe):
    prof = load_profile("h100-sxm")
    sc = replace(make_scenario(tp=1, ep=8, concurrency=16), moe_tp=4)  # 8 attention-DP groups, experts tp4 x ep2
    w = analyse(small_moe, prof, sc)
    rows = [g for g in w.gemms["decode"] if g.parallel == "expert"]
    busiest = routed_expert_rows(16 * 8, 2, E, 2)[1]  # over the 2 expert groups, not the 8 GPUs
    assert busiest != routed_expert_rows(16 * 8, 2, E, 8)[1]
    for g in rows:
        want = estimate_layer_s(g, busiest, prof)
        assert g.layer_s == pytest.approx(want, rel=1e-12)


def estimate_layer_s(row, m_step: int, prof) -> float:
    """A routed-expert row's grouped-GEMM time at the busiest group's rows (gemm_rows._row's own formula)."""
    from colint.analysis.gemm_model import estimate_s
    from colint.analysis.ops_moe import expert_k_padded, grouped_model

    k = expert_k_padded(row.k, row.dtype) if "down" in row.name else row.k
    return estimate_s(
        m_step, int(round(row.n * row.instances)), k, row.dtype, prof, "bf16", standalone=False,
        model=grouped_model(prof),
    )  # fmt: skip


def test_mix_exchanges_only_across_attention_groups_and_sends_each_pick_to_moe_tp_gpus(small_moe):
    prof = load_profile("h100-sxm")
    within = replace(make_scenario(tp=8, ep=8), moe_tp=2)  # experts tp2 x ep4 inside one tp8 attention group
    across = replace(make_scenario(tp=1, ep=8), moe_tp=2)  # attention DP 8: tokens meet in the experts' GPUs
    assert not ep_all_to_all(within) and ep_all_to_all(across)
    # DeepEP copies a token to each of its top-k experts' moe_tp GPUs: the exchange of top-2 at moe_tp 2 is all-EP's
    # exchange of top-4 (the all-gather + reduce-scatter moves every token alike)
    all_ep = make_scenario(tp=1, ep=8)
    for tokens in (1, 64, 512):
        assert expert_all_to_all_s(tokens, 2, H, across, prof, E) == expert_all_to_all_s(tokens, 4, H, all_ep, prof, E)


def test_frontier_enumerates_mixes_and_names_them(small_moe):
    deps = deployments(small_moe, load_profile("h100-sxm"))
    mixes = [d for d in deps if d.moe_tp > 1]
    # every ep of 4 or 8 GPUs with moe_tp 2 .. ep / 2 (width 512 / moe_tp >= 128): 2x2, 2x4, 4x2
    assert {(d.moe_tp, d.moe_ep) for d in mixes} == {(2, 2), (2, 4), (4, 2)}
    assert Deployment(8, 8, 1, 2) in deps and Deployment(1, 8, 1, 4) in deps
    assert Deployment(8, 8, 1, 2).label() == "tp8 experts tp2 x ep4"
    assert Deployment(1, 8, 1, 2).label() == "tp1 experts tp2 x ep4 dp8"
    assert moe_tp_mixes(16, [2048]) == []  # past one HGX node: all-EP only
    assert moe_tp_mixes(8, [256]) == [2]  # 256 / 4 would leave a shard below one 128-wide tile
    sc = scenario_for(make_scenario(), Deployment(8, 8, 1, 2), 4)
    assert (sc.tp, sc.ep, sc.moe_tp, sc.moe_ep, sc.decode_concurrency) == (8, 8, 2, 4, 4)
    assert "ep=8 (experts tp2 x ep4)" in sc.label()


def test_pareto_json_names_the_mix_on_the_frontier(capsys):
    """Qwen3-235B on 8 H100 (aiconfigurator's frontier also runs experts tp2 x ep4 there): mixes reach the frontier,
    and its points equal analyse's at their deployment (no fallback)."""
    assert main(["pareto", QWEN, "--gpu", "h100-sxm", "--isl", "4000", "--osl", "500", "--format", "json"]) == 0
    (f,) = json.loads(capsys.readouterr().out)["designs"][0]["gpus"]
    assert "tp8 experts tp2 x ep4" in f["deployments"]
    mixed = [p for p in f["frontier"] if p["moe_tp"] > 1 and p["ep"] > 1]
    assert mixed and all(p["deployment"].startswith(f"tp{p['tp']} experts tp{p['moe_tp']} x ep") for p in mixed)
    assert all(p["moe_tp"] * p["moe_ep"] == p["ep"] for p in mixed)
    assert not any("priced by analyse" in n for n in f["notes"])


def test_mix_frontier_points_equal_analyse():
    spec = normalize(load(QWEN))
    prof = load_profile("h100-sxm")
    base = make_scenario("throughput", gpu=prof.name, context=4500)
    f = frontier(spec, prof, base)
    mixed = [p for p in f.points if p.deployment.moe_tp > 1][::7]
    assert mixed
    for p in mixed:
        w = analyse(spec, prof, scenario_for(base, p.deployment, p.concurrency))
        assert p.itl_s == pytest.approx(w.steps["decode"].estimate_s, rel=1e-6)


# ------------------------------------------------------------------------------ the committed decode-step grid
def _script():
    return load_script("frontier_vs_aic")


def test_committed_step_grid_parses_and_compares():
    mod = _script()
    rows = mod.load_steps()
    assert {r["system"] for r in rows} <= {"h100_sxm", "b200_sxm", "a100_sxm"}  # the GPUs we were given only
    assert {r["model"] for r in rows} == {v[0] for v in mod.CASES.values()}
    assert all(r["moe_tp"] * r["moe_ep"] in (1, r["tp"] * r["attention_dp"]) for r in rows)
    assert any(r["moe_tp"] > 1 and r["moe_ep"] > 1 for r in rows)  # the grid has mixes
    assert mod.deployment_of(8, 1, 2, 4) == Deployment(8, 8, 1, 2)
    assert mod.deployment_of(1, 8, 1, 8) == Deployment(1, 8)
    assert mod.deployment_of(8, 1, 8, 1) == Deployment(8)
    assert mod.deployment_of(4, 1, 1, 1) == Deployment(4)
    picked = [r for r in rows if r["batch"] in (1, 64)][:6]
    res = mod.step_ratios(picked)
    assert [x[0] for x in res] == picked
    for r, label, itl, ratio in res:
        assert itl > 0 and ratio == pytest.approx(r["tpot_ms"] / itl)
        assert label == mod.deployment_of(r["tp"], r["attention_dp"], r["moe_tp"], r["moe_ep"]).label()
    assert mod.within([1.0, 1.25, 0.8, 1.26, 0.79]) == 3


# ------------------------------------------------------------------------------ the step's MoE data passes
def test_fp8_block_moe_on_datacenter_blackwell_pays_deepgemm_masked_groups_per_local_expert():
    """TensorRT-LLM runs FP8 block-scaled MoE layers in DeepGEMM's masked layout on SM100, one group per local
    expert touched or not (the measured B200 DeepSeek layer at 1 token: 105 us with 256 local experts, experts tp8;
    47 us with 32, ep8): the step charges moe_masked_group_us per local expert there, and nowhere else."""
    from colint.analysis.step_extras import moe_data_s
    from colint.hardware_profiles import time_model

    spec = normalize(load(os.path.join(ROOT, "tests", "corpus", "hf", "deepseek__DeepSeek-V3.json")))
    kind = next(k for k in spec.layer_kinds if k.ffn.kind == "moe")
    h = spec.hidden_size
    # DeepGEMM dispatches on compute capability major 10: Blackwell Ultra (10.3) too, not Thor (11.0) or sm_120
    cases = (("b200", True), ("gb200", True), ("b300", True), ("gb300", True), ("h100-sxm", False))
    for gpu, masked in cases + (("jetson-thor", False), ("rtx-pro-6000", False)):
        prof = load_profile(gpu)
        tmod = time_model(prof)
        for sc, local in (
            (make_scenario(tp=8, dtype="fp8_block"), 256),
            (make_scenario(tp=8, ep=8, dtype="fp8_block"), 32),
            (replace(make_scenario(tp=8, ep=8, dtype="fp8_block"), moe_tp=2), 64),
        ):
            # per-tensor FP8: the CUTLASS path, the same bytes per element but for fp8_block's scales (< 0.1 us here)
            per_tensor = replace(sc, weights="fp8", activations="fp8")
            extra = moe_data_s(kind, 4, h, sc, prof, tmod) - moe_data_s(kind, 4, h, per_tensor, prof, tmod)
            want = tmod.moe_masked_group_us * 1e-6 * local if masked else 0.0
            assert extra == pytest.approx(want, rel=1e-3, abs=1e-7), gpu


def test_pareto_text_names_the_mix_and_says_what_it_is(capsys):
    assert main(["pareto", QWEN, "--gpu", "h100-sxm", "--isl", "4000", "--osl", "500"]) == 0
    out = capsys.readouterr().out
    assert "  tp8 experts tp2 x ep4 " in out
    assert "experts tpA x epB = each routed expert split over A GPUs (gate/up on N, down on K)" in out
