"""The EP exchange of an MoE layer (issue 31): none where the EP domain lies within one attention group (every
rank already holds the group's tokens; the FFN's all-reduce combines), else the faster of DeepEP's dispatch +
combine and an all-gather + reduce-scatter of the domain's tokens (vLLM's default, TensorRT-LLM's attention-DP
MoE). aiconfigurator's measured TensorRT-LLM steps for Qwen3-235B on 8 H100 (tp8 ep8 at batch 1: 9.05 ms; tp1
attention-DP 8 x ep8 at batch 1 per rank: 23.13 ms) were 0.52x and 0.77x of colint's before, 1.13x and 1.04x
after (scripts/frontier_vs_aic.py, docs/serving.md)."""

from __future__ import annotations

import pytest

from colint.analysis.collectives import collective, moe_dispatch_combine
from colint.analysis.overlap import overlaps
from colint.analysis.scenario import make_scenario
from colint.analysis.step_extras import ep_all_to_all, expert_all_to_all_s
from colint.analysis.workload import analyse
from colint.hardware_profiles import load_profile
from colint.loading import load
from colint.normalize import normalize

QWEN = "tests/corpus/hf/qwen3-moe__Qwen3-235B-A22B.json"


def test_no_exchange_where_ep_lies_within_the_attention_group():
    spec = normalize(load(QWEN))
    prof = load_profile("h100-sxm")
    moe = [k for k in spec.layer_kinds if k.ffn.kind == "moe"][0]
    within = make_scenario("throughput", tp=8, ep=8, concurrency=8)
    across = make_scenario("throughput", tp=1, ep=8, concurrency=8)
    assert not ep_all_to_all(within) and ep_all_to_all(across)
    assert not overlaps(moe, within, "decode")  # nothing to hide behind two micro-batches
    w_ep = analyse(spec, prof, within)
    w_tp = analyse(spec, prof, make_scenario("throughput", tp=8, ep=1, concurrency=8))
    # the same two all-reduces per layer as experts tensor-parallel over the 8 GPUs
    assert w_ep.steps["decode"].comm_s == pytest.approx(w_tp.steps["decode"].comm_s, rel=1e-12)


@pytest.mark.parametrize("tokens", [1, 16, 512])
def test_exchange_is_the_faster_of_deepep_and_allgather_reducescatter(tokens):
    prof = load_profile("h100-sxm")
    sc = make_scenario("throughput", tp=1, ep=8)
    h, k = 4096, 8
    backend = "deepep_ll" if tokens <= 128 else "deepep_ht"
    deepep = (
        moe_dispatch_combine("dispatch", tokens, h, k, 8, "bfloat16", prof, None, backend, 128)[0]
        + moe_dispatch_combine("combine", tokens, h, k, 8, "bfloat16", prof, None, backend, 128)[0]
    )
    gathered = tokens * 8 * h * 2.0
    agrs = collective("all_gather", gathered, 8, prof)[0] + collective("reduce_scatter", gathered, 8, prof)[0]
    got = expert_all_to_all_s(tokens, k, h, sc, prof, 128)
    assert got == pytest.approx(min(deepep, agrs), rel=1e-12)
    if tokens == 1:
        # a token per rank: DeepEP's low-latency kernels wait ~100 us on flags; two NCCL collectives take ~20 us
        assert agrs < deepep / 3 and got == agrs


@pytest.mark.parametrize("gpu,table", [("h100-sxm", "h100_sxm"), ("b200", "b200_sxm")])
def test_custom_all_reduce_past_one_shot_runs_at_the_ring_rate(gpu, table):
    """Past one-shot's 1 MiB the TensorRT-LLM all-reduce is priced as NCCL's ring (it measures so: 8 H100 35.5 us
    at 2 MiB where a two-shot at link rate would take ~16): every measured 8-GPU row from 1 to 16 MiB in the shipped
    sample (the decode step's all-reduces: up to 512 tokens x 16k hidden) is within 1.3x of the estimate."""
    import csv
    import math

    prof = load_profile(gpu)
    rows = []
    with open(f"tests/data/measured/ops_custom_allreduce_{table}.csv", encoding="utf-8") as fh:
        for r in csv.DictReader(line for line in fh if not line.startswith("#")):
            size_bytes = int(r["message_size"]) * 2  # BF16 elements
            if int(r["num_gpus"]) == 8 and 1 << 20 < size_bytes <= 16 << 20:
                rows.append((size_bytes, float(r["latency"]) * 1e-3))
    assert rows
    for size_bytes, measured_s in rows:
        est = collective("all_reduce", size_bytes, 8, prof, implementation="custom")[0]
        assert est == collective("all_reduce", size_bytes, 8, prof)[0]  # the NCCL estimate
        assert abs(math.log2(est / measured_s)) < math.log2(1.3), (size_bytes, est, measured_s)


# DeepEP README, "Normal kernels with NVLink and RDMA forwarding" (H800, one CX7 400 Gb/s NIC per GPU, 4096 tokens a
# rank, hidden 7168, top-8 of 256 experts, FP8 dispatch, BF16 combine): "bottleneck bandwidth" in GB/s. It is a
# logical rate: tests/test_internode.py divides num_rdma_token_sent x hidden bytes (the (token, node) pairs,
# de-duplicated by node, the local node included) by the kernel's time; its top-k groups are min(nodes, 4), so
# at 16 and 32 ranks (2 and 4 nodes) every node may be picked, as colint's uniform router picks them
DEEPEP_INTERNODE_GBPS = {(16, "dispatch"): 43.0, (16, "combine"): 43.0, (32, "dispatch"): 58.0, (32, "combine"): 57.0}


@pytest.mark.parametrize("ep, phase", sorted(DEEPEP_INTERNODE_GBPS))
def test_high_throughput_exchange_past_the_domain_forwards_once_per_node(ep, phase):
    """Past the NVLink domain DeepEP's normal kernels send a token once per remote node holding any of its experts
    and fan it out over NVLink there. colint priced a copy per remote rank at the NIC's rate: 2.1-2.7x the
    published times at 16 and 32 ranks; the per-node model is within 0.7-1.45x of them."""
    prof = load_profile("h100-sxm")  # 8 GPUs a node, 400 Gb/s a GPU (colint's H800 stand-in: the same NIC)
    nodes, tokens, hidden, topk = ep // 8, 4096, 7168, 8
    wire = "fp8" if phase == "dispatch" else "bfloat16"
    node_pairs = tokens * nodes * (1 - (1 - 1 / nodes) ** topk)  # (token, node) pairs, local node included
    wire_bytes = (1 + 4 / 128) if phase == "dispatch" else 2.0
    published_s = node_pairs * hidden * wire_bytes / (DEEPEP_INTERNODE_GBPS[(ep, phase)] * 1e9)
    est_s, sol_s = moe_dispatch_combine(phase, tokens, hidden, topk, ep, wire, prof, backend="deepep_ht", experts=256)
    assert 0.7 <= est_s / published_s <= 1.45
    # the speed-of-light part is the remote nodes' bytes at the NIC's 50 GB/s
    remote_pairs = node_pairs * (nodes - 1) / nodes
    assert sol_s == pytest.approx(remote_pairs * hidden * wire_bytes / 50e9, rel=1e-9)
    # within the domain nothing changes: a copy per remote rank over NVLink, as measured at 8 ranks
    inside, _ = moe_dispatch_combine(phase, tokens, hidden, topk, 8, wire, prof, backend="deepep_ht", experts=256)
    assert inside == pytest.approx({"dispatch": 678e-6, "combine": 1093e-6}[phase], rel=0.01)


# -- group-limited (node-limited) routing ----------------------------------------------------------------------


def _routed_parts(parts: int, picks: int, groups: int, per_token: int, experts: int = 256, draws: int = 20000):
    """Mean distinct parts reached by a token, simulated: ``per_token`` of ``groups`` groups drawn, then ``picks``
    experts uniformly (with replacement) among the chosen groups' experts, ``parts`` contiguous blocks."""
    import random

    rng = random.Random(31)
    size = experts // groups
    total = 0
    for _ in range(draws):
        chosen = rng.sample(range(groups), per_token)
        total += len({(rng.choice(chosen) * size + rng.randrange(size)) * parts // experts for _ in range(picks)})
    return total / draws


@pytest.mark.parametrize(
    "parts, groups, per_token", [(8, 8, 4), (4, 8, 4), (2, 8, 4), (16, 8, 4), (8, 8, 3), (8, 1, 1)]
)
def test_parts_a_group_limited_token_reaches(parts, groups, per_token):
    """The closed forms (whole groups per part: hypergeometric; groups spanning parts: the chosen groups' parts)
    against a simulation of the router; DeepSeek-V3 (top-8 within 4 of 8 groups) reaches 3.6 of 8 ranks where a
    uniform router reaches 5.25."""
    from colint.analysis.moe import parts_touched

    assert parts_touched(parts, 8, groups, per_token) == pytest.approx(
        _routed_parts(parts, 8, groups, per_token), rel=0.02
    )


def test_deepseek_v3_groups_reach_fewer_ranks():
    """DeepSeek-V3's top-8 within 4 of 8 groups over 8 ranks (a group a rank): 3.60 ranks, a uniform router's 5.25;
    a limit of every group (or one group of all the experts) binds nothing."""
    from colint.analysis.moe import group_limit_share, parts_touched

    assert parts_touched(8, 8, 8, 4) == pytest.approx(3.5995, abs=1e-4)
    assert parts_touched(8, 8) == pytest.approx(5.2511, abs=1e-4)
    assert group_limit_share(8, 8, (8, 4)) == pytest.approx(3.5995 / 5.2511, abs=1e-4)
    assert group_limit_share(8, 8, (8, 8)) == group_limit_share(8, 8, (1, 1)) == 1.0


def test_high_throughput_exchange_of_a_group_limited_router_past_the_domain():
    """DeepEP's README at 64 ranks (8 nodes; 51 / 50 GB/s; its test routes top-8 within min(nodes, 4) = 4 node
    groups, so a token reaches 3.6 nodes): colint with the same routing is 1.43x / 1.33x of the published time, as
    at 32 ranks (1.42x / 1.31x); priced as a uniform router's 5.25 nodes it would be 2.0x. Within one node,
    DeepSeek-V3's groups (a rank's 32 experts are one group) cut the copies per token from 4.59 to 3.15 remote
    ranks."""
    prof = load_profile("h100-sxm")
    tokens, hidden, ratios = 4096, 7168, []
    for phase, gbps in (("dispatch", 51.0), ("combine", 50.0)):
        wire, wire_bytes = ("fp8", 1 + 4 / 128) if phase == "dispatch" else ("bfloat16", 2.0)
        published_s = tokens * _routed_parts(8, 8, 8, 4) * hidden * wire_bytes / (gbps * 1e9)
        est_s, _ = moe_dispatch_combine(phase, tokens, hidden, 8, 64, wire, prof, experts=256, groups=(8, 4))
        uniform_s, _ = moe_dispatch_combine(phase, tokens, hidden, 8, 64, wire, prof, experts=256)
        ratios.append((round(est_s / published_s, 2), round(uniform_s / published_s, 2)))
    assert ratios == [(1.43, 2.02), (1.33, 1.9)]
    inside = [
        moe_dispatch_combine("dispatch", tokens, hidden, 8, 8, "fp8", prof, groups=g)[1] for g in ((8, 4), (1, 1))
    ]
    assert inside[0] / inside[1] == pytest.approx(3.5995 / 5.2511, rel=1e-3)  # the bytes sent: distinct ranks


def test_deepseek_v3_prefill_exchange_is_priced_with_its_groups():
    """analyse reads the router's groups off the spec. DeepSeek-V3's prefill on H100 at ep 8 (one node: a token goes
    to 3.15 other ranks, not 4.59) and at ep 64 (eight nodes: to 3.15 other nodes, not 4.59): the MoE exchange of
    1,024 tokens per rank takes 411 us, not 540, and 2.26 ms, not 3.19; the same model with its groups taken away
    pays the uniform exchange in its step."""
    from dataclasses import replace

    spec = normalize(load("tests/corpus/hf/deepseek__DeepSeek-V3.json"))
    assert spec.layer_kinds[1].ffn.group_limited
    ungrouped = replace(
        spec,
        layer_kinds=[replace(k, ffn=replace(k.ffn, expert_groups=1, groups_per_token=1)) for k in spec.layer_kinds],
    )
    prof = load_profile("h100-sxm")
    for ep, expected_us in ((8, (411, 540)), (64, (2264, 3190))):
        sc = make_scenario("throughput", gpu=prof.name, dtype="fp8_block", tp=1, ep=ep)
        got = tuple(round(expert_all_to_all_s(1024, 8, 7168, sc, prof, 256, g) * 1e6) for g in ((8, 4), (1, 1)))
        assert got == expected_us
        grouped, uniform = (analyse(s, prof, sc).steps["prefill"] for s in (spec, ungrouped))
        assert grouped.comm_s < uniform.comm_s and grouped.estimate_s < uniform.estimate_s
