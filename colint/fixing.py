"""Apply fixes to the original text, changing only the values they target.

JSON: each edited value is spliced at its recorded position (colint.loading's JSON reader
keeps value offsets), so key order, indentation and every other byte stay as they were; a
key the file lacks is inserted after the last member of its mapping, indented like its
siblings. YAML: plain scalars are spliced at the position ruamel.yaml reports for the
value (comments and formatting untouched); anything else (a new key, a flow collection)
goes through ruamel.yaml's round trip, which preserves comments and key order.
Writes are atomic: a temporary file in the same directory, then ``os.replace``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from typing import Any, Iterable

from colint.errors import ColintError
from colint.findings import Edit, Finding, Fix
from colint.fileio import write_atomic  # noqa: F401  (re-exported: the fixer's writer)
from colint.loading import Document, load_text

_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_key(key: str) -> tuple:
    """``text_config.layers[3].x`` → ``("text_config", "layers", 3, "x")``."""
    out: list = []
    for name, index in _PATH_PART.findall(key):
        out.append(int(index) if index else name)
    return tuple(out)


def choose_fixes(findings: Iterable[Finding], unsafe: bool = False) -> list[Fix]:
    """The first applicable fix of each finding: ``safe`` ones, plus ``unsafe`` ones when asked.
    Fixes whose edits touch a key an earlier (higher-ranked) fix already edits are skipped."""
    allowed = {"safe", "unsafe"} if unsafe else {"safe"}
    chosen: list[Fix] = []
    taken: set[str] = set()
    for f in findings:
        fx = next((x for x in f.fixes if x.safety in allowed and x.edits), None)
        if fx is None:
            continue
        keys = {e.key for e in fx.edits}
        if keys & taken:
            continue
        taken |= keys
        chosen.append(fx)
    return chosen


def _json_literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)  # never write bare NaN/Infinity


def apply_edits(doc: Document, edits: list[Edit]) -> str:
    if not edits:
        return doc.text
    if doc.syntax == "json":
        return _apply_json(doc, edits)
    return _apply_yaml(doc, edits)


def _apply_json(doc: Document, edits: list[Edit]) -> str:
    text = doc.text
    splices: list[tuple[int, int, str]] = []
    inserts: dict[tuple, list[Edit]] = {}
    for e in edits:
        path = parse_key(e.key)
        span = doc.span(path)
        if span is not None and span.value_start is not None and span.value_end is not None:
            splices.append((span.value_start, span.value_end, _json_literal(e.new)))
        else:
            inserts.setdefault(path[:-1], []).append(e)
    for parent, group in inserts.items():
        splices.append(_json_insert(doc, parent, group))
    for start, end, new in sorted(splices, key=lambda s: s[0], reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _json_insert(doc: Document, parent: tuple, group: list[Edit]) -> tuple[int, int, str]:
    node = doc.get(parent)
    if not isinstance(node, dict):
        raise ColintError(f"cannot add {group[0].key}: its parent is not a mapping", path=doc.path)
    # Position after the last member's value (or after the opening brace of an empty mapping).
    members = [parent + (k,) for k in node]
    spans = [doc.span(p) for p in members if doc.span(p) is not None]
    if spans:
        last = max(spans, key=lambda s: s.value_end or 0)
        at = last.value_end
        indent = " " * (last.column - 1)
        line_start = doc.text.rfind("\n", 0, at)
        sep_nl = "\n" if "\n" in doc.text[line_start:at] or doc.text.count("\n") > 1 else " "
        new = "".join(f",{sep_nl}{indent if sep_nl == chr(10) else ''}{_json_literal(e.key.split('.')[-1])}: "
                      f"{_json_literal(e.new)}" for e in group)
        return at, at, new
    span = doc.span(parent)
    start = (span.value_start if span and span.value_start is not None else doc.text.index("{")) + 1
    new = ", ".join(f"{_json_literal(e.key.split('.')[-1])}: {_json_literal(e.new)}" for e in group)
    return start, start, new


def _yaml_value_offsets(text: str):
    """Map key path → (start, end) offsets of plain scalar values, from ruamel's positions."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    data = YAML(typ="rt", pure=True).load(text)
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    out: dict[tuple, tuple[int, int]] = {}

    def scalar_end(line: int, col: int) -> int:
        begin = starts[line] + col
        eol = text.find("\n", begin)
        eol = len(text) if eol < 0 else eol
        seg = text[begin:eol]
        m = re.search(r"\s+#", seg)
        if m:
            seg = seg[: m.start()]
        return begin + len(seg.rstrip())

    def rec(node, path):
        if isinstance(node, CommentedMap):
            for k, v in node.items():
                if isinstance(v, (CommentedMap, CommentedSeq)):
                    rec(v, path + (k,))
                    continue
                try:
                    line, col = node.lc.value(k)
                except (KeyError, TypeError):
                    continue
                out[path + (k,)] = (starts[line] + col, scalar_end(line, col))

    rec(data, ())
    return out


_PLAIN_SCALAR = re.compile(r"^[-+]?[\d_.eE+]+$|^(true|false|null|~)$|^[A-Za-z_][\w.\-]*$")


def _apply_yaml(doc: Document, edits: list[Edit]) -> str:
    text = doc.text
    offsets = _yaml_value_offsets(text)
    splices = []
    rest = []
    for e in edits:
        path = parse_key(e.key)
        span = offsets.get(path)
        if span is not None and _PLAIN_SCALAR.match(text[span[0]:span[1]] or "x") and \
                isinstance(e.new, (int, float, bool)) and not isinstance(e.new, str):
            new = "true" if e.new is True else "false" if e.new is False else repr(e.new)
            splices.append((span[0], span[1], new))
        else:
            rest.append(e)
    for start, end, new in sorted(splices, reverse=True):
        text = text[:start] + new + text[end:]
    if rest:
        text = _yaml_round_trip(text, rest)
    return text


def _yaml_round_trip(text: str, edits: list[Edit]) -> str:
    import io

    from ruamel.yaml import YAML

    y = YAML(typ="rt", pure=True)
    y.preserve_quotes = True
    data = y.load(text)
    for e in edits:
        path = parse_key(e.key)
        node = data
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = e.new
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


def fixed_text(doc: Document, fixes: list[Fix]) -> str:
    edits = [e for fx in fixes for e in fx.edits]
    new = apply_edits(doc, edits)
    # The result must still load: a fix never leaves a file colint cannot read.
    load_text(new, doc.path, syntax=doc.syntax)
    return new


def unified_diff(path: str, old: str, new: str) -> str:
    a, b = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=a, tofile=b))
