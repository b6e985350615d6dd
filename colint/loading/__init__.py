"""Loading: file → :class:`Document` (values plus the position of every key).

``load(path)`` reads bytes, refuses what cannot be a config (too large, binary, not UTF-8),
strips a BOM, picks JSON or YAML by extension (YAML for anything that is not ``.json``), and
resolves ``${...}`` interpolations. Every failure is a :class:`~colint.errors.LoadError`
with file, line and column.
"""

from __future__ import annotations

from colint.errors import LoadError
from colint.util.fileio import read_limited
from colint.loading.document import Document, Path, Span, format_path, refuse_huge_numbers
from colint.loading.interpolation import resolve_document
from colint.loading.json_loader import parse_json
from colint.loading.spliced import scanned, spliced_document

MAX_BYTES = 8 * 1024 * 1024  # real configs are < 100 kB; refuse anything larger than 8 MiB
# ruamel.yaml's pure-Python round-trip loader takes ~10 µs per byte here (measured: 138 kB in 1.4 s),
# so YAML gets a lower limit that bounds a load at a few seconds; real YAML model configs are < 50 kB.
MAX_YAML_BYTES = 512 * 1024

__all__ = ["Document", "Path", "Span", "format_path", "load", "load_text", "MAX_BYTES", "MAX_YAML_BYTES"]


def _syntax(path: str) -> str:
    return "json" if path.lower().endswith(".json") else "yaml"


def _limit(path: str, syntax: str | None = None) -> tuple[int, str]:
    if (syntax or _syntax(path)) == "json":
        return MAX_BYTES, " for a JSON config"
    return MAX_YAML_BYTES, " for a YAML config"


def _check_size(size: int, path: str, syntax: str | None = None) -> None:
    """Standard input has no size to look at before reading: its bytes are measured instead."""
    limit, limit_for = _limit(path, syntax)
    if size > limit:
        raise LoadError(
            f"file is {size:,} bytes, over the {limit:,}-byte limit{limit_for}", path=path, line=1, column=1
        )


def load(path: str) -> Document:

    limit, limit_for = _limit(path)
    # non-blocking open, fstat before any read: a FIFO never blocks, a device or a huge file is never read
    raw = read_limited(path, limit, LoadError, limit_for=limit_for, noun="config file")
    return load_bytes(raw, path)


def load_bytes(raw: bytes, path: str, syntax: str | None = None) -> Document:
    _check_size(len(raw), path, syntax)
    nul = raw.find(b"\x00")
    if 0 <= nul < 8192:  # near the start: a binary file (an image, UTF-16 text)
        raise LoadError("binary file (NUL bytes), not a JSON or YAML config", path=path, line=1, column=1)
    if nul >= 0:  # later: located (ruamel's own error had no position)
        line = raw.count(b"\n", 0, nul) + 1
        column = nul - (raw.rfind(b"\n", 0, nul) + 1) + 1  # in bytes
        raise LoadError("NUL byte in the text, not a JSON or YAML config", path=path, line=line, column=column)
    notes = []
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
        notes.append("UTF-8 byte-order mark ignored")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1  # in bytes
        raise LoadError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", path=path, line=line, column=column
        ) from None
    doc = load_text(text, path, syntax)
    doc.notes[:0] = notes
    doc.bom = bool(notes)
    return doc


def load_text(text: str, path: str, syntax: str | None = None) -> Document:
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise LoadError("empty file: expected a mapping of model keys", path=path, line=1, column=1)
    if syntax is None:
        syntax = _syntax(path)
    if syntax == "json":
        doc = spliced_document(text, path)  # a fix spliced into a loaded file: its positions moved, not re-scanned
        if doc is not None:
            resolve_document(doc)
            return doc
        doc = parse_json(text, path)  # refuses integers no float holds itself, where a literal is long enough
    else:
        from colint.loading.yaml_loader import parse_yaml

        doc = parse_yaml(text, path)
        refuse_huge_numbers(doc)
    resolve_document(doc)
    if syntax == "json":
        scanned(doc)
    return doc
