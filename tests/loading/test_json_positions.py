"""Positions of JSON keys: the loader's one-pass scan, and the positions of a spliced fix moved instead of re-scanned.

A text spliced by colint.fixing.fix_text from a loaded Document is loaded again by the advice closure; its
Document must be exactly the one a fresh parse of the text gives (every span's line, column and value
offsets, in the same order, duplicate keys, bare NaN/Infinity), whatever the layout and the edits.
"""

from __future__ import annotations

import json
import os
import random

import pytest

from colint.findings import Edit
from colint.fixing.fix_text import apply_edits
from colint.loading import load_text
from colint.loading import spliced
from colint.loading.document import format_path
from colint.loading.json_loader import parse_json

CORPUS_HF = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpus", "hf")


def _positions(doc) -> tuple:
    spans = [(p, s.line, s.column, s.value_start, s.value_end) for p, s in doc.spans.items()]
    return spans, doc.duplicate_keys, doc.nonstandard, repr(doc.data)  # repr: NaN equals itself


def _parsed(text: str) -> tuple:
    return _positions(parse_json(text, "c.json"))


def _scalar_paths(doc) -> list[tuple]:
    return [p for p, v in doc.walk() if not isinstance(v, (dict, list))]


def _layouts(text: str) -> list[str]:
    data = json.loads(text)
    return [
        text,
        json.dumps(data, separators=(",", ":")),  # one line: several splices share it
        json.dumps(data, indent=1).replace("\n", "\r\n"),
        json.dumps(data, indent="\t", separators=(" , ", " : ")),
    ]


NEW_VALUES = [7, 123456789, 0.5, 1e-06, True, None, "x", "a longer string, with [brackets] and {braces}", -3, 65536]


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(CORPUS_HF) if f.endswith(".json"))[::4])
def test_spliced_positions_equal_a_fresh_parse(name):
    rng = random.Random(name)
    with open(os.path.join(CORPUS_HF, name), encoding="utf-8") as fh:
        original = fh.read()
    for text in _layouts(original):
        doc = load_text(text, "c.json")
        paths = _scalar_paths(doc)
        for _ in range(6):
            chosen = rng.sample(paths, min(len(paths), rng.choice((1, 1, 2, 3))))
            edits = [Edit(key=format_path(p), new=rng.choice(NEW_VALUES)) for p in chosen]
            new_text = apply_edits(doc, edits)
            hit = spliced.spliced_document(new_text, "c.json")
            if doc.nonstandard or doc.duplicate_keys:  # Nemotron-H's bare Infinity: scanned again
                assert hit is None
            else:
                assert hit is not None, "a scalar-for-scalar splice of a scanned document is moved, not re-scanned"
                assert _positions(hit) == _parsed(new_text)
            assert _positions(load_text(new_text, "c.json")) == _parsed(new_text)


def test_spliced_document_is_spliced_again():
    """A Document built from moved positions is itself a base for the next splice (suggest's chains)."""
    doc = load_text('{"a": 1, "b": {"c": 22, "d": [333, 4]}, "e": 5}', "c.json")
    for value in (10, 7, 123456, 0):
        text = apply_edits(doc, [Edit(key="b.c", new=value), Edit(key="b.d[0]", new=value * 3)])
        doc = load_text(text, "c.json")
        assert _positions(doc) == _parsed(text)
    assert doc.data == {"a": 1, "b": {"c": 0, "d": [0, 4]}, "e": 5}


@pytest.mark.parametrize(
    "text, edits",
    [
        ('{"a": 1,\n "b": 2}', [Edit(key="c", new=3)]),  # an inserted key
        ('{"a": [1, 2],\n "b": 2}', [Edit(key="a", new=3)]),  # a list replaced
        ('{"a": 1,\n "b": 2}', [Edit(key="a", new=[1, 2])]),  # a list written
        ('{"a": 1, "a": 2, "b": 3}', [Edit(key="b", new=4)]),  # duplicate keys
        ('{"a": NaN, "b": 3}', [Edit(key="b", new=4)]),  # a bare NaN
        ('{"a": 1, "b": 3}', [Edit(key="b", new=10**400)]),  # a number no float holds
    ],
)
def test_what_is_not_moved_is_scanned(text, edits):
    doc = load_text(text, "c.json")
    new_text = apply_edits(doc, edits)
    assert spliced.spliced_document(new_text, "c.json") is None
    if "10**400" not in repr(edits) and len(new_text) < 300:
        assert _positions(load_text(new_text, "c.json")) == _parsed(new_text)


def test_a_hand_built_document_is_never_a_base():
    """Only a Document whose positions the loader scanned (or moved) lends them to a splice."""
    doc = parse_json('{"a": 1,\n "b": 2}', "c.json")  # parsed, but not through load_text's checks
    text = apply_edits(doc, [Edit(key="a", new=100)])
    assert spliced.spliced_document(text, "c.json") is None
    assert _positions(load_text(text, "c.json")) == _parsed(text)


def test_an_error_in_the_spliced_text_is_the_loaders():
    """A splice whose text cannot be parsed is left to the loader, which says where and why."""
    doc = load_text('{"a": 1,\n "b": 2}', "c.json")
    bad = doc.text.replace("2", "2 2")
    spliced.remember(doc, [(14, 15, "2 2")], bad)
    assert spliced.spliced_document(bad, "c.json") is None


# -- the scan itself ------------------------------------------------------------------------------------


def test_scan_records_members_items_and_duplicates():
    text = '{"a": {"x": 1, "y": [1, {"z": "q"}]},\n "a": {"x": 5}, "k\\"ey": "v:al", "s": "[{]}"}'
    doc = parse_json(text, "c.json")
    spans = [(p, s.line, s.column, s.value_start, s.value_end) for p, s in doc.spans.items()]
    # the later "a" wins: what was recorded inside the earlier one is gone
    assert spans == [
        (("a",), 2, 2, 44, 52),
        (("a", "x"), 2, 8, 50, 51),
        (('k"ey',), 2, 17, 63, 69),
        (("s",), 2, 34, 76, 82),
    ]
    assert [text[s.value_start : s.value_end] for s in doc.spans.values()] == ['{"x": 5}', "5", '"v:al"', '"[{]}"']
    assert doc.duplicate_keys == [(("a",), 1, 2)]
    assert doc.nonstandard == []


def test_scan_records_bare_constants_in_members_and_items():
    doc = parse_json('{"a": [NaN, -Infinity], "b": Infinity, "c": "NaN"}', "c.json")
    spans = [(p, s.line, s.column, s.value_start, s.value_end) for p, s in doc.spans.items()]
    assert spans[:4] == [
        (("a",), 1, 2, 6, 22),
        (("a", 0), 1, 8, 7, 10),
        (("a", 1), 1, 13, 12, 21),
        (("b",), 1, 25, 29, 37),
    ]
    assert doc.nonstandard == [(("a", 0), "NaN"), (("a", 1), "-Infinity"), (("b",), "Infinity")]


@pytest.mark.parametrize(
    "text, located, value",
    [
        ('{"model_type": "llama", "a": 1}' + " " * 1_000_000, ("a",), "1"),  # each blank tried in turn took minutes
        ('{"model_type": "llama", "a": 1}' + "\r\n\t " * 250_000, ("a",), "1"),
        (" " * 1_000_000 + '{"a": 1}', ("a",), "1"),
        ('{"a":' + " " * 500_000 + "[" + " " * 500_000 + '"x"' + " " * 500_000 + ", 2]}", ("a", 1), "2"),
    ],
)
def test_long_runs_of_blanks_are_scanned_once(text, located, value):
    span = load_text(text, "c.json").span(located)
    assert span is not None and text[span.value_start : span.value_end] == value


@pytest.mark.parametrize(
    "value, refused",
    [
        (10**307, False),  # 308 digits, below 2**1023: a float holds it
        (2**1023 - 1, False),
        (2**1023, True),
        (-(2**1023), True),
        (9 * 10**307, True),
    ],
)
def test_integers_no_float_holds_are_refused_at_the_boundary(value, refused):
    from colint.errors import LoadError

    for text in (
        '{"a": 1,\n  "b": %d}' % value,
        '{"a": [1, %d]}' % value,
        '{"a": {"c": %d}}' % value,
    ):
        if not refused:
            assert load_text(text, "c.json").data is not None
            continue
        with pytest.raises(LoadError) as exc:
            load_text(text, "c.json")
        assert f"is a {len(str(abs(value)))}-digit number, beyond any config value" in str(exc.value)


def test_a_huge_integer_shadowed_by_a_later_duplicate_is_no_error():
    doc = load_text('{"a": %d,\n "a": 1}' % 2**1024, "c.json")
    assert doc.data == {"a": 1} and doc.duplicate_keys == [(("a",), 1, 2)]
