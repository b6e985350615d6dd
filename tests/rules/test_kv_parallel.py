"""With --kvp (KV / Helix parallelism) the step runs the FFN, and the all-reduces after o_proj and the FFN, over
the attention group's tp x kvp GPUs (colint.analysis.scenario). The findings must describe that split, not tp
alone: the widths they quote per shard, the domain the all-reduces cross, the EP groups' tokens."""

from __future__ import annotations

from tests.rules.helpers import corpus, run

LLAMA_70B = "tests/corpus/hf/llama3__Llama-3.3-70B-Instruct.json"
LLAMA2_7B = "examples/llama-2-7b.json"
QWEN3_30B = "tests/corpus/hf/qwen3-moe__Qwen3-30B-A3B.json"


def test_cl704_the_attention_group_beyond_the_domain():
    # tp=8 fits the 8-GPU HGX domain, but with kvp=2 each all-reduce spans 16 GPUs: the step prices it at
    # scale-out speed, and CL704 says so (it said nothing while it compared tp alone with the domain)
    (f,) = run(corpus(LLAMA_70B), ["CL704"], gpus=["h100-sxm"], tp=8, kvp=2)
    assert f.message.startswith(
        "the attention group of tp=8 x kvp=2 = 16 GPUs spans 2 NVLink domains of 8 on h100-sxm: every layer's "
        "all-reduce and KV-parallel exchange (decode) cross the scale-out network"
    )
    assert (f.evidence["tp"], f.evidence["kvp"], f.evidence["domain_gpus"]) == (8, 2, 8)
    assert f.evidence["est_decode_step_pct"] > 10 and f.severity == "error"
    assert [x.title for x in f.fixes] == ["keep tp x kvp <= 8 and scale out with pp/dp (or ep for experts)"]
    # within the domain (kvp=2 at tp=4; gb200's 72-GPU domain) nothing is reported
    assert run(corpus(LLAMA_70B), ["CL704"], gpus=["h100-sxm"], tp=4, kvp=2) == []
    assert run(corpus(LLAMA_70B), ["CL704"], gpus=["gb200"], tp=8, kvp=2) == []


def test_cl201_quotes_the_ffn_shard_the_step_runs():
    # 11008 over tp=4 x kvp=2 is 1376 per GPU, the width of the GEMM rows the finding lists (not 2752 at tp=4)
    (f,) = run(corpus(LLAMA2_7B), ["CL201"], gpus=["b200"], tp=4, kvp=2)
    assert f.message == "intermediate_size 11008 is 1376 per shard at tp=4 x kvp=2, not a multiple of 128"
    assert f.evidence["per_shard"] == 1376
    assert (f.evidence["tp"], f.evidence["kvp"], f.evidence["shards"]) == (4, 2, 8)  # each said as itself
    assert [(g["gemm"], g["per_shard"]) for g in f.evidence["gemms"]] == [
        ("mlp.gate_up", 2752),
        ("mlp.down_proj", 1376),
    ]
    # the LM head stays split over tp alone
    (v,) = run(corpus(LLAMA2_7B), ["CL202"], gpus=["b200"], tp=4, kvp=2)
    assert v.message.startswith("vocab_size 32000 is 8000 per shard at tp=4,")


def test_cl503_and_cl501_count_the_attention_group_as_tp_x_kvp():
    # expert TP splits the 768-wide experts over all 8 GPUs of the FFN: 96 per shard
    (f,) = run(corpus(QWEN3_30B), ["CL503"], gpus=["b200"], tp=4, kvp=2)
    assert f.message == (
        "expert FFN width 768 is 96 per shard at tp=4 x kvp=2, under one 128-wide tile: spread the 128 experts "
        "with ep=8 instead (16 whole experts per GPU)"
    )
    assert [(x.title, x.settings) for x in f.fixes] == [("experts on ep=8 (tp for attention only)", {"ep": 8})]
    # ep=8 over attention groups of 4 GPUs: 2 groups of 256 sequences, 512 tokens x top-8 / 128 experts
    (m,) = run(corpus(QWEN3_30B), ["CL501"], gpus=["b200"], tp=2, kvp=2, ep=8)
    assert m.message.startswith(
        "routed experts get est. 32 tokens each per decode step (256 seq x 2 attention-DP groups of tp=2 x kvp=2 x "
        "top-8 / 128 experts)"
    )


def test_cl204_aligns_the_ffn_over_tp_x_kvp():
    # 11008 = 86 x 128 stays aligned over 2 GPUs: tp=2 alone, but only tp=1 with kvp=2 (5504 per GPU; tp=2
    # x kvp=2 runs 2752 wide, 21.5 tiles); with kvp=4 no tp does
    def cl204(path, **opts):
        (f,) = run(corpus(path), ["CL204"], gpus=["h100-sxm"], tp="auto", **opts)
        return f

    assert cl204(LLAMA2_7B).message == (
        "largest power-of-two tp keeping every sharded width a multiple of 128: tp=2 (limited by intermediate_size "
        "11008)"
    )
    f = cl204(LLAMA2_7B, kvp=2)
    assert f.message == (
        "largest power-of-two tp keeping every sharded width a multiple of 128 with kvp=2: tp=1 (limited by "
        "intermediate_size 11008)"
    )
    assert (f.evidence["largest_aligned_tp"], f.evidence["kvp"]) == (1, 2)
    assert f.evidence["per_width"] == {"intermediate_size": 1, "num_heads": 32}
    assert cl204(LLAMA2_7B, kvp=4).message.endswith("intermediate_size 11008 is not one per shard at tp=1 x kvp=4")
    # the attention group of tp x kvp GPUs must fit the 8-GPU domain: Llama-3.3-70B's 8 KV heads allowed tp=8
    assert cl204(LLAMA_70B, kvp=2).message.endswith(
        "tp=4 (limited by the 8-GPU NVLink domain of h100-sxm: tp x kvp=2 <= 8 (CL704))"
    )
