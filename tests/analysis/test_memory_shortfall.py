"""The decode throughput at the concurrency that fits (colint.analysis.memory_shortfall, what CL801 grades by)."""

from dataclasses import replace

import pytest

from colint.analysis.memory_shortfall import DecodeAtFit, decode_at_fit
from colint.analysis.scenario import make_scenario
from colint.analysis.workload import analyse, decode_step
from colint.hardware_profiles import load_profile
from colint.loading import load
from colint.normalize import normalize


def test_70b_at_tp4_fits_53_of_256_sequences_and_loses_their_throughput():
    spec = normalize(load("tests/corpus/hf/llama3__Llama-3.3-70B-Instruct.json"))
    sc = make_scenario("throughput", tp=4, concurrency=256, context=8192, dtype="bf16")
    h100 = load_profile("h100-sxm")
    w = analyse(spec, h100, sc)
    # 72 GB usable - 35.28 GB of weights - 0.64 GB of activations, over 671 MB of KV per sequence
    # (80 layers x K and V x 2 of the 8 KV heads x 128 x 2 B x 8,192 tokens)
    assert w.memory.kv_bytes_per_sequence_per_gpu == 80 * 2 * 2 * 128 * 2 * 8192
    fit = decode_at_fit(spec, h100, sc, w)
    assert fit.concurrency_fit == 53
    assert fit.tokens_per_s == w.steps["decode"].tokens_per_s
    assert fit.tokens_per_s_at_fit == decode_step(spec, h100, replace(sc, decode_concurrency=53)).tokens_per_s
    assert fit.tokens_per_s_at_fit < fit.tokens_per_s
    assert fit.loss_pct == pytest.approx(100 * (1 - fit.tokens_per_s_at_fit / fit.tokens_per_s))


def test_no_loss_without_a_planned_throughput():
    assert DecodeAtFit(3, 0.0, 10.0).loss_pct is None
    assert DecodeAtFit(3, 100.0, 25.0).loss_pct == 75.0
