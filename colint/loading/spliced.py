"""Positions of a JSON text that colint.fixing.fix_text spliced from a loaded Document, moved instead of re-scanned.

The advice closure re-checks every fix at the state it leads to: the edits are spliced into the file's text
and the result loaded again, ~1,200 times per 1,000 files checked. Most splices replace one scalar value
with another (a width rounded to a multiple of 128); every key and value before the splice keeps its
offset, every one after moves by the change in length, and no line moves. ``remember`` keeps the recent
spliced texts with the Document and splices they came from; ``spliced_document`` then parses the values
with json.loads as the loader does (so the data is exactly what a parse gives) and takes the positions
from the original, moved. Anything else (an inserted key, a container replaced, duplicate keys or bare
NaN/Infinity in the original) returns None, and the caller scans the text as for any file.
"""

from __future__ import annotations

import json
import weakref
from bisect import bisect_right

from colint.loading.document import HUGE_INT_DIGITS, Document, Span
from colint.util.memo import keep

# Documents whose positions came from the loader's own scan (or were moved from one): only their splices
# are remembered, so that a hand-built Document's spans never stand in for a scan. Keyed by id, holding
# the document weakly (a Document compares by value, so it cannot be a weak set's key).
_SCANNED: weakref.WeakValueDictionary[int, Document] = weakref.WeakValueDictionary()
# spliced text -> (the Document it was spliced from, its splices, sorted)
_RECENT: dict[str, tuple[Document, tuple[tuple[int, int, str], ...]]] = {}
_RECENT_MAX = 128
_LONGEST_TEXT = 128 * 1024  # real configs are < 100 kB; a larger file is scanned again (the memo holds <= 16 MiB)


def scanned(doc: Document) -> None:
    """Mark ``doc``'s positions as the loader's (its JSON text passed every check of load_text)."""
    _SCANNED[id(doc)] = doc


def remember(doc: Document, splices: list[tuple[int, int, str]], text: str) -> None:
    """``text`` is ``doc.text`` with ``splices`` ((start, end, new text), not overlapping) written in."""
    if (
        doc.syntax != "json"
        or len(text) > _LONGEST_TEXT
        or _SCANNED.get(id(doc)) is not doc
        or doc.duplicate_keys
        or doc.nonstandard
    ):
        return
    for start, end, new in splices:
        if (
            start >= end  # an inserted key: positions of its own
            or len(new) >= HUGE_INT_DIGITS  # a number the loader may refuse: scanned as written
            or new[:1] in ("{", "[")  # a container replaces the value: keys and items of its own
            or "\n" in new
            or doc.text[start] in "{["  # a container replaced: its keys and items go
            or "\n" in doc.text[start:end]
        ):
            return
    ordered = tuple(sorted(splices))
    if any(a[1] > b[0] for a, b in zip(ordered, ordered[1:])):
        return  # overlapping splices (one value edited twice): let the text speak for itself
    # a spliced text is loaded right after it is written: the last few are all that count
    keep(_RECENT, text, (doc, ordered), _RECENT_MAX)


def spliced_document(text: str, path: str) -> Document | None:
    """The Document that parsing ``text`` gives, when ``text`` is a remembered splice; else None."""
    if not _RECENT or len(text) > _LONGEST_TEXT:
        return None  # nothing remembered, or a text too long to be (not hashed: 8 MiB took milliseconds)
    hit = _RECENT.get(text)
    if hit is None:
        return None
    origin, splices = hit
    constants: list[str] = []
    try:
        data = json.loads(text, parse_constant=constants.append)
    except ValueError:
        return None  # the loader's own parse reports it
    if constants or not isinstance(data, dict):
        return None
    doc = Document(path=path, text=text, syntax="json", data=data, spans=_moved_spans(origin, splices))
    scanned(doc)
    return doc


def _moved_spans(origin: Document, splices: tuple[tuple[int, int, str], ...]) -> dict:
    """``origin``'s spans after ``splices`` (sorted, each a scalar replaced on one line): an offset moves by
    the growth of every splice that ends at or before it; a column moves only when its key sits after a
    splice on the same line."""
    old = origin.text
    ends = [end for _, end, _ in splices]
    growth = [0]
    for start, end, new in splices:
        growth.append(growth[-1] + len(new) - (end - start))
    if not growth[-1] and all(len(new) == end - start for start, end, new in splices):
        return dict(origin.spans)  # every splice keeps its length: nothing moves
    first_end = ends[0]
    # line -> [(offset of the line's first character, splice end, growth)] of the splices on that line
    on_line: dict[int, list[tuple[int, int, int]]] = {}
    for start, end, new in splices:
        line_start = old.rfind("\n", 0, start) + 1
        line = old.count("\n", 0, start) + 1
        on_line.setdefault(line, []).append((line_start, end, len(new) - (end - start)))
    spans = {}
    for p, sp in origin.spans.items():
        vs, ve, column = sp.value_start, sp.value_end, sp.column
        moves = ve is not None and ve >= first_end
        if sp.line in on_line:
            for line_start, end, d in on_line[sp.line]:
                if line_start + sp.column - 1 >= end:  # the key (or item) sits after this splice
                    column += d
                    moves = True
        if not moves:
            spans[p] = sp  # nothing before it changed length: the same Span (loaders set spans only while loading)
            continue
        if vs is not None:
            vs += growth[bisect_right(ends, vs)]
        if ve is not None:
            ve += growth[bisect_right(ends, ve)]
        spans[p] = Span(sp.line, column, vs, ve)
    return spans
