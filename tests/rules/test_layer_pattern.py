"""CL6xx layer pattern / pipeline balance: exact findings on fixtures and corpus configs."""

import pytest

from colint.analysis.pipeline import (
    best_partition,
    best_partition_two,
    bubble_fraction,
    crossing_split,
    evaluate,
    even_sizes,
    imbalance,
)
from colint.rules.fix_builders import layer_pattern_for, with_num_layers
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


def test_crossing_split_is_a_feasible_upper_bound():
    # CL604's filter: a split cut at the running sum's crossings; its largest stage never beats the optimum
    p = crossing_split([1, 2, 3, 4, 5, 6, 7, 8, 9], 3)
    assert p.sizes == (5, 2, 2) and p.max == 17.0  # here it is the optimum
    assert crossing_split([1.0] * 8, 2, first_extra=2.0).sizes == (3, 5)
    assert crossing_split([1, 1], 3) is None
    import random

    rnd = random.Random(11)
    for _ in range(500):
        n = rnd.randint(1, 70)
        p = rnd.choice([1, 2, 4, 8, 16])
        f = [rnd.choice([0.0, 1.0, 3.5, 7.25]) * 1e12 for _ in range(n)]
        fe, le = rnd.choice([0.0, 2e12]), rnd.choice([0.0, 9e12])
        cut, best = crossing_split(f, p, fe, le), best_partition(f, p, fe, le)
        assert (cut is None) == (best is None)
        if cut is not None:
            assert len(cut.sizes) == p and min(cut.sizes) >= 1 and sum(cut.sizes) == n
            assert best.max <= cut.max


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
@pytest.mark.parametrize(
    "pp,sizes,regular",
    [
        (4, [16, 15, 16, 14], [(59, "15/15/15/14"), (63, "16/16/16/15")]),
        (8, [8, 7, 8, 8, 8, 8, 8, 6], [(55, "7/7/7/7/7/7/7/6"), (63, "8/8/8/8/8/8/8/7")]),
    ],
)
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
    # BF16 on B200: the 368 GB stage does not load (an error; CL801 reports that no split does)
    assert (f.severity, f.key) == ("error", "num_hidden_layers")
    assert f.evidence["heaviest_stage"] == 2
    assert f.evidence["excess_weight_bytes"] == pytest.approx(26.9e9, rel=0.01)
    assert "dense FFN holds far fewer weights than a moe layer" in f.details[0]


def test_cl604_without_pp_reports_irregular_stacks_only():
    (f,) = run(corpus(DSV3), ["CL604"])
    assert f.severity == "info"
    assert f.message.startswith(
        "61 layers (first 3 layers dense, 1 MTP layer): the best contiguous split still idles stages at pp=4, pp=8"
    )
    assert f.evidence["splits"]["4"]["stage_layers"] == [16, 15, 16, 14]
    # periodic hybrids and regular stacks are not reported without --pp
    assert run(corpus("tests/corpus/hf/gpt-oss__gpt-oss-20b.json"), ["CL604"]) == []
    assert run(corpus("tests/corpus/hf/llama3__Meta-Llama-3.1-8B.json"), ["CL604"]) == []


def test_cl601_threshold_is_an_option():
    (f,) = run(corpus(DSV3), ["CL601"], pp=4, rules={"CL601": {"warning_loss_pct": 5.0}})
    assert f.severity == "info"  # 3.1% idle is below a 5% threshold


def test_cl604_equal_layer_counts_are_not_called_uneven():
    # Nemotron-3-Nano: 52 hybrid layers split 13/13/13/13 at pp=4 still idle stages (Mamba, attention and MoE layers
    # cost differently); the message must not say "split unevenly" over an even layer count
    (f,) = run(corpus("tests/corpus/hf/nemotron-h__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json"), ["CL604"])
    assert f.evidence["splits"]["4"]["stage_layers"] == [13, 13, 13, 13]
    assert "unevenly" not in f.message
    assert f.message.startswith(
        "52 layers (an irregular sequence of 3 layer kinds, hybrid attention/mamba): the best "
        "contiguous split still idles stages at pp=4, pp=8: pp=4: 13/13/13/13, est. "
    )


# -- period(): linear, same results as the quadratic scan it replaced ----------------------------
def _period_reference(pattern: list[int]) -> tuple[int, int | None]:
    """period() before it became linear (commit 79315b5), kept as the reference: try every prefix f, then
    every period p, comparing the whole rest."""
    from colint.rules.layer_stack import MAX_PERIOD

    n = len(pattern)
    for f in range(0, max(1, n // 2) + 1):
        rest = pattern[f:]
        for p in range(1, min(MAX_PERIOD, len(rest)) + 1):
            if all(rest[i] == rest[i + p] for i in range(len(rest) - p)):
                return f, p
    return 0, None


def _patterns_for_period(seed: int = 20260) -> list[list[int]]:
    """Every short pattern over two kinds, random ones, and near-periodic ones (prefix + repeated unit,
    a few mutations), seeded."""
    import itertools
    import random

    rng = random.Random(seed)
    out = [list(t) for n in range(0, 11) for t in itertools.product((0, 1), repeat=n)]  # 2,047 patterns
    for _ in range(1000):
        out.append([rng.randrange(rng.randint(1, 4)) for _ in range(rng.randint(0, 40))])
    for _ in range(2000):
        unit = [rng.randrange(3) for _ in range(rng.randint(1, 10))]
        pat = [rng.randrange(3, 5) for _ in range(rng.randint(0, 6))] + unit * rng.randint(1, 12)
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            if pat:
                pat[rng.randrange(len(pat))] = rng.randrange(5)
        out.append(pat)
    return out


def test_period_matches_the_quadratic_reference():
    from pathlib import Path

    from colint.errors import ColintError
    from colint.rules.layer_stack import period

    pats = []
    for path in sorted(Path("tests/corpus").rglob("*")):
        if path.suffix in (".json", ".yaml", ".yml"):
            try:
                pats.append(list(corpus(str(path)).layer_pattern))
            except ColintError:
                continue
    assert len(pats) > 50 and any(period(p)[1] is None for p in pats) and any(period(p)[0] > 0 for p in pats)
    pats += _patterns_for_period()
    mismatches = [(p, period(p), _period_reference(p)) for p in pats if period(p) != _period_reference(p)]
    assert mismatches == []
    # the cases the docstring names
    assert period([0, 0, 0] + [1] * 58) == (3, 1)  # DeepSeek-V3: first 3 dense
    assert period([0, 1, 2, 3, 4, 5, 6, 7] * 4) == (0, 8)  # an 8-layer unit (Jamba)
    assert period([]) == (0, None) and period([7]) == (0, 1)


def test_period_of_a_100k_layer_near_periodic_stack():
    from colint.rules.layer_stack import period

    pat = [9, 9, 9] + [0, 1, 2] * 33_333  # 100,002 layers: a 3-layer unit after a 3-layer prefix...
    pat[40_000] = 5  # ...broken once: the repeating tail starts after the mismatch
    assert period(pat) == (40_001, 3)
    pat[70_000] = 5  # a mismatch past the middle leaves no prefix of at most n/2 layers
    assert period(pat) == (0, None)
