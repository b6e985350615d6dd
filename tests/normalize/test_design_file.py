"""colint's own design schema (colint: 1): validation, pattern grammar, mapping onto ModelSpec."""

from __future__ import annotations

import json

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.cli.main import main
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


# MiMo-V2-Flash written as a design: full layers (0, 5, 11, ..., 47) with 4 KV heads, sliding layers with 8 and one
# sink per head, q/k 192 and v 128 on both (issue 30 item 2: full and sliding layers that differ)
MIMO_DESIGN = (
    "  name: mimo-v2-flash-design\n  hidden_size: 4096\n  vocab_size: 152576\n"
    "  attention:\n    heads: 64\n    kv_heads: 4\n    head_dim: 192\n    v_head_dim: 128\n"
    "    sliding: {kv_heads: 8, window: 129, sinks: true}\n"
    "  ffn: {intermediate_size: 16384}\n"
    "  moe: {experts: 256, top_k: 8, intermediate_size: 2048, first_dense_layers: 1}\n"
    '  pattern: "F+[S,S,S,S,F,S]*7+[S,S,S,S,F]"\n'
)


def _geometry(spec):
    return {
        (k.mixer.attention, k.ffn.kind, n): (
            k.mixer.num_heads,
            k.mixer.num_kv_heads,
            k.mixer.head_dim,
            k.mixer.v_head_dim,
        )
        for k, n in zip(spec.layer_kinds, spec.layer_counts())
    }


def test_a_design_whose_full_and_sliding_layers_differ_reads_as_the_hf_config():
    from colint.analysis.kv_cache import kv_cache_bytes_per_token

    s = design(MIMO_DESIGN)
    hf = normalize(load("tests/corpus/hf/mimo__MiMo-V2-Flash-reconstructed.json"))
    assert (
        _geometry(s)
        == _geometry(hf)
        == {
            ("full", "dense", 1): (64, 4, 192, 128),
            ("sliding", "moe", 39): (64, 8, 192, 128),
            ("full", "moe", 8): (64, 4, 192, 128),
        }
    )
    assert param_counts(s) == param_counts(hf)  # 308,778,768,832: transformers' build of the HF config
    assert param_counts(s).total == 308_778_768_832
    assert kv_cache_bytes_per_token(s) == kv_cache_bytes_per_token(hf) == 222_720
    assert {k.mixer.window for k in s.layer_kinds if k.mixer.attention == "sliding"} == {129}


def test_a_layer_type_override_round_trips_through_the_schema(capsys):
    """The per-layer-type keys are in `colint schema` (editors validate with it) and a design validated by it reads
    back to the geometry it states; an override of a key the type cannot have is located."""
    jsonschema = pytest.importorskip("jsonschema")
    from ruamel.yaml import YAML

    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    props = schema["$defs"]["Attention"]["properties"]
    assert {"full", "sliding", "v_head_dim", "sinks"} <= set(props)
    assert set(schema["$defs"]["LayerTypeAttention"]["properties"]) == {
        "heads",
        "kv_heads",
        "head_dim",
        "v_head_dim",
        "window",
        "sinks",
    }
    data = YAML(typ="safe").load("colint: 1\nmodel:\n" + MIMO_DESIGN)
    jsonschema.validate(data, schema)
    # the geometry read back is the one written: change the sliding KV heads, the sliding layers follow
    s = design(MIMO_DESIGN.replace("kv_heads: 8,", "kv_heads: 16,"))
    assert {k.mixer.num_kv_heads for k in s.layer_kinds if k.mixer.attention == "sliding"} == {16}
    assert {k.mixer.num_kv_heads for k in s.layer_kinds if k.mixer.attention == "full"} == {4}
    with pytest.raises(SpecError) as exc:
        design(MIMO_DESIGN.replace("    sliding:", "    full: {window: 64}\n    sliding:"))
    assert (exc.value.key, "no window") == ("model.attention.full.window", "no window")
    with pytest.raises(SpecError) as exc:
        design(MIMO_DESIGN.replace("kv_heads: 8,", "kv_heads: 0,"))
    assert exc.value.key == "model.attention.sliding.kv_heads"


def test_a_dsa_design_counts_like_glm5():
    """GLM-5 as a design: MLA with the lightning indexer (32 heads x 128) and top-k 2,048."""
    from colint.analysis.kv_cache import kv_cache_bytes_per_token

    s = design(
        "  hidden_size: 6144\n  layers: 78\n  vocab_size: 154880\n  mtp_layers: 1\n"
        "  attention: {heads: 64, kind: mla, mla: {q_lora_rank: 2048, qk_nope_head_dim: 192, v_head_dim: 256,"
        " index_heads: 32, index_head_dim: 128, index_topk: 2048}}\n  ffn: {intermediate_size: 12288}\n"
        "  moe: {experts: 256, top_k: 8, intermediate_size: 2048, shared_experts: 1, first_dense_layers: 3}\n"
    )
    hf = normalize(load("tests/corpus/hf/glm__GLM-5-reconstructed.json"))
    assert param_counts(s).total == param_counts(hf).total == 743_911_199_232
    assert kv_cache_bytes_per_token(s) == kv_cache_bytes_per_token(hf) == 78 * (576 * 2 + 132)
    assert {k.mixer.index_topk for k in s.layer_kinds} == {2048}
    with pytest.raises(SpecError) as exc:
        design(
            "  hidden_size: 1024\n  layers: 2\n  attention: {heads: 8, kind: mla, mla: {index_heads: 4}}\n"
            "  ffn: {intermediate_size: 8}\n"
        )
    assert exc.value.key == "model.attention.mla.index_heads"


def test_a_design_states_its_router_groups():
    body = (
        "  hidden_size: 1024\n  layers: 2\n  vocab_size: 32000\n  attention: {heads: 8}\n"
        "  moe: {experts: 64, top_k: 8, intermediate_size: 512, expert_groups: 8, groups_per_token: %s}\n"
    )
    ffn = design(body % 4).kind_of(0).ffn
    assert (ffn.expert_groups, ffn.groups_per_token, ffn.group_limited) == (8, 4, True)
    with pytest.raises(SpecError) as e:
        design(body % 9)
    assert e.value.located() == (
        "d.yaml:7:74: error: 'model.moe.groups_per_token' 9 is more than the 8 groups of 'model.moe.expert_groups'"
    )
