"""Format detection over the whole corpus, and `colint inspect` on every non-HF corpus file."""

from __future__ import annotations

import glob
import importlib
import json
import os

import pytest

from colint.cli.main import main
from colint.loading import load, load_text
from colint.normalize import FORMATS, detect_format, normalize

# corpus file-name prefix -> format it must be detected as
EXPECTED = {
    "nemo-launcher": "megatron",
    "maxtext": "maxtext",
    "gpt-neox": "gpt-neox",
    "olmo-trainer": "olmo",
    "deepseek-native": "meta",
    "executorch": "meta",
    "torchchat": "meta",
}
NON_HF = sorted(glob.glob("tests/corpus/megatron/*.yaml") + glob.glob("tests/corpus/meta/*.json"))
HF = sorted(glob.glob("tests/corpus/hf/*.json"))


def expected_format(path: str) -> str:
    return "hf" if "/hf/" in path else EXPECTED[os.path.basename(path).split("__")[0]]


@pytest.mark.parametrize("path", NON_HF + HF, ids=os.path.basename)
def test_each_corpus_file_is_detected_by_exactly_its_own_format(path):
    doc = load(path)
    assert detect_format(doc) == expected_format(path)
    hits = [f for f, mod in FORMATS.items() if importlib.import_module(mod).detect(doc)]
    assert hits == [expected_format(path)]


def test_corpus_counts():
    assert len(NON_HF) == 36  # SOURCES.md: megatron/ 22 files, meta/ 14 files


@pytest.mark.parametrize("path", NON_HF, ids=os.path.basename)
def test_inspect_exits_0_on_every_non_hf_corpus_file(path, capsys):
    # SOURCES.md marks no file here MALFORMED AS PUBLISHED; the one INCONSISTENT AS PUBLISHED file
    # (ExecuTorch LFM2-1.2B: 16 layers, 17 layer_types) is normalized with a note (rule CL004 reports it).
    assert main(["inspect", path, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == expected_format(path) and out["params"]["total"] > 0


def test_unrelated_yaml_is_not_recognized(tmp_path, capsys):
    p = tmp_path / "ci.yaml"
    p.write_text("name: build\non:\n  push: {}\njobs:\n  test:\n    runs-on: ubuntu-latest\n")
    assert main(["inspect", str(p)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"{p}:1:1: error: format not recognized: the keys match none of the formats tried "
        "(colint, hf, megatron, maxtext, gpt-neox, olmo, meta); use --input-format to force one\n"
    )


def test_input_format_override(tmp_path, capsys):
    # A bare Megatron section that also carries a NeoX-only key is detected as gpt-neox ...
    text = (
        "num_layers: 2\nhidden_size: 256\nnum_attention_heads: 4\npos_emb: rotary\nffn_hidden_size: 512\n"
        "position_embedding_type: rope\n"
    )
    p = tmp_path / "cfg.yaml"
    p.write_text(text)
    assert detect_format(load_text(text, "cfg.yaml")) == "gpt-neox"
    assert main(["inspect", str(p), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["spec"]["intermediate_size"] == 1024  # NeoX ignores ffn_hidden_size
    # ... and --input-format megatron reads it as Megatron (ffn_hidden_size honoured).
    assert main(["inspect", str(p), "--format", "json", "--input-format", "megatron"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["format"], out["spec"]["intermediate_size"]) == ("megatron", 512)
    assert main(["inspect", str(p), "--input-format", "nonsense"]) == 2
    assert "unknown input format 'nonsense'" in capsys.readouterr().err


def test_vocab_size_option_pads_like_megatron(capsys):
    path = "tests/corpus/megatron/nemo-launcher__llama2_70b.yaml"
    assert main(["inspect", path, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["spec"]["vocab_size"] is None and out["params"]["counts_include_vocab"] is False
    assert out["params"]["total"] == 68_452_360_192
    assert main(["inspect", path, "--format", "json", "--vocab-size", "32000"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["spec"]["vocab_size"] == 32256  # 32000 padded to a multiple of 128 x tp 4
    assert out["params"]["total"] == 68_980_842_496
    assert out["params"]["embedding"] == out["params"]["lm_head"] == 32256 * 8192


def test_hf_config_is_not_taken_for_meta_and_llava_params_is_not_hf():
    hf_like = load_text('{"model_type": "distilbert", "dim": 768, "n_layers": 6, "n_heads": 12}', "c.json")
    assert not importlib.import_module("colint.normalize.meta_params").detect(hf_like)
    llava = load("tests/corpus/meta/torchchat__llava-1.5.json")
    assert not importlib.import_module("colint.normalize.hf").detect(llava)
    nemo_with_model_section = load_text(
        "trainer: {devices: 8}\nmodel:\n  hidden_size: 64\n  num_layers: 2\n"
        "  num_attention_heads: 4\n  position_embedding_type: rope\n",
        "n.yaml",
    )
    assert detect_format(nemo_with_model_section) == "megatron"
    assert normalize(nemo_with_model_section).key_prefix == "model."


def _spec_value(spec, field):
    direct = {
        "hidden_size",
        "num_layers",
        "num_heads",
        "num_kv_heads",
        "head_dim",
        "intermediate_size",
        "vocab_size",
        "tie_word_embeddings",
        "max_position_embeddings",
        "sliding_window",
        "position_embeddings",
        "mtp_layers",
    }
    if field in direct:
        return getattr(spec, field)
    moe = next((k.ffn for k in spec.layer_kinds if k.ffn.kind == "moe"), None)
    mix = next((k.mixer for k in spec.layer_kinds if k.mixer.kind == "mla"), None)
    table = {
        "num_experts": moe and moe.num_experts,
        "top_k": moe and moe.top_k,
        "moe_intermediate_size": moe and moe.expert_intermediate_size,
        "shared_expert_intermediate_size": moe and moe.shared_intermediate_size,  # per shared expert
        "num_shared_experts": moe and moe.num_shared_experts,
        "first_k_dense": next((i for i in range(spec.num_layers) if spec.kind_of(i).ffn.kind == "moe"), None),
        "q_lora_rank": mix and (mix.q_lora_rank or 0),
        "kv_lora_rank": mix and mix.kv_lora_rank,
        "qk_nope_head_dim": mix and mix.qk_nope_head_dim,
        "qk_rope_head_dim": mix and mix.qk_rope_head_dim,
        "v_head_dim": mix and mix.v_head_dim,
    }
    return table.get(field, KeyError)


@pytest.mark.parametrize("path", NON_HF + ["examples/design.colint.yaml"], ids=os.path.basename)
def test_every_located_source_holds_the_spec_value(path):
    # A fix edits sources[field].key from the spec's value to a new one: the key must hold that value
    # (a derived source names the key a value is computed from; no fix edits it).
    from colint.fixing.fix_text import parse_key

    doc = load(path)
    spec = normalize(doc, vocab_size=32000)
    for field, src in spec.sources.items():
        want = _spec_value(spec, field)
        if src.default or src.derived or want is KeyError:
            continue
        assert doc.get(parse_key(src.key)) == want, (field, src.key)
