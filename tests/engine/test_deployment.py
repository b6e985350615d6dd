"""One Deployment (issue 32): the deployment settings are one list (colint.engine.deployment) that the CLI, the Python API
and the config files read, and ``auto`` is decoded in one place."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from click.testing import CliRunner

from colint.analysis.scenario import make_scenario
from colint.api import SETTINGS
from colint.cli.main import cli
from colint.engine.deployment import DEPLOYMENT_SETTINGS, Deployment
from colint.engine.settings import FIELD_OF_NAME, KEYS, Settings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLAMA = os.path.join(ROOT, "examples", "llama-2-7b.json")


@pytest.mark.parametrize("s", DEPLOYMENT_SETTINGS, ids=lambda s: s.field)
def test_each_setting_has_one_name_in_the_cli_the_api_and_the_config_file(s):
    assert KEYS[s.field] == s.key  # [tool.colint] key of the Settings field
    assert FIELD_OF_NAME[s.api] == s.field and s.api in SETTINGS  # the API keyword reaches the same field
    help_text = CliRunner().invoke(cli, ["check", "--help"], terminal_width=200).output
    assert s.flag in help_text


def test_the_old_kv_cache_flag_is_an_alias_of_kv_dtype_on_every_command():
    runner = CliRunner()
    outs = [
        runner.invoke(cli, ["check", "--isolated", "--format", "json", "--gpu", "h100-sxm", flag, "fp8", LLAMA])
        for flag in ("--kv-dtype", "--kv-cache")
    ]
    reports = [json.loads(o.output) for o in outs]
    assert reports[0] == reports[1]
    pareto = [
        runner.invoke(cli, ["pareto", "--isolated", "--format", "json", "--gpu", "h100-sxm", flag, "fp8", LLAMA])
        for flag in ("--kv-dtype", "--kv-cache")
    ]
    assert pareto[0].exit_code == 0, pareto[0].output
    assert pareto[0].output == pareto[1].output


def test_auto_is_decoded_once_and_names_no_layout():
    d = Deployment.from_settings(Settings(tp="auto"))
    assert (d.tp, d.tp_auto, d.layout_named) == (None, True, False)
    assert Deployment.from_settings(Settings()).layout_named is False
    for name in ("tp", "ep", "pp", "kvp"):
        assert Deployment.from_settings(Settings(**{name: 2})).layout_named is True
    named = Deployment.from_settings(Settings(tp=8, context_tokens=4096, concurrency=16, kv_dtype="fp8"))
    assert (named.tp, named.tp_auto, named.context_tokens, named.concurrency) == (8, False, 4096, 16)


def test_the_scenario_of_a_deployment_is_the_presets_with_its_settings():
    d = Deployment.from_settings(Settings(scenario="latency", dtype="fp8", tp=4, ep=8, context_tokens=4096))
    assert d.scenario_for("h100-sxm") == make_scenario("latency", dtype="fp8", tp=4, ep=8, context=4096, gpu="h100-sxm")
    # a field of Settings that is a deployment setting is one of the records, and no record is missing from it
    fields = {f.name for f in dataclasses.fields(Settings)}
    assert {s.field for s in DEPLOYMENT_SETTINGS} <= fields
