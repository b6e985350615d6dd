"""Resolve OmegaConf-style ``${...}`` interpolations (NeMo, OLMo trainer configs) offline.

Supported: absolute ``${a.b}``, relative ``${.key}`` / ``${..key}``, the resolvers NeMo
registers for model sizes (``multiply``, ``divide``, ``add``, ``subtract``, ``int_div``) and
``oc.env``/``oc.select`` with a default. Anything else — an environment variable without a
default, a key that does not exist, a cycle — stays unresolved: the value becomes ``None``
and ``Document.unresolved`` records the original text, so that an adapter that needs the
value can say exactly which key and which interpolation it could not read.
``Document.interpolations`` keeps the text of every interpolation (resolved or not), so that an
edited copy of the document can be resolved again without parsing the file.

Work is bounded (a config comes from an untrusted pull request): every key's value is resolved
once and remembered (a chain of keys that each repeat the previous one three times is linear, not
exponential), and a document may evaluate at most ``MAX_EVALUATIONS`` expressions, nest at most
``MAX_DEPTH`` references, build no string longer than ``MAX_EXPANSION_CHARS`` and no number beyond
``MAX_MAGNITUDE``. Going past a limit is a located :class:`~colint.errors.LoadError`, not a guess.
"""

from __future__ import annotations

import math
import re

from colint.errors import LoadError
from colint.loading.document import Document, format_path

MAX_DEPTH = 20  # nested references; real NeMo configs chain 2-3
MAX_EVALUATIONS = 20_000  # expressions per document; a NeMo config has < 100
MAX_EXPANSION_CHARS = 65_536  # characters of one resolved string; real ones are a few dozen
MAX_MAGNITUDE = 1 << 63  # an interpolated number beyond a signed 64-bit integer is no model size

_FULL = re.compile(r"^\$\{(.*)\}$", re.S)
_ARITH = {
    "multiply": lambda a, b: a * b,
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "divide": lambda a, b: a / b,
    "int_div": lambda a, b: a // b,
    "floor_div": lambda a, b: a // b,
}


class _Unresolved(Exception):
    pass


class _Budget(Exception):
    """A work limit was reached: the message says which."""


class _State:
    """The memo of resolved keys and the work done so far, for one document."""

    def __init__(self) -> None:
        self.memo: dict = {}  # path -> resolved value, or _Unresolved when it cannot be resolved
        self.active: set = set()  # paths being resolved now (a reference back to one is a cycle)
        self.evaluations = 0

    def tick(self) -> None:
        self.evaluations += 1
        if self.evaluations > MAX_EVALUATIONS:
            raise _Budget(f"more than {MAX_EVALUATIONS:,} evaluations")


def _bounded(value):
    """``value`` when it is within the size limits of a resolved value, else _Budget."""
    if isinstance(value, str) and len(value) > MAX_EXPANSION_CHARS:
        raise _Budget(f"a value longer than {MAX_EXPANSION_CHARS:,} characters")
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) >= MAX_MAGNITUDE:
        raise _Budget(f"a number beyond {MAX_MAGNITUDE:.3g}")
    if isinstance(value, float) and (not math.isfinite(value) or abs(value) >= MAX_MAGNITUDE):
        raise _Budget(f"the number {value!r}")
    return value


def has_interpolation(value) -> bool:
    return isinstance(value, str) and "${" in value


# how "$" can be written in a JSON or YAML string: a text with none of these has no "${" in any value
_DOLLAR = ("$", "\\u0024", "\\x24", "\\U00000024")


def resolve_document(doc: Document) -> None:
    if not any(s in doc.text for s in _DOLLAR):
        doc.interpolations = {}
        return  # most configs: no walk over every value
    targets = [(p, v) for p, v in doc.walk() if has_interpolation(v)]
    doc.interpolations = dict(targets)
    if not targets:
        return
    resolved = 0
    state = _State()
    doc._interp_state = state
    try:
        for path, text in targets:
            try:
                value = _resolve_path(doc, path, text)
            except _Unresolved:
                doc.unresolved[path] = text
                continue
            except _Budget as exc:
                line, col = doc.location(path)
                raise LoadError(
                    f"interpolation {_short(text)} at '{format_path(path)}' needs too much work to resolve ({exc})",
                    path=doc.path,
                    line=line,
                    column=col,
                    key=format_path(path),
                ) from None
            resolved += 1
    finally:
        doc._interp_state = None
    for path, _text in targets:  # set afterwards: every lookup above read the file's own text or the memo
        value = state.memo.get(path, _Unresolved)
        _set(doc.data, path, None if value is _Unresolved else value)
    if resolved:
        doc.notes.append(f"resolved {resolved} ${{...}} interpolation(s)")


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _resolve_path(doc: Document, path: tuple, text):
    """The value of the key at ``path`` whose text is ``text``, resolved once per document."""
    state = doc._interp_state
    known = state.memo.get(path)
    if known is _Unresolved:
        raise _Unresolved
    if known is not None or path in state.memo:
        return known
    if path in state.active:  # a cycle
        raise _Unresolved
    if len(state.active) >= MAX_DEPTH:
        raise _Budget(f"references nested more than {MAX_DEPTH} deep")
    state.active.add(path)
    try:
        value = _bounded(_resolve_value(doc, path, text, 0))
    except _Unresolved:
        state.memo[path] = _Unresolved
        raise
    finally:
        state.active.discard(path)
    state.memo[path] = value
    return value


def _set(data, path, value):
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _split_top(s: str, sep: str = ",") -> list[str]:
    parts, depth, cur = [], 0, ""
    i = 0
    while i < len(s):
        if s.startswith("${", i):
            depth += 1
            cur += "${"
            i += 2
            continue
        ch = s[i]
        if ch == "}" and depth:
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    parts.append(cur)
    return [p.strip() for p in parts]


def _find_close(s: str, start: int) -> int:
    depth = 0
    i = start
    while i < len(s):
        if s.startswith("${", i):
            depth += 1
            i += 2
            continue
        if s[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise _Unresolved


def _resolve_value(doc: Document, path: tuple, text, depth: int):
    if depth > MAX_DEPTH:
        raise _Budget(f"expressions nested more than {MAX_DEPTH} deep")
    doc._interp_state.tick()
    if not isinstance(text, str) or "${" not in text:
        return text
    m = _FULL.match(text.strip())
    if m and _find_close(text.strip(), 0) == len(text.strip()) - 1:
        return _resolve_expr(doc, path, m.group(1).strip(), depth)
    # String with embedded interpolations.
    out, i = "", 0
    while True:
        j = text.find("${", i)
        if j < 0:
            out += text[i:]
            return out
        out += text[i:j]
        k = _find_close(text, j)
        out += str(_resolve_expr(doc, path, text[j + 2 : k].strip(), depth))
        _bounded(out)
        i = k + 1


def _literal(doc, path, arg: str, depth: int):
    arg = arg.strip()
    if arg.startswith("${"):
        return _resolve_value(doc, path, arg, depth + 1)
    try:
        return int(arg)
    except ValueError:
        pass
    try:
        return float(arg)
    except ValueError:
        pass
    if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "'\"":
        return arg[1:-1]
    if arg in ("null", "None"):
        return None
    return arg


def _resolve_expr(doc: Document, path: tuple, expr: str, depth: int):
    if ":" in expr.split(",")[0] and not expr.startswith("."):
        name, _, rest = expr.partition(":")
        name = name.strip()
        args = _split_top(rest)
        if name in _ARITH:
            if len(args) != 2:
                raise _Unresolved
            a, b = (_literal(doc, path, x, depth) for x in args)
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
                raise _Unresolved
            try:
                return _bounded(_ARITH[name](a, b))
            except (ZeroDivisionError, OverflowError):
                raise _Unresolved from None
        if name in ("oc.env", "env", "oc.select", "oc.decode"):
            if name == "oc.select" and args:
                try:
                    return _lookup(doc, path, args[0], depth)
                except _Unresolved:
                    pass
            if len(args) >= 2:
                return _literal(doc, path, args[1], depth)
            raise _Unresolved
        raise _Unresolved
    return _lookup(doc, path, expr, depth)


def _lookup(doc: Document, path: tuple, ref: str, depth: int):
    if ref.startswith("."):
        dots = len(ref) - len(ref.lstrip("."))
        base = path[:-1]  # the mapping that holds this key
        base = base[: len(base) - (dots - 1)] if dots > 1 else base
        rest = ref[dots:]
    else:
        base, rest = (), ref
    target = base + tuple(p for p in rest.split(".") if p)
    sentinel = object()
    value = doc.get(target, sentinel)
    if value is sentinel:
        raise _Unresolved
    if has_interpolation(value):
        value = _resolve_path(doc, target, value)
    return value
