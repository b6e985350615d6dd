"""Findings on a value an adapter derives point at the key it is computed from (Source.derived).

Meta's FFN width (from multiple_of / ffn_dim_multiplier), OLMo's SwiGLU width (mlp_ratio x d_model / 2)
and MaxText gemma2's layer count (base_num_decoder_layers counts local+global pairs) are stated by no key:
a finding names the key the user would edit, with its line and column when the file states it, and no
fix writes the derived value into that key.
"""

from __future__ import annotations

import json
import os

from colint.cli.main import main
from colint.loading import load, load_text
from colint.normalize import normalize
from colint.normalize.model_spec import Source

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpus")


def _check(capsys, *args) -> list[dict]:
    main(["check", "--format", "json", *args])
    return json.loads(capsys.readouterr().out)["files"][0]["findings"]


def _row(f: dict) -> tuple:
    return f["code"], f["key"], f["line"], f["column"]


def test_meta_derived_ffn_width_points_at_multiple_of(capsys):
    path = os.path.join(CORPUS, "meta", "torchchat__Meta-Llama-3.2-1B.json")
    spec = normalize(load(path), "meta")
    assert spec.intermediate_size == 8192
    assert spec.sources["intermediate_size"] == Source(key="multiple_of", line=9, column=5, derived=True)
    cl201 = [
        f
        for f in _check(capsys, "--tp", "128", "--select", "CL201", path)
        if f["message"].startswith("intermediate_size")
    ]
    assert [_row(f) for f in cl201] == [("CL201", "multiple_of", 9, 5)]
    assert cl201[0]["message"] == "intermediate_size 8192 is 64 per shard at tp=128, not a multiple of 128"


def _meta(**keys):
    cfg = {"dim": 4096, "n_layers": 32, "n_heads": 32, "n_kv_heads": 8, "vocab_size": 128256, **keys}
    return normalize(load_text(json.dumps(cfg, indent=1), "params.json"), "meta")


def test_meta_derived_width_source_by_keys_present():
    assert _meta(ffn_dim_multiplier=1.3).sources["intermediate_size"] == Source(
        key="ffn_dim_multiplier", line=7, column=2, derived=True
    )
    # no key it is computed from in the file: hidden_dim is the key to add (torchchat / ExecuTorch), no line
    assert _meta().sources["intermediate_size"] == Source(key="hidden_dim", default=True)


def test_no_fix_writes_a_derived_value_into_its_key(tmp_path, capsys):
    # multiple_of 100: width 14200 (not a multiple of 128); "multiple_of 14200 -> 14208" would be nonsense
    path = tmp_path / "params.json"
    path.write_text(
        json.dumps(
            {
                "dim": 4096,
                "n_layers": 32,
                "n_heads": 32,
                "n_kv_heads": 8,
                "vocab_size": 128256,
                "multiple_of": 100,
                "ffn_dim_multiplier": 1.3,
            },
            indent=1,
        )
    )
    findings = _check(capsys, "--select", "CL201", str(path))
    assert [(_row(f), f["message"], f["fixes"]) for f in findings] == [
        (("CL201", "multiple_of", 7, 2), "intermediate_size 14200, not a multiple of 128", [])
    ]


def test_olmoe_expert_width_points_at_mlp_ratio(capsys):
    path = os.path.join(CORPUS, "megatron", "olmo-trainer__OLMoE-1B-7B-0924.yaml")
    spec = normalize(load(path), "olmo")
    src = Source(key="model.mlp_ratio", line=15, column=3, derived=True)
    assert spec.sources["moe_intermediate_size"] == spec.sources["intermediate_size"] == src
    findings = _check(capsys, "--tp", "8", "--select", "CL503", path)
    assert [_row(f) for f in findings] == [("CL503", "model.mlp_ratio", 15, 3)]
    assert findings[0]["message"].startswith("expert FFN width 1024 is 128 per shard at tp=8")


def test_olmo_gated_mlp_hidden_size_is_a_derived_source():
    text = "model:\n  d_model: 512\n  n_layers: 2\n  n_heads: 8\n  mlp_hidden_size: 2816\n  vocab_size: 1000\n"
    spec = normalize(load_text(text, "olmo.yaml"), "olmo")
    assert spec.intermediate_size == 1408  # SwiGLU halves ff_proj
    assert spec.sources["intermediate_size"] == Source(key="model.mlp_hidden_size", line=5, column=3, derived=True)


def test_maxtext_gemma2_layers_point_at_the_pair_count(capsys):
    path = os.path.join(CORPUS, "megatron", "maxtext__gemma2-27b.yaml")
    spec = normalize(load(path), "maxtext")
    assert spec.num_layers == 46
    assert spec.sources["num_layers"] == Source(key="base_num_decoder_layers", line=21, column=1, derived=True)
    findings = _check(capsys, "--pp", "4", "--select", "CL601", path)
    assert [_row(f) for f in findings] == [("CL601", "base_num_decoder_layers", 21, 1)]
    # "use 44 / 48 layers" would write a layer count into the pair count: only the layout advice stays
    assert [fx["edits"] for fx in findings[0]["fixes"]] == [[]]
