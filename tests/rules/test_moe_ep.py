"""CL5xx MoE expert parallelism: routing arithmetic and exact findings."""

import math

import pytest

from colint.analysis.moe import (
    concurrency_for_m,
    ep_for_m,
    experts_per_gpu,
    experts_touched,
    redundant_to_fill,
    tokens_per_expert,
)
from colint.engine.checking import build_targets
from colint.engine.settings import Settings
from tests.rules.helpers import LLAMA_8B, corpus, run, spec_of

DSV3 = "tests/corpus/hf/deepseek__DeepSeek-V3.json"
MIXTRAL = "tests/corpus/hf/mixtral__Mixtral-8x7B-v0.1.json"
QWEN3_30B = "tests/corpus/hf/qwen3-moe__Qwen3-30B-A3B.json"


def expert_m_star(spec, **kw):
    from colint.analysis.workload import analyse

    t = build_targets(Settings(**kw))[0]
    w = analyse(spec, t.profile, t.scenario)
    return max(r.time.m_star for r in w.gemms["decode"] if r.parallel == "expert")


# -- analysis.moe --------------------------------------------------------------------------------
def test_routing_arithmetic():
    assert tokens_per_expert(256, 1, 8, 256) == 8.0
    assert tokens_per_expert(32, 320, 8, 256) == 320.0
    assert concurrency_for_m(382, 8, 256) == 382 * 32  # docs/design.md §9.3: E/k = 32 for DeepSeek-R1
    assert ep_for_m(382, 256, 8, 256) == math.ceil(382 * 32 / 256)
    assert experts_touched(32, 8, 256) == pytest.approx(163.4, abs=0.1)  # docs/design.md §9.4: ~163 of 256
    assert experts_per_gpu(256, 64) == 4  # Wide-EP blog: EP64 -> 4 experts per GPU per layer
    assert experts_per_gpu(256, 32, redundant=32) == 9 and experts_per_gpu(256, 144, redundant=32) == 2  # day 6
    assert redundant_to_fill(256, 72) == 32


# -- CL501 ---------------------------------------------------------------------------------------
def test_cl501_ep_choices_rank_and_span_one_domain_boundary_at_most():
    """DeepSeek-V3's 256 experts needing ep>=43: the sizes that divide them first, inside the NVLink domain
    before beyond it, then the smallest; of the sizes beyond the domain only the first is offered (a wider span
    sends more of the all-to-all over the scale-out network and cannot be the better choice)."""
    from colint.rules.moe_ep import ep_choices

    sizes = [8, 16, 32, 64, 72, 128, 256]
    assert ep_choices(43, 256, sizes, 1, 72) == [64, 128, 72]  # NVL72: 128 spans two domains, 256 (four) is not offered
    assert ep_choices(43, 256, sizes, 1, 8) == [64]  # HGX: every size spans nodes
    assert ep_choices(43, 384, sizes, 1, 72) == [64, 128, 72]  # 384 experts: 256 and 72 need redundant copies
    assert ep_choices(43, 256, sizes, 8, 0) == [64, 128, 256, 72]  # no domain known: every size, tp-multiples


def test_cl501_deepseek_v3_throughput():
    spec = corpus(DSV3)
    (f,) = run(spec, ["CL501"])
    assert (f.code, f.severity, f.key, f.line) == ("CL501", "info", "n_routed_experts", 26)
    ev = f.evidence
    m_star = expert_m_star(spec)
    assert ev["est_tokens_per_expert"] == 8.0  # 256 seq x top-8 / 256 experts
    assert ev["est_m_star_tokens"] == pytest.approx(m_star, abs=0.05)
    assert 250 < m_star < 450  # B200 BF16 ridge ~281 FLOP/B: M* a few hundred rows
    assert ev["est_concurrency_needed_tokens"] == round(m_star * 256 / 8)
    assert ev["est_ep_needed"] == math.ceil(m_star * 32 / 256)
    # 64 divides the 256 experts; on b200 (8-GPU NVLink domains) the advice says what spanning domains costs
    assert f.fixes[0].title == (
        "deploy the experts with ep=64 and data-parallel attention (spans 8 8-GPU NVLink "
        "domains of b200: the all-to-all runs over the scale-out network)"
    )
    assert f.fixes[0].settings == {"ep": 64}


def test_cl501_under_tp_counts_attention_groups_not_ranks():
    """tp=8, ep=8: one attention-DP group of 8 GPUs shares its 256 sequences, so experts see 8 rows,
    not 64; widening EP adds groups of tp GPUs (analysis.moe.attention_dp_groups)."""
    spec = corpus(DSV3)
    (f,) = run(spec, ["CL501"], tp=8, ep=8)
    m_star = expert_m_star(spec, tp=8, ep=8)
    assert f.evidence["est_tokens_per_expert"] == 8.0
    assert f.evidence["est_experts_touched_per_step"] == pytest.approx(experts_touched(256, 8, 256), abs=0.1)
    assert f.message == (
        "routed experts get est. 8 tokens each per decode step (256 seq x 1 attention-DP group "
        f"of tp=8 x top-8 / 256 experts), below est. M*={m_star:.0f} where their GEMMs turn "
        "compute-bound on b200 bf16"
    )
    need = math.ceil(m_star * 256 / 8 / 32)  # ep=256 (one expert per GPU) holds 32 groups of tp=8
    assert f.details[0].endswith(f"at ep=256 it takes >={need:,} seq per attention group of tp=8")


def test_cl501_at_concurrency_one_gives_the_concurrency_that_fixes_it():
    spec = corpus(DSV3)
    (f,) = run(spec, ["CL501"], scenario="latency")
    m_star = expert_m_star(spec, scenario="latency")
    # one token's top-8 picks touch 8 experts, one token each; every routing figure reads as an estimate
    assert f.message == (
        "at 1 seq x ep=1 a decode step touches est. 8 of 256 routed experts (1.0 tokens each); "
        f"their GEMMs turn compute-bound only from est. M*={m_star:.0f} on b200 bf16"
    )
    assert f.details[0].startswith(
        f"compute-bound needs est. {round(m_star * 32):,} concurrent tokens per EP group (uniform routing): "
    )
    assert f.details[1].startswith(
        "est. 8 of 256 experts touched per step by 1 token; 256 experts per GPU at ep=1; "
        "prefill gives est. 256 tokens per expert (memory-bound) (estimate: b200, "
    )
    assert "out of reach at 1 seq per rank; at ep=256 it takes >=" in f.details[0]
    assert f.fixes == []


def test_cl501_mixtral_and_scout_cap_ep_at_the_expert_count():
    (f,) = run(corpus(MIXTRAL), ["CL501"])
    assert (f.evidence["est_tokens_per_expert"], f.evidence["est_ep_needed"]) == (64.0, 5)
    assert (
        "ep>=5 at 256 seq per rank (ep=8: the nearest size that divides the experts or fits the domain)" in f.details[0]
    )
    (g,) = run(corpus("tests/corpus/hf/llama4__Llama-4-Scout-17B-16E-Instruct.json"), ["CL501"], scenario="latency")
    assert "at ep=16 it takes" in g.details[0]  # 16 experts: wider EP only replicates


def test_cl501_silent_when_experts_are_compute_bound():
    # Mixtral at 2048 seq per rank: 512 rows per expert, above M*
    assert run(corpus(MIXTRAL), ["CL501"], concurrency=2048) == []


# -- CL502 ---------------------------------------------------------------------------------------
def test_cl502_uneven_ep_warning_with_redundant_fill():
    (f,) = run(corpus(DSV3), ["CL502"], ep=72)
    assert (f.severity, f.key) == ("warning", "n_routed_experts")
    assert f.message == (
        "256 experts over ep=72 is 3.56 per GPU: the busiest GPUs hold 4 (est. 11% of expert capacity idle)"
    )
    assert (f.evidence["experts_per_gpu_max"], f.evidence["redundant_to_fill"]) == (4, 32)
    assert [(e.old, e.new) for x in f.fixes if x.safety == "unsafe" for e in x.edits] == [(256, 216), (256, 288)]
    assert run(corpus(DSV3), ["CL502"], ep=64) == []


def test_cl502_without_ep_only_for_awkward_expert_counts():
    (f,) = run(corpus("tests/corpus/hf/qwen2-moe__Qwen1.5-MoE-A2.7B-Wikihow-finetune.json"), ["CL502"])
    assert (f.severity, f.message) == ("info", "60 experts divide none of the common EP sizes 8, 16, 32")
    assert [e.new for x in f.fixes for e in x.edits] == [56, 64]
    assert run(corpus(DSV3), ["CL502"]) == []  # 256 divides 8..64
    # on an NVL72 rack the 72-GPU domain is checked too
    (g,) = run(corpus(DSV3), ["CL502"], gpus=["gb200"])
    assert g.message == "256 experts do not divide the 72-GPU NVLink domain of gb200"


# -- CL503 ---------------------------------------------------------------------------------------
def test_cl503_fine_grained_experts_under_tp():
    (f,) = run(corpus(QWEN3_30B), ["CL503"], tp=8)
    assert (f.severity, f.key, f.line) == ("warning", "moe_intermediate_size", 19)
    assert f.message == (
        "expert FFN width 768 is 96 per shard at tp=8, under one 128-wide tile: spread the 128 "
        "experts with ep=8 instead (16 whole experts per GPU)"
    )
    assert f.evidence["gate_up_tile_efficiency"] == 0.75
    assert run(corpus(QWEN3_30B), ["CL503"], tp=8, ep=8) == []  # experts already on EP
    assert run(corpus(QWEN3_30B), ["CL503"], tp=2) == []  # 384 per shard
    assert run(corpus(DSV3), ["CL503"], tp=8) == []  # 2048 / 8 = 256


QWEN3_CODER = "tests/corpus/hf/qwen3-moe__Qwen3-Coder-480B-A35B-Instruct.json"


def test_cl503_owns_experts_misaligned_only_by_the_split():
    # Qwen3-Coder-480B: 2560 = 20 x 128 whole, 320 per shard at tp=8 (2.5 tiles): above one tile, but the
    # split is what misaligns it -> CL503 (CL201 defers), graded by the padding estimate: est. 0.78% of the
    # prefill step, below the 1% warning threshold -> info
    (f,) = run(corpus(QWEN3_CODER), ["CL201", "CL503"], tp=8)
    assert (f.code, f.severity, f.key, f.line) == ("CL503", "info", "moe_intermediate_size", 17)
    assert f.impact.estimated_loss_pct == 0.78
    assert f.message == (
        "expert FFN width 2560 is 320 per shard at tp=8, not a multiple of 128 (the whole 2560 is): "
        "spread the 160 experts with ep=8 instead (20 whole experts per GPU)"
    )
    assert f.evidence["per_shard_width"] == 320 and f.evidence["est_prefill_step_pct"] > 0.25
    assert f.impact.estimated_loss_pct == pytest.approx(
        max(f.evidence["est_decode_step_pct"], f.evidence["est_prefill_step_pct"]), abs=0.01
    )
    # graded, not fixed at info: with warning_loss_pct at the old 0.5% the same split is a warning
    opts = {"CL503": {"warning_loss_pct": 0.5}}
    (g,) = run(corpus(QWEN3_CODER), ["CL503"], tp=8, rules=opts)
    assert g.severity == "warning"
    # tp=4: 640 per shard = 5 x 128, aligned and above min_expert_shard_width -> nothing
    assert run(corpus(QWEN3_CODER), ["CL201", "CL503"], tp=4) == []


def test_dense_model_has_no_cl5_findings():
    for kw in ({}, {"tp": 8}, {"ep": 8}):
        assert run(spec_of(LLAMA_8B), ["CL5"], **kw) == []


def test_cl501_qwen3_30b_a3b_throughput():
    spec = corpus(QWEN3_30B)
    (f,) = run(spec, ["CL501"])
    m_star = expert_m_star(spec)
    assert (f.key, f.evidence["est_tokens_per_expert"]) == ("num_experts", 16.0)  # 256 x 8 / 128
    assert f.evidence["est_ep_needed"] == math.ceil(m_star * 128 / 8 / 256)
    assert f.evidence["est_prefill_tokens_per_expert"] == 512.0


def test_cl504_ep_beyond_the_nvlink_domain_is_priced_at_scale_out_and_flagged():
    # DeepSeek-V3's shape (DeepSeek-R1's) at ep=64 on HGX B200 (8-GPU domain): 56 of 63 peers are off-node
    (f,) = run(corpus("tests/corpus/hf/deepseek__DeepSeek-V3.json"), ["CL504"], gpus=["b200"], ep=64)
    assert f.message == (
        "ep=64 spans 8 NVLink domains of 8 on b200: 89% of the expert all-to-all crosses the "
        "scale-out network (100 GB/s per GPU vs 1800 GB/s NVLink)"
    )
    assert f.severity == "error" and f.impact.estimated_loss_pct >= 25
    # the step is priced so: at ep=64 over the scale-out network each step is slower than with a domain wide
    # enough (decode by a third although two micro-batches hide most of its exchange, prefill 1.85x: DeepEP's
    # high-throughput kernels send a token once per remote node, and fan it out over NVLink: 3.15 of the 7 others, as
    # its router picks a token's experts within 4 of 8 groups, where a uniform router's would reach 4.6); with
    # the exchange in series (ep_overlap off) decode at ep=64 is slower than at ep=8 inside one node
    from dataclasses import replace

    from colint.analysis.scenario import make_scenario
    from colint.analysis.workload import analyse
    from colint.hardware_profiles import load_profile

    spec, p = corpus("tests/corpus/hf/deepseek__DeepSeek-V3.json"), load_profile("b200")
    wide = replace(p, domain_size=64)

    def step_s(profile, ep: int, overlap: str, regime: str) -> float:
        sc = replace(make_scenario("throughput", ep=ep, gpu="b200"), ep_overlap=overlap)
        return analyse(spec, profile, sc).steps[regime].estimate_s

    assert step_s(p, 64, "auto", "decode") > 1.3 * step_s(wide, 64, "auto", "decode")
    assert step_s(p, 64, "auto", "prefill") / step_s(wide, 64, "auto", "prefill") == pytest.approx(1.85, abs=0.01)
    assert step_s(p, 64, "off", "decode") > step_s(p, 8, "off", "decode")
    # inside a rack-scale domain (GB200 NVL72) ep=64 is NVLink all the way: nothing to flag
    assert run(corpus("tests/corpus/hf/deepseek__DeepSeek-V3.json"), ["CL504"], gpus=["gb200"], ep=64) == []


def test_cl504_without_a_scale_out_figure_prices_the_assumed_nic_as_the_step_does(tmp_path):
    # a user's profile without scale_out_gbps: the step prices the off-domain all-to-all at the default NIC
    # (collectives.DEFAULT_SCALE_OUT_GBPS), and the finding quotes that figure and says it is assumed
    import pathlib

    src = pathlib.Path(__file__).resolve().parents[2] / "colint" / "hardware_profiles" / "b200.yaml"
    lines = [x for x in src.read_text().splitlines() if not x.strip().startswith("scale_out_gbps:")]
    mine = tmp_path / "b200-no-nic.yaml"
    mine.write_text("\n".join(lines).replace("name: b200", "name: b200-no-nic", 1) + "\n")
    deepseek = "tests/corpus/hf/deepseek__DeepSeek-V3.json"
    (f,) = run(corpus(deepseek), ["CL504"], gpus=[str(mine)], ep=64)
    (g,) = run(corpus(deepseek), ["CL504"], gpus=["b200"], ep=64)
    assert f.message.endswith("(100 GB/s per GPU, assumed: the profile gives no scale_out_gbps vs 1800 GB/s NVLink)")
    assert f.impact.estimated_loss_pct == g.impact.estimated_loss_pct  # b200 states 100 GB/s: the same price


def test_cl504_advises_a_rack_scale_domain_only_where_the_gpu_is_not_one():
    """Past HGX's 8 GPUs the fix names NVL72; past NVL72 itself (Kimi-K2 at ep=96 on GB200: two racks) it cannot."""
    kimi = corpus("examples/kimi-k2.json")
    (rack,) = run(kimi, ["CL504"], gpus=["gb200"], ep=96)
    (hgx,) = run(kimi, ["CL504"], gpus=["b200"], ep=96)
    assert [x.title for x in rack.fixes] == ["keep ep <= 72 (the gb200 NVLink domain)"]
    assert [x.title for x in hgx.fixes] == [
        "keep ep <= 8 (the b200 NVLink domain), or deploy wide EP on a rack-scale NVLink domain (NVL72)",
        "limit each token's experts to 4 of 12 groups (n_group=12, topk_group=4)",
    ]
    assert (rack.severity, hgx.severity) == ("warning", "error")


def test_cl504_weighs_node_limited_routing():
    """Kimi-K2's router has no groups: at ep=96 over twelve HGX nodes a token reaches 6.0 of them, and a router
    confined to 4 of 12 groups would send it to 3.6 (DeepSeek-V3's node-limited routing), 40% less of the prefill's
    traffic past the node; over two NVL72 racks there is no such advice (half of two is one). DeepSeek-V3's router
    already confines a token to 4 of 8 groups: the finding says so and prices it."""
    kimi = corpus("examples/kimi-k2.json")
    (hgx,) = run(kimi, ["CL504"], gpus=["b200"], ep=96)
    assert hgx.details[1] == (
        "a token reaches est. 6.0 of the 12 NVLink domains; a router confined to 4 of 12 expert groups, a group per "
        "NVLink domain (DeepSeek-V3's node-limited routing), would send it to 3.6: 40% less prefill exchange traffic "
        "past the NVLink domain"
    )
    assert hgx.evidence["est_domains_per_token"] == 6.02  # 12 x (1 - (11/12)^8)
    (rack,) = run(kimi, ["CL504"], gpus=["gb200"], ep=144)
    assert len(rack.details) == 1 and len(rack.fixes) == 1
    (ds,) = run(corpus("tests/corpus/hf/deepseek__DeepSeek-V3.json"), ["CL504"], gpus=["b200"], ep=64)
    assert ds.details[1] == (
        "its router picks a token's experts within 4 of 8 groups, so a token reaches est. 3.6 of the 8 NVLink "
        "domains (priced so)"
    )
    assert [x.title for x in ds.fixes] == [
        "keep ep <= 8 (the b200 NVLink domain), or deploy wide EP on a rack-scale NVLink domain (NVL72)"
    ]
