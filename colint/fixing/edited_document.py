"""The Document of an edited YAML file, built in memory without parsing it again (``colint suggest``
probes hundreds of variants of one file: a ruamel parse took ~0.3 s per variant of a 185 kB file).

Only integer edits of values whose span the loader recorded: each value is spliced into the text as
colint.fixing.fix_text writes it, set in a copy of the data (containers on the edited paths copied, the rest
shared), the spans after each splice shifted, and the ``${...}`` interpolations resolved again. Anything
else returns None and the caller parses the edited text.
"""

from __future__ import annotations

import bisect
from typing import Any

from colint.findings import Edit
from colint.fixing.fix_text import parse_key, splice, yaml_literal, yaml_splice
from colint.loading import Document
from colint.loading.document import Span
from colint.loading.interpolation import resolve_document


def edited_document(doc: Document, edits: list[Edit]) -> Document | None:
    """The Document that ``load_text(apply_edits(doc, edits))`` returns, built without parsing: the
    values are spliced into the text, set in a copy of the data (containers on the edited paths
    copied, the rest shared with ``doc``), the spans after each splice shifted, and the
    ``${...}`` interpolations resolved again (one may read an edited value). YAML only, and only
    integer edits of values whose span the loader recorded; None otherwise (the caller parses)."""
    if doc.syntax != "yaml":
        return None  # JSON parses in C in well under a millisecond per config: no need
    splices: list[tuple[int, int, str]] = []
    values: dict[tuple, Any] = {}
    for e in edits:
        if not isinstance(e.new, int) or isinstance(e.new, bool):
            return None
        path = parse_key(e.key)
        s = yaml_splice(doc, e)
        if s is None or path in values or isinstance(doc.get(path), (dict, list)):
            return None
        splices.append(s)
        values[path] = e.new
    splices.sort()
    if any(a[1] > b[0] for a, b in zip(splices, splices[1:])):
        return None
    text = splice(doc.text, splices)

    # Offsets move by the growth of every splice that ends at or before them; columns only on the
    # splice's own line (a splice never spans lines).
    ends = [end for _, end, _ in splices]
    growth = [0]
    for start, end, new in splices:
        growth.append(growth[-1] + len(new) - (end - start))
    line_of: dict[int, list[tuple[int, int, int]]] = {}
    for start, end, new in splices:
        line_of.setdefault(doc.text.count("\n", 0, start) + 1, []).append((start, end, len(new) - (end - start)))

    def moved(offset):
        return offset + growth[bisect.bisect_right(ends, offset)]

    spans = dict(doc.spans)
    first = splices[0][0] if splices else len(doc.text)
    line_starts = {line: doc.text.rfind("\n", 0, group[0][0]) + 1 for line, group in line_of.items()}
    for p, sp in doc.spans.items():
        if sp.line not in line_of and (sp.value_start is None or sp.value_start < first):
            continue  # nothing before it moved
        column = sp.column
        if sp.line in line_of:
            key_at = line_starts[sp.line] + sp.column - 1
            column += sum(d for start, end, d in line_of[sp.line] if end <= key_at)
        vs, ve = sp.value_start, sp.value_end
        if p in values:
            vs = moved(vs)
            literal = yaml_literal(values[p])
            assert literal is not None  # an int always has one
            ve = vs + len(literal)
        elif vs is not None:
            vs, ve = moved(vs), (moved(ve) if ve is not None else None)
        spans[p] = Span(sp.line, column, vs, ve)

    data = _copy_paths(doc.data, list(values) + list(doc.interpolations))
    for p, raw in doc.interpolations.items():
        if p not in values:
            _set(data, p, raw)
    for p, v in values.items():
        _set(data, p, v)
    out = Document(
        path=doc.path,
        text=text,
        syntax=doc.syntax,
        data=data,
        spans=spans,
        duplicate_keys=list(doc.duplicate_keys),
        nonstandard=list(doc.nonstandard),
    )
    resolve_document(out)
    return out


def _copy_paths(data, paths: list[tuple]):
    """A copy of ``data`` in which every container on the way to each path is a fresh shallow copy
    (so values on those paths can be set), and every other container is shared."""
    root = dict(data) if isinstance(data, dict) else list(data)
    copied: dict[tuple, Any] = {(): root}
    for path in paths:
        node = root
        for i in range(len(path) - 1):
            sub = path[: i + 1]
            child = copied.get(sub)
            if child is None:
                child = node[path[i]]
                child = dict(child) if isinstance(child, dict) else list(child)
                node[path[i]] = copied[sub] = child
            node = child
    return root


def _set(data, path: tuple, value) -> None:
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
