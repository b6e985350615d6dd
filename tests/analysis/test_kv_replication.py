"""KV replication under attention tp (colint.analysis.kv_replication, what CL701 reports)."""

import pytest

from colint.analysis.kv_replication import kv_heads, kv_replication
from colint.analysis.scenario import make_scenario
from colint.analysis.workload import analyse
from colint.hardware_profiles import load_profile
from colint.loading import load
from colint.normalize import normalize

LLAMA_70B = "tests/corpus/hf/llama3__Llama-3.3-70B-Instruct.json"
DEEPSEEK_V3 = "tests/corpus/hf/deepseek__DeepSeek-V3.json"


def _replication(path: str, tp: int, concurrency: int = 8, context: int = 8192):
    spec = normalize(load(path))
    sc = make_scenario("throughput", tp=tp, concurrency=concurrency, context=context, dtype="bf16")
    return kv_replication(spec, analyse(spec, load_profile("h100-sxm"), sc), sc)


def test_70b_at_tp16_copies_each_of_its_8_kv_heads_onto_2_ranks():
    rp = _replication(LLAMA_70B, 16)
    assert (rp.factor, rp.kv_heads, rp.mixer.kind) == (2, 8, "attention")
    # 80 layers x K and V x 128 dims x 2 B: one whole head per rank instead of half of one
    assert rp.kv_bytes_per_token_per_gpu == 80 * 2 * 1 * 128 * 2 == 40_960
    assert rp.kv_bytes_per_token_sharded == 80 * 2 * 8 * 128 * 2 / 16 == 20_480
    # the copies at 8 sequences of 8,192 tokens: 20,480 B x 65,536 tokens
    assert rp.extra_kv_bytes_per_gpu == 20_480 * 8 * 8192 == 1_342_177_280
    assert rp.replicated_kv_read_s > 0
    assert 0 < rp.loss_pct < 100
    assert rp.loss_pct == pytest.approx(100 * rp.replicated_kv_read_s / rp.decode_step_s)


def test_70b_at_tp8_or_below_copies_nothing():
    assert _replication(LLAMA_70B, 8) is None
    assert _replication(LLAMA_70B, 1) is None


def test_mla_latent_is_one_head_copied_onto_every_rank():
    rp = _replication(DEEPSEEK_V3, 8)
    assert (rp.factor, rp.kv_heads, rp.mixer.kind) == (8, 1, "mla")
    # 61 layers x (512 latent + 64 rope) x 2 B on every GPU instead of an eighth of it
    assert rp.kv_bytes_per_token_per_gpu == 70_272
    assert rp.kv_bytes_per_token_sharded == 70_272 / 8 == 8_784


def test_kv_heads_of_a_mixer():
    spec = normalize(load(LLAMA_70B))
    assert kv_heads(spec.layer_kinds[0].mixer) == 8
    assert kv_heads(normalize(load(DEEPSEEK_V3)).layer_kinds[0].mixer) == 1
