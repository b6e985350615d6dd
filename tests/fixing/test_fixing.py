"""Format-preserving fixes: only the targeted values change, byte for byte."""

import os

import pytest

from colint.findings import Edit, Fix
from colint.util.fileio import write_atomic
from colint.fixing.fix_text import apply_edits, fixed_text, parse_key, unified_diff
from colint.loading import load, load_text


def test_parse_key():
    assert parse_key("text_config.block_configs[3].ffn.ffn_mult") == (
        "text_config",
        "block_configs",
        3,
        "ffn",
        "ffn_mult",
    )


# a value spliced in place: every other byte (CRLF, spacing, comments, YAML's 10_000) stays as it was
SPLICES = {
    "json_crlf": (
        '{\r\n    "hidden_size": 4096,\r\n    "intermediate_size": 11008,\r\n    "x": [1, 2]\r\n}',
        "c.json",
        "intermediate_size",
    ),
    "yaml_comments_and_literals": (
        "model:\n  hidden_size: 4096   # width\n  ffn_hidden_size: 11008\n  rope_base: 10_000\n",
        "m.yaml",
        "model.ffn_hidden_size",
    ),
}


@pytest.mark.parametrize("case", sorted(SPLICES))
def test_splice_changes_only_the_value_bytes(case):
    text, name, key = SPLICES[case]
    new = apply_edits(load_text(text, name), [Edit(key=key, old=11008, new=11264)])
    assert new == text.replace("11008", "11264")


def test_json_nested_and_inserted_key_keeps_indentation():
    text = '{\n  "text_config": {\n    "hidden_size": 5120\n  },\n  "vocab_size": 50257\n}\n'
    doc = load_text(text, "c.json")
    new = apply_edits(
        doc, [Edit(key="vocab_size", old=50257, new=50304), Edit(key="text_config.head_dim", old=None, new=128)]
    )
    assert new == (
        '{\n  "text_config": {\n    "hidden_size": 5120,\n    "head_dim": 128\n  },\n  "vocab_size": 50304\n}\n'
    )


def test_write_atomic_replaces_and_keeps_mode(tmp_path):
    p = tmp_path / "config.json"
    p.write_text('{"vocab_size": 50257}\n')
    os.chmod(p, 0o640)
    write_atomic(str(p), '{"vocab_size": 50304}\n')
    assert p.read_text() == '{"vocab_size": 50304}\n'
    assert os.stat(p).st_mode & 0o777 == 0o640
    assert [x.name for x in tmp_path.iterdir()] == ["config.json"]  # no temporary left behind


def test_fixed_text_refuses_to_write_a_non_standard_literal():
    doc = load_text('{"a": 1}', "c.json")
    with pytest.raises(ValueError):
        fixed_text(doc, [Fix(title="t", safety="safe", edits=[Edit(key="a", new=float("nan"))])])


def test_unified_diff_names_the_file():
    d = unified_diff("c.json", '{"a": 1}\n', '{"a": 2}\n')
    assert d.splitlines()[:2] == ["--- a/c.json", "+++ b/c.json"]
    assert '-{"a": 1}' in d and '+{"a": 2}' in d


@pytest.mark.parametrize("name", sorted(os.listdir("tests/corpus/hf")))
def test_every_corpus_value_can_be_spliced_in_place(name):
    """Rewriting each top-level integer of a real config with itself + 1 changes exactly those bytes."""
    doc = load(f"tests/corpus/hf/{name}")
    ints = [(k, v) for k, v in doc.data.items() if isinstance(v, int) and not isinstance(v, bool)][:5]
    new = apply_edits(doc, [Edit(key=k, old=v, new=v + 1) for k, v in ints])
    reparsed = load_text(new, name)
    for k, v in ints:
        assert reparsed.data[k] == v + 1
    assert len(new) - len(doc.text) == sum(len(str(v + 1)) - len(str(v)) for _, v in ints)
    back = apply_edits(reparsed, [Edit(key=k, old=v + 1, new=v) for k, v in ints])
    assert back == doc.text
