"""Collectives of GPUs without NVLink (issue 31): a ring over each GPU's PCIe x16 link, from first principles.

Every expected figure is computed here from the formula (PCI-SIG link rates, nccl-tests bus-bandwidth factors,
NCCL's ring latency model), not read back from colint."""

import pytest

from colint.analysis.collectives import PCIE_HOP_LATENCY_RATIO, collective, link_bytes_per_s, over_pcie
from colint.hardware_profiles import load_profile, time_model

GEN4_X16 = 16e9 * 16 * (128 / 130) / 8  # 16 GT/s x 16 lanes, 128b/130b: 31.5 GB/s one direction
GEN5_X16 = 32e9 * 16 * (128 / 130) / 8  # 63.0 GB/s


@pytest.mark.parametrize(
    "gpu, per_direction",
    [("l4", GEN4_X16), ("l40s", GEN4_X16), ("rtx-4090", GEN4_X16), ("rtx-5090", GEN5_X16), ("rtx-pro-6000", GEN5_X16)],
)
def test_peers_without_nvlink_share_the_pcie_link_of_their_generation(gpu, per_direction):
    p = load_profile(gpu)
    assert p.interconnect_gbps == 0 and p.scale_up == "PCIe"
    assert link_bytes_per_s(p, 2) == pytest.approx(per_direction, rel=1e-12)
    assert p.scale_up_gbps == pytest.approx(2 * per_direction / 1e9, rel=1e-12)
    assert over_pcie(p, p.domain_size) and not over_pcie(p, p.domain_size + 1)


def test_beyond_one_host_the_nic_paces_the_ring():
    l40s = load_profile("l40s")  # 8 per host, a 400 Gb/s NIC per 2 GPUs: 25 GB/s each way per GPU
    assert link_bytes_per_s(l40s, 16) == pytest.approx(min(GEN4_X16, l40s.scale_out_gbps * 1e9 / 2))
    assert link_bytes_per_s(load_profile("h100-sxm"), 8) == 450e9  # NVLink profiles unchanged


@pytest.mark.parametrize("message_bytes", [16 * 1024, 1 << 20, 16 << 20])
@pytest.mark.parametrize("gpu, link_share", [("l40s", 1.0), ("rtx-4090", 0.5)])
def test_a_pcie_all_reduce_is_a_ring_of_nccl_latency_and_bus_bandwidth(message_bytes, gpu, link_share):
    """L40S (GPU peer access over PCIe) and GeForce RTX 4090 (none: every transfer staged through host memory, so
    a ring that sends and receives at once gets half of each GPU's link)."""
    p = load_profile(gpu)
    assert p.pcie_p2p is (link_share == 1.0)
    tm = time_model(p)
    n = 4
    moved = 2 * (n - 1) / n * message_bytes  # ring all-reduce bus-bandwidth factor (nccl-tests PERFORMANCE.md)
    eff = GEN4_X16 * tm.link_efficiency * min(1.0, (n - 1) * tm.peer_link_share) * link_share
    hop_us = tm.collective_step_latency_us * 5.7 / 3.4  # NCCL hwLat Ring/Simple: PCI 5.7 us vs NVLink 3.4 us
    steps = 2 * (n - 1)
    ll_base, ll_hop, ll_bw = tm.nccl_protocols["ll"]
    s_base, s_hop, s_bw = tm.nccl_protocols["simple"]
    ll = (tm.collective_latency_us + ll_base + ll_hop * hop_us * steps) * 1e-6 + moved / (eff * ll_bw)
    simple = (tm.collective_latency_us + s_base + s_hop * hop_us * steps) * 1e-6 + moved / (eff * s_bw)
    est, sol = collective("all_reduce", message_bytes, n, p)
    assert est == pytest.approx(min(ll, simple), rel=1e-12)  # LL128 is NVLink-only in NCCL
    assert sol == pytest.approx(moved / GEN4_X16, rel=1e-12)
    # no custom all-reduce over more than two PCIe-only GPUs (vLLM): the same NCCL ring
    assert collective("all_reduce", message_bytes, n, p, implementation="custom")[0] == est
    assert PCIE_HOP_LATENCY_RATIO == 5.7 / 3.4


def test_two_pcie_gpus_keep_the_custom_all_reduce():
    p = load_profile("rtx-pro-6000")
    tm = time_model(p)
    m = 64 * 1024
    one_shot = tm.custom_allreduce_latency_us * 1e-6 + m / (GEN5_X16 * tm.link_efficiency * tm.peer_link_share)
    assert collective("all_reduce", m, 2, p, implementation="custom")[0] == pytest.approx(one_shot, rel=1e-12)


def test_geforce_without_peer_access_runs_no_custom_all_reduce():
    """Two RTX 5090 (the same Gen5 link as the RTX PRO 6000, but no GPU peer access): the custom all-reduce maps its
    peers' buffers and cannot run, so vLLM and TensorRT-LLM use NCCL, staged through host memory."""
    from dataclasses import replace

    p = load_profile("rtx-5090")
    assert not p.pcie_p2p
    m = 64 * 1024
    custom = collective("all_reduce", m, 2, p, implementation="custom")[0]
    assert custom == collective("all_reduce", m, 2, p)[0]
    with_peers = replace(p, pcie_p2p=True)
    assert custom > collective("all_reduce", m, 2, with_peers, implementation="custom")[0]
    # a large message: the bandwidth term halves against the same GPUs with peer access
    big = 256 << 20
    lat = collective("all_reduce", 1, 2, p)[0]
    staged, direct = collective("all_reduce", big, 2, p)[0], collective("all_reduce", big, 2, with_peers)[0]
    assert (staged - lat) / (direct - lat) == pytest.approx(2.0, rel=0.01)


def test_a_single_gpu_system_exchanges_nothing_in_its_box():
    spark = load_profile("dgx-spark")  # one GPU; a second Spark is reached over its 200 Gb/s ConnectX-7
    assert spark.domain_size == 1
    assert link_bytes_per_s(spark, 2) == pytest.approx(spark.scale_out_gbps * 1e9 / 2)
    assert collective("all_reduce", 1 << 20, 1, spark) == (0.0, 0.0)


def test_pipeline_stages_of_pcie_gpus_send_over_pcie():
    """A chunk's activations go to the next stage over the link between the GPUs: PCIe on an RTX PRO 6000 server
    (its interconnect_gbps is 0; the send was once priced at 0.5 GB/s)."""
    from colint.analysis.frontier import Deployment, scenario_for
    from colint.analysis.frontier_pricing import pipelined_ftl
    from colint.analysis.pipeline import best_partition
    from colint.analysis.scenario import make_scenario
    from colint.analysis.workload import analyse
    from colint.loading import load
    from colint.normalize import normalize

    profile = load_profile("rtx-pro-6000")
    spec = normalize(load("examples/llama-3.3-70b.json"))
    w = analyse(spec, profile, scenario_for(make_scenario("long-context"), Deployment(2), 1))  # 16 chunks of 8192
    part = best_partition([c.prefill_s for c in w.layer_costs], 4, w.embedding_cost.prefill_s, w.lm_head_cost.prefill_s)
    send_s = 8192 * spec.hidden_size * 2.0 / GEN5_X16  # BF16 activations over one direction of PCIe 5.0 x16
    assert pipelined_ftl(w, 4) == pytest.approx((16 + 3) * (part.max + send_s), rel=1e-12)


def test_nvlink_bridged_pairs_reach_the_rest_of_their_host_over_pcie():
    """H100 NVL: NVLink bridges join pairs, 8 cards to a PCIe server (host_gpus). A group past the pair and within
    the server crosses PCIe Gen5 (NCCL's PCI hop latency, no LL128, no custom all-reduce past two GPUs); past the
    server, the NIC."""
    from colint.analysis.collectives import past_domain_link

    nvl = load_profile("h100-nvl")
    assert (nvl.domain_size, nvl.host_size, nvl.pcie_gen) == (2, 8, 5)
    assert link_bytes_per_s(nvl, 2) == 300e9  # the bridge: 600 GB/s bidirectional
    assert link_bytes_per_s(nvl, 4) == pytest.approx(GEN5_X16, rel=1e-12)
    assert link_bytes_per_s(nvl, 16) == pytest.approx(nvl.scale_out_gbps * 1e9 / 2)
    assert not over_pcie(nvl, 2) and over_pcie(nvl, 4) and over_pcie(nvl, 8) and not over_pcie(nvl, 16)
    assert past_domain_link(nvl, 8) == ("PCIe Gen5 between the NVLink groups of one host", 2 * GEN5_X16 / 1e9, True)
    assert past_domain_link(nvl, 16) == ("the scale-out network", 100.0, True)
    assert past_domain_link(load_profile("h100-sxm"), 16)[0] == "the scale-out network"  # HGX: the domain is the host
    m = 1 << 20
    assert collective("all_reduce", m, 4, nvl, implementation="custom") == collective("all_reduce", m, 4, nvl)


def test_a_host_holds_whole_nvlink_domains():
    from dataclasses import replace

    nvl = load_profile("h100-nvl")
    with pytest.raises(ValueError, match="host_gpus: 5 is not a whole number of scale-up domains of 2 GPUs"):
        replace(nvl, host_gpus=5)


def test_cl704_names_the_pcie_between_bridged_pairs():
    from colint.engine.checking import build_targets, check_file
    from colint.engine.settings import Settings
    from colint.rules import select_rules

    opts = Settings(gpus=["h100-nvl"], tp=4)
    r = check_file("tests/corpus/hf/llama3__Llama-3.3-70B-Instruct.json", build_targets(opts), opts, select_rules())
    (f,) = [f for f in r.findings if f.code == "CL704"]
    assert f.message == (
        "tp=4 spans 2 NVLink domains of 2 on h100-nvl: every layer's all-reduce crosses PCIe Gen5 between the NVLink "
        "groups of one host (126 GB/s per GPU vs 600 GB/s NVLink)"
    )
    assert f.evidence["scale_out_gbps"] == pytest.approx(2 * GEN5_X16 / 1e9)
