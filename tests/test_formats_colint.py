"""colint's own design schema (colint: 1): validation, pattern grammar, mapping onto ModelSpec."""

from __future__ import annotations

import json

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.cli import main
from colint.errors import SpecError
from colint.loading import load, load_text
from colint.normalize import normalize
from colint.normalize.design_file import expand_pattern


def design(body: str, name: str = "d.yaml"):
    return normalize(load_text("colint: 1\nmodel:\n" + body, name))


LLAMA2_7B = (
    "  hidden_size: 4096\n  layers: 32\n  vocab_size: 32000\n"
    "  attention: {heads: 32}\n  ffn: {intermediate_size: 11008}\n"
)


def test_a_design_equal_to_llama2_7b_counts_like_it():
    s = design(LLAMA2_7B)
    hf = normalize(load("tests/corpus/hf/llama2__Llama-2-7b-neuron-training.json"))
    assert (s.format, s.architecture, s.model_type) == ("colint", "colint/v1", "design")
    assert param_counts(s) == param_counts(hf)
    assert {(g.name, g.k, g.n, g.layers) for g in gemms(s)} == {(g.name, g.k, g.n, g.layers) for g in gemms(hf)}
    src = s.sources["intermediate_size"]
    assert (src.key, src.line, src.column) == ("model.ffn.intermediate_size", 7, 9)


def test_schema_marker_alternative_and_moe_mla():
    s = normalize(
        load_text(
            "schema: colint/v1\nmodel:\n  hidden_size: 7168\n  vocab_size: 129280\n"
            "  attention: {heads: 128, kind: mla, mla: {q_lora_rank: 1536}}\n  ffn: {intermediate_size: 18432}\n"
            "  moe: {experts: 256, top_k: 8, intermediate_size: 2048, shared_experts: 1, first_dense_layers: 3}\n"
            "  layers: 61\n",
            "v3.yaml",
        )
    )
    hf = normalize(load("tests/corpus/hf/deepseek__DeepSeek-V3.json"))
    assert param_counts(s).total == param_counts(hf).total  # DeepSeek-V3 671B written as a design
    assert [s.kind_of(i).ffn.kind for i in (0, 2, 3, 60)] == ["dense", "dense", "moe", "moe"]


def test_pattern_grammar():
    assert expand_pattern("[A,A,A,M]*2") == ["A", "A", "A", "M"] * 2
    assert expand_pattern("F + [M, Me]*2 + S-") == ["F", "M", "Me", "M", "Me", "S-"]
    with pytest.raises(ValueError, match="unknown layer token 'Q'"):
        expand_pattern("[A,Q]*3")
    with pytest.raises(ValueError, match="missing '\\]'"):
        expand_pattern("[A,A*3")


def test_hybrid_pattern_layers_and_sources():
    s = normalize(load("examples/design.colint.yaml"))
    assert s.num_layers == 48
    assert [s.kind_of(i).name for i in range(4)] == ["attention/full+dense", "mamba+dense", "mamba+moe", "mamba+moe"]
    assert {k.name: c for k, c in zip(s.layer_kinds, s.layer_counts())} == {
        "attention/full+dense": 1,
        "mamba+dense": 1,
        "mamba+moe": 35,
        "attention/full+moe": 11,
    }
    m = s.kind_of(1).mixer
    assert (m.d_inner, m.num_heads, m.d_state, m.n_groups) == (8192, 128, 128, 8)
    src = s.sources["num_layers"]  # from the pattern; the key a fix would add is layers, never the pattern text
    assert (src.key, src.default) == ("model.layers", True)


def test_errors_are_located():
    with pytest.raises(SpecError) as e:
        design("  hidden_size: 4096\n  layers: 2\n  attention: {heads: 0}\n  ffn: {intermediate_size: 8}\n")
    assert e.value.located() == "d.yaml:5:15: error: model.attention.heads: Input should be greater than 0"
    with pytest.raises(SpecError) as e:
        design("  hidden_size: 64\n  layer: 2\n")
    assert e.value.located() == "d.yaml:4:3: error: model.layer: Extra inputs are not permitted"
    with pytest.raises(SpecError) as e:
        design(
            "  hidden_size: 64\n  layers: 3\n  attention: {heads: 4}\n  ffn: {intermediate_size: 8}\n"
            "  pattern: '[A,A]*2'\n"
        )
    assert e.value.located() == "d.yaml:7:3: error: model.pattern: pattern describes 4 layers but layers is 3"
    with pytest.raises(SpecError) as e:
        design("  hidden_size: 64\n  attention: {heads: 4}\n  pattern: '[A,M]'\n")
    assert e.value.located() == "d.yaml:2:1: error: model.ffn: layer 0 needs a dense FFN but there is no ffn: section"


def test_colint_schema_command(tmp_path, capsys):
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$id"] == "colint/v1" and schema["required"] == ["model"]
    assert set(schema["$defs"]["Model"]["properties"]) >= {
        "hidden_size",
        "layers",
        "attention",
        "ffn",
        "moe",
        "pattern",
        "vocab_size",
        "tie_embeddings",
    }
    out = tmp_path / "schema.json"
    assert main(["schema", "--output", str(out)]) == 0
    assert json.loads(out.read_text()) == schema
    jsonschema = pytest.importorskip("jsonschema")
    from ruamel.yaml import YAML

    jsonschema.validate(YAML(typ="safe").load(open("examples/design.colint.yaml")), schema)
