"""CL6xx layer pattern / pipeline balance: exact findings on fixtures and corpus configs."""

import pytest

from colint.analysis.pipeline import (best_partition, best_partition_two, bubble_fraction, evaluate, even_sizes,
                                     imbalance)
from colint.rules._fixes import layer_pattern_for, with_num_layers
from tests.rules.helpers import LLAMA_8B, corpus, run, spec_of

DSV3 = "tests/corpus/hf/deepseek__DeepSeek-V3.json"


# -- analysis.pipeline ---------------------------------------------------------------------------
def test_best_partition_exact_min_max():
    p = best_partition([1, 2, 3, 4, 5, 6, 7, 8, 9], 3)
    assert p.sizes == (5, 2, 2) and p.sums == (15.0, 13.0, 17.0)  # min over splits of the max stage is 17
    assert best_partition([1, 1], 3) is None


def test_extras_sit_on_first_and_last_stage():
    p = best_partition([1.0] * 8, 2, first_extra=2.0, last_extra=0.0)
    assert p.sizes == (3, 5) and p.sums == (5.0, 5.0) and p.imbalance == 0.0


def test_tie_break_in_second_cost():
    # both (2,2) and (1,3)... are optimal in flops only when equal; the second vector picks the split
    flops = [1.0, 1.0, 1.0, 1.0]
    weights = [0.1, 0.1, 1.0, 1.0]
    p = best_partition_two(flops, weights, 2)
    assert p.sizes == (2, 2)
    assert evaluate(weights, p.sizes).sums == pytest.approx((0.2, 2.0))


def test_dynamic_program_matches_brute_force():
    import itertools
    import random

    rnd = random.Random(7)
    for _ in range(200):
        n, p = rnd.randint(2, 9), 0
        p = rnd.randint(1, n)
        f = [rnd.choice([0.0, 0.5, 1.0, 2.0, 3.0]) for _ in range(n)]
        w = [rnd.choice([0.0, 1.0, 4.0, 9.0]) for _ in range(n)]
        fe, le, we, wl = rnd.choice([0.0, 1.0]), rnd.choice([0.0, 2.0]), rnd.choice([0.0, 3.0]), 1.0
        splits = []
        for cuts in itertools.combinations(range(1, n), p - 1):
            b = (0,) + cuts + (n,)
            sizes = [b[i + 1] - b[i] for i in range(p)]
            splits.append((evaluate(f, sizes, fe, le).max, evaluate(w, sizes, we, wl).max))
        f_opt = min(x for x, _ in splits)
        w_opt = min(y for x, y in splits if x <= f_opt + 1e-12)
        got = best_partition_two(f, w, p, fe, le, we, wl)
        assert got.max == pytest.approx(f_opt)
        assert evaluate(w, got.sizes, we, wl).max == pytest.approx(w_opt)


def test_imbalance_bubble_even():
    assert imbalance([16, 15, 15, 15]) == pytest.approx(16 / 15.25 - 1)
    assert bubble_fraction(4, 32) == pytest.approx(3 / 32)
    assert bubble_fraction(4, 32, virtual_stages=2) == pytest.approx(3 / 64)
    assert even_sizes(61, 4) is None and even_sizes(60, 4) == (15, 15, 15, 15)


def test_layer_pattern_resize_keeps_first_k_dense():
    spec = corpus(DSV3)
    dense = spec.layer_pattern[0]
    assert layer_pattern_for(spec.layer_pattern, 60) == [dense] * 3 + [spec.layer_pattern[-1]] * 57
    assert layer_pattern_for([0, 1, 0, 1, 0, 1], 9) == [0, 1, 0, 1, 0, 1, 0, 1, 0]
    assert with_num_layers(spec, 63).num_layers == 63


# -- CL601 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("pp,sizes,regular", [
    (4, [16, 15, 16, 14], [(59, "15/15/15/14"), (63, "16/16/16/15")]),
    (8, [8, 7, 8, 8, 8, 8, 8, 6], [(55, "7/7/7/7/7/7/7/6"), (63, "8/8/8/8/8/8/8/7")]),
])
def test_cl601_deepseek_v3_61_layers(pp, sizes, regular):
    fs = [f for f in run(corpus(DSV3), ["CL601"], pp=pp)]
    (f,) = fs
    assert (f.code, f.severity, f.key, f.line) == ("CL601", "warning", "num_hidden_layers", 31)
    assert f.message.startswith(f"61 layers do not split evenly into pp={pp} stages")
    ev = f.evidence
    assert ev["stage_layers"] == sizes
    # 61 decoder layers + 1 MTP layer (about one more layer) on the last stage: 62/pp per stage at best
    assert ev["flops_imbalance_pct"] == pytest.approx(3.24, abs=0.01)
    assert ev["idle_pct"] == pytest.approx(3.14, abs=0.01)
    assert ev["weight_bytes_imbalance_pct"] == pytest.approx(7.89, abs=0.01)
    assert ev["mtp_layers"] == 1
    assert f.fixes[0].safety == "display"
    lay = "|".join(["E,t*%d" % sizes[0]] + ["t*%d" % n for n in sizes[1:-1]] + ["t*%d,m,L" % sizes[-1]])
    assert f'--pipeline-model-parallel-layout "{lay}"' in f.fixes[0].title
    assert "VLLM_PP_LAYER_PARTITION=" + ",".join(map(str, sizes)) in f.fixes[0].title
    assert [(x.edits[0].new, x.safety) for x in f.fixes[1:]] == [(n, "unsafe") for n, _ in regular]
    assert [x.title.split("stages ")[1].rstrip(")") for x in f.fixes[1:]] == [s for _, s in regular]


def test_cl601_native_deepseek_config_without_mtp():
    (f,) = run(corpus("tests/corpus/meta/deepseek-native__config_671B.json"), ["CL601"], pp=4)
    assert f.evidence["stage_layers"] == [16, 15, 15, 15] and f.evidence["mtp_layers"] == 0
    assert f.evidence["idle_pct"] == pytest.approx(100 * (1 - 15.25 / 16), abs=0.05)


def test_cl601_small_imbalance_is_info():
    # 126 layers at pp=4: 32/32/31/31 -> 1.6% idle, below the 2% warning threshold
    (f,) = run(corpus("tests/corpus/hf/llama3__Meta-Llama-3.1-405B.json"), ["CL601"], pp=4)
    assert f.severity == "info" and sorted(f.evidence["stage_layers"]) == [31, 31, 32, 32]


def test_cl601_fixture_30_layers_pp4():
    spec = spec_of(dict(LLAMA_8B, num_hidden_layers=30))
    (f,) = run(spec, ["CL601"], pp=4)
    assert (f.severity, f.key, f.line) == ("warning", "num_hidden_layers", 10)
    assert sorted(f.evidence["stage_layers"]) == [7, 7, 8, 8]
    assert [e.new for x in f.fixes[1:] for e in x.edits] == [28, 32]


def test_regular_model_divisible_pp_is_clean():
    spec = spec_of(LLAMA_8B)
    assert run(spec, ["CL6"], pp=4) == []
    assert run(spec, ["CL6"], pp=8) == []
    assert run(spec, ["CL6"]) == []  # no --pp, regular stack: nothing


# -- CL602 / CL603 / CL604 -----------------------------------------------------------------------
def test_cl602_pattern_period_vs_layers_per_stage():
    # gpt-oss-20b alternates sliding/full attention: 3 layers per stage at pp=8 mix them unevenly
    (f,) = run(corpus("tests/corpus/hf/gpt-oss__gpt-oss-20b.json"), ["CL602"], pp=8)
    assert (f.code, f.severity) == ("CL602", "warning")
    assert f.evidence["pattern_period"] == 2 and f.evidence["stage_layers"] == [3] * 8
    assert f.evidence["idle_pct"] == pytest.approx(3.7, abs=0.1)
    assert any("2-layer pattern does not divide 3 layers per stage" in d for d in f.details)
    assert run(corpus("tests/corpus/hf/gpt-oss__gpt-oss-20b.json"), ["CL602"], pp=4) == []  # 6 per stage


def test_cl603_first_k_dense_weight_imbalance():
    fs = run(corpus(DSV3), ["CL603"], pp=4)
    (f,) = fs
    assert (f.severity, f.key) == ("info", "num_hidden_layers")
    assert f.evidence["heaviest_stage"] == 2
    assert f.evidence["excess_weight_bytes"] == pytest.approx(26.9e9, rel=0.01)
    assert "dense FFN holds far fewer weights than a moe layer" in f.details[0]


def test_cl604_without_pp_reports_irregular_stacks_only():
    (f,) = run(corpus(DSV3), ["CL604"])
    assert f.severity == "info"
    assert f.message.startswith("61 layers (first 3 layers dense, 1 MTP layer): the best contiguous split still idles "
                                "stages at pp=4, pp=8")
    assert f.evidence["splits"]["4"]["stage_layers"] == [16, 15, 16, 14]
    # periodic hybrids and regular stacks are not reported without --pp
    assert run(corpus("tests/corpus/hf/gpt-oss__gpt-oss-20b.json"), ["CL604"]) == []
    assert run(corpus("tests/corpus/hf/llama3__Meta-Llama-3.1-8B.json"), ["CL604"]) == []


def test_cl601_threshold_is_an_option():
    (f,) = run(corpus(DSV3), ["CL601"], pp=4, rule_options={"CL601": {"warn_idle_pct": 5.0}})
    assert f.severity == "info"  # 3.1% idle is below a 5% threshold


def test_cl604_equal_layer_counts_are_not_called_uneven():
    # Nemotron-3-Nano: 52 hybrid layers split 13/13/13/13 at pp=4 still idle stages (Mamba, attention and MoE layers
    # cost differently); the message must not say "split unevenly" over an even layer count
    (f,) = run(corpus("tests/corpus/hf/nemotron-h__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"), ["CL604"])
    assert f.evidence["splits"]["4"]["stage_layers"] == [13, 13, 13, 13]
    assert "unevenly" not in f.message
    assert f.message.startswith("52 layers (an irregular sequence of 3 layer kinds, hybrid attention/mamba): the best "
                                "contiguous split still idles stages at pp=4, pp=8: pp=4: 13/13/13/13, est. ")
