"""Two-micro-batch overlap of the EP exchange with compute (colint.analysis.overlap; issue 12 item 5)."""

import pytest

from colint.analysis.frontier import Deployment, scenario_for
from colint.analysis.frontier_pricing import decode_prices
from colint.analysis.overlap import layer_time
from colint.analysis.scenario import make_scenario
from colint.analysis.step_extras import expert_all_to_all_s
from colint.analysis.workload import analyse
from colint.errors import UsageError
from colint.hardware_profiles import load_profile, time_model
from colint.loading import load
from colint.normalize import normalize

DEEPSEEK = "tests/corpus/hf/deepseek__DeepSeek-V3.json"
MOE_LAYERS = 58  # DeepSeek-V3: 3 dense layers, then 58 MoE layers
GROUPS = (8, 4)  # DeepSeek-V3's router: a token's top-8 within its best 4 of 8 expert groups


@pytest.fixture(scope="module")
def deepseek():
    return normalize(load(DEEPSEEK))


def _decode(spec, gpu, mode, concurrency, ep=64):
    sc = make_scenario("throughput", dtype="fp8", ep=ep, concurrency=concurrency, ep_overlap=mode)
    return analyse(spec, load_profile(gpu), sc)


def test_compute_covers_the_exchange_only_the_fill_stays_exposed(deepseek):
    # 256 sequences per rank (tp1 ep64 on GB200): each micro-batch of 128 computes longer than the other's
    # dispatch + combine, so of the 58 x 2 half-exchanges one forward runs, only the fill stays on the
    # clock: the first dispatch and the last combine, one half's exchange per forward
    w = _decode(deepseek, "gb200", "on", 256)
    half = expert_all_to_all_s(128, 8, 7168, w.scenario, w.profile, 256, GROUPS)
    step = w.steps["decode"]
    assert step.comm_s == pytest.approx(half)  # tp = 1: no all-reduce, no kvp exchange
    assert step.comm_hidden_s == pytest.approx(MOE_LAYERS * 2 * half - half)
    parts = w.layer_parts["decode"]["mla+moe"]
    assert parts["collectives"] == pytest.approx(half / MOE_LAYERS)
    serial = _decode(deepseek, "gb200", "off", 256).steps["decode"]
    assert serial.comm_s == pytest.approx(
        MOE_LAYERS * expert_all_to_all_s(256, 8, 7168, w.scenario, w.profile, 256, GROUPS)
    )
    assert serial.comm_hidden_s == 0.0
    # and there it pays: auto takes the split, a shorter step than the exchange in series
    auto = _decode(deepseek, "gb200", "auto", 256).steps["decode"]
    assert auto.estimate_s == step.estimate_s < serial.estimate_s


def test_exchange_longer_than_compute_exposes_the_remainder(deepseek):
    # a layer whose GEMMs and cores cost nothing: the half's compute stream is its elementwise passes and
    # launches, C, far shorter than its exchange X; the layer takes max(2C + S, 2X) + fill = 2X + fill.
    # 4,096 tokens per rank run on DeepEP's high-throughput kernels, whose 24 copy SMs slow the compute
    # beside them: S = 2C x (148 / 124 - 1) on B200's 148 SMs, charged to the collectives
    prof = load_profile("b200")
    sc = make_scenario("throughput", dtype="fp8", ep=16, ep_overlap="on")  # 16 GPUs: across two HGX domains
    kind = next(k for k in deepseek.layer_kinds if k.ffn.kind == "moe")
    lt = layer_time(kind, 7168, 8192, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), sc, prof, time_model(prof), "prefill", 58)
    x = expert_all_to_all_s(4096, 8, 7168, sc, prof, 256, GROUPS)
    one = layer_time(kind, 7168, 4096, (0.0, 0.0, 0.0), None, sc, prof, time_model(prof), "prefill")
    c = one.total_s - x
    s = 2 * c * (148 / (148 - 24) - 1)
    assert prof.sm_count == 148 and time_model(prof).a2a_ht_sms == 24
    assert 0 < c < x and lt.micro_batches == 2
    assert lt.total_s == pytest.approx(2 * x + x / 58)
    assert lt.exchange_s == pytest.approx(2 * x)
    assert lt.hidden_s == pytest.approx(2 * c + s - x / 58)
    assert lt.parts["collectives"] == pytest.approx(2 * x - (2 * c + s - x / 58) + s)
    assert sum(lt.parts.values()) == pytest.approx(lt.total_s, rel=1e-12)


def test_one_sequence_does_not_split(deepseek):
    # decode at 1 sequence per rank: no second micro-batch; the step is the serial one even with "on"
    on, off = _decode(deepseek, "gb200", "on", 1), _decode(deepseek, "gb200", "off", 1)
    assert on.steps["decode"].estimate_s == off.steps["decode"].estimate_s
    assert on.steps["decode"].comm_hidden_s == 0.0
    assert on.steps["decode"].comm_s == pytest.approx(
        MOE_LAYERS * expert_all_to_all_s(1, 8, 7168, on.scenario, on.profile, 256)
    )
    assert on.steps["decode"].kernels == off.steps["decode"].kernels
    # the prefill of the same scenario (8192 tokens) does split
    assert on.steps["prefill"].comm_hidden_s > 0 and on.steps["prefill"].kernels > off.steps["prefill"].kernels


def test_auto_keeps_the_exchange_in_series_where_the_split_costs_more(deepseek):
    # 16 sequences per rank: decode GEMMs at M = 8 read the weights as long as at M = 16, so two halves cost
    # more than the exchange they hide; auto prices the deployment as its operator would run it
    on, off, auto = (_decode(deepseek, "gb200", m, 16).steps["decode"] for m in ("on", "off", "auto"))
    assert off.estimate_s < on.estimate_s
    assert auto.estimate_s == off.estimate_s and auto.comm_hidden_s == 0.0


def test_no_ep_no_overlap(deepseek):
    sc = make_scenario("throughput", dtype="fp8", tp=8, ep_overlap="on")
    w = analyse(deepseek, load_profile("b200"), sc)
    off = analyse(deepseek, load_profile("b200"), make_scenario("throughput", dtype="fp8", tp=8, ep_overlap="off"))
    assert w.steps["decode"].estimate_s == off.steps["decode"].estimate_s
    assert w.steps["prefill"].estimate_s == off.steps["prefill"].estimate_s


def test_layer_parts_sum_to_the_overlapped_layer(deepseek):
    w = _decode(deepseek, "gb200", "on", 256)
    for regime, attr in (("decode", "decode_s"), ("prefill", "prefill_s")):
        for cost in w.layer_costs:
            assert sum(w.layer_parts[regime][cost.kind].values()) == pytest.approx(getattr(cost, attr), rel=1e-12)
        head = next(r.layer_s for r in w.gemms[regime] if r.kind == "")
        layers = sum(sum(w.layer_parts[regime][c.kind].values()) for c in w.layer_costs)
        assert w.steps[regime].estimate_s == pytest.approx(layers + head, rel=1e-9)


def test_frontier_vectorized_price_equals_analyse_where_it_overlaps(deepseek):
    prof = load_profile("gb200")
    base = make_scenario("throughput", dtype="fp8", ep_overlap="auto")
    d = Deployment(1, 64)
    w1, w2 = (analyse(deepseek, prof, scenario_for(base, d, b)) for b in (1, 64))
    grid = [1, 2, 16, 96, 129, 256]
    priced = decode_prices(deepseek, prof, grid, w1, w2)
    hidden = []
    for i, b in enumerate(grid):
        w = analyse(deepseek, prof, scenario_for(base, d, b))
        assert float(priced.itl_s[i]) == pytest.approx(w.steps["decode"].estimate_s, rel=1e-9)
        hidden.append(w.steps["decode"].comm_hidden_s > 0)
    assert hidden == [False, False, False, True, True, True]  # auto: where the split pays


def test_unknown_mode_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown EP overlap 'maybe'"):
        make_scenario("throughput", ep_overlap="maybe")


def test_report_breakdown_prices_the_halves_gemms(deepseek):
    # the report's per-component seconds come from the GEMM table (whole batch); where two micro-batches
    # run a layer, its GEMMs are the halves', and the breakdown still adds up to the step without a residue
    from colint.design.reporting import time_breakdown

    w = _decode(deepseek, "gb200", "on", 256)
    for regime, data in time_breakdown(w)["regimes"].items():
        step, sec = w.steps[regime], data["seconds"]
        assert sec["FFN"] + sec["experts"] == pytest.approx(step.ffn_s, rel=1e-12)
        assert sec["attention projections"] == pytest.approx(step.attention_s - step.attention_core_s, rel=1e-12)
        assert sec["collectives"] == step.comm_s
        assert sum(sec.values()) == pytest.approx(step.estimate_s, rel=1e-12)


def test_the_setting_from_the_flag_the_config_and_the_api(tmp_path, capsys):
    import json
    import shutil

    import colint
    from colint.cli.main import main

    path = tmp_path / "config.json"
    shutil.copy(DEEPSEEK, path)
    args = ["inspect", str(path), "--gpu", "gb200", "--ep", "64", "--dtype", "fp8", "--format", "json"]

    def estimates(*extra):
        assert main([*args, *extra]) == 0
        return json.loads(capsys.readouterr().out)["estimates"]

    off = estimates("--isolated")  # the default: in series
    auto = estimates("--isolated", "--ep-overlap", "auto")
    assert auto["scenario"]["ep_overlap"] == "auto" and auto["steps"]["decode"]["comm_hidden_s"] > 0
    assert off["scenario"]["ep_overlap"] == "off" and off["steps"]["decode"]["comm_hidden_s"] == 0.0
    assert off["steps"]["decode"]["estimate_s"] > auto["steps"]["decode"]["estimate_s"]
    assert estimates("--isolated", "--ep-overlap", "off") == off
    (tmp_path / "pyproject.toml").write_text('[tool.colint]\nep-overlap = "auto"\n', encoding="utf-8")
    assert estimates()["steps"]["decode"] == auto["steps"]["decode"]
    assert estimates("--ep-overlap", "on")["scenario"]["ep_overlap"] == "on"  # the flag wins
    bad = tmp_path / "bad"
    bad.mkdir()
    shutil.copy(DEEPSEEK, bad / "config.json")
    (bad / "pyproject.toml").write_text('[tool.colint]\nep-overlap = "maybe"\n', encoding="utf-8")
    assert main([args[0], str(bad / "config.json"), *args[2:]]) == 2
    assert "pyproject.toml:2:1: error: ep-overlap: unknown EP overlap; known: auto, on, off" in capsys.readouterr().err
    api = colint.inspect(DEEPSEEK, gpu="gb200", ep=64, dtype="fp8", ep_overlap="auto")["estimates"]
    assert api["steps"]["decode"]["estimate_s"] == auto["steps"]["decode"]["estimate_s"]


def test_suggest_search_model_prices_the_split_prefill():
    # DeepSeek-V3 at ep=8 on B200: the prefill runs as two micro-batches; the search model prices the whole
    # batch's GEMM rows and cores, and its remainder takes the halves' difference, so it still meets analyse
    from colint.engine.settings import Settings
    from colint.suggesting.search import suggest

    r = suggest(DEEPSEEK, Settings(gpus=["b200"], ep=8, ep_overlap="auto"), top=3)
    assert r.candidates
    w = analyse(normalize(load(DEEPSEEK)), load_profile("b200"), make_scenario("throughput", ep=8, ep_overlap="auto"))
    assert w.steps["prefill"].comm_hidden_s > 0  # (the original's prefill is split)
    for c in r.candidates:
        assert c.search_steps_s[0] == pytest.approx(c.estimates["prefill_step_s"], rel=0.01)
