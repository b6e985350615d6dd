"""CL8xx memory: weights + KV cache + activations per GPU against usable HBM (colint.analysis.memory)."""

from __future__ import annotations

from tests.rules.helpers import corpus, run

L405 = "tests/corpus/hf/llama3__Meta-Llama-3.1-405B.json"
L8 = "tests/corpus/hf/llama3__Meta-Llama-3.1-8B.json"


def test_405b_on_one_h100_will_not_load_and_says_what_fits():
    (f,) = run(corpus(L405), ["CL801"], gpus=["h100-sxm"])
    assert (f.code, f.severity, f.impact.estimated_loss_pct) == ("CL801", "error", None)
    assert f.message == (
        "does not fit: est. 811.7 GB of weights per GPU exceed 72.0 GB usable of h100-sxm's 80 GB: "
        "the model will not load; tp=8, pp=4 (32 GPUs) fits"
    )
    assert (f.evidence["fit_tp"], f.evidence["fit_ep"], f.evidence["fit_pp"]) == (8, 1, 4)
    assert f.evidence["max_decode_concurrency"] == 0
    # the layout it proposes fits: no CL801 there
    assert run(corpus(L405), ["CL801"], gpus=["h100-sxm"], tp=8, pp=4) == []


def test_fewer_sequences_than_planned_is_graded_by_the_throughput_lost():
    (f,) = run(corpus(L8), ["CL801"])
    assert f.severity == "warning" and 0.5 <= f.impact.estimated_loss_pct < 25
    assert f.message.startswith("only 135 of the scenario's 256 sequences of 8,192 tokens fit in 162.0 GB usable")
    # the finding names the setting that changes it (issue 29), in the message every format shows
    assert f.message.endswith(": set --concurrency 135 (concurrency = 135 in [tool.colint]) or deploy on more GPUs")
    assert f.evidence["max_decode_concurrency"] == 135
    assert [(x.title, x.settings) for x in f.fixes] == [
        ("check at --concurrency 135", {"concurrency": 135}),
        ("deploy with tp=2 (2 GPUs)", {}),
    ]
    # one attention group serves the replica: its 256 sequences are the replica's
    assert "smallest deployment that fits the same 256 seq per replica x 8,192 tokens: tp=2 (2 GPUs)" in f.details[2]


def test_advice_for_another_layout_keeps_the_replicas_sequences():
    # issue 29: at ep=8 with data-parallel attention the scenario's 256 sequences are per attention group (8 groups,
    # 2,048 per replica); a layout advised instead must hold the 2,048, not 256 (an eighth of the load)
    (f,) = run(corpus("tests/corpus/hf/deepseek__DeepSeek-V3.json"), ["CL801"], ep=8)
    assert f.severity == "error" and f.evidence["ep"] == 8
    (line,) = [d for d in f.details if d.startswith("smallest deployment")]
    assert line.startswith("smallest deployment that fits the same 2,048 seq per replica (256 per attention group x 8)")
    # the advised layout, tp=1 ep=8 pp=4, keeps eight attention groups of 256 each; its footprint was priced there
    assert (f.evidence["fit_tp"], f.evidence["fit_ep"], f.evidence["fit_pp"]) == (1, 8, 4)
    # one sequence at a shorter context fits easily
    assert run(corpus(L8), ["CL801"], concurrency=16) == []


def test_cl603_stage_that_does_not_fit_is_an_error():
    # DeepSeek-V3 at pp=8 on B200: the FLOP-balanced split's heaviest stage holds est. 184 GB of weights, above the
    # 162 GB usable of 180 GB (issue 17: it was an info)
    (f,) = run(corpus("tests/corpus/hf/deepseek__DeepSeek-V3.json"), ["CL603"], pp=8)
    assert f.severity == "error" and "184.1 GB per GPU" in f.message and f.message.endswith("will not load")
    assert f.evidence["usable_bytes"] == 162_000_000_000
