"""Apply fixes to the original text, changing only the values they target.

JSON: each edited value is spliced at its recorded position (colint.loading's JSON reader
keeps value offsets), so key order, indentation and every other byte stay as they were; a
key the file lacks is inserted after the last member of its mapping, indented like its
siblings. YAML: scalar values are spliced the same way, at the offsets the YAML loader records
(comments and formatting untouched); anything a splice cannot express (a new key, a value
whose extent the loader left unknown, a mapping or list) goes through ruamel.yaml's round
trip, which preserves comments and key order. colint.fixing.edited_document builds the Document of an
edited YAML file in memory, without parsing it again (``colint suggest``'s probes).
The fixed text is written by colint.util.fileio.write_atomic (a temporary file, then ``os.replace``).
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from typing import Any

from colint.errors import ColintError
from colint.findings import Edit, Fix
from colint.loading import Document, load_text
from colint.loading.document import line_column, line_starts
from colint.loading.spliced import remember
from colint.loading.yaml_loader import parse_yaml
from colint.util.escape import control
from colint.util.records import dataclass

_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_key(key: str) -> tuple:
    """``text_config.layers[3].x`` → ``("text_config", "layers", 3, "x")``."""
    out: list = []
    for name, index in _PATH_PART.findall(key):
        out.append(int(index) if index else name)
    return tuple(out)


def _json_literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)  # never write bare NaN/Infinity


def apply_edits(doc: Document, edits: list[Edit]) -> str:
    if not edits:
        return doc.text
    if doc.syntax == "json":
        return _apply_json(doc, edits)
    return _apply_yaml(doc, edits)


def _json_splices(doc: Document, edits: list[Edit]) -> list[tuple[int, int, str]]:
    """(start, end, new text) per edit: the value's recorded span, or an insertion after the last
    member of its mapping (edits adding keys to one mapping share one insertion)."""
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
    return splices


def _apply_json(doc: Document, edits: list[Edit]) -> str:
    text = doc.text
    splices = _json_splices(doc, edits)
    for start, end, new in sorted(splices, key=lambda s: s[0], reverse=True):
        text = text[:start] + new + text[end:]
    remember(doc, splices, text)  # loading it again (the advice closure's re-check) moves doc's positions
    return text


def _json_insert(doc: Document, parent: tuple, group: list[Edit]) -> tuple[int, int, str]:
    node = doc.get(parent)
    if not isinstance(node, dict):
        raise ColintError(f"cannot add {group[0].key}: its parent is not a mapping", path=doc.path)
    # Position after the last member's value (or after the opening brace of an empty mapping).
    members = [parent + (k,) for k in node]
    spans = [sp for sp in (doc.span(p) for p in members) if sp is not None]
    if spans:
        last = max(spans, key=lambda s: s.value_end or 0)
        at = last.value_end
        assert at is not None  # a JSON member's span always has its value's end (json_loader)
        indent = " " * (last.column - 1)
        line_start = doc.text.rfind("\n", 0, at)
        multiline = "\n" in doc.text[line_start:at] or doc.text.count("\n") > 1
        sep = (_newline(doc.text) + indent) if multiline else " "
        new = "".join(f",{sep}{_json_literal(e.key.split('.')[-1])}: {_json_literal(e.new)}" for e in group)
        return at, at, new
    span = doc.span(parent)
    start = (span.value_start if span and span.value_start is not None else doc.text.index("{")) + 1
    new = ", ".join(f"{_json_literal(e.key.split('.')[-1])}: {_json_literal(e.new)}" for e in group)
    return start, start, new


def _newline(text: str) -> str:
    """The file's line ending: CRLF when most of its lines end so, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


# A string written without quotes: starts with a letter or "_", no YAML indicator inside, and not a
# word that YAML 1.1 readers (PyYAML, OmegaConf) resolve to a boolean or null.
_YAML_PLAIN_STR = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-./]*$")
_YAML11_WORDS = frozenset(("y", "n", "yes", "no", "on", "off", "true", "false", "null"))


def yaml_literal(value: Any) -> str | None:
    """``value`` as a one-line YAML scalar that reads back as the same value in block and flow
    context; None for a mapping or list (those go through the round trip)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, str):
        if _YAML_PLAIN_STR.match(value) and value.lower() not in _YAML11_WORDS:
            return value
        return json.dumps(value)  # a JSON string is a valid YAML double-quoted scalar (ASCII: no odd line breaks)
    return None


def yaml_splice(doc: Document, edit: Edit) -> tuple[int, int, str] | None:
    """(start, end, new text) replacing ``edit``'s value in a YAML document, from the value span the
    loader recorded; None when the value's extent is unknown (block scalar, collection, anchor,
    multi-line, missing key) or the new value is a collection."""
    span = doc.span(parse_key(edit.key))
    if span is None or span.value_start is None or span.value_end is None:
        return None
    new = yaml_literal(edit.new)
    return None if new is None else (span.value_start, span.value_end, new)


@dataclass(frozen=True)
class TextEdit:
    """One replacement of the original text: offsets, the new text, and its 1-based region."""

    start: int
    end: int
    text: str
    start_line: int
    start_column: int
    end_line: int
    end_column: int


def text_edits(doc: Document | None, fix: Fix) -> tuple[TextEdit, ...] | None:
    """``fix`` as replacements of the original text, exactly what ``--fix`` splices; None when one
    of its edits is written only by the YAML round trip (a new key, a collection, an unknown extent).
    Reporters that show fixes in place (SARIF) read these instead of the key edits."""
    if doc is None or not fix.edits:
        return None
    if doc.syntax == "json":
        try:
            splices = _json_splices(doc, list(fix.edits))
        except ColintError:  # the new key's parent is not a mapping
            return None
    else:
        splices = []
        for e in fix.edits:
            s = yaml_splice(doc, e)
            if s is None:
                return None
            splices.append(s)
    starts = line_starts(doc.text)
    out = []
    for start, end, new in splices:
        sl, sc = line_column(starts, start)
        el, ec = line_column(starts, end)
        out.append(TextEdit(start, end, new, sl, sc, el, ec))
    return tuple(out)


def splice(text: str, splices: list[tuple[int, int, str]]) -> str:
    parts = []
    at = 0
    for start, end, new in sorted(splices):
        parts += [text[at:start], new]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _apply_yaml(doc: Document, edits: list[Edit]) -> str:
    """Splice every value whose span the loader recorded, and write every new key of a block mapping as one
    line after the mapping's last member; the rest (a value whose extent is unknown, a collection, a key of a
    flow mapping) goes through ruamel's round trip of the spliced text, whose untouched lines are then put
    back (:func:`_keep_untouched`)."""
    splices = []
    rest = []
    for e in edits:
        s = yaml_splice(doc, e)
        if s is None:
            rest.append(e)
        else:
            splices.append(s)
    inserts = [(e, _yaml_insert(doc, e)) for e in rest]
    placed = [at for _, at in inserts if at is not None]
    if inserts and len(placed) == len(inserts):
        text = splice(doc.text, splices + placed)
        if _reads_as_edited(doc, text, edits):
            return text
    text = splice(doc.text, splices)
    if rest:
        text = _yaml_round_trip(text, rest)
    return text


def _yaml_insert(doc: Document, edit: Edit) -> tuple[int, int, str] | None:
    """(offset, offset, "key: value" line) adding ``edit``'s key to its block mapping after the mapping's last
    member, indented like its members, with the file's line ending; None when the key exists, its parent is
    not a mapping with located block-style members, or the key or value needs more than a plain line."""
    path = parse_key(edit.key)
    parent, key = path[:-1], path[-1]
    node = doc.get(parent)
    literal = yaml_literal(edit.new)
    if (
        not isinstance(node, dict)
        or key in node
        or not node
        or literal is None
        or not isinstance(key, str)
        or not _YAML_PLAIN_STR.match(key)
        or key.lower() in _YAML11_WORDS
    ):
        return None
    if not parent and doc.text.lstrip().startswith("{"):
        return _yaml_flow_insert(doc.text, key, literal)
    spans = [sp for sp in (doc.span(parent + (k,)) for k in node) if sp is not None]
    if len(spans) != len(node):  # a member without a position
        return None
    lines = doc.text.split("\n")
    column = min(sp.column for sp in spans)
    if any(sp.column != column for sp in spans):
        return None
    last = max(sp.line for sp in spans) - 1  # 0-based line of the last member's key
    key_line = lines[last]
    indent = key_line[: column - 1]
    if indent.strip() or key_line[column - 1 :].startswith(("{", "[", "-")) or "{" in key_line[: column - 1]:
        return None  # a flow mapping, or a member that shares its line with a list dash
    end = last  # the last line of that member's value: deeper-indented or blank/comment lines that follow
    for i in range(last + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(lines[i]) - len(lines[i].lstrip(" ")) < column:
            break
        end = i
    nl = _newline(doc.text)
    offset = sum(len(x) + 1 for x in lines[: end + 1])
    if offset > len(doc.text):  # the member is on the last line, which has no line break
        return len(doc.text), len(doc.text), f"{nl}{indent}{key}: {literal}"
    return offset, offset, f"{indent}{key}: {literal}{nl}"


_COMMENT = re.compile(r"(^|[ \t])#[^\"']*$")  # a trailing comment with no quote in it (a '#' in a string stays)


def _yaml_flow_insert(text: str, key: str, literal: str) -> tuple[int, int, str] | None:
    """The insert of ``"key": literal`` as a new last member of a document that is one flow mapping (GPT-NeoX's
    JSON-with-comments YAML): after the last member, before the closing brace, on its own line."""
    close = text.rfind("}")
    if close < 0 or any(x.strip() and not x.strip().startswith("#") for x in text[close + 1 :].split("\n")):
        return None
    lines = text[:close].split("\n")
    for i in range(len(lines) - 1, -1, -1):
        line_start = sum(len(x) + 1 for x in lines[:i])
        content = _COMMENT.sub(r"\1", lines[i]).rstrip()
        if content.strip():
            end = line_start + len(content)
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            sep = "" if content.endswith((",", "{")) else ","
            return end, end, f"{sep}{_newline(text)}{indent}{json.dumps(key)}: {literal}"
    return None


def _reads_as_edited(doc: Document, text: str, edits: list[Edit]) -> bool:
    """Whether ``text`` reads as ``doc``'s data with exactly ``edits`` applied (the check of a textual insert)."""
    import copy

    try:
        got = parse_yaml(text, doc.path).data
        raw = parse_yaml(doc.text, doc.path).data
    except ColintError:
        return False
    want = copy.deepcopy(raw)
    for e in edits:
        node = want
        path = parse_key(e.key)
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = e.new
    return got == want


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
    return _keep_untouched(text, buf.getvalue())


MAX_REVERT_HUNKS = 2_000  # each tried revert parses the file once (libyaml: ~1 ms for a config)


def _yaml_data(text: str):

    try:
        return parse_yaml(text, "<fix>").data
    except ColintError:
        return None


def _keep_untouched(before: str, after: str) -> str:
    """ruamel's output with every line it changed but did not need to put back as it was: the round trip
    re-flows flow lists and spacing and writes LF everywhere; a changed block is restored when the file
    still reads as the edited data without it. Lines it must change are written with the file's line
    ending, and every other line keeps its bytes."""
    old = _lines(before)
    old_bare = [line.rstrip("\n").removesuffix("\r") for line in old]
    new_bare = [line.rstrip("\n") for line in _lines(after)]
    nl = _newline(before)
    ops: list[tuple[str, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_bare, new_bare, autojunk=False).get_opcodes():
        if tag != "replace":
            ops.append((tag, i1, i2, j1, j2))
            continue
        pairs = min(i2 - i1, j2 - j1)  # line against line, then what is left: each undone on its own
        ops += [("replace", i1 + k, i1 + k + 1, j1 + k, j1 + k + 1) for k in range(pairs)]
        if i2 - i1 > pairs or j2 - j1 > pairs:
            ops.append(("replace", i1 + pairs, i2, j1 + pairs, j2))

    def build(keep: list[bool]) -> str:
        out = []
        for (tag, i1, i2, j1, j2), original in zip(ops, keep):
            if tag == "equal" or original:
                out += old[i1:i2]
            else:
                out += [line + nl for line in new_bare[j1:j2]]
        text = "".join(out)
        return text if before.endswith("\n") or not text.endswith(nl) or (keep and keep[-1]) else text[: -len(nl)]

    keep = [tag == "equal" for tag, *_ in ops]
    changed = [i for i, k in enumerate(keep) if not k]
    target = _yaml_data(after)
    if target is None or len(changed) > MAX_REVERT_HUNKS:
        return build(keep)
    fast = _fast_yaml_data()  # libyaml (C) for the trials; ruamel checks the result once
    fast_target = fast(after) if fast else None
    for i in changed:
        trial = list(keep)
        trial[i] = True
        if fast_target is not None:
            ok = fast(build(trial)) == fast_target
        else:
            ok = _yaml_data(build(trial)) == target
        if ok:
            keep = trial
    out = build(keep)
    return out if fast_target is None or _yaml_data(out) == target else build([t == "equal" for t, *_ in ops])


def _fast_yaml_data():
    """A C-speed YAML reader for comparing trial texts (PyYAML's libyaml loader), or None."""
    try:
        import yaml

        loader = yaml.CSafeLoader
    except (ImportError, AttributeError):
        return None

    def read(text: str):
        try:
            return yaml.load(text, Loader=loader)  # noqa: S506 - CSafeLoader is the safe loader
        except yaml.YAMLError:
            return None

    return read


def fixed_text(doc: Document, fixes: list[Fix]) -> str:
    edits = [e for fx in fixes for e in fx.edits]
    new = apply_edits(doc, edits)
    # The result must still load: a fix never leaves a file colint cannot read.
    load_text(new, doc.path, syntax=doc.syntax)
    return new


def _lines(text: str) -> list[str]:
    """Lines ended by "\n" only, each with its ending (as `patch` reads a file: str.splitlines would also break
    at \r, \x0c, \u2028 ... and make a diff that does not apply)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def unified_diff(path: str, old: str, new: str) -> str:
    """A unified diff that `patch -p1` applies byte for byte: CRLF endings kept in the lines, and a last line
    without a newline marked with ``\\ No newline at end of file``."""
    path = control(path)  # a header line must stay one line
    a, b = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), fromfile=a, tofile=b):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
