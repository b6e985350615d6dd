"""Falcon-H1: attention and Mamba-2 in parallel in every layer (LayerKind.parallel_mixer).

Expected totals came from the oracle, not from colint: scripts/gen_golden.py's ``build()``
(transformers 5.24.0 + torch 2.13.0 CPU, ``.venv-oracle``) on the meta device,
``sum(p.numel() for p in model.parameters())`` (tied weights once).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.analysis.kv_cache import kv_cache_bytes_per_token, state_bytes_per_sequence
from colint.analysis.scenario import make_scenario
from colint.analysis.workload import analyse
from colint.hardware_profiles import load_profile
from colint.loading import load_text
from colint.normalize import normalize


def spec_from(cfg: dict):
    return normalize(load_text(json.dumps(cfg, indent=1), "unseen.json"), "hf")


VARIANTS = {
    "falcon_h1_defaults": ({"model_type": "falcon_h1"}, 8_514_961_408),
    "falcon_h1_other_dims": (
        {
            "model_type": "falcon_h1",
            "hidden_size": 1536,
            "num_hidden_layers": 3,
            "num_attention_heads": 12,
            "num_key_value_heads": 4,
            "head_dim": 64,
            "intermediate_size": 4096,
            "vocab_size": 65537,
            "mamba_d_ssm": 2048,
            "mamba_n_heads": 32,
            "mamba_n_groups": 2,
            "mamba_d_state": 128,
            "mamba_d_conv": 3,
            "mamba_conv_bias": False,
            "mamba_proj_bias": True,
            "projectors_bias": True,
            "mamba_rms_norm": True,
            "attention_bias": True,
            "mlp_bias": True,
            "tie_word_embeddings": True,
        },
        197_639_808,
    ),
    # null mamba_d_ssm = mamba_expand x hidden; null num_key_value_heads = num_attention_heads
    "falcon_h1_expand_width": (
        {
            "model_type": "falcon_h1",
            "hidden_size": 1024,
            "num_hidden_layers": 2,
            "num_attention_heads": 8,
            "num_key_value_heads": None,
            "intermediate_size": 2816,
            "vocab_size": 32784,
            "mamba_d_ssm": None,
            "mamba_expand": 2,
            "mamba_n_heads": 16,
            "mamba_d_head": 128,
            "mamba_d_state": 64,
        },
        105_736_544,
    ),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_params_total_equals_transformers(name):
    cfg, total = VARIANTS[name]
    assert param_counts(spec_from(cfg)).total == total


def test_defaults_by_hand_and_both_mixers_in_the_inventory():
    spec = spec_from({"model_type": "falcon_h1"})
    (kind,) = spec.layer_kinds
    assert (kind.mixer.kind, kind.parallel_mixer.kind, kind.ffn.kind) == ("attention", "mamba", "dense")
    rows = {g.name: (g.k, g.n, g.layers) for g in gemms(spec)}
    # attention 32 x 128 q, 8 KV heads; Mamba-2 d_ssm 1024: in_proj 2*1024 + 2*1*256 + 128 heads = 2688
    assert rows["attn.q_proj"] == (4096, 4096, 32) and rows["attn.k_proj"] == (4096, 1024, 32)
    assert rows["mamba.in_proj"] == (4096, 2688, 32) and rows["mamba.out_proj"] == (1024, 4096, 32)
    assert rows["mlp.gate_proj"] == (4096, 14336, 32)
    # per layer: attention 41,943,040 + Mamba GEMMs 15,204,352 + conv 1536*4 + 1536 + 3*128 + MLP 176,160,768
    # + two norms 8,192 = 233,324,416; x32 + embedding and LM head 2 x 524,288,000 + final norm 4,096
    assert 32 * 233_324_416 + 2 * 524_288_000 + 4096 == 8_514_961_408


def test_kv_and_state_count_both_mixers():
    spec = spec_from({"model_type": "falcon_h1"})
    # KV: 8 heads x (128 + 128) x 2 B x 32 layers; state: d_ssm x d_state + conv taps x conv channels, x 2 B
    assert kv_cache_bytes_per_token(spec, 2.0) == 32 * 8 * 256 * 2 == 131_072
    assert state_bytes_per_sequence(spec, 2.0) == 32 * (1024 * 256 + 4 * (1024 + 2 * 256)) * 2 == 17_170_432


def test_workload_costs_both_mixers_and_a_layer_is_their_sum():
    spec = spec_from({"model_type": "falcon_h1"})
    sc = make_scenario("latency", context=8192)
    w = analyse(spec, load_profile("h200"), sc)
    assert w.kv_bytes_per_token == 131_072 and w.state_bytes_per_sequence == 17_170_432
    for regime in ("decode", "prefill"):
        cores = w.attention[regime]
        assert sorted(a.mixer for a in cores) == ["attention", "mamba"]
        assert all(a.kind == "attention/full|mamba+dense" and a.layers == 32 for a in cores)
        step = w.steps[regime]
        assert step.attention_core_s == pytest.approx(32 * sum(a.estimate_s for a in cores))
        comps = {r.component for r in w.gemms[regime] if r.kind}
        assert comps == {"attention", "ffn"}
        mixer_gemm_s = sum(r.layer_s for r in w.gemms[regime] if r.component == "attention")
        assert step.attention_s == pytest.approx(32 * (mixer_gemm_s + sum(a.estimate_s for a in cores)))
    mamba = next(a for a in w.attention["decode"] if a.mixer == "mamba")
    attn = next(a for a in w.attention["decode"] if a.mixer == "attention")
    assert mamba.bytes == 2 * (1024 * 256 + 4 * 1536) * 2  # read + write one sequence's state
    assert attn.bytes == 8192 * 8 * 256 * 2  # one sequence's K/V over 8192 tokens
    # footprint: KV of 8192 tokens + the recurrent state, one sequence
    assert w.kv_cache_bytes_per_gpu == pytest.approx(8192 * 131_072 + 17_170_432)
    # per-layer costs: both cores' prefill FLOPs are in the layer's
    core_flops = sum(a.flops for a in w.attention["prefill"])
    gemm_flops = sum(2.0 * 8192 * g.k * g.n for g in gemms(spec) if g.name != "lm_head")
    assert w.layer_costs[0].prefill_flops == pytest.approx(gemm_flops + core_flops)


def test_without_parallel_mixer_nothing_changes():
    """A spec with the field left at None analyses exactly as before (it is additive)."""
    spec = spec_from({"model_type": "falcon_h1"})
    plain = replace(spec, layer_kinds=[replace(spec.layer_kinds[0], parallel_mixer=None)])
    w = analyse(plain, load_profile("h200"), make_scenario("latency"))
    assert [a.mixer for a in w.attention["decode"]] == ["attention"]
    assert not any(r.name.startswith("mamba.") for r in w.gemms["decode"])
    assert w.state_bytes_per_sequence == 0


def test_suggest_probe_keys_keep_both_cores():
    from colint.suggesting.model import probe_quantities

    spec = spec_from({"model_type": "falcon_h1", "num_hidden_layers": 2})
    w = analyse(spec, load_profile("h200"), make_scenario("latency"))
    q = probe_quantities(spec, w, param_counts(spec).total)
    keys = {k for k in q if k.startswith("a|decode|")}
    assert {k.rsplit("|", 2)[1] for k in keys} == {"attention", "mamba"}


def test_suggest_search_model_matches_analysis(tmp_path):
    """suggest's interpolated search model gives the same parameters and step estimates as
    param_counts + analyse on every verified Falcon-H1 variant (both cores of a layer included)."""
    from colint.engine.settings import Settings
    from colint.suggesting.search import suggest

    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "model_type": "falcon_h1",
                "hidden_size": 2048,
                "num_hidden_layers": 8,
                "num_attention_heads": 16,
                "num_key_value_heads": 4,
                "head_dim": 128,
                "intermediate_size": 6144,
                "vocab_size": 65536,
                "mamba_d_ssm": 2048,
                "mamba_n_heads": 32,
            },
            indent=1,
        )
    )
    r = suggest(str(path), Settings(gpus=["b200"], tp=2), top=3)
    assert r.candidates
    for c in r.candidates:
        assert c.search_params_total == c.params_total
        # attention cores: the op models' estimates interpolated over the search nodes (see test_workload)
        assert c.search_steps_s[0] == pytest.approx(c.estimates["prefill_step_s"], rel=0.1)
        assert c.search_steps_s[1] == pytest.approx(c.estimates["decode_step_s"], rel=0.1)


def test_cli_check_and_inspect(tmp_path, capsys):
    from colint.cli.main import main

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "falcon_h1"}, indent=1))
    assert main(["inspect", str(path), "--gpu", "h200", "--format", "json"]) == 0
    est = json.loads(capsys.readouterr().out)["estimates"]
    assert sorted(a["mixer"] for a in est["attention"]["decode"]) == ["attention", "mamba"]
    assert main(["check", str(path), "--gpu", "h200"]) in (0, 1)  # findings or none, never a usage/spec error


@pytest.mark.parametrize(
    "field, new", [("vocab_size", 32128), ("intermediate_size", 14464), ("num_key_value_heads", 4)]
)
def test_fix_parameter_deltas_keep_the_parallel_mixer(field, new):
    """A fix's parameter delta on a Falcon-H1 stack is what re-normalizing the edited config counts: the rebuilt
    layer kinds keep their Mamba-2 mixer (it was dropped, and padding the vocabulary to 32128 read as
    -485,498,880 parameters)."""
    from colint.rules.fix_builders import param_delta, with_field

    cfg = {"model_type": "falcon_h1", "vocab_size": 32001}
    spec = spec_from(cfg)
    name = {"num_key_value_heads": "num_kv_heads"}.get(field, field)
    edited = spec_from({**cfg, field: new})
    assert param_delta(spec, name, new).total == param_counts(edited).total - param_counts(spec).total
    assert [k.parallel_mixer for k in with_field(spec, name, new).layer_kinds] == [
        k.parallel_mixer for k in spec.layer_kinds
    ]
