"""YAML fixes splice values at the offsets the loader records: byte-exact on every Megatron-family
corpus file, the same replacements in SARIF, and the in-memory edited Document of `colint suggest`."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest

from colint.cli.main import main
from colint.findings import Edit
from colint.fixing.edited_document import edited_document
from colint.fixing.fix_text import apply_edits, yaml_literal
from colint.loading import load, load_text
from colint.loading.document import format_path

TESTS = Path(__file__).resolve().parents[1]
CORPUS = TESTS / "corpus" / "megatron"
SCHEMA = TESTS / "schemas" / "sarif-schema-2.1.0.json"
YAMLS = sorted(p.name for p in CORPUS.glob("*.yaml"))


def _literal_ints(doc) -> list[tuple[tuple, int, int]]:
    """(path, value, 0-based line) of each integer at the top level or in a ``model`` mapping that
    the file writes as a decimal literal on its key's line (found from the text, not the spans)."""
    lines = doc.text.split("\n")
    out = []
    for path, value in doc.walk():
        if not isinstance(value, int) or isinstance(value, bool) or path in doc.interpolations:
            continue
        if not (len(path) == 1 or path[-2] == "model"):
            continue
        line = doc.span(path).line - 1
        if _expected_line(lines[line], path[-1], value, value + 1) is not None:
            out.append((path, value, line))
    return out


def _expected_line(line: str, key: str, old: int, new: int) -> str | None:
    """``line`` with the value of ``key`` rewritten from ``old`` to ``new``, or None when the line
    does not hold ``key: old`` (plain or JSON-quoted key, then a comma, comment or nothing)."""
    m = re.fullmatch(rf'(\s*"?{re.escape(key)}"?\s*:\s*){old}(\s*(?:,.*|#.*)?)', line)
    return None if m is None else f"{m.group(1)}{new}{m.group(2)}"


@pytest.mark.parametrize("name", YAMLS)
def test_every_integer_is_rewritten_in_place_and_back(name):
    doc = load(str(CORPUS / name))
    ints = _literal_ints(doc)
    assert len(ints) >= 5, "the file's model sizes are plain integers"
    new = apply_edits(doc, [Edit(key=format_path(p), old=v, new=v + 1) for p, v, _ in ints])

    lines = doc.text.split("\n")
    for p, v, i in ints:
        lines[i] = _expected_line(lines[i], p[-1], v, v + 1)
    assert new == "\n".join(lines)  # exactly those bytes: comments, quoting and layout untouched

    again = load_text(new, name)
    for p, v, _ in ints:
        assert again.get(p) == v + 1
    back = apply_edits(again, [Edit(key=format_path(p), old=v + 1, new=v) for p, v, _ in ints])
    assert back == doc.text


@pytest.mark.parametrize("name", YAMLS)
def test_edited_document_is_what_parsing_the_edited_text_gives(name):
    """The probes of `colint suggest` are built in memory; they must equal a fresh load, spans and
    re-resolved interpolations included (NeMo derives sizes from ${...} of the edited keys)."""
    doc = load(str(CORPUS / name))
    edits = [Edit(key=format_path(p), old=v, new=v * 10 + 7) for p, v, _ in _literal_ints(doc)]
    built = edited_document(doc, edits)
    parsed = load_text(apply_edits(doc, edits), name)
    assert built is not None
    assert (built.text, built.data, built.spans, built.unresolved, built.interpolations, built.notes) == (
        parsed.text,
        parsed.data,
        parsed.spans,
        parsed.unresolved,
        parsed.interpolations,
        parsed.notes,
    )
    assert doc.data == load(str(CORPUS / name)).data  # the original is left as it was


def test_edited_document_shifts_columns_on_the_edited_line_and_re_resolves():
    text = "m: {a: 1, b: 22, c: 3}\nffn: ${multiply:4, ${m.b}}\n"
    doc = load_text(text, "x.yaml")
    built = edited_document(doc, [Edit(key="m.a", old=1, new=1000)])
    assert built.text == "m: {a: 1000, b: 22, c: 3}\nffn: ${multiply:4, ${m.b}}\n"
    assert built.spans == load_text(built.text, "x.yaml").spans
    built = edited_document(doc, [Edit(key="m.b", old=22, new=5)])
    assert built.data == {"m": {"a": 1, "b": 5, "c": 3}, "ffn": 20}


def test_edited_document_declines_what_it_cannot_build():
    doc = load_text("a: 1\nb: |\n  x\nc: [1]\n", "x.yaml")
    assert edited_document(doc, [Edit(key="b", new=2)]) is None  # block scalar: no span
    assert edited_document(doc, [Edit(key="z", new=2)]) is None  # a new key
    assert edited_document(doc, [Edit(key="a", new="s")]) is None  # not an integer
    assert edited_document(load_text('{"a": 1}', "x.json"), [Edit(key="a", new=2)]) is None


def test_splice_and_round_trip_together():
    """A splice where the span is known; the round trip only for the new key."""
    text = "# top\nmodel: {hidden: 64, heads: 4}  # flow\nlayers: 2 # depth\n"
    doc = load_text(text, "x.yaml")
    new = apply_edits(doc, [Edit(key="model.heads", old=4, new=8), Edit(key="layers", old=2, new=3)])
    assert new == "# top\nmodel: {hidden: 64, heads: 8}  # flow\nlayers: 3 # depth\n"
    new = apply_edits(doc, [Edit(key="layers", old=2, new=3), Edit(key="vocab", old=None, new=512)])
    assert load_text(new, "x.yaml").data == {"model": {"hidden": 64, "heads": 4}, "layers": 3, "vocab": 512}
    assert "layers: 3 # depth" in new and "# top" in new


@pytest.mark.parametrize(
    "value, text",
    [
        (7, "7"),
        (True, "true"),
        (None, "null"),
        (0.5, "0.5"),
        (1e-05, "1e-05"),
        (float("inf"), ".inf"),
        ("swiglu", "swiglu"),
        ("yes", '"yes"'),
        ("a: b", '"a: b"'),
        ("", '""'),
        ("é", '"\\u00e9"'),
        ([1], None),
    ],
)
def test_yaml_literal_reads_back_as_the_value(value, text):
    assert yaml_literal(value) == text
    if text is not None:
        assert load_text(f"k: {text}\n", "x.yaml").data["k"] == value
        assert load_text(f"k: {{v: {text}}}\n", "x.yaml").data["k"]["v"] == value  # flow context too


def _offset(text: str, line: int, column: int) -> int:
    return sum(len(x) + 1 for x in text.split("\n")[: line - 1]) + column - 1


def test_sarif_fixes_for_a_yaml_file(monkeypatch, capsys, tmp_path):
    """Falcon-7B's 4544-wide hidden size draws CL201 fixes; the SARIF replacements, applied to the
    file, give exactly what `colint --fix` would write, and the log validates."""
    src = (CORPUS / "nemo-launcher__falcon_7b.yaml").read_text(encoding="utf-8")
    (tmp_path / "falcon.yaml").write_text(src, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rc = main(["check", "falcon.yaml", "--format", "sarif", "--isolated"])
    log = json.loads(capsys.readouterr().out)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)
    assert rc in (0, 1)

    doc = load("falcon.yaml")
    fixes = [(r["ruleId"], fx) for r in log["runs"][0]["results"] for fx in r.get("fixes", [])]
    assert [code for code, _ in fixes] == ["CL201", "CL201"]
    for _, fx in fixes:
        (change,) = fx["artifactChanges"]
        assert change["artifactLocation"] == {"uri": "falcon.yaml", "uriBaseId": "%SRCROOT%"}
        text = src
        edits = []
        for rep in sorted(
            change["replacements"],
            key=lambda r: (r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
            reverse=True,
        ):
            reg = rep["deletedRegion"]
            start = _offset(src, reg["startLine"], reg["startColumn"])
            end = _offset(src, reg["endLine"], reg["endColumn"])
            key = next(format_path(p) for p, s in doc.spans.items() if s.value_start == start)
            edits.append(Edit(key=key, old=doc.get(tuple(key.split("."))), new=int(rep["insertedContent"]["text"])))
            text = text[:start] + rep["insertedContent"]["text"] + text[end:]
        assert {e.key for e in edits} == {"model.hidden_size", "model.num_attention_heads"}
        assert text == apply_edits(doc, edits)
        assert text != src


def test_sarif_has_no_fix_for_a_yaml_value_without_a_span(monkeypatch, capsys, tmp_path):
    """A tagged value's extent is left unknown: the finding is reported without a SARIF fix."""
    src = (CORPUS / "nemo-launcher__falcon_7b.yaml").read_text(encoding="utf-8")
    src = src.replace("  hidden_size: 4544\n", "  hidden_size: !!int 4544\n")
    assert "!!int 4544" in src
    (tmp_path / "falcon.yaml").write_text(src, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    main(["check", "falcon.yaml", "--format", "sarif", "--isolated"])
    log = json.loads(capsys.readouterr().out)
    results = log["runs"][0]["results"]
    assert any(r["ruleId"] == "CL201" for r in results)
    assert not any(r.get("fixes") for r in results)
    assert os.listdir(tmp_path) == ["falcon.yaml"]
