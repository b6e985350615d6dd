"""Collective op models (issue 12): all-reduce, all-gather, reduce-scatter, all-to-all, MoE dispatch/combine.

Each is a latency term plus a bandwidth term over the scale-up link (the α-β model; Thakur,
Rabenseifner & Gropp 2005, "Optimization of Collective Communication Operations in MPICH"):

* bandwidth: the bytes each GPU moves / (link bandwidth · ``link_efficiency``). Link bandwidth is
  the profile's one-direction scale-up bandwidth (``interconnect_gbps`` / 2) inside an NVLink domain
  (n <= ``domain_size``); beyond it, ``scale_out_gbps`` per GPU for the traffic that leaves the domain.
  A GPU without NVLink (``interconnect_gbps`` 0) reaches the peers of its host (``domain_size`` GPUs) over its
  PCIe x16 link, one direction: GT/s x 16 x encoding / 8 (Gen4 31.5 GB/s, Gen5 63.0 GB/s); NCCL's ring
  there: no LL128 protocol, hop latency x ``PCIE_HOP_LATENCY_RATIO``; no custom all-reduce beyond 2 GPUs; where the
  driver gives no peer access (GeForce: ``pcie_p2p`` false) NCCL stages through host memory at
  ``HOST_STAGED_BW_SHARE`` of the link and no custom all-reduce runs.
  Bytes per GPU for a message of M bytes over n GPUs (NCCL's "bus bandwidth" factors, nccl-tests
  doc/PERFORMANCE.md): all-reduce 2(n−1)/n·M; all-gather, reduce-scatter, all-to-all (n−1)/n·M
  (M = the whole gathered / scattered buffer). A one-shot all-reduce (TensorRT-LLM's custom kernel
  for small messages) reads all n−1 peers' whole buffers, (n−1)·M, up to ``oneshot_max_bytes``.
* latency: ``collective_latency_us`` + ``collective_step_latency_us``·steps, steps = 2(n−1) for a
  ring all-reduce, n−1 for all-gather / reduce-scatter and all-to-all (Thakur et al. Table 1);
  TensorRT-LLM's custom all-reduce: ``custom_allreduce_latency_us`` (one barrier); one-shot by message
  size up to 8 GPUs (its heuristic, even where two-shot would be faster); above
  ``custom_allreduce_max_bytes`` (TensorRT-LLM 1.0 on A100) the NCCL model.
  All-to-all runs as concurrent point-to-point pairs: per-peer slices on LL at ``p2p_ll_gbps`` per peer,
  or Simple at the link bandwidth after ``p2p_simple_us`` (the fastest, as NCCL's size threshold picks).
* MoE dispatch/combine (DeepEP high-throughput / low-latency kernels): each token travels to the
  distinct remote ranks holding its top-k experts, ep·(1 − (1 − 1/ep)^k)·(ep − 1)/ep of them
  (uniform routing); LL sends one copy per expert (no de-duplication). Dispatch in the wire format
  (BF16 2 B, FP8 1 B + 1/128 scale, NVFP4 0.5625 B); combine in BF16 (DeepEP's combine). Plus a
  fixed ``a2a_latency_us`` per backend (notify + barrier kernels); LL dispatch sends while it waits, so
  its time is the longer of that wait and the transfer (which starts ``ll_send`` after launch), plus the
  in-kernel cast to the wire format (``a2a_ll_cast_us``); LL combine adds ``a2a_ll_pick_us`` per top-k
  pick and ``a2a_ll_group_us`` per warp group an SM runs (one group per (expert, rank) pair:
  ceil(experts / SMs) per SM; DeepEP csrc/kernels/internode_ll.cu). The high-throughput (normal) kernels copy with
  ``a2a_ht_sms`` SMs (DeepEP ``Buffer.set_num_sms(24)``): ``a2a_copy_cycles`` per (token, destination)
  on those SMs (an architecture constant: Hopper 400, Blackwell 1,700), dispatch at the link's rate,
  combine (a top-k reduction on the receiving SMs) at most ``a2a_sm_copy_gbps`` per SM.

Returns ``(estimate_s, sol_s)``: sol is bytes / link bandwidth (no latency, no efficiency).
"""

from __future__ import annotations

import math

from colint.analysis.moe import group_limit_share, parts_touched
from colint.hardware_profiles import time_model
from colint.hardware_profiles.schema import DEFAULT_PCIE_GEN

ELEM_BYTES = {
    "half": 2.0,
    "float16": 2.0,
    "fp16": 2.0,
    "bfloat16": 2.0,
    "bf16": 2.0,
    "int8": 1.0,
    "fp8": 1.0,
    "float": 4.0,
    "float32": 4.0,
    "fp32": 4.0,
}
WIRE_BYTES = {"bfloat16": 2.0, "bf16": 2.0, "fp8": 1.0 + 4 / 128, "nvfp4": 0.5 + 1 / 16, "mxfp4": 0.5 + 1 / 32}
# NCCL's per-hop ring latency over PCIe vs NVLink: Simple 5.7 vs 3.4 us, LL 1.0 vs 0.6 (NVIDIA/nccl
# src/graph/tuning.cc hwLat[PCI] / hwLat[NVLINK], Ring); colint's hop latencies are NVLink measurements, scaled by it
PCIE_HOP_LATENCY_RATIO = 5.7 / 3.4
# without GPU peer-to-peer (GeForce, Profile.pcie_p2p false) NCCL stages every transfer through pinned host memory:
# each byte crosses the sender's and the receiver's host links, so a ring, which sends and receives at once, gets
# half the link (2 x RTX 5090 at PCIe 5.0 x8: 30 GB/s bidirectional without P2P, 56 with it; profiles' P2P-GEFORCE)
HOST_STAGED_BW_SHARE = 0.5
# vLLM and TensorRT-LLM's custom (one-shot / two-shot) all-reduce reads peers' buffers over P2P; on PCIe-only GPUs
# vLLM runs it for 2 GPUs at most ("Custom allreduce is disabled because it's not supported on more than two
# PCIe-only GPUs", vllm/distributed/device_communicators/custom_all_reduce.py): wider groups run NCCL
PCIE_CUSTOM_ALLREDUCE_MAX_GPUS = 2
# TensorRT-LLM's custom all-reduce strategy table covers TP 2, 4 and 8 (cpp/tensorrt_llm/common/customAllReduceUtils.h)
CUSTOM_TABLE_MAX_RANKS = 8
OPS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
# bytes each GPU sends per byte of message (nccl-tests bus-bandwidth factors)
_FACTOR = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
}


DEFAULT_SCALE_OUT_GBPS = 100.0  # a 400 Gb/s NIC per GPU, bidirectional (ConnectX-7, as on DGX H100/B200)


def scale_out_gbps(profile) -> tuple[float, bool]:
    """(GB/s per GPU the step prices a collective beyond the scale-up domain at, whether the profile states it:
    else DEFAULT_SCALE_OUT_GBPS is assumed)."""
    given = getattr(profile, "scale_out_gbps", None)
    return (given, True) if given else (DEFAULT_SCALE_OUT_GBPS, False)


def over_pcie(profile, gpus: int, span: int | None = None) -> bool:
    """Whether a collective of ``gpus`` GPUs (spread over ``span``) runs over PCIe: it stays inside one host and
    the profile has no scale-up link, or it leaves its NVLink domain inside a host of several (``host_gpus``:
    NVLink-bridged pairs of PCIe cards)."""
    span = max(gpus, span or gpus)
    if profile.interconnect_gbps <= 0:
        return span <= max(1, profile.domain_size)
    return max(1, profile.domain_size) < span <= profile.host_size


def gbps_text(gbps: float) -> str:
    """A link rate as messages print it: whole GB/s from 100 up, three figures below (63, 12.5)."""
    return f"{gbps:.0f}" if gbps >= 100 else f"{gbps:.3g}"


def past_domain_link(profile, span: int) -> tuple[str, float, bool]:
    """(what a collective over ``span`` GPUs crosses past the scale-up domain, its GB/s per GPU bidirectional like
    ``interconnect_gbps``, whether the profile states it): PCIe between the NVLink groups of one host (``host_gpus``),
    else the scale-out network (scale_out_gbps; a 400 Gb/s NIC assumed where the profile gives none)."""
    if profile.interconnect_gbps > 0 and span <= profile.host_size:
        gen = profile.pcie_gen or DEFAULT_PCIE_GEN
        return f"PCIe Gen{gen} between the NVLink groups of one host", 2 * profile.pcie_bytes_per_s / 1e9, True
    gbps, stated = scale_out_gbps(profile)
    return "the scale-out network", gbps, stated


def past_domain_bytes_per_s(profile, span: int) -> float:
    """One direction of :func:`past_domain_link`'s rate, bytes/s per GPU (at least 1 GB/s each way)."""
    return max(past_domain_link(profile, span)[1], 1.0) * 1e9 / 2.0


def link_bytes_per_s(profile, gpus: int, all_to_all: bool = False, span: int | None = None) -> float:
    """Effective one-direction bandwidth per GPU of a collective over ``gpus`` GPUs spread evenly over ``span``
    consecutive GPUs (default ``gpus``: side by side; KV parallelism's groups stride by tp). Within the
    profile's scale-up (NVLink) domain: half its bidirectional ``interconnect_gbps``. Beyond it the traffic
    that leaves the domain runs at the scale-out (NIC) bandwidth ``scale_out_gbps`` (bidirectional, like
    interconnect_gbps): a ring all-reduce is paced by its slowest hop; an all-to-all sends the share of its
    peers outside a GPU's domain, (gpus - peers in a domain)/(gpus - 1), of its volume out while the rest
    stays on NVLink, the slower of the two setting the time. A profile without a scale-out figure: a 400 Gb/s
    NIC per GPU. A profile without a scale-up link (``interconnect_gbps`` 0): its PCIe x16 link (Profile.pcie_bytes_per_s)
    inside one host of ``domain_size`` GPUs, the NIC beyond it."""
    nv = profile.interconnect_gbps * 1e9 / 2.0 if profile.interconnect_gbps > 0 else profile.pcie_bytes_per_s
    dom = max(1, profile.domain_size)
    span = max(gpus, span or gpus)
    if span <= dom:
        return nv
    so = past_domain_bytes_per_s(profile, span)  # PCIe between the NVLink groups of one host, else the NIC
    if not all_to_all:
        return min(nv, so)
    in_domain = max(1, gpus * dom // span)  # the group's GPUs one domain holds (itself among them)
    out_share = (gpus - in_domain) / max(1, gpus - 1)
    return 1.0 / max((1.0 - out_share) / nv, out_share / so)


def collective(
    op: str, message_bytes: float, gpus: int, profile, model=None, implementation: str = "nccl", span: int | None = None
):
    """(estimate_s, sol_s) of one collective of ``message_bytes`` over ``gpus`` GPUs (spread over ``span``
    consecutive ones: link_bytes_per_s); ``implementation`` ``nccl`` or ``custom`` (TensorRT-LLM's
    one-shot/two-shot all-reduce)."""
    tmod = model or time_model(profile)
    if gpus <= 1 or message_bytes <= 0:
        return 0.0, 0.0
    if op not in _FACTOR:
        raise ValueError(f"unknown collective '{op}'; known: {', '.join(OPS)}")
    bw = link_bytes_per_s(profile, gpus, all_to_all=op == "alltoall", span=span)
    moved = _FACTOR[op](gpus) * message_bytes
    sol = moved / bw
    # one peer alone cannot fill a GPU's links: with n-1 peers at most (n-1)·peer_link_share of them
    eff = bw * tmod.link_efficiency * min(1.0, (gpus - 1) * tmod.peer_link_share)
    pcie = over_pcie(profile, gpus, span)
    hop_us = tmod.collective_step_latency_us * (PCIE_HOP_LATENCY_RATIO if pcie else 1.0)
    if pcie and not profile.pcie_p2p:
        eff *= HOST_STAGED_BW_SHARE  # staged through host memory
        implementation = "nccl"  # the custom all-reduce maps its peers' buffers: no peer access, no kernel
    cap = tmod.custom_allreduce_max_bytes
    if implementation == "custom" and op == "all_reduce" and cap is not None and message_bytes > cap:
        implementation = "nccl"  # the custom kernel's workspace is full: TensorRT-LLM falls back to NCCL
    if implementation == "custom" and pcie and gpus > PCIE_CUSTOM_ALLREDUCE_MAX_GPUS:
        implementation = "nccl"  # no custom all-reduce over more than two PCIe-only GPUs (vLLM)
    if (
        implementation == "custom"
        and op == "all_reduce"
        and gpus <= CUSTOM_TABLE_MAX_RANKS
        and message_bytes > tmod.oneshot_max_bytes
    ):
        # past one-shot's sizes TensorRT-LLM's measured all-reduce runs at NCCL's ring rate, not at a two-shot's
        # link rate (8 H100: 35.5 us at 2 MiB, 51.9 at 4 MiB; 8 B200: 30.4 and 39.4 - aiconfigurator-core's
        # custom_allreduce tables), so its strategy table hands those sizes to NCCL-class kernels
        implementation = "nccl"
    if implementation == "custom" and op == "all_reduce":
        # one-shot: every GPU reads the n-1 peers' whole buffers; two-shot: reduce-scatter + all-gather
        oneshot = (gpus - 1) * message_bytes / eff if message_bytes <= tmod.oneshot_max_bytes else math.inf
        twoshot = moved / eff + hop_us * 1e-6 * 2
        # TensorRT-LLM picks one-shot by message size, not by which is faster: at 8 GPUs a one-shot MiB reads
        # 7 MiB and is measured so (H100 26 us, B200 30 us at 1 MiB; two-shot would take ~10). Its tuned
        # strategy table covers TP 2, 4, 8; wider groups run other kernels (MNNVL): the faster of the two
        by_size = gpus <= CUSTOM_TABLE_MAX_RANKS and oneshot < math.inf
        return tmod.custom_allreduce_latency_us * 1e-6 + (oneshot if by_size else min(oneshot, twoshot)), sol
    if op == "alltoall":
        # NCCL's all-to-all is n-1 concurrent send/recv pairs, each peer its M/n slice: small slices go LL
        # (flag per 8 B store, one warp per channel: p2p_ll_gbps per peer), larger ones Simple (full link
        # bandwidth after a rendezvous, p2p_simple_us); NCCL picks by size (NCCL_P2P_LL_THRESHOLD)
        base_s = (tmod.collective_latency_us + hop_us * (gpus - 1)) * 1e-6
        t_ll = base_s + moved / (gpus - 1) / (tmod.p2p_ll_gbps * 1e9)
        t_simple = base_s + tmod.p2p_simple_us * 1e-6 + moved / eff
        return min(t_ll, t_simple), sol
    # ring algorithms: all-reduce 2(n-1) steps, all-gather / reduce-scatter n-1; all-to-all n-1 peer exchanges;
    # NCCL picks the fastest protocol: LL (low latency, half the bandwidth: 4 B flag per 4 B of data),
    # LL128 (120 of 128 B), Simple (full bandwidth, higher latency) (NCCL src/graph/tuning.cc model); over PCIe NCCL
    # enables LL128 only on NVLink (tuning.cc: "Enable LL128 by default only on Volta/Ampere+NVLink"), and each hop
    # takes PCIE_HOP_LATENCY_RATIO times the NVLink one
    steps = 2.0 * (gpus - 1) if op == "all_reduce" else gpus - 1.0
    best = math.inf
    for proto, (base_us, hop_x, bw_frac) in tmod.nccl_protocols.items():
        if pcie and proto == "ll128":
            continue
        t = (tmod.collective_latency_us + base_us + hop_x * hop_us * steps) * 1e-6 + moved / (eff * bw_frac)
        best = min(best, t)
    return best, sol


def moe_dispatch_combine(
    phase: str,
    tokens: float,
    hidden: int,
    topk: int,
    ep: int,
    dtype: str,
    profile,
    model=None,
    backend: str = "deepep_ht",
    experts: int | None = None,
    groups: tuple[int, int] = (1, 1),
    moe_tp: int = 1,
) -> tuple[float, float]:
    """(estimate_s, sol_s) of one MoE dispatch or combine of ``tokens`` tokens per rank over ``ep`` ranks;
    ``experts``: the layer's routed experts (the LL kernels run one warp group per (expert, rank) pair; None:
    one group per SM); ``groups``: the router's (expert groups, groups a token may pick) (FFN.expert_groups,
    groups_per_token); ``moe_tp``: GPUs each expert is split over (``topk`` counts a pick once per GPU)."""
    tmod = model or time_model(profile)
    if ep <= 1:
        return 0.0, 0.0
    b = 2.0 if phase == "combine" else WIRE_BYTES.get(dtype, 2.0)
    if "ll" in backend.split("_"):
        copies = topk * (ep - 1) / ep  # one copy per picked expert on another rank
    else:
        copies = parts_touched(ep, topk) * (ep - 1) / ep  # distinct remote ranks
        # a group-limited router sends a token to fewer ranks (the LL kernels' per-pick copies do not change)
        copies *= group_limit_share(max(1, ep // max(1, moe_tp)), topk // max(1, moe_tp), groups)
    moved = tokens * hidden * b * copies
    bw = link_bytes_per_s(profile, ep, all_to_all=True)
    kind = "ll" if "ll" in backend.split("_") else "ht"
    lat = tmod.a2a_latency_us.get(f"{kind}_{phase}", tmod.a2a_latency_us.get(kind, 50.0)) * 1e-6
    if kind == "ll":
        xfer = moved / (bw * tmod.link_efficiency)
        if phase == "dispatch":
            # one kernel sends and receives: the sends overlap its fixed wait for the peers' arrival flags, so
            # the time stays flat (~70 us, measured on H100 and B200 from 1 to ~128 tokens) until the sends, which
            # start ``ll_send`` after launch (the count exchange), outlast that wait; each token's sending SM first
            # casts it to the wire format (NVFP4 a fixed few us more than BF16 / FP8)
            send = tmod.a2a_latency_us.get("ll_send", 0.0) * 1e-6
            cast = tmod.a2a_ll_cast_us.get(dtype, 0.0) * 1e-6
            return max(lat, send + xfer) + cast, moved / bw
        # the combine's floor rises with the token's top-k picks (each is sent back, signalled and reduced on the
        # receiving SM) and with the warp groups each SM runs (one per (expert, rank) pair: each posts its flag with
        # a system-scope release and polls one arrival flag)
        sms = profile.sm_count or 1
        warp_groups = math.ceil(experts / sms) if experts else 1
        lat += (tmod.a2a_ll_pick_us * topk + tmod.a2a_ll_group_us * warp_groups) * 1e-6
        if "fp4" in dtype:
            # an FP4 combine quantizes each expert output before the send and dequantizes the top-k copies before
            # the reduction: a fixed extra time, and no faster per byte than BF16 (B200 at 256 tokens: 102 vs 78 us),
            # so it keeps the BF16 bytes
            lat += tmod.a2a_fp4_combine_us * 1e-6
        return lat + xfer, moved / bw
    # high-throughput kernels: a fixed set of a2a_ht_sms SMs copies every (token, destination) pair, each copy
    # costing a2a_copy_cycles of bookkeeping (index, layout, flag); dispatch writes at the link's rate, combine
    # reduces the top-k copies on the receiving SMs, at most a2a_ht_sms x a2a_sm_copy_gbps (H100 ~350 GB/s,
    # B200 ~390 GB/s measured: SM-bound, not NVLink-bound)
    link = bw * tmod.link_efficiency
    if phase == "combine":
        link = min(link, tmod.a2a_ht_sms * tmod.a2a_sm_copy_gbps * 1e9)
    clock = (profile.clock_mhz or 1500.0) * 1e6
    t_copy = tokens * copies * tmod.a2a_copy_cycles / (tmod.a2a_ht_sms * clock)
    dom = max(1, profile.domain_size)
    if ep > dom:
        # past the scale-up domain the HT kernels forward (DeepEP internode.cu, "NVLink and RDMA forwarding"): a
        # token crosses the network once per remote domain holding any of its experts, and NVLink fans it out to
        # that domain's ranks; the two stages pipeline, so the slower one sets the pace
        domains = math.ceil(ep / dom)
        remote = parts_touched(domains, topk) * (domains - 1) / domains
        # node-limited routing is what these kernels were built for: fewer domains a token (DeepSeek-V3: <= 4 nodes)
        remote *= group_limit_share(domains, topk // max(1, moe_tp), groups)
        rdma_b = tokens * hidden * b * remote
        so = past_domain_bytes_per_s(profile, ep)
        fan_out = link_bytes_per_s(profile, dom) * tmod.link_efficiency
        if phase == "combine":
            fan_out = min(fan_out, tmod.a2a_ht_sms * tmod.a2a_sm_copy_gbps * 1e9)
        return lat + max(rdma_b / (so * tmod.link_efficiency), moved / fan_out) + t_copy, rdma_b / so
    return lat + moved / link + t_copy, moved / bw
