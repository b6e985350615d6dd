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
    Document,
    Span,
    clamp_to_content,
    describe_type,
    line_column,
    line_starts,
    long_number_at,
)

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'  # unrolled: no per-character alternation (an 8 MiB string took 1.2 GB)
_TOKEN = re.compile(_STRING + r'|[{}\[\],:]|[^\s{}\[\],:"]+')
# for positions: a key with its colon (group 1 = the key string), a string, a bracket, a bare literal
# the key string is matched atomically (a lookahead, then a backreference: Python 3.10 has no possessive
# quantifiers), so a long string value that is not followed by ":" is not backtracked into character by character
_KEYED_TOKEN = re.compile("(?=(" + _STRING + r"))\1\s*:|" + _STRING + r'|[{}\[\]]|[^\s{}\[\],:"]+')


def parse_json(text: str, path: str) -> Document:
    nonstandard_tokens: list[str] = []

    def on_constant(name: str) -> float:
        nonstandard_tokens.append(name)
        return float(name.replace("-Infinity", "-inf").replace("Infinity", "inf").replace("NaN", "nan"))

    try:
        data = json.loads(text, parse_constant=on_constant)
    except json.JSONDecodeError as exc:
        msg = f"invalid JSON: {exc.msg}"
        line, col = exc.lineno, exc.colno
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
        line, col = _too_deep(text)
        raise LoadError(f"nesting deeper than {MAX_DEPTH} levels", path=path, line=line, column=col) from None
    if not isinstance(data, dict):
        raise LoadError(
            f"expected a JSON object of model keys at the top level, found {describe_type(data)}",
            path=path,
            line=1,
            column=1,
        )
    doc = Document(path=path, text=text, syntax="json", data=data)
    _record_positions(doc)
    return doc


def _too_deep(text: str) -> tuple[int | None, int | None]:
    """Line and column of the first bracket that opens level MAX_DEPTH + 1 (strings skipped)."""
    depth = 0
    for m in _TOKEN.finditer(text):
        c = m.group()[0]
        if c in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                return line_column(line_starts(text), m.start())
        elif c in "}]":
            depth -= 1
    return None, None


def _forget_shadowed(doc: Document, path: tuple) -> None:
    """A later duplicate key replaces the earlier value (json.loads keeps the last): drop what was
    recorded inside the earlier one, so that positions and non-standard literals describe the value
    that counts."""
    n = len(path)
    doc.nonstandard[:] = [(p, t) for p, t in doc.nonstandard if p[:n] != path]
    for p in [p for p in doc.spans if len(p) > n and p[:n] == path]:
        del doc.spans[p]


def _record_positions(doc: Document) -> None:
    """Every key's and array item's Span, duplicate keys and non-standard literals, from one regex pass
    over the (already validated) text. A key and its colon are one token; commas are not tokens: an
    array item's index counts the values seen in that array. (Hot: one pass per file checked, so
    line_column is inlined: line = bisect_right(starts, offset), column = offset - starts[line - 1] + 1.)"""
    text = doc.text
    starts = line_starts(text)
    spans = doc.spans
    stack: list[list] = []  # frame: [is_object, path, next array index]
    seen_per_obj: list[dict] = []
    pending_key: str | None = None
    pending_key_off = 0
    for m in _KEYED_TOKEN.finditer(text):
        key = m.group(1)
        if key is not None:
            # a key without escapes is its text; json.loads only for the rare escaped one
            pending_key = key[1:-1] if "\\" not in key else json.loads(key)
            pending_key_off = m.start()
            continue
        start, end = m.span()
        c = text[start]
        if c == "}" or c == "]":
            if stack:
                vpath = stack.pop()[1]
                seen_per_obj.pop()
                if vpath in spans:
                    spans[vpath].value_end = end
            continue
        if not stack:
            vpath = ()
        else:
            top = stack[-1]
            if top[0]:
                vpath = top[1] + (pending_key,)
                line = bisect_right(starts, pending_key_off)
                col = pending_key_off - starts[line - 1] + 1
                seen = seen_per_obj[-1]
                if pending_key in seen:
                    doc.duplicate_keys.append((vpath,) + seen[pending_key])
                    _forget_shadowed(doc, vpath)
                seen[pending_key] = (line, col)
                spans[vpath] = Span(line, col, start, end)
            else:
                vpath = top[1] + (top[2],)
                top[2] += 1
                line = bisect_right(starts, start)
                spans[vpath] = Span(line, start - starts[line - 1] + 1, start, end)
        if c == "{" or c == "[":
            if len(stack) >= MAX_DEPTH:
                line, col = line_column(starts, start)
                raise LoadError(f"nesting deeper than {MAX_DEPTH} levels", path=doc.path, line=line, column=col)
            stack.append([c == "{", vpath, 0])
            seen_per_obj.append({})
        elif c in "NI-":
            tok = m.group()
            if tok in ("NaN", "Infinity", "-Infinity"):
                doc.nonstandard.append((vpath, tok))
