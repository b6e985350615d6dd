"""Tokens per routed expert and the cost of an uneven EP split (colint.analysis.expert_batching, for CL501/CL502)."""

import pytest

from colint.analysis.expert_batching import (
    concurrency_fit_at_ep,
    expert_batching,
    expert_gemm_rows,
    expert_imbalance,
    moe_kinds,
)
from colint.analysis.scenario import make_scenario
from colint.analysis.workload import analyse
from colint.hardware_profiles import load_profile
from colint.loading import load
from colint.normalize import normalize

DEEPSEEK_V3 = "tests/corpus/hf/deepseek__DeepSeek-V3.json"


@pytest.fixture(scope="module")
def v3():
    return normalize(load(DEEPSEEK_V3))


def test_deepseek_v3_has_one_routed_expert_shape_on_58_layers(v3):
    assert [(k.ffn.num_experts, k.ffn.top_k, n) for k, n in moe_kinds(v3)] == [(256, 8, 58)]


def test_deepseek_v3_experts_at_256_seq_per_rank_on_b200(v3):
    b200 = load_profile("b200")
    sc = make_scenario("throughput", concurrency=256, dtype="bf16", tp=1)
    w = analyse(v3, b200, sc)
    ((kind, _),) = moe_kinds(v3)
    b = expert_batching(w, sc, kind)
    assert b.tokens_per_expert == 256 * 8 / 256 == 8.0
    assert b.prefill_tokens_per_expert == 8192 * 8 / 256 == 256.0
    assert b.m_star_tokens == max(r.time.m_star for r in expert_gemm_rows(w, "decode", kind.name))
    assert 300 < b.m_star_tokens < 400  # the rule's example: M* ~ 340 on B200 BF16
    assert b.concurrency_needed_tokens == pytest.approx(b.m_star_tokens * 256 / 8)
    assert b.ep_needed == 43  # ceil(10,930 / 256)
    assert b.experts_touched == pytest.approx(256 * (1 - (1 - 8 / 256) ** 256))
    assert b.memory_bound
    # the full weights (~1.3 TB in BF16) hold no sequence on one GPU; spread over 64 they hold 181 of 8,192 tokens
    assert concurrency_fit_at_ep(v3, b200, sc, w, 1) == w.max_decode_concurrency == 0
    assert concurrency_fit_at_ep(v3, b200, sc, w, 64) == 181


def test_256_experts_over_ep72_idle_a_ninth_of_the_slots(v3):
    sc = make_scenario("throughput", concurrency=256, dtype="bf16", ep=72)
    w = analyse(v3, load_profile("b200"), sc)
    ((kind, _),) = moe_kinds(v3)
    im = expert_imbalance(w, kind, 72)
    assert (im.slots_per_gpu, im.redundant_to_fill) == (4, 32)  # DeepSeek fills 288 = 4 x 72 slots
    assert im.mean_per_gpu == 256 / 72
    assert im.idle_share == pytest.approx(1 / 9)  # 1 - 3.56/4
    assert im.expert_decode_s == sum(r.total_s for r in expert_gemm_rows(w, "decode", kind.name))
    assert im.decode_step_s == w.steps["decode"].estimate_s
    assert im.loss_pct == pytest.approx(100 / 9 * im.expert_decode_s / im.decode_step_s)
