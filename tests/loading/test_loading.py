"""Loader traps seen in published configs, each with the exact line and column colint reports."""

from __future__ import annotations

import math
import os

import pytest

from colint.errors import LoadError, SpecError
from colint.loading import load, load_bytes, load_text
from colint.normalize import normalize
from colint.normalize.reader import Reader

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpus")


# -- non-standard JSON literals -------------------------------------------------------------------


def test_bare_infinity_in_nemotron_h():
    doc = load(os.path.join(CORPUS, "hf", "nemotron-h__NVIDIA-Nemotron-3-Super-120B-A12B-FP8.json"))
    assert doc.get(("time_step_limit",)) == [0.0, math.inf]
    assert doc.nonstandard == [(("time_step_limit", 1), "Infinity")]
    assert doc.location(("time_step_limit", 1)) == (62, 9)
    assert doc.location(("time_step_limit",)) == (60, 5)


def test_nan_and_negative_infinity():
    doc = load_text('{\n  "a": NaN,\n  "b": [1, -Infinity]\n}', "c.json")
    assert math.isnan(doc.data["a"]) and doc.data["b"] == [1, -math.inf]
    assert doc.nonstandard == [(("a",), "NaN"), (("b", 1), "-Infinity")]
    assert doc.location(("a",)) == (2, 3)
    assert doc.location(("b", 1)) == (3, 12)


def test_nan_where_an_integer_belongs_is_a_located_spec_error():
    doc = load_text('{\n  "model_type": "llama",\n  "hidden_size": NaN\n}', "c.json")
    with pytest.raises(SpecError) as exc:
        Reader(doc).int("hidden_size", "hidden_size")
    assert (exc.value.line, exc.value.column) == (3, 3)
    assert exc.value.message == "'hidden_size' must be an integer, got nan"


# -- duplicate keys ---------------------------------------------------------------------------------

DUPLICATE = '{\n  "hidden_size": 1024,\n  "num_hidden_layers": 2,\n  "hidden_size": 2048\n}\n'


def test_duplicate_json_key_last_wins_and_is_recorded():
    doc = load_text(DUPLICATE, "d.json")
    assert doc.data["hidden_size"] == 2048  # json.loads (and so transformers) keeps the last
    assert doc.duplicate_keys == [(("hidden_size",), 2, 3)]  # the shadowed occurrence
    assert doc.location(("hidden_size",)) == (4, 3)  # the one that counts
    r = Reader(doc)
    assert r.int("hidden_size", "hidden_size") == 2048
    assert (r.sources["hidden_size"].line, r.sources["hidden_size"].column) == (4, 3)


def test_duplicate_json_key_forgets_what_the_shadowed_value_held():
    doc = load_text('{\n  "rope": {"factor": NaN},\n  "rope": 5\n}', "d.json")
    assert doc.data == {"rope": 5}
    assert doc.nonstandard == []
    assert doc.span(("rope", "factor")) is None
    assert doc.duplicate_keys == [(("rope",), 2, 3)]


def test_escaped_json_keys_are_located_under_their_decoded_names():
    """Positions key a value by its decoded name, as json.loads does: \\u escapes and \\" in keys."""
    doc = load_text('{\n  "\\u0068idden_size": 4096,\n  "a\\"b": {"x\\\\y": 1},\n  "hidden_size": 8}', "e.json")
    assert doc.data == {"hidden_size": 8, 'a"b': {"x\\y": 1}}
    assert doc.duplicate_keys == [(("hidden_size",), 2, 3)]  # the escaped spelling is the same key
    assert doc.location(("hidden_size",)) == (4, 3)
    assert doc.location(('a"b', "x\\y")) == (3, 12)


def test_duplicate_nested_json_key():
    doc = load_text('{"text_config": {\n  "vocab_size": 1,\n  "vocab_size": 2}}', "d.json")
    assert doc.get(("text_config", "vocab_size")) == 2
    assert doc.duplicate_keys == [(("text_config", "vocab_size"), 2, 3)]


def test_duplicate_yaml_key_is_refused_with_its_position():
    with pytest.raises(LoadError) as exc:
        load_text("model:\n  hidden_size: 1\n  hidden_size: 2\n", "d.yaml")
    assert (exc.value.line, exc.value.column) == (3, 3)
    assert "duplicate key 'hidden_size'" in exc.value.message


# -- byte-order mark and line endings ------------------------------------------------------------------


def test_bom_is_stripped_and_columns_do_not_shift():
    doc = load_bytes(b'\xef\xbb\xbf{"hidden_size": 64,\n "vocab_size": 8}', "b.json")
    assert doc.data == {"hidden_size": 64, "vocab_size": 8}
    assert doc.location(("hidden_size",)) == (1, 2)
    assert doc.location(("vocab_size",)) == (2, 2)
    assert doc.notes[0] == "UTF-8 byte-order mark ignored"


def test_bom_in_yaml():
    doc = load_bytes(b"\xef\xbb\xbfhidden_size: 64\nvocab_size: 8\n", "b.yaml")
    assert doc.location(("vocab_size",)) == (2, 1)


def test_crlf_json_line_numbers():
    raw = b'{\r\n  "a": 1,\r\n  "text_config": {\r\n    "hidden_size": 3\r\n  }\r\n}\r\n'
    doc = load_bytes(raw, "w.json")
    assert doc.location(("a",)) == (2, 3)
    assert doc.location(("text_config", "hidden_size")) == (4, 5)
    span = doc.span(("text_config", "hidden_size"))
    assert doc.text[span.value_start : span.value_end] == "3"


def test_crlf_yaml_line_numbers():
    doc = load_bytes(b"model:\r\n  hidden_size: 3\r\n  num_layers: 2\r\n", "w.yaml")
    assert doc.location(("model", "num_layers")) == (3, 3)
    assert doc.data == {"model": {"hidden_size": 3, "num_layers": 2}}


def test_invalid_json_is_located():
    with pytest.raises(LoadError) as exc:
        load_text('{\n  "a": 1,\n  "b": ,\n}', "bad.json")
    assert (exc.value.line, exc.value.column) == (3, 8)


# -- YAML scalars ---------------------------------------------------------------------------------


def test_underscored_integer_in_yaml():
    doc = load(os.path.join(CORPUS, "megatron", "maxtext__deepseek2-16b.yaml"))
    assert doc.data["rope_max_timescale"] == 10000  # `10_000`, as the training frameworks read it
    assert doc.location(("rope_max_timescale",)) == (45, 1)
    doc = load_text("model:\n  ffn_hidden_size: 11_008\n  quoted: '10_000'\n  eps: 1e-5\n", "u.yaml")
    assert doc.data["model"] == {"ffn_hidden_size": 11008, "quoted": "10_000", "eps": 1e-5}


# -- ${...} interpolations ---------------------------------------------------------------------------

NEMO = """\
model:
  hidden_size: 4096
  num_attention_heads: 32
  ffn_hidden_size: ${multiply:4, ${.hidden_size}}
  copy: ${.hidden_size}
  absolute: ${model.hidden_size}
  kv_channels: ${oc.env:KV_CHANNELS}
  with_default: ${oc.env:NOT_SET,128}
  dangling: ${.nope}
"""


def test_interpolations_written_with_escapes_are_still_found():
    """resolve_document skips its walk only when no "$" can be in any value: escaped dollars count."""
    for text, name in (
        ('{"a": "\\u0024{b}", "b": 3}', "e.json"),
        ('{"a": "$\\u007bb}", "b": 3}', "f.json"),
        ('a: "\\x24{b}"\nb: 3\n', "g.yaml"),
    ):
        doc = load_text(text, name)
        assert (doc.data["a"], doc.interpolations) == (3, {("a",): "${b}"}), name
    assert load_text('{"a": "b", "c": [1, {"d": "e"}]}', "h.json").interpolations == {}


def test_interpolations_resolved():
    doc = load_text(NEMO, "n.yaml")
    m = doc.data["model"]
    assert (m["ffn_hidden_size"], m["copy"], m["absolute"], m["with_default"]) == (16384, 4096, 4096, 128)
    assert doc.notes == ["resolved 4 ${...} interpolation(s)"]


def test_unresolved_interpolations_are_recorded_not_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("KV_CHANNELS", "64")
    doc = load_text(NEMO, "n.yaml")
    assert doc.unresolved == {("model", "kv_channels"): "${oc.env:KV_CHANNELS}", ("model", "dangling"): "${.nope}"}
    assert doc.data["model"]["kv_channels"] is None
    with pytest.raises(SpecError) as exc:
        Reader(doc, ("model",)).int("head_dim", "kv_channels")
    assert (exc.value.line, exc.value.column) == (7, 3)
    assert exc.value.message == "interpolation ${oc.env:KV_CHANNELS} cannot be resolved offline; give the value"


def test_nemo_launcher_model_section_resolves():
    doc = load(os.path.join(CORPUS, "megatron", "nemo-launcher__llama2_7b.yaml"))
    assert not [p for p in doc.unresolved if p[0] == "model" and p[1] not in ("tokenizer", "data")]


# -- multimodal wrappers and files without model_type --------------------------------------------------


def test_wrapper_text_config_positions():
    doc = load(os.path.join(CORPUS, "hf", "gemma__gemma-3-27b.json"))
    assert doc.location(("text_config", "hidden_size")) == (24, 5)
    spec = normalize(doc)
    assert spec.key_prefix == "text_config."
    src = spec.sources["intermediate_size"]
    assert (src.key, src.line, src.column) == ("text_config.intermediate_size", 26, 5)


def test_wrapper_error_names_the_nested_key():
    text = (
        '{\n  "model_type": "gemma3",\n  "text_config": {\n    "hidden_size": "big",\n'
        '    "num_hidden_layers": 2\n  }\n}'
    )
    with pytest.raises(SpecError) as exc:
        normalize(load_text(text, "w.json"))
    assert (exc.value.line, exc.value.column) == (4, 5)
    assert exc.value.message == "'text_config.hidden_size' must be an integer, got the string 'big'"


def test_gpt2_file_without_model_type():
    doc = load(os.path.join(CORPUS, "hf", "gpt2__gpt2-medium-early-revision.json"))
    assert "model_type" not in doc.data
    spec = normalize(doc)
    assert spec.model_type == "gpt2"
    assert (spec.sources["hidden_size"].key, spec.sources["hidden_size"].line) == ("n_embd", 10)


def test_no_model_type_and_no_architectures_but_gpt2_keys():
    spec = normalize(load_text('{"n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 10}', "g.json"))
    assert (spec.model_type, spec.hidden_size, spec.num_layers) == ("gpt2", 64, 2)
