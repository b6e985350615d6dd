"""The analysis' memos (issue 7 speed) return what a fresh computation returns, and never another
input's answer: estimate() keys on argument types and on the profile object, best_partition() on
the cost values and their types; CL604's cheap bound never hides a split that idles."""

import random
from dataclasses import replace

import pytest

from colint.analysis import gemm_model, pipeline
from colint.analysis.scenario import make_scenario
from colint.analysis.gemm_rows import regime_gemm_rows
from colint.analysis.workload import analyse
from colint.hardware_profiles import load_profile, time_model
from colint.loading import load, load_text
from colint.rules.layer_stack import StackCosts
from colint.normalize import normalize


def test_estimate_memo_equals_a_fresh_estimate():
    p = load_profile("b200")
    gemm_model.clear_memo()
    first = gemm_model.estimate(256, 28672, 4096, "bf16", p, standalone=False)
    again = gemm_model.estimate(256, 28672, 4096, "bf16", p, standalone=False)
    assert again is first
    fresh = gemm_model._estimate(256, 28672, 4096, "bf16", p, None, time_model(p), False)
    assert fresh == first
    # standalone pays the quantize pass of FP8: a different key, a different answer
    assert (
        gemm_model.estimate(256, 28672, 4096, "fp8", p).estimate_s
        != gemm_model.estimate(256, 28672, 4096, "fp8", p, standalone=False).estimate_s
    )


def test_estimate_memo_keys_on_argument_types():
    p = load_profile("h100-sxm")
    as_int = gemm_model.estimate(8, 4096, 4096, "bf16", p)
    as_float = gemm_model.estimate(8.0, 4096, 4096, "bf16", p)
    assert type(as_int.m) is int and type(as_float.m) is float  # GemmTime keeps what it was given
    assert as_float.estimate_s == as_int.estimate_s


def test_estimate_memo_keys_on_the_profile_object():
    p = load_profile("b200")
    slow = replace(p, memory_tbps=p.memory_tbps / 4)  # same name, other numbers
    a = gemm_model.estimate(1, 8192, 8192, "bf16", p)
    b = gemm_model.estimate(1, 8192, 8192, "bf16", slow)
    assert b.memory_s == pytest.approx(4 * a.memory_s)
    assert gemm_model.estimate(1, 8192, 8192, "bf16", p) is a


@pytest.mark.parametrize(
    "path",
    [
        "tests/corpus/hf/deepseek__DeepSeek-V3.json",
        "tests/corpus/hf/nemotron-nas__Llama-3_3-Nemotron-Super-49B-v1.json",
        "tests/corpus/hf/qwen3-next__Qwen3-Next-80B-A3B-Thinking.json",
    ],
)
def test_analyse_rows_equal_the_per_regime_build(path):
    spec = normalize(load(path))
    p, sc = load_profile("b200"), make_scenario("throughput", tp=8)
    w = analyse(spec, p, sc)
    for regime in ("decode", "prefill"):
        assert w.gemms[regime] == regime_gemm_rows(spec, p, sc, regime)


def test_rows_of_an_edited_width_reuse_the_groups_it_keeps_and_equal_a_fresh_build():
    """A kind met for the first time builds only the rows of fused groups not seen before (gemm_rows._GROUP_ROWS):
    DeepSeek-V3 with another expert width (routed and shared: both read moe_intermediate_size) keeps its attention,
    router and LM-head rows (the same objects), and every row, the new ones included, equals what a build with
    empty memos gives."""
    from colint.analysis import gemm_rows

    path = "tests/corpus/hf/deepseek__DeepSeek-V3.json"
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    p, sc = load_profile("b200"), make_scenario("throughput")
    base = normalize(load_text(text, path, syntax="json"))
    edited = normalize(load_text(text.replace('"moe_intermediate_size": 2048', '"moe_intermediate_size": 2176'), path))
    for regime in ("decode", "prefill"):
        before = {(r.kind, r.name): r for r in regime_gemm_rows(base, p, sc, regime)}
        after = regime_gemm_rows(edited, p, sc, regime)
        kept = [r for r in after if before.get((r.kind, r.name)) is r]
        changed = {r.name for r in after if before.get((r.kind, r.name)) is not r}
        assert changed == {f"moe.{e}.{g}" for e in ("experts", "shared_experts") for g in ("gate_up", "down_proj")}
        assert {"mla.q_a_proj", "mla.o_proj", "moe.router", "lm_head"} <= {r.name for r in kept}
        memos = (gemm_rows._KIND_ENTRIES, gemm_rows._ENTRIES_MEMO, gemm_rows._PLAN_MEMO, gemm_rows._KIND_IDS)
        memos += (gemm_rows._GROUP_IDS, gemm_rows._KIND_ROWS, gemm_rows._GROUP_ROWS, gemm_model._MEMO)
        for memo in (*memos, gemm_model._TIME_MEMO):
            memo.clear()
        fresh = normalize(
            load_text(text.replace('"moe_intermediate_size": 2048', '"moe_intermediate_size": 2176'), path)
        )
        assert regime_gemm_rows(fresh, p, sc, regime) == after


def test_best_partition_memo_keys_on_cost_types():
    ints = [3, 1, 4, 1, 5, 9, 2, 6]
    floats = [float(c) for c in ints]
    a = pipeline.best_partition(ints, 3, 1, 2)
    b = pipeline.best_partition(floats, 3, 1.0, 2.0)
    assert a.sizes == b.sizes and a.sums == b.sums
    assert pipeline.best_partition(tuple(floats), 3, 1.0, 2.0) == b  # a list and a tuple are one vector
    pipeline._best_partition_memo.cache_clear()
    assert pipeline.best_partition(floats, 3, 1.0, 2.0) == b


def test_cl604_bound_never_hides_an_idle_split():
    rnd = random.Random(3)
    for _ in range(400):
        n = rnd.randint(2, 64)
        kinds = [rnd.choice([1e12, 3e12, 2.9e12, 0.0]) for _ in range(3)]
        c = StackCosts(
            [rnd.choice(kinds) for _ in range(n)],
            [rnd.random() * 1e9 for _ in range(n)],
            rnd.choice([0.0, 1e11]),
            1e9,
            rnd.choice([0.0, 2e12]),
            2e9,
            0,
        )
        for pp in (2, 4, 8):
            p = c.best(pp) if n >= pp else None
            if p is None:
                continue
            for share in (p.idle_share, p.idle_share - 1e-12, 0.02):
                if not c.may_idle(pp, share):
                    assert p.idle_share < share


def test_cl301_width_search_counts_params_exactly():
    """CL301 counts each scaled width once and moves between depths by per-kind parameter counts: the
    figure must equal param_counts of the scaled spec built at that depth."""
    import glob

    from colint.analysis.inventory import param_counts
    from colint.analysis.wider import _r128, _ScaledParams, scaled_spec

    checked = 0
    for path in sorted(glob.glob("tests/corpus/hf/*.json"))[::3] + [
        "tests/corpus/hf/deepseek__DeepSeek-V3.json",
        "tests/corpus/hf/qwen3-next__Qwen3-Next-80B-A3B-Thinking.json",
    ]:
        spec = normalize(load(path))
        L, H = spec.num_layers, spec.hidden_size
        if L < 4:
            continue
        params = _ScaledParams(spec)
        for n in (L - 1, max(1, L // 2), L - 3, L - 1):
            for h in (_r128(H * 1.1), _r128(H * 1.3)):
                p, _ = params.at(h, n)
                assert p == param_counts(scaled_spec(spec, h, n)).total, (path, h, n)
                checked += 1
    assert checked > 50


def test_best_partition_walk_finds_the_bisections_starts(monkeypatch):
    """The O(n) walk over a stage's ends (a non-decreasing prefix best, _walk_stage) and the stage before the
    last computed at the ends asked only (_LazyRow) give the split the bisection gives over whole rows, ties,
    zeros, extras and caps included."""
    rnd = random.Random(13)
    cases = []
    for _ in range(1500):
        n = rnd.randint(1, 70)
        pool = rnd.choice([[1.0, 3.0, 2.9, 0.0, 0.1 + 0.2], [1e12, 3e12, 2.9e12], [0.1, 1 / 3, 2 / 3]])
        costs = [rnd.choice(pool) for _ in range(n)] if rnd.random() < 0.7 else [rnd.random() * 1e9 for _ in range(n)]
        second = [rnd.choice([0.0, 1.0, rnd.random() * 1e9]) for _ in range(n)]
        cases.append((costs, second, rnd.randint(1, 10), rnd.choice([0.0, 0.3, sum(costs) / 5])))

    def run() -> list:
        out = []
        for costs, second, p, extra in cases:
            a = pipeline._best_partition(costs, p, extra, 2 * extra, None, None, 0.0, 0.0)
            out.append(a)
            if a is not None:
                for cap in (a.max, a.max * 1.05):
                    out.append(pipeline._best_partition(second, p, 1.0, 0.0, costs, cap, extra, 2 * extra))
        return out

    walked = run()

    def bisected(j, end, prev, pre, cpre, limit, best_j, arg_j, tol, unfit):
        """_walk_stage's ends from the bisection and _pick, the reference it stands for."""
        for i, lo, left in pipeline._starts_bisect(range(j + 1, end + 1), j, prev, pre, cpre, 0.0, limit, None):
            best_j[i], arg_j[i] = pipeline._pick(i, lo, left, prev, pre, 0.0, False, tol)

    monkeypatch.setattr(pipeline, "_walk_stage", bisected)
    monkeypatch.setattr(pipeline, "_rises", lambda xs: False)  # every row whole: no _LazyRow either
    assert run() == walked
    assert sum(x is not None for x in walked) > 2000


@pytest.mark.parametrize(
    "path",
    [
        "tests/corpus/hf/deepseek__DeepSeek-V3.json",
        "tests/corpus/hf/qwen3-next__Qwen3-Next-80B-A3B-Thinking.json",
        "tests/corpus/hf/gemma__gemma-3-27b.json",
    ],
)
def test_decode_step_is_analyses_decode_step(path):
    """decode_step (CL801 at the concurrency that fits, CL301's alternatives) computes the decode regime
    alone: the very Step analyse computes, at several parallel layouts and concurrencies."""
    from colint.analysis import workload

    spec = normalize(load(path))
    p = load_profile("b200")
    for tp, ep, conc in ((1, 1, 1), (2, 8, 37), (8, 1, 256)):
        sc = make_scenario("throughput", tp=tp, ep=ep, concurrency=conc)
        alone = workload.decode_step(spec, p, sc)  # before analyse memoises this scenario
        assert alone == workload._analyse(spec, p, sc).steps["decode"]
        assert workload.decode_step(spec, p, sc) == alone


def _mixed_specs():
    """MLA + MoE with dense layers, a hybrid linear-attention MoE, sliding/full attention: the stacks the memo
    tests run over."""
    for name in (
        "deepseek__DeepSeek-V3.json",
        "qwen3-next__Qwen3-Next-80B-A3B-Thinking.json",
        "gemma__gemma-3-27b.json",
    ):
        yield normalize(load(f"tests/corpus/hf/{name}"))


def test_shards_of_a_plan_are_shard_per_gemm():
    """gemm_rows._shards (a plan's GEMMs at one layout, inlined) gives _shard's (n, k, instances) for every GEMM
    and fused group, types included, at tp/ep/kvp layouts that split, replicate and round up."""
    import itertools

    from colint.analysis.gemm_rows import _shard, _shards, gemm_entries

    checked = 0
    for spec in _mixed_specs():
        for entry in gemm_entries(spec):
            items = [(g, g.n) for g in entry.gemms] + [(f[2], f[3]) for f in entry.fused]
            for tp, ep, kvp in itertools.product((1, 3, 8), (1, 16, 72), (1, 2)):
                sc = make_scenario(tp=tp, ep=ep, kvp=kvp)
                got = _shards(items, sc)
                want = [_shard(g, n, sc) for g, n in items]
                assert [tuple(map(type, x)) for x in got] == [tuple(map(type, x)) for x in want]
                assert got == want
                checked += len(items)
    assert checked > 500


def _plain_sums(rows) -> tuple[dict, dict]:
    """A reference pass over a regime's rows: per kind name, GEMM time by component and plain roofline, in row
    order from 0.0, and the count of rows."""
    times: dict = {}
    n_rows: dict = {}
    for row in rows:
        out = times.setdefault(row.kind, {"attention": 0.0, "ffn": 0.0, "gemm_sol": 0.0})
        out[row.component] = out.get(row.component, 0.0) + row.layer_s
        out["gemm_sol"] += row.time.sol_s * row.instances
        n_rows[row.kind] = n_rows.get(row.kind, 0) + 1
    return times, n_rows


def test_kind_sums_kept_with_the_rows_are_the_steps_sums():
    """A regime's rows carry each kind's sums from the rows' memo (gemm_rows.GemmRows); the step reads, to the last
    bit, what a pass over those rows in order gives, half batches included."""
    from colint.analysis.gemm_rows import gemm_entries
    from colint.analysis.workload import _kind_gemm_s, _kind_times

    p = load_profile("b200")
    checked = 0
    for spec in _mixed_specs():
        for tp, ep in ((1, 1), (2, 16), (8, 64)):
            w = analyse(spec, p, make_scenario(tp=tp, ep=ep))
            for regime in ("decode", "prefill"):
                rows = w.gemms[regime]
                assert _kind_times(rows, w.attention[regime])[:2] == _plain_sums(rows)
                half = regime_gemm_rows(
                    spec, p, w.scenario, regime, gemm_entries(spec), kinds={spec.layer_kinds[-1].name}
                )
                assert _kind_gemm_s(half) == _plain_sums(half)[0]
                checked += 1
    assert checked == 18


def test_estimate_s_is_the_estimates_time():
    """gemm_model.estimate_s (the time alone: grouped expert GEMMs, padded shapes) is estimate(...).estimate_s,
    whether the full estimate was taken before, after or never, in every format and both paths."""
    p = load_profile("b200")
    gmod = time_model(p)
    shapes = [(1, 7168, 2048), (37, 4096 * 3, 7168), (256, 2112, 7168), (8192, 18432, 7168), (5, 3, 129)]
    for dtype in ("bf16", "fp8", "nvfp4", "int4_wo"):
        for standalone in (False, True):
            for m, n, k in shapes:
                gemm_model.clear_memo()
                alone = gemm_model.estimate_s(m, n, k, dtype, p, "bf16", model=gmod, standalone=standalone)
                full = gemm_model.estimate(m, n, k, dtype, p, "bf16", model=gmod, standalone=standalone)
                assert alone == full.estimate_s
                assert gemm_model.estimate_s(m, n, k, dtype, p, "bf16", model=gmod, standalone=standalone) == alone
                gemm_model.clear_memo()
                assert gemm_model.estimate_s(m, n, k, dtype, p, "bf16", model=gmod, standalone=standalone) == alone


def test_kind_sums_of_two_kinds_that_share_a_name_run_over_both():
    """Two layer kinds of one name (nothing in ModelSpec forbids it): their kept sums are one pass over both
    kinds' rows in row order, as for any other kind."""
    import dataclasses

    from colint.analysis.gemm_rows import gemm_entries
    from colint.analysis.workload import _kind_times

    spec = normalize(load("tests/corpus/hf/gemma__gemma-3-27b.json"))
    assert len({k.name for k in spec.layer_kinds}) > 1
    twins = dataclasses.replace(spec, layer_kinds=[dataclasses.replace(k, name="twin") for k in spec.layer_kinds])
    w = analyse(twins, load_profile("b200"), make_scenario(tp=2))
    for regime in ("decode", "prefill"):
        rows = w.gemms[regime]
        assert _kind_times(rows, w.attention[regime])[:2] == _plain_sums(rows)
    assert [e.name for e in gemm_entries(twins)].count("twin") > 1  # the case: two entries, one name
