"""Document: a parsed config with the position of every key.

Paths are tuples of keys and list indices, e.g. ``("text_config", "hidden_size")`` or
``("block_configs", 3, "ffn", "ffn_mult")``; :func:`format_path` renders them as
``text_config.hidden_size`` / ``block_configs[3].ffn.ffn_mult``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import field
from typing import Any

from colint.errors import LoadError
from colint.util.records import dataclass

Path = tuple  # tuple[str | int, ...]

MAX_DEPTH = 64  # nesting levels of mappings/lists; real configs nest < 6 deep
# integers no float can hold are refused at load: 10**400 overflowed float() in the middle of a check. Smaller
# absurd values reach the adapters, whose typed reads name the limit of each field.
MAX_INT = 1 << 1023
HUGE_INT_DIGITS = len(str(MAX_INT))  # 308: an integer literal with fewer digits is below MAX_INT
_LONG_DIGITS = re.compile(r"\d{%d,}" % HUGE_INT_DIGITS)
_ABSENT = object()


def long_number_at(text: str) -> tuple[int | None, int | None]:
    """Line and column of the first run of 308 or more digits (a number no float can hold), or (None, None)."""
    m = _LONG_DIGITS.search(text)
    if m is None:
        return None, None
    return line_column(line_starts(text), m.start())


def _has_huge_int(node) -> bool:
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif type(node) is int and (node >= MAX_INT or node <= -MAX_INT):
            return True
    return False


def refuse_huge_numbers(doc: Document) -> None:
    """A located LoadError for the first integer no float can hold (floats beyond the range parse as
    infinities, which the readers refuse). Run before any adapter converts a value to float or hands it
    to transformers. Costs one pass over the values (not the text: a regex over 8 MiB took 0.4 s)."""
    if not _has_huge_int(doc.data):
        return

    for path, value in doc.walk():
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= MAX_INT:
            line, col = doc.location(path)
            digits = len(str(abs(value))) if abs(value) < 10**4000 else "thousands of"
            raise LoadError(
                f"'{format_path(path)}' is a {digits}-digit number, beyond any config value "
                "(a float holds at most 309 digits)",
                path=doc.path,
                line=line,
                column=col,
                key=format_path(path),
            )


def line_starts(text: str) -> list[int]:
    """Offset of the first character of every line ("\n" ends a line), for :func:`line_column`."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i != -1:
        starts.append(i + 1)
        i = find("\n", i + 1)
    return starts


def line_column(starts: list[int], offset: int) -> tuple[int, int]:
    """1-based (line, column) of the 0-based ``offset``, given the text's :func:`line_starts`."""
    line = bisect.bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1


def bracket_beyond(text: str, brackets: Any, depth: int, limit: int) -> tuple[int, int] | None:
    """1-based (line, column) of the first opening bracket among ``brackets``' matches (a compiled regex whose
    matches start with a bracket or something else: strings, skipped) that takes the nesting, starting at
    ``depth``, past ``limit``; None when none does."""
    for m in brackets.finditer(text):
        c = m.group()[0]
        if c in "[{":
            depth += 1
            if depth > limit:
                return line_column(line_starts(text), m.start())
        elif c in "]}":
            depth -= 1
    return None


def clamp_to_content(text: str, line: int | None, column: int | None) -> tuple[int | None, int | None]:
    """A parser's end-of-file position moved back to just after the last non-blank character, so
    that "the file ends here" points at a line that exists (not the empty one after the last newline)."""
    end = len(text.rstrip())
    if line is None or end == 0:
        return line, column
    end_line, end_column = line_column(line_starts(text), end)
    if (line, column or 1) <= (end_line, end_column):
        return line, column
    return end_line, end_column


def describe_type(value: Any) -> str:
    """A user-facing name for what a parser returned: 'a list', 'null', 'a string', ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def format_path(path: Path) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


@dataclass
class Span:
    """Where a key and its value sit in the text (1-based line/column; 0-based offsets)."""

    line: int
    column: int
    value_start: int | None = None  # offset of the value's first character
    value_end: int | None = None  # offset one past the value's last character

    def __reduce__(self):
        # pickled as its four fields (a worker's result travels with its document's spans, ~64 a file): about
        # half the unpickling time of a dataclass's default state dict
        return (Span, (self.line, self.column, self.value_start, self.value_end))


@dataclass
class Document:
    path: str
    text: str
    syntax: str  # "json" | "yaml"
    data: Any
    spans: dict[Path, Span] = field(default_factory=dict)
    duplicate_keys: list[tuple[Path, int, int]] = field(default_factory=list)  # (path, line, col) of shadowed key
    nonstandard: list[tuple[Path, str]] = field(default_factory=list)  # e.g. bare Infinity/NaN in JSON
    notes: list[str] = field(default_factory=list)  # BOM stripped, interpolations resolved, ...
    unresolved: dict[Path, str] = field(default_factory=dict)  # values with ${...} that could not be resolved
    interpolations: dict[Path, str] = field(default_factory=dict)  # every ${...} value's text, before resolving
    bom: bool = False  # the file began with a UTF-8 byte-order mark (stripped from text; --fix writes it back)
    _interp_state: Any = field(default=None, repr=False, compare=False)  # interpolation's budget while resolving

    def get(self, path: Path, default: Any = None) -> Any:
        node = self.data
        for part in path:
            if part.__class__ is str and node.__class__ is dict:  # the common case, one lookup (hot: the readers)
                node = node.get(part, _ABSENT)
                if node is _ABSENT:
                    return default
                continue
            if isinstance(part, int):
                if not isinstance(node, list) or part >= len(node):
                    return default
            elif not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def has(self, path: Path) -> bool:
        sentinel = object()
        return self.get(path, sentinel) is not sentinel

    def span(self, path: Path) -> Span | None:
        return self.spans.get(tuple(path))

    def location(self, path: Path) -> tuple[int | None, int | None]:
        """Line and column (1-based) of ``path``'s key, or of its nearest located ancestor."""
        path = tuple(path)
        while path:
            s = self.spans.get(path)
            if s is not None:
                return s.line, s.column
            path = path[:-1]
        return None, None

    def walk(self) -> Iterator[tuple[Path, Any]]:
        def rec(prefix: Path, node: Any):
            if isinstance(node, dict):
                for k, v in node.items():
                    yield prefix + (k,), v
                    yield from rec(prefix + (k,), v)
            elif isinstance(node, list):
                for i, v in enumerate(node):
                    yield prefix + (i,), v
                    yield from rec(prefix + (i,), v)

        yield from rec((), self.data)
