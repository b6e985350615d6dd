"""The YAML loader records the offsets of scalar values (Span.value_start/value_end), and leaves
them None wherever the value's extent is not certain."""

from __future__ import annotations

import pytest

from colint.loading import load_text


def _values(text: str) -> dict[tuple, str | None]:
    """Path -> the recorded value text (None where no span is recorded)."""
    doc = load_text(text, "m.yaml")
    return {
        p: (None if s.value_start is None or s.value_end is None else text[s.value_start : s.value_end])
        for p, s in doc.spans.items()
    }


def test_plain_scalars_end_before_a_comment_or_the_line_end():
    text = "a: 1   # width\nb: 2#3\nc: x y  \nd: 1.5e-3\ne: true\nf: null\ng: 10_000\n"
    assert _values(text) == {
        ("a",): "1",
        ("b",): "2#3",
        ("c",): "x y",
        ("d",): "1.5e-3",
        ("e",): "true",
        ("f",): "null",
        ("g",): "10_000",
    }


def test_quoted_scalars_end_at_the_closing_quote():
    text = 'a: \'it\'\'s\'  # c\nb: "q\\"x" \nc: "with # hash"\nd: "\\x41"\n'
    assert _values(text) == {
        ("a",): "'it''s'",
        ("b",): '"q\\"x"',
        ("c",): '"with # hash"',
        ("d",): None,
    }  # \x41 is a YAML escape JSON lacks: not checked, so unknown


def test_flow_mappings_and_sequences_end_values_at_commas_and_brackets():
    text = 'm: {a: 1, b: "two", c: [3, 4]}  # flow\nn: {p: 1,\n    q: 2}\nl: [5,6]\n'
    assert _values(text) == {
        ("m",): None,
        ("m", "a"): "1",
        ("m", "b"): '"two"',
        ("m", "c"): None,
        ("m", "c", 0): "3",
        ("m", "c", 1): "4",
        ("n",): None,
        ("n", "p"): "1",
        ("n", "q"): "2",
        ("l",): None,
        ("l", 0): "5",
        ("l", 1): "6",
    }


def test_a_json_style_yaml_file_is_a_flow_mapping_over_many_lines():
    text = '{\n  # parallelism\n  "num-layers": 6,\n  "pos-emb": "rotary",  # c\n  "x": [[1, 2], 3]\n}\n'
    v = _values(text)
    assert v[("num-layers",)] == "6" and v[("pos-emb",)] == '"rotary"'
    assert v[("x", 0, 0)] == "1" and v[("x", 0, 1)] == "2" and v[("x", 1)] == "3"


@pytest.mark.parametrize(
    "text, key",
    [
        ("a: multi\n  line\n", "a"),  # a plain scalar folded over two lines
        ("a: |\n  block\n", "a"),  # block scalar
        ("a: >-\n  folded\n", "a"),
        ('a: "open\n  close"\n', "a"),  # a quoted scalar over two lines
        ("a: &anchor 5\n", "a"),  # anchored
        ("x: &anchor 5\na: *anchor\n", "a"),  # an alias (ruamel marks it at the anchor)
        ("a: !!int 7\n", "a"),  # tagged
        ("a:\nb: 2\n", "a"),  # empty value: the mark is the next key's
    ],
)
def test_values_whose_extent_is_uncertain_have_no_span(text, key):
    doc = load_text(text, "m.yaml")
    s = doc.span((key,))
    assert s is not None and (s.value_start, s.value_end) == (None, None)


def test_block_sequence_items_and_nested_mappings():
    text = "model:\n  layers:\n    - 10   # first\n    - {w: 3}\n  heads: 8\n"
    assert _values(text) == {
        ("model",): None,
        ("model", "layers"): None,
        ("model", "layers", 0): "10",
        ("model", "layers", 1): None,
        ("model", "layers", 1, "w"): "3",
        ("model", "heads"): "8",
    }


def test_crlf_lines_keep_exact_offsets():
    text = "a: 1\r\nb: x  # c\r\nc: 'q'\r\n"
    assert _values(text) == {("a",): "1", ("b",): "x", ("c",): "'q'"}


def test_other_line_breaks_leave_every_value_span_unknown():
    # ruamel counts a lone CR (and NEL, LS, PS) as a line break; offsets from its marks would be wrong
    doc = load_text("a: 1\rb: 2\n", "m.yaml")
    assert doc.data == {"a": 1, "b": 2}
    assert all(s.value_start is None and s.value_end is None for s in doc.spans.values())


def test_interpolations_keep_their_span_and_text():
    text = "model:\n  hidden: 64\n  ffn: ${multiply:4, ${.hidden}}  # derived\n"
    doc = load_text(text, "m.yaml")
    s = doc.span(("model", "ffn"))
    assert doc.data["model"]["ffn"] == 256
    assert text[s.value_start : s.value_end] == "${multiply:4, ${.hidden}}"
    assert doc.interpolations == {("model", "ffn"): "${multiply:4, ${.hidden}}"}


@pytest.mark.parametrize("brackets, refused", [(63, False), (64, True)])
def test_the_nesting_pre_scan_runs_whenever_the_limit_can_be_passed(brackets, refused):
    """The pre-scan is skipped below MAX_DEPTH brackets (64 levels need 63 flow brackets under the
    top-level mapping); at the limit, the 65th level is still refused where it opens."""
    from colint.errors import LoadError

    text = "model_type: llama\nx: " + "[" * brackets + "1" + "]" * brackets + "\n"
    if not refused:
        assert load_text(text, "m.yaml").span(("x",) + (0,) * brackets).value_end is not None
        return
    with pytest.raises(LoadError) as exc:
        load_text(text, "m.yaml")
    assert (exc.value.line, exc.value.column, exc.value.message) == (
        2,
        4 + 63,
        "nesting deeper than 64 levels",
    )  # the 64th "["
