"""DeepSeek Sparse Attention (GLM-5, DeepSeek-V3.2) and per-layer-type attention geometry (MiMo-V2-Flash): exact
parameter counts and KV bytes per token derived from each config here, and what sparse attention costs in a step.

The totals also equal transformers 5.24's meta-device build (tests/golden, scripts/gen_golden.py, torch 2.13);
the variants' totals were checked with ``gen_golden.py --count``.
"""

from __future__ import annotations

import json

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.analysis.kv_cache import indexer_kv_bytes_per_token, kv_cache_bytes_per_token
from colint.analysis.scenario import make_scenario
from colint.analysis.workload import analyse
from colint.hardware_profiles import load_profile
from colint.loading import load, load_text
from colint.normalize import normalize

GLM5 = "tests/corpus/hf/glm__GLM-5-reconstructed.json"
V32 = "tests/corpus/hf/deepseek__DeepSeek-V3.2.json"
V3 = "tests/corpus/hf/deepseek__DeepSeek-V3.json"
MIMO = "tests/corpus/hf/mimo__MiMo-V2-Flash-reconstructed.json"


def _spec(path):
    return normalize(load(path))


def _variant(path, **changes):
    with open(path, encoding="utf-8") as fh:
        d = json.load(fh)
    d.update(changes)
    return normalize(load_text(json.dumps(d, indent=1), "variant.json"))


# GLM-5: H 6144, 78 layers (3 dense), 64 heads, q_lora 2048, kv_lora 512, nope 192, rope 64, v 256,
# indexer 32 heads x 128, 256 experts top-8 + 1 shared of 2048, dense FFN 12288, vocab 154880 (untied)
_H = 6144
_MLA = (
    _H * 2048  # q_a_proj
    + 2048  # q_a_layernorm
    + 2048 * 64 * (192 + 64)  # q_b_proj
    + _H * (512 + 64)  # kv_a_proj_with_mqa
    + 512  # kv_a_layernorm
    + 512 * 64 * (192 + 256)  # kv_b_proj
    + 64 * 256 * _H  # o_proj
)  # 165,022,208
_INDEXER = 2048 * 32 * 128 + _H * 128 + 2 * 128 + _H * 32  # wq_b, wk, k_norm (LayerNorm, bias), weights_proj
_DENSE = 3 * _H * 12288
_MOE = 256 * _H + 256 * 3 * _H * 2048 + 3 * _H * 2048  # router, routed experts, shared expert
_NORMS = 2 * _H
GLM5_TOTAL = 3 * (_MLA + _INDEXER + _NORMS + _DENSE) + 75 * (_MLA + _INDEXER + _NORMS + _MOE) + 2 * 154880 * _H + _H


def test_glm5_reads_as_dsa_exactly():
    spec = _spec(GLM5)
    assert _INDEXER == 9_371_904
    assert GLM5_TOTAL == 743_911_199_232  # = transformers' GlmMoeDsaForCausalLM on the meta device
    assert param_counts(spec).total == GLM5_TOTAL
    assert spec.mtp_layers == 1  # num_nextn_predict_layers: not built by transformers, reported apart
    names = {g.name: (g.k, g.n, g.layers) for g in gemms(spec) if "indexer" in g.name}
    assert names == {
        "mla.indexer.wq_b": (2048, 4096, 78),
        "mla.indexer.wk": (6144, 128, 78),
        "mla.indexer.weights_proj": (6144, 32, 78),
    }
    assert {k.mixer.index_topk for k in spec.layer_kinds} == {2048}


def test_dsa_kv_bytes_count_the_indexer_keys_in_fp8_with_fp32_scales():
    # per layer: the MLA latent (512 + 64) in the KV format + the indexer's key: 128 FP8 bytes + one FP32 scale
    glm5, v32, v3 = _spec(GLM5), _spec(V32), _spec(V3)
    assert indexer_kv_bytes_per_token(glm5.layer_kinds[0].mixer) == 128 + 4
    assert kv_cache_bytes_per_token(glm5) == 78 * (576 * 2 + 132) == 100_152  # BF16 cache
    assert kv_cache_bytes_per_token(glm5, 1.0) == 78 * (576 + 132) == 55_224  # FP8 cache: the indexer's keys stay 132
    assert kv_cache_bytes_per_token(v32) == 61 * (576 * 2 + 132) == 78_324
    assert kv_cache_bytes_per_token(v3) == 61 * 576 * 2 == 70_272  # no indexer
    w = analyse(glm5, load_profile("h100-sxm"), make_scenario("throughput"))
    assert w.kv_bytes_per_token == 100_152


def test_glm5_shared_indexer_layers_have_no_indexer_weights_or_keys():
    # index_topk_freq 4 from index_skip_topk_offset 3 (GlmMoeDsaConfig): layer i runs its indexer when
    # max(i - 2, 0) % 4 == 0: layers 0, 1, 2, 6, 10, ..., 74 = 21 layers; the 57 others reuse the previous top-k
    spec = _variant(GLM5, index_topk_freq=4, index_skip_topk_offset=3)
    counts = {k.name: n for k, n in zip(spec.layer_kinds, spec.layer_counts())}
    assert counts == {"mla+dense": 3, "mla+moe": 18, "mla/shared-topk+moe": 57}  # 21 layers run an indexer
    assert param_counts(spec).total == GLM5_TOTAL - 57 * _INDEXER == 743_377_000_704  # gen_golden.py --count
    assert kv_cache_bytes_per_token(spec) == 78 * 576 * 2 + 21 * 132 == 92_628
    assert {k.mixer.index_topk for k in spec.layer_kinds} == {2048}  # every layer still attends top-k only
    same = _variant(GLM5, index_topk_pattern="FFF" + "SSSF" * 18 + "SSS")
    assert param_counts(same).total == param_counts(spec).total
    listed = _variant(GLM5, indexer_types=["full"] * 3 + ["shared", "shared", "shared", "full"] * 18 + ["shared"] * 3)
    assert param_counts(listed).total == param_counts(spec).total
    assert listed.per_layer_lists["indexer_types"] == 78


def test_a_bad_indexer_pattern_is_located():
    with pytest.raises(Exception) as exc:
        _variant(GLM5, index_topk_pattern="FFX")
    assert getattr(exc.value, "key", None) == "index_topk_pattern"


def test_sparse_attention_attends_top_k_and_the_indexer_scores_the_whole_context():
    """Decode at 128k tokens: the MLA core reads 2,048 latent rows per sequence (the top-k) where DeepSeek-V3
    reads all 131,072; the indexer reads every cached index key (132 B) and writes and reads one FP32 logit each."""
    sc = make_scenario("long-context")
    prof = load_profile("h200")
    ctx, b = sc.context, sc.decode_concurrency
    v32 = analyse(_spec(V32), prof, sc)
    v3 = analyse(_spec(V3), prof, sc)
    a32 = {a.kind: a for a in v32.attention["decode"]}["mla+moe"]
    a3 = {a.kind: a for a in v3.attention["decode"]}["mla+moe"]
    assert ctx > 2048 and a32.attended_tokens == 2048 and a3.attended_tokens == ctx
    heads = -(-128 // sc.tp)
    core_flops = 2.0 * b * 2048 * heads * (576 + 512)
    index_flops = 2.0 * b * ctx * 64 * 128
    assert a32.flops == pytest.approx(core_flops + index_flops)
    assert a32.bytes == pytest.approx(b * 2048 * 576 * sc.kv_bytes_per_elem + b * ctx * 132 + 2 * b * ctx * 4)
    assert a32.estimate_s < a3.estimate_s  # top-k attention beats the dense read at 128k
    # prefill: every prompt token scores all earlier tokens, but attends at most 2,048 of them
    p32 = {a.kind: a for a in v32.attention["prefill"]}["mla+moe"]
    assert p32.attended_tokens < 2048 < {a.kind: a for a in v3.attention["prefill"]}["mla+moe"].attended_tokens
    # a short prompt is cheaper as masked dense MHA (192 + 128 per pair over (s + 1) / 2 keys) than as the absorbed
    # sparse kernel (576 + 512 per pair over up to 2,048 keys): priced as dense, as DeepSeek-V3.2 serves it
    short = analyse(_spec(V32), prof, make_scenario("long-context", context=8192))
    assert {a.kind: a for a in short.attention["prefill"]}["mla+moe"].attended_tokens == (8192 + 1) / 2


# MiMo-V2-Flash: H 4096, 48 layers, 64 heads of q/k 192 and v 128; full layers (0, 5, 11, ..., 47: 9) 4 KV heads,
# sliding layers (39) 8 KV heads and one sink per head; layer 0 dense (16384), 47 MoE layers of 256 experts (2048)
_Q, _O = 4096 * 64 * 192, 64 * 128 * 4096
_FULL = _Q + 4096 * 4 * 192 + 4096 * 4 * 128 + _O
_SWA = _Q + 4096 * 8 * 192 + 4096 * 8 * 128 + _O + 64
_MIMO_MOE = 256 * 4096 + 256 * 3 * 4096 * 2048
MIMO_TOTAL = (
    ((_FULL + 8192 + 3 * 4096 * 16384) + 8 * (_FULL + 8192 + _MIMO_MOE) + 39 * (_SWA + 8192 + _MIMO_MOE))
    + 2 * 152576 * 4096
    + 4096
)


def test_mimo_v2_flash_sizes_each_layer_type_on_its_own():
    spec = _spec(MIMO)
    assert MIMO_TOTAL == 308_778_768_832  # = transformers' MiMoV2FlashForCausalLM on the meta device
    assert param_counts(spec).total == MIMO_TOTAL
    assert round(param_counts(spec).active_per_token / 1e9, 2) == 15.45
    geo = {
        (k.mixer.attention, k.ffn.kind): (k.mixer.num_kv_heads, k.mixer.head_dim, k.mixer.v_head_dim, k.mixer.window)
        for k in spec.layer_kinds
    }
    assert geo == {
        ("full", "dense"): (4, 192, 128, None),
        ("full", "moe"): (4, 192, 128, None),
        ("sliding", "moe"): (8, 192, 128, 129),  # sliding_window_size 128 + the query itself
    }
    # K and V per token: 9 full layers x 4 x (192 + 128) + 39 sliding layers x 8 x (192 + 128), BF16
    assert kv_cache_bytes_per_token(spec) == (9 * 4 * 320 + 39 * 8 * 320) * 2 == 222_720
    assert spec.loader_rejects == [] and spec.notes == []


def test_mimo_v2_flash_says_where_transformers_builds_otherwise():
    spec = _variant(MIMO, swa_num_key_value_heads=16)
    assert "num_key_value_heads x 2" in spec.loader_rejects[0]
    assert {k.mixer.num_kv_heads for k in spec.layer_kinds if k.mixer.attention == "sliding"} == {16}
    pattern = [0] + [1] * 47  # one full layer: not transformers' 1-in-6
    spec = _variant(MIMO, hybrid_layer_pattern=pattern)
    assert sum(n for k, n in zip(spec.layer_kinds, spec.layer_counts()) if k.mixer.attention == "full") == 1
    assert "hybrid_layer_pattern differs" in spec.notes[0]


def test_sliding_layers_of_mimo_read_only_the_window_in_decode():
    w = analyse(_spec(MIMO), load_profile("h200"), make_scenario("long-context"))
    by = {a.kind: a for a in w.attention["decode"]}
    assert by["attention/sliding+moe"].attended_tokens == 129
    assert by["attention/full+moe"].attended_tokens == make_scenario("long-context").context


def test_kv_parallelism_does_not_pay_where_sparse_attention_reads_only_top_k():
    """CL703 at 131,072 tokens, 16 sequences, tp=8 on H200: DeepSeek-V3's latent reads dominate decode (KV parallelism
    pays), DeepSeek-V3.2's top-k reads and indexer keys do not."""
    from tests.rules.helpers import corpus, run

    (f,) = run(corpus(V3), ["CL703"], scenario="long-context", tp=8, concurrency=16, gpus=["h200"])
    assert "KV (Helix) parallelism pays" in f.message
    assert run(corpus(V32), ["CL703"], scenario="long-context", tp=8, concurrency=16, gpus=["h200"]) == []


def _measured_dsa(gpu: str) -> list[dict]:
    import csv

    with open(f"tests/data/measured/dsa_generation_module_{gpu}.csv", encoding="utf-8") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


@pytest.mark.parametrize("gpu, profile", [("h100_sxm", "h100-sxm"), ("b200_sxm", "b200")])
def test_dsa_decode_against_measured_trtllm_modules(gpu, profile):
    """TensorRT-LLM's whole DSA decode module (MLA projections, indexer, sparse core; aiconfigurator-core 0.12.0,
    tests/data/measured): colint's attention GEMMs + core for one layer, tp=1, BF16. The module also runs the
    norms, RoPE and quantization kernels colint prices apart (elementwise, launches), so colint's part is below it:
    0.5-1.05 x. Its growth with context (1,024 -> 131,072 tokens) is the indexer's scoring and the top-k reads:
    at 64 and 256 sequences colint's growth is 0.65-1.0 x the measured one (H100 0.87 / 0.93, B200 0.68-0.73).
    At 8 sequences the kernels' fixed cost past the top-k (~40 us once the context exceeds 2,048) dominates the
    growth and is not modelled."""
    prof = load_profile(profile)
    specs = {"deepseek-ai/DeepSeek-V3.2": _spec(V32), "zai-org/GLM-5": _spec(GLM5)}
    t = {}
    for r in _measured_dsa(gpu):
        b, ctx = int(r["batch_size"]), int(r["step"])
        sc = make_scenario("latency", tp=1, concurrency=b, context=ctx, dtype="bf16")
        parts = analyse(specs[r["model"]], prof, sc).layer_parts["decode"]["mla+moe"]
        t[(r["model"], b, ctx)] = (float(r["latency"]) * 1e-3, parts["attention_core"] + parts["attention_gemms"])
    assert len(t) == (20 if gpu == "h100_sxm" else 40)
    for measured, est in t.values():
        assert 0.45 * measured < est < 1.05 * measured
    for model in specs:
        for b in (64, 256):
            if (model, b, 1024) in t:
                grew = [t[(model, b, 131072)][i] - t[(model, b, 1024)][i] for i in (0, 1)]
                assert 0.65 * grew[0] < grew[1] < 1.0 * grew[0]
