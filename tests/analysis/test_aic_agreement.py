"""colint against NVIDIA aiconfigurator 0.12.0's measured-kernel figures (issue 31), from the committed CSVs in
tests/data/ (scripts/frontier_vs_aic.py; aiconfigurator is not run): how many decode steps at the same deployment
and batch, and how many aggregated- and disaggregated-frontier points at 20 / 50 / 100 tokens/s per user, are within
1.25x, and the rows the busiest-rank routing and the per-user TPOT moved (docs/serving.md, "Against aiconfigurator").
A change to the step or serving model that moves them must say so there."""

from __future__ import annotations

import os

import pytest
from tests.scripts import load_script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def script():
    return load_script("frontier_vs_aic")


@pytest.fixture(scope="module")
def steps(script):
    return script.step_ratios(script.load_steps())


def _ratio(steps, model: str, system: str, label: str, batch: int) -> float:
    (hit,) = [
        x
        for x in steps
        if x[0]["model"] == model and x[0]["system"] == system and x[1] == label and x[0]["batch"] == batch
    ]
    return hit[3]


def test_decode_step_grid_within_1_25x(script, steps):
    assert len(steps) == 104
    assert script.within([x[3] for x in steps]) == 95
    fit = [x[3] for x in steps if not x[0]["oom"]]
    assert len(fit) == 74 and script.within(fit) == 69
    deepseek = [x[3] for x in steps if x[0]["model"] == "deepseek-ai/DeepSeek-R1"]
    assert script.within(deepseek) == len(deepseek) == 25


@pytest.mark.parametrize(
    "model, system, label, batch, ratio",
    [
        # the busiest EP rank reads the experts its picks touch (were 1.39, 1.27, 1.33, 1.30: misses)
        ("deepseek-ai/DeepSeek-R1", "b200_sxm", "tp8 ep8", 4, 1.20),
        ("deepseek-ai/DeepSeek-R1", "b200_sxm", "tp8 experts tp2 x ep4", 4, 1.16),
        ("deepseek-ai/DeepSeek-R1", "b200_sxm", "tp1 ep8 dp8", 1, 1.19),
        ("Qwen/Qwen3-235B-A22B", "b200_sxm", "tp8 ep8", 4, 1.14),
        # aiconfigurator's power-law routing touches fewer experts at 16 tokens (128 picks of 128 experts)
        ("Qwen/Qwen3-235B-A22B", "h100_sxm", "tp8", 16, 0.74),
        ("Qwen/Qwen3-235B-A22B", "h100_sxm", "tp8 experts tp2 x ep4", 16, 0.74),
        # experts tensor-parallel: no EP rank, unchanged
        ("Qwen/Qwen3-235B-A22B", "h100_sxm", "tp8", 1, 1.10),
    ],
)
def test_decode_step_rows(steps, model, system, label, batch, ratio):
    assert _ratio(steps, model, system, label, batch) == pytest.approx(ratio, abs=0.005)


def _frontier_ratios(script, ep_overlap: str | None = None, total_gpus: int = 8) -> dict:
    ratios = {}
    for (case, system), pts in sorted(script.load_points(total_gpus).items()):
        f = script.colint_frontier(case, system, "aggregated", ep_overlap, total_gpus)
        for u in script.LEVELS:
            a, c = script.at(pts, u), f.throughput_at(u)
            if a and c:
                ratios[(case, system, u)] = c / a
    return ratios


def test_aggregated_frontier_within_1_25x(script):
    """At colint's defaults (the EP exchange in series, as the engines run it unless two-batch overlap is on, and as
    aiconfigurator prices TensorRT-LLM): 19 of 24, the same as --ep-overlap off."""
    ratios = _frontier_ratios(script)
    assert len(ratios) == 24
    assert script.within(list(ratios.values())) == 19
    assert ratios == _frontier_ratios(script, "off")
    # the per-user TPOT carries the other sequences' prefills, not the user's own (0.79x before)
    assert ratios[("llama70b_bf16", "b200_sxm", 100.0)] == pytest.approx(0.83, abs=0.005)
    # the DeepSeek-R1 step at 4 tokens (tp8 ep8) reads its busiest rank's experts (1.87x before, 1.42x then; 1.44x
    # read off the finer concurrency grid)
    assert ratios[("deepseek_r1", "b200_sxm", 100.0)] == pytest.approx(1.44, abs=0.005)
    # the attention-DP points at 20 tokens/s per user, whose mixed steps carry thousands of tokens
    assert ratios[("deepseek_r1", "b200_sxm", 20.0)] == pytest.approx(1.22, abs=0.005)
    assert ratios[("qwen3_235b", "b200_sxm", 20.0)] == pytest.approx(1.07, abs=0.005)


def test_aggregated_frontier_with_two_micro_batches_where_they_pay(script):
    """--ep-overlap auto hides the exchange behind two micro-batches wherever that is faster (an engine with
    two-batch overlap enabled): 17 of 24, its attention-DP points at 20 tokens/s per user above aiconfigurator's."""
    ratios = _frontier_ratios(script, "auto")
    assert script.within(list(ratios.values())) == 17
    assert ratios[("deepseek_r1", "b200_sxm", 20.0)] == pytest.approx(1.39, abs=0.005)
    assert ratios[("qwen3_235b", "b200_sxm", 20.0)] == pytest.approx(1.26, abs=0.005)


def test_aggregated_frontier_on_two_hgx_nodes(script):
    """--total-gpus 16 on both sides (aiconfigurator's MoE replicas may span the two nodes, its dense ones stay in
    one; colint's may span both): 13 of 17 within 1.25x. The misses: Qwen3 on H100 at 50 (the power-law routing of
    the 8-GPU table) and DeepSeek-R1 on H100, which needs both nodes: at 20 tok/s/user aiconfigurator's points
    with TTFT under 2 s stop at 32.7 tok/s/user (its TTFT counts the burst of prefills ahead of a request), at 50
    it runs attention tp16 across the nodes (20 tok/s/GPU; its attention-DP is all-or-nothing and it tries no
    pipeline stages) where colint's four pipeline stages of tp4 reach 59."""
    ratios = _frontier_ratios(script, total_gpus=16)
    assert len(ratios) == 17 and script.within(list(ratios.values())) == 13
    # dense replicas of 8 on two nodes: the 8-GPU frontier per GPU, as aiconfigurator's
    eight = _frontier_ratios(script)
    for key in [k for k in ratios if k[0] == "llama70b_bf16" and k[1] == "b200_sxm"]:
        assert ratios[key] == pytest.approx(eight[key], rel=1e-9)
    assert ratios[("deepseek_r1", "h100_sxm", 20.0)] == pytest.approx(2.01, abs=0.01)
    assert ratios[("deepseek_r1", "h100_sxm", 50.0)] == pytest.approx(2.91, abs=0.01)


@pytest.fixture(scope="module")
def disaggregated(script):
    """colint's disaggregated frontier per (case, system, total GPUs) of every aiconfigurator disagg run."""
    return {
        (case, system, total): script.colint_frontier(case, system, "disaggregated", None, total)
        for total in (8, 16)
        for case, system in script.disagg_runs(total)
    }


def _disagg_ratios(script, frontiers, total: int, raw: bool) -> dict:
    points = script.load_disagg_points(total, "cluster", raw)
    ratios = {}
    for case, system in script.disagg_runs(total):
        f = frontiers[(case, system, total)]
        for u in script.LEVELS:
            a, c = script.at(points.get((case, system), []), u), f.throughput_at(u)
            if a and c:
                ratios[(case, system, u)] = c / a
    return ratios


def test_disaggregated_frontier_against_aiconfigurator(script, disaggregated):
    """colint's disaggregated frontier (tokens/s per GPU of --total-gpus, idle GPUs counted) against aiconfigurator's
    tokens/s/gpu_cluster at 20 / 50 / 100 tokens/s per user (docs/serving.md, "Disaggregated serving"). With its
    defaults 2 of 14 points within 1.25x at 16 GPUs and 2 of 8 at 8: its empirical factors (prefill x0.9 / x1.1,
    decode x0.92 at a TPOT x1.08) set most of the gap. With them set to 1, 12 of 14 and 4 of 8; the misses are the
    power-law routing (Qwen3 at 50), the fast end where the batch grows at nearly the same ITL, and memory."""
    default16, default8 = (_disagg_ratios(script, disaggregated, t, False) for t in (16, 8))
    raw16, raw8 = (_disagg_ratios(script, disaggregated, t, True) for t in (16, 8))
    assert (len(default16), script.within(list(default16.values()))) == (14, 2)
    assert (len(default8), script.within(list(default8.values()))) == (8, 2)
    assert (len(raw16), script.within(list(raw16.values()))) == (14, 12)
    assert (len(raw8), script.within(list(raw8.values()))) == (8, 4)
    # Llama-70B on 16 H100 at 50: tp8 at 80 sequences (ITL 20.1 ms) beside two tp4 prefill instances, 246 tok/s/GPU;
    # aiconfigurator 185 with its factors (64 sequences, TPOT 18.5 x 1.08 ms, the rate x 0.92), 256 without
    key = ("llama70b_bf16", "h100_sxm", 50.0)
    assert default16[key] == pytest.approx(1.33, abs=0.005) and raw16[key] == pytest.approx(0.96, abs=0.005)
    # idle GPUs counted: Llama-70B on 16 B200 at 100 was 464 tok/s/GPU over the 13 the pools used (1.24x raw)
    assert raw16[("llama70b_bf16", "b200_sxm", 100.0)] == pytest.approx(0.98, abs=0.005)
    # the power-law routing of aiconfigurator's MoE tables (its tp8 at 20 sequences 19.7 ms, colint's 25.8)
    assert raw16[("qwen3_235b", "h100_sxm", 50.0)] == pytest.approx(0.57, abs=0.005)
    # DeepSeek-R1 FP8 on H100: neither finds a disaggregated deployment (an instance needs a whole node)
    for total in (8, 16):
        assert not disaggregated[("deepseek_r1", "h100_sxm", total)].frontier
        assert ("deepseek_r1", "h100_sxm") not in script.load_disagg_points(total)
