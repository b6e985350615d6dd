"""Loading: file → :class:`Document` (values plus the position of every key).

``load(path)`` reads bytes, refuses what cannot be a config (too large, binary, not UTF-8),
strips a BOM, picks JSON or YAML by extension (YAML for anything that is not ``.json``), and
resolves ``${...}`` interpolations. Every failure is a :class:`~colint.errors.LoadError`
with file, line and column.
"""

from __future__ import annotations

import os

from colint.errors import LoadError
from colint.loading.document import Document, Path, Span, format_path

MAX_BYTES = 8 * 1024 * 1024  # real configs are < 100 kB; refuse anything larger than 8 MiB

__all__ = ["Document", "Path", "Span", "format_path", "load", "load_text", "MAX_BYTES"]


def load(path: str) -> Document:
    try:
        if os.path.isdir(path):
            raise LoadError("is a directory, not a config file", path=path)
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise LoadError(f"file is {size:,} bytes, over the {MAX_BYTES:,}-byte limit for a config", path=path)
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except LoadError:
        raise
    except FileNotFoundError:
        raise LoadError("no such file", path=path) from None
    except PermissionError:
        raise LoadError("permission denied", path=path) from None
    except OSError as exc:
        raise LoadError(f"cannot read: {exc.strerror or exc}", path=path) from None
    return load_bytes(raw, path)


def load_bytes(raw: bytes, path: str) -> Document:
    if b"\x00" in raw[:8192]:
        raise LoadError("binary file (NUL bytes), not a JSON or YAML config", path=path, line=1, column=1)
    notes = []
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
        notes.append("UTF-8 byte-order mark ignored")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise LoadError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
                        path=path, line=line) from None
    doc = load_text(text, path)
    doc.notes[:0] = notes
    return doc


def load_text(text: str, path: str, syntax: str | None = None) -> Document:
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise LoadError("empty file: expected a mapping of model keys", path=path, line=1, column=1)
    if syntax is None:
        syntax = "json" if path.lower().endswith(".json") else "yaml"
    if syntax == "json":
        from colint.loading.json_loader import parse_json

        doc = parse_json(text, path)
    else:
        from colint.loading.yaml_loader import parse_yaml

        doc = parse_yaml(text, path)
    from colint.loading.interpolation import resolve_document

    resolve_document(doc)
    return doc
