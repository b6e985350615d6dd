"""YAML text → Document with key positions, through ruamel.yaml's round-trip loader.

The round-trip loader never constructs arbitrary Python objects (safe by construction),
records line/column of every key, and is the same library colint uses to edit YAML
without losing comments. Values are converted to plain dict/list/int/float/str; aliases are
expanded with a node budget so that an alias bomb is refused instead of exhausting memory.
"""

from __future__ import annotations

import re

from colint.errors import LoadError
from colint.loading.document import (
    MAX_DEPTH,
    Document,
    Span,
    bracket_beyond,
    clamp_to_content,
    describe_type,
    line_starts,
    long_number_at,
)

MAX_NODES = 200_000  # plain values after alias expansion; real configs have < 5,000
# Nodes in the text (scalars, keys, mappings, lists) that ruamel's pure-Python round-trip loader is given: it
# takes 100-200 us per node (a 399 KB list of 100,000 items: 20 s). The largest YAML config in the corpus
# has 1,640 (OLMoE's trainer config).
MAX_TEXT_NODES = 10_000


def _refuse_too_many_nodes(text: str, path: str) -> None:
    """A located LoadError when the text holds more than MAX_TEXT_NODES nodes, counted by libyaml's C parser
    (PyYAML, a dependency of pre-commit: ~2 us per node) before ruamel reads it; without libyaml, lines and
    commas stand in for nodes (each node needs one or the other, within a factor of two)."""
    try:
        import yaml

        loader = yaml.CSafeLoader
    except (ImportError, AttributeError):
        if text.count("\n") + text.count(",") > 2 * MAX_TEXT_NODES:
            raise LoadError(
                f"more than {MAX_TEXT_NODES:,} YAML values (no model config has that many): refused unparsed",
                path=path,
                line=1,
                column=1,
            ) from None
        return
    kinds = (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.AliasEvent)
    n = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, kinds):
                n += 1
                if n > MAX_TEXT_NODES:
                    mark = event.start_mark
                    raise LoadError(
                        f"more than {MAX_TEXT_NODES:,} YAML values (no model config has that many): refused",
                        path=path,
                        line=mark.line + 1,
                        column=mark.column + 1,
                    )
    except yaml.YAMLError:
        return  # ruamel reports the syntax error, located


def _yaml():
    from ruamel.yaml import YAML

    y = YAML(typ="rt", pure=True)
    y.allow_duplicate_keys = False
    return y


def parse_yaml(text: str, path: str) -> Document:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    # nesting deeper than MAX_DEPTH needs at least MAX_DEPTH flow brackets: count them in C first
    # the top-level block mapping of a config counts as level 1 (a flow ``{`` at the start is level 1)
    start = 0 if text.lstrip().startswith("{") else 1
    deep = (
        bracket_beyond(text, _FLOW_TOKEN, start, MAX_DEPTH) if text.count("[") + text.count("{") >= MAX_DEPTH else None
    )
    if deep is not None:
        raise LoadError(f"nesting deeper than {MAX_DEPTH} levels", path=path, line=deep[0], column=deep[1])
    _refuse_too_many_nodes(text, path)
    try:
        raw = _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        line, col = clamp_to_content(text, line, col)  # '<stream end>' sits after the last newline
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        if "duplicate key" in str(exc).lower():
            key = _dup_key_name(str(exc))
            problem = (
                f"duplicate key {key!r} (YAML forbids it; readers disagree on which value wins)"
                if key
                else "duplicate key (YAML forbids it)"
            )
        raise LoadError(f"invalid YAML: {problem}", path=path, line=line, column=col) from None
    except YAMLError as exc:
        raise LoadError(
            f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", path=path
        ) from None
    except ValueError as exc:  # Python's limit on integer digits (a 5,000-digit number)
        line, col = long_number_at(text)
        detail = str(exc).split(";")[0].split(":")[-1].strip()  # "value has 5000 digits"
        raise LoadError(
            f"a number with more digits than any config value ({detail})", path=path, line=line, column=col
        ) from None
    except RecursionError:  # block nesting (indentation) deeper than the composer's stack
        raise LoadError(f"nesting deeper than {MAX_DEPTH} levels", path=path, line=1, column=1) from None
    if raw is None:
        raise LoadError("empty file: expected a mapping of model keys", path=path, line=1, column=1)
    from ruamel.yaml.comments import CommentedMap

    if not isinstance(raw, CommentedMap):
        raise LoadError(
            f"expected a mapping of model keys at the top level, found {describe_type(raw)}",
            path=path,
            line=1,
            column=1,
        )
    _refuse_alias_bomb(raw, path)
    doc = Document(path=path, text=text, syntax="yaml", data=None)
    budget = [MAX_NODES]
    values = _ValueSpans(text)
    doc.data = _plain(raw, (), doc, budget, 0, values if values.usable else None, False)
    return doc


# Characters ruamel counts as line breaks besides "\n" (its columns restart after them): with any of
# them in the text, line/column → offset would need ruamel's own line table, so no value spans.
_OTHER_BREAKS = re.compile("\r(?!\n)|[\x85\u2028\u2029]")
_FLOW_END = re.compile(r"[ \t]#|[,\]}]")  # in a flow collection a plain scalar also ends before , ] }
_DOUBLE_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')  # on one line
_SINGLE_QUOTED = re.compile(r"'(?:[^'\n]|'')*'")
_NULLS = frozenset(("null", "Null", "NULL", "~"))


class _ValueSpans:
    """Offsets of scalar values from ruamel's (line, column) marks. A value gets offsets only when
    its text is certain: a plain scalar on one line (ends before `` #``, the end of the line, or in
    a flow collection before ``,``/``]``/``}``), or a quoted scalar that closes on its line; never
    a block scalar (``|``/``>``), a tagged, anchored or aliased node, an empty value or a
    collection (their value_start/value_end stay None)."""

    def __init__(self, text: str):
        self.text = text
        self.usable = _OTHER_BREAKS.search(text) is None
        if self.usable:
            self.starts = line_starts(text)

    def scalar(self, line: int, column: int, value, after: int, flow: bool) -> tuple[int | None, int | None]:
        """(value_start, value_end) of the scalar ``value`` whose mark is 0-based (line, column), or
        (None, None) when unsure. The mark must lie after offset ``after`` (its key): an alias's mark
        is its anchor's, elsewhere in the file."""
        if line >= len(self.starts):
            return None, None
        start = self.starts[line] + column
        text = self.text
        if start <= after or start >= len(text):
            return None, None
        c = text[start]
        if c == '"' or c == "'":
            m = (_DOUBLE_QUOTED if c == '"' else _SINGLE_QUOTED).match(text, start)
            if m is None or not isinstance(value, str):
                return None, None
            inner = m.group()[1:-1]
            if c == "'":
                ok = inner.replace("''", "'") == value
            else:  # escapes: the JSON subset of YAML's; any other one leaves the span unknown
                ok = inner == value if "\\" not in inner else _json_string(m.group()) == value
            return (start, m.end()) if ok else (None, None)
        if c in "&*!|>[]{},#%@`\n\r":  # anchor, alias, tag, block scalar, collection, comment, empty
            return None, None
        end = text.find("\n", start)  # a plain scalar ends before " #" or the end of its line
        if end < 0:
            end = len(text)
        if flow:
            m = _FLOW_END.search(text, start, end)
            if m is not None:
                end = m.start()
        else:
            for stop in (" #", "\t#"):
                at = text.find(stop, start, end)
                if at >= 0:
                    end = at
        while end > start and text[end - 1] in " \t\r":
            end -= 1
        if end == start:
            return None, None
        seg = text[start:end]
        if isinstance(value, str):
            ok = seg == value  # a multi-line plain scalar is longer than its first line
        elif value is None:
            ok = seg in _NULLS  # an empty value's mark is the next token's
        else:  # numbers and booleans are one token (a folded multi-line scalar would be a string)
            ok = " " not in seg and "\t" not in seg
        return (start, end) if ok else (None, None)


def _json_string(quoted: str):
    import json

    try:
        return json.loads(quoted)
    except ValueError:
        return None


# Quoted scalars, comments and flow brackets, for a nesting pre-scan in C speed (ruamel's scanner
# is quadratic in the depth of flow brackets: 2,000 "[" took 10 s to end in a RecursionError).
_FLOW_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|(?<![^\s\[{,:])\'[^\'\n]*\'|(?<!\S)#[^\n]*|[\[\]{}]')


def _refuse_alias_bomb(raw, path: str) -> None:
    """Count the values the document expands to, sharing the count of aliased nodes (the same
    Python object), so an alias bomb is refused in time proportional to its text."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    sizes: dict[int, int] = {}

    def size(node, depth: int) -> int:
        if not isinstance(node, (CommentedMap, CommentedSeq)):
            return 1
        known = sizes.get(id(node))
        if known is not None:
            return known
        if depth > MAX_DEPTH:  # deeper than any accepted document; _plain reports where
            return 1
        sizes[id(node)] = 1  # a recursive alias counts once while it is being measured
        children = node.values() if isinstance(node, CommentedMap) else node
        n = 1 + sum(size(v, depth + 1) for v in children)
        sizes[id(node)] = n
        return n

    total = 1
    for k, v in raw.items():
        total += 1 + size(v, 1)
        if total > MAX_NODES:
            try:
                line, col = raw.lc.key(k)
                line, col = line + 1, col + 1
            except (KeyError, TypeError, AttributeError):
                line = col = None
            raise LoadError(
                f"YAML expands to more than {MAX_NODES:,} values (alias bomb?)", path=path, line=line, column=col
            )


def _dup_key_name(message: str) -> str | None:
    m = re.search(r'found duplicate key "([^"]*)"', message)
    return m.group(1) if m else None


def _plain(
    node, path: tuple, doc: Document, budget: list, depth: int, values: _ValueSpans | None = None, flow: bool = False
):
    """Plain data of ``node``; records the position of each key (and, through ``values``, the
    offsets of each scalar value) in ``doc.spans``. ``flow``: inside a flow collection."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    budget[0] -= 1
    if budget[0] < 0:
        line, col = doc.location(path)
        raise LoadError(
            f"YAML expands to more than {MAX_NODES:,} values (alias bomb?)", path=doc.path, line=line, column=col
        )
    if depth >= MAX_DEPTH and isinstance(node, (CommentedMap, CommentedSeq)):
        line, col = doc.location(path)
        raise LoadError(f"nesting deeper than {MAX_DEPTH} levels", path=doc.path, line=line, column=col)
    if isinstance(node, CommentedMap):
        flow = flow or bool(node.fa.flow_style())
        out = {}
        for k, v in node.items():
            key = k if isinstance(k, (str, int)) else str(k)
            sub = path + (key,)
            try:
                kl, kc = node.lc.key(k)
                span = doc.spans[sub] = Span(kl + 1, kc + 1)
            except (KeyError, TypeError, AttributeError):
                span = None
            if span is not None and values is not None and not isinstance(v, (CommentedMap, CommentedSeq)):
                try:
                    vl, vc = node.lc.value(k)
                except (KeyError, TypeError, AttributeError):
                    pass
                else:
                    span.value_start, span.value_end = values.scalar(vl, vc, v, values.starts[kl] + kc, flow)
            out[key] = _plain(v, sub, doc, budget, depth + 1, values, flow)
        return out
    if isinstance(node, CommentedSeq):
        flow = flow or bool(node.fa.flow_style())
        out_list = []
        for i, v in enumerate(node):
            sub = path + (i,)
            try:
                il, ic = node.lc.item(i)
                span = doc.spans[sub] = Span(il + 1, ic + 1)
            except (KeyError, TypeError, AttributeError, IndexError):
                span = None
            if span is not None and values is not None and not isinstance(v, (CommentedMap, CommentedSeq)):
                span.value_start, span.value_end = values.scalar(il, ic, v, -1, flow)
            out_list.append(_plain(v, sub, doc, budget, depth + 1, values, flow))
        return out_list
    return _scalar(node)


def _scalar(v):
    # ruamel's ScalarInt/ScalarFloat/ScalarBoolean/… subclasses → plain Python values.
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        if type(v).__name__ == "ScalarBoolean":
            return bool(v)
        return int(v)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return str(v)
    # Tagged scalars, timestamps, …: keep their text.
    return str(v)
