"""JSON text → Document, at stdlib speed, with the line/column of every key.

The values come from the C ``json`` decoder (last duplicate key wins, exactly as
``json.loads`` — and therefore transformers — reads the file). Positions come from one
regex pass over the tokens, so no second parser has to agree with the first on values.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right

from colint.errors import LoadError
from colint.loading.document import (
    MAX_DEPTH,
    HUGE_INT_DIGITS,
    Document,
    Span,
    bracket_beyond,
    clamp_to_content,
    describe_type,
    line_column,
    line_starts,
    long_number_at,
    refuse_huge_numbers,
)

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'  # unrolled: no per-character alternation (an 8 MiB string took 1.2 GB)
_TOKEN = re.compile(_STRING + r'|[{}\[\],:]|[^\s{}\[\],:"]+')
_BARE = r'[^\s{}\[\],:"]+'
# for positions, one match per member or array item: a member is its key (group 1), colon and the first token
# of its value (2 = a string, 3 = an opening bracket, 4 = a bare literal); otherwise an array item or the
# top-level value (5 = a string, 6 = an opening bracket, 7 = a bare literal), or a closing bracket (8).
# A string is matched atomically (a lookahead, then a backreference: Python 3.10 has no possessive
# quantifiers), so a long string value is not backtracked into character by character.
# Each match begins with the whitespace and comma before its token, so that the search never fails at a
# blank (half the scanning time of pretty-printed JSON): offsets come from the groups, not the match. In
# valid JSON a token follows every such run but the last: the scan stops where the content ends, or the
# trailing blanks would be tried from each of their positions (quadratic: 40,000 spaces took minutes).
_MEMBER_OR_ITEM = re.compile(
    r"[\s,]*(?:"
    "(?=(" + _STRING + r"))\1\s*:\s*(?:(?=(" + _STRING + r"))\2|([{\[])|(" + _BARE + "))"
    "|(?=(" + _STRING + r"))\5|([{\[])|(" + _BARE + r")|([}\]]))"
)


def parse_json(text: str, path: str) -> Document:
    nonstandard_tokens: list[str] = []

    def on_constant(name: str) -> float:
        nonstandard_tokens.append(name)
        return float(name.replace("-Infinity", "-inf").replace("Infinity", "inf").replace("NaN", "nan"))

    try:
        data = json.loads(text, parse_constant=on_constant)
    except json.JSONDecodeError as exc:
        msg = f"invalid JSON: {exc.msg}"
        line: int | None = exc.lineno
        col: int | None = exc.colno
        if exc.pos >= len(text.rstrip()):  # truncated, or a bracket never closed
            msg = f"invalid JSON: file ends before the document is complete ({exc.msg})"
            line, col = clamp_to_content(text, line, col)
        raise LoadError(msg, path=path, line=line, column=col) from None
    except ValueError as exc:  # Python's limit on integer digits (a 5,000-digit number)
        line, col = long_number_at(text)
        detail = str(exc).split(";")[0].split(":")[-1].strip()  # "value has 5000 digits"
        raise LoadError(
            f"a number with more digits than any config value ({detail})", path=path, line=line, column=col
        ) from None
    except RecursionError:
        line, col = bracket_beyond(text, _TOKEN, 0, MAX_DEPTH) or (None, None)  # strings skipped
        raise LoadError(f"nesting deeper than {MAX_DEPTH} levels", path=path, line=line, column=col) from None
    if not isinstance(data, dict):
        raise LoadError(
            f"expected a JSON object of model keys at the top level, found {describe_type(data)}",
            path=path,
            line=1,
            column=1,
        )
    doc = Document(path=path, text=text, syntax="json", data=data)
    if _record_positions(doc, constants=bool(nonstandard_tokens)) > HUGE_INT_DIGITS - 1:
        refuse_huge_numbers(doc)  # a bare literal long enough to be an integer no float holds: look at the values
    return doc


def _forget_shadowed(doc: Document, path: tuple) -> None:
    """A later duplicate key replaces the earlier value (json.loads keeps the last): drop what was
    recorded inside the earlier one, so that positions and non-standard literals describe the value
    that counts."""
    n = len(path)
    doc.nonstandard[:] = [(p, t) for p, t in doc.nonstandard if p[:n] != path]
    for p in [p for p in doc.spans if len(p) > n and p[:n] == path]:
        del doc.spans[p]


_NONSTANDARD = frozenset(("NaN", "Infinity", "-Infinity"))


def _record_positions(doc: Document, constants: bool = True) -> int:
    """Every key's and array item's Span, duplicate keys and non-standard literals, from one regex pass
    over the (already validated) text. A member (key, colon and the value's first token) is one match,
    an array item or a closing bracket another; commas are not tokens: an array item's index counts the
    values seen in that array. A key seen before in its mapping is a duplicate (the spans hold every key
    of the mappings still open). ``constants``: json.loads met NaN/Infinity, so bare values are looked at.
    Returns the length of the longest bare literal (a number, true, false, null).
    (Hot: one pass per file checked, so line_column is inlined: line = bisect_right(starts, offset),
    column = offset - starts[line - 1] + 1.)"""
    text = doc.text
    starts = line_starts(text)
    spans = doc.spans
    path: tuple = ()  # of the innermost open container
    stack: list[list] = []  # frames of the open containers: [is_object, path, next array index]
    top: list | None = None
    longest = 0
    for m in _MEMBER_OR_ITEM.finditer(text, 0, len(text.rstrip())):
        g = m.lastindex
        assert g is not None  # every alternative of the pattern ends in a group
        if g <= 4:  # a member: 1 = its key, then 2 = a string value, 3 = an opening bracket, 4 = a bare value
            key = m.group(1)
            k = key[1:-1] if "\\" not in key else json.loads(key)  # json.loads only for the rare escaped key
            vpath = path + (k,)
            koff = m.start(1)
            line = bisect_right(starts, koff)
            col = koff - starts[line - 1] + 1
            if vpath in spans:
                earlier = spans[vpath]
                doc.duplicate_keys.append((vpath, earlier.line, earlier.column))
                _forget_shadowed(doc, vpath)
            start, end = m.span(g)
            spans[vpath] = Span(line, col, start, end)
            g += 3  # its value as an array item's: 6 = an opening bracket, 7 = a bare value (5 = a string)
        elif g == 8:  # a closing bracket
            if stack:
                closed = stack.pop()[1]
                if closed in spans:
                    spans[closed].value_end = m.end()
                top = stack[-1] if stack else None
                path = top[1] if top is not None else ()
            continue
        else:  # an array item (5 = a string, 6 = an opening bracket, 7 = a bare value), or the top-level value
            start, end = m.span(g)
            if top is None:
                vpath = ()
            else:
                vpath = path + (top[2],)
                top[2] += 1
                line = bisect_right(starts, start)
                spans[vpath] = Span(line, start - starts[line - 1] + 1, start, end)
        # the value of a member or an item: a container opens, a bare literal is measured and looked at
        if g == 6:
            if len(stack) >= MAX_DEPTH:
                line, col = line_column(starts, start)  # at the bracket
                raise LoadError(f"nesting deeper than {MAX_DEPTH} levels", path=doc.path, line=line, column=col)
            top = [text[start] == "{", vpath, 0]
            stack.append(top)
            path = vpath
        elif g == 7:
            if end - start > longest:
                longest = end - start
            if constants:
                bare = text[start:end]
                if bare in _NONSTANDARD:
                    doc.nonstandard.append((vpath, bare))
    return longest
