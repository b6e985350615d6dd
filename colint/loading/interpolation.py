"""Resolve OmegaConf-style ``${...}`` interpolations (NeMo, OLMo trainer configs) offline.

Supported: absolute ``${a.b}``, relative ``${.key}`` / ``${..key}``, the resolvers NeMo
registers for model sizes (``multiply``, ``divide``, ``add``, ``subtract``, ``int_div``) and
``oc.env``/``oc.select`` with a default. Anything else — an environment variable without a
default, a key that does not exist, a cycle — stays unresolved: the value becomes ``None``
and ``Document.unresolved`` records the original text, so that an adapter that needs the
value can say exactly which key and which interpolation it could not read.
``Document.interpolations`` keeps the text of every interpolation (resolved or not), so that an
edited copy of the document can be resolved again without parsing the file.
"""

from __future__ import annotations

import re

from colint.loading.document import Document

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
    for path, text in targets:
        try:
            value = _resolve_value(doc, path, text, depth=0)
        except _Unresolved:
            doc.unresolved[path] = text
            _set(doc.data, path, None)
            continue
        _set(doc.data, path, value)
        resolved += 1
    if resolved:
        doc.notes.append(f"resolved {resolved} ${{...}} interpolation(s)")


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
    if depth > 20:
        raise _Unresolved
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
        out += str(_resolve_expr(doc, path, text[j + 2:k].strip(), depth))
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
                return _ARITH[name](a, b)
            except ZeroDivisionError:
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
        value = _resolve_value(doc, target, value, depth + 1)
    return value
