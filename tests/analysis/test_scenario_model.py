"""The scenario respects the model (issue 17 item 7): context clipped to the model's max positions, and the
KV-cache and output formats reachable from check / inspect / suggest."""

from __future__ import annotations

import json

from click.testing import CliRunner

from colint.analysis.scenario import fit_to_model, make_scenario
from colint.cli.main import cli
from tests.rules.helpers import corpus

GPT2 = "tests/corpus/hf/gpt2__gpt2-medium-early-revision.json"  # n_positions 1024
THIN_MOE = "tests/rules/fixtures/moe_thin_experts.json"


def test_context_is_clipped_to_the_models_positions_and_the_label_says_so():
    sc = fit_to_model(make_scenario("throughput"), corpus(GPT2))
    assert (sc.context, sc.context_clipped_from) == (1024, 8192)
    assert "context 1024 (clipped from 8192: the model's max positions)" in sc.label()
    # a model that attends that far keeps the scenario's context
    assert (
        fit_to_model(make_scenario("throughput"), corpus("tests/corpus/hf/llama3__Meta-Llama-3.1-8B.json")).context
        == 8192
    )


def test_check_and_inspect_take_kv_and_output_formats():
    args = ["check", THIN_MOE, "--isolated", "--gpu", "gb300", "--dtype", "nvfp4", "--out-dtype", "fp8"]
    args += ["--kv-dtype", "fp8", "--select", "CL103"]
    r = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    (f,) = json.loads(r.output)["files"][0]["findings"]
    # the blog's FFN-2 (K=512, N=8192, NVFP4 in, FP8 out): I∞ 989 FLOP/B against GB300's ridge 1875
    assert f["evidence"]["down_limit_intensity_flop_per_byte"] == 989.2
    r = CliRunner().invoke(cli, args)
    assert "context 8192, KV fp8, out fp8 (" in r.output
    r = CliRunner().invoke(cli, ["inspect", GPT2, "--gpu", "b200", "--kv-dtype", "fp8", "--format", "json"])
    assert r.exit_code == 0, r.output
    est = json.loads(r.output)["estimates"]
    assert est["scenario"]["kv_cache"] == "fp8" and est["scenario"]["context"] == 1024
    assert est["kv_cache_bytes_per_token"] == 24 * 2 * 1024  # 24 layers x K and V x 1024 wide x 1 B
    r = CliRunner().invoke(cli, ["check", GPT2, "--isolated", "--out-dtype", "fp9"])
    assert r.exit_code == 2 and "unknown output format 'fp9'" in r.output


def test_kv_and_output_formats_from_the_project_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.colint]\nkv-dtype = "fp8"\n')
    cfg = tmp_path / "c.json"
    cfg.write_text(open("tests/corpus/hf/llama3__Meta-Llama-3.1-8B.json").read())
    # FP8 KV halves the cache: 256 sequences of 8k tokens fit on a B200 (in BF16 only 135 do: CL801)
    r = CliRunner().invoke(cli, ["check", str(cfg), "--select", "CL801"])
    assert r.exit_code == 0 and "0 findings" in r.output, r.output
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "pyproject.toml").write_text('[tool.colint]\nkv-dtype = "fp7"\n')
    (bad / "c.json").write_text(cfg.read_text())
    r = CliRunner().invoke(cli, ["check", str(bad / "c.json")])
    assert r.exit_code == 2 and "pyproject.toml:2:1 is invalid: kv-dtype: unknown KV-cache format" in r.output
