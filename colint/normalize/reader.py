"""Typed, located reads of config keys for the adapters.

``Reader.int("intermediate_size", "ffn.intermediate_size")`` returns the value, records
where it came from in ``reader.sources`` (for findings and fixes), and turns every bad value
— a string, a float, a boolean, zero, a negative or absurdly large size, an unresolved
``${...}`` — into a :class:`~colint.errors.SpecError` that names file, line and key.
"""

from __future__ import annotations

import builtins
import math
from typing import Any
from collections.abc import Iterable

from colint.errors import SpecError
from colint.loading.document import Document, format_path
from colint.normalize.model_spec import Source

MISSING = object()
_UNREAD = object()
MAX_DIM = 1 << 40  # no real dimension comes near 10^12; larger values are typos or overflows
# Counts that size per-layer lists and loops get tighter limits, so that a typo cannot make the
# analysis allocate or iterate for minutes. The deepest published transformer has 1,000 layers
# (DeepNet, arXiv 2203.00555); the most experts, 1,048,576 (PEER, arXiv 2407.04153).
MAX_LAYERS = 100_000
MAX_COUNT = 1 << 20
FIELD_MAXIMUM = {
    "num_layers": MAX_LAYERS,
    "mtp_layers": MAX_LAYERS,
    "first_k_dense_replace": MAX_LAYERS,
    "decoder_sparse_step": MAX_LAYERS,
    "num_heads": MAX_COUNT,
    "num_kv_heads": MAX_COUNT,
    "num_experts": MAX_COUNT,
    "top_k": MAX_COUNT,
    "num_shared_experts": MAX_COUNT,
}


# Every Reader built while ``collect_accessed()`` is active reports the key paths it looks up (present or
# not) there: colint.normalize.unknown_keys compares them with the file's keys for CL007 (unknown-key).
COLLECTORS: list = []


class AccessLog:
    """The key paths the readers of one normalize call looked up, and the first reader's root."""

    def __init__(self) -> None:
        self.paths: set[tuple] = set()
        self.root: tuple | None = None


class collect_accessed:
    """``with collect_accessed() as log: module.normalize(doc)`` -> ``log.paths`` / ``log.root``."""

    def __enter__(self) -> AccessLog:
        self.log = AccessLog()
        COLLECTORS.append(self.log)
        return self.log

    def __exit__(self, *exc) -> None:
        COLLECTORS.remove(self.log)


class Reader:
    def __init__(
        self, doc: Document, prefix: tuple = (), defaults: dict | None = None, aliases: dict | None = None
    ) -> None:
        self.doc = doc
        self._paths: dict = {}  # key as the adapter names it -> its path in the document (one split per key)
        self._values: dict = {}  # key -> its value, or MISSING (the document does not change while it is read)
        self._prefix = tuple(prefix)
        self.defaults = defaults or {}
        self.aliases = aliases or {}  # canonical key -> family key (transformers' attribute_map)
        self.sources: dict[str, Source] = {}
        self._log = COLLECTORS[-1] if COLLECTORS else None
        if self._log is not None and self._log.root is None:
            self._log.root = self._prefix

    @property
    def prefix(self) -> tuple:
        return self._prefix

    @prefix.setter
    def prefix(self, value: tuple) -> None:  # a reader moved to another block (nemotron-nas block_configs[i])
        self._prefix = tuple(value)
        self._paths = {}
        self._values = {}

    # -- locating ----------------------------------------------------------------------------
    # (Hot: an adapter looks up each key several times, ~140 lookups a config. The path of a key is built,
    # and reported to the access log, and its value fetched from the document, once per reader.)
    def path(self, key: str | tuple) -> tuple:
        p = self._paths.get(key)
        if p is None:
            p = self._prefix + (key if isinstance(key, tuple) else tuple(key.split(".")))
            if self._log is not None:
                self._log.paths.add(p)
            self._paths[key] = p
        return p

    def key_name(self, key: str | tuple) -> str:
        return format_path(self.path(key))

    def _value(self, key: str | tuple) -> Any:
        """The value at ``key``, or MISSING where the document does not have it."""
        v = self._values.get(key, _UNREAD)
        if v is _UNREAD:
            v = self._values[key] = self.doc.get(self.path(key), MISSING)
        return v

    def has(self, key: str | tuple) -> bool:
        v = self._value(key)
        return v is not None and v is not MISSING

    def first_present(self, keys: Iterable[str]) -> str | None:
        aliases = self.aliases
        value = self._value
        for k in keys:
            k2 = aliases.get(k, k) if aliases else k
            if k2 != k:
                v = value(k2)
                if v is not None and v is not MISSING:
                    return k2
            v = value(k)
            if v is not None and v is not MISSING:
                return k
        return None

    def located(self, key: str | tuple) -> Source:
        p = self.path(key)
        if self._value(key) is MISSING:
            return Source(key=format_path(p), line=None, column=None, default=True)
        line, col = self.doc.location(p)
        return Source(key=format_path(p), line=line, column=col, default=False)

    def error(self, key: str | tuple, message: str) -> SpecError:
        """A SpecError at ``key``, or (a missing key) at its nearest stated ancestor, or (a key missing from
        the top-level mapping) at line 1, column 1: every error names a place an editor can jump to."""
        p = self.path(key)
        line, col = self.doc.location(p)
        if line is None:
            line, col = 1, 1
        return SpecError(message, path=self.doc.path, line=line, column=col, key=format_path(p))

    def record(self, field: str, key: str | tuple, default: bool = False) -> None:
        if default:
            self.sources[field] = Source(key=self.key_name(key), line=None, column=None, default=True)
        else:
            self.sources[field] = self.located(key)

    def record_derived(self, field: str, key: str | tuple) -> None:
        """``field``'s value is computed from ``key`` (not stated anywhere): point at that key, with its line
        when the file states it (``default=False`` only then), marked ``derived`` so that fixes leave it."""
        src = self.located(key)
        self.sources[field] = Source(key=src.key, line=src.line, column=src.column, default=src.default, derived=True)

    # -- raw access ----------------------------------------------------------------------------
    def raw(self, *keys: str, default: Any = None) -> Any:
        k = self.first_present(keys)
        if k is None:
            return default
        return self._value(k)

    def _unresolved(self, key) -> str | None:
        p = self.path(key)  # looked up even where nothing is unresolved: the access log (CL007) counts it
        return self.doc.unresolved.get(p) if self.doc.unresolved else None

    # -- typed reads ---------------------------------------------------------------------------
    def _null_key(self, keys: tuple) -> str | None:
        """The first of ``keys`` (or its alias) written in the file as an explicit null."""
        for k in keys:
            for cand in (self.aliases.get(k, k), k):
                if self._value(cand) is None:
                    return cand
        return None

    def int(
        self,
        field: str | None,
        *keys: str,
        default: Any = MISSING,
        minimum: int = 1,
        maximum: int | None = None,
        allow_none: bool = False,
    ) -> Any:
        """Read a positive integer (or ``minimum``-bounded) from the first present key.

        An explicit null counts as absent only when the caller says what absent means
        (``default=``, as transformers does for num_key_value_heads); otherwise it is an error,
        as in transformers' typed configs, instead of silently taking the family default."""
        k = self.first_present(keys)
        if k is None:
            unresolved = (
                next((self._unresolved(x) for x in keys if self._unresolved(x)), None) if self.doc.unresolved else None
            )
            if unresolved is not None:
                raise self.error(keys[0], f"interpolation {unresolved} cannot be resolved offline; give the value")
            null = self._null_key(keys) if default is MISSING and not allow_none else None
            if null is not None:
                raise self.error(null, f"'{self.key_name(null)}' must be an integer, got null")
            if default is MISSING:
                d = self.defaults.get(keys[0], MISSING)
                if d is MISSING or d is None:  # a table default of None (DeepseekV2Config's top-k) is no integer
                    raise self.error(
                        keys[0] if not self.prefix else (),
                        f"missing key '{keys[0]}'" if not self.prefix else f"missing key '{self.key_name(keys[0])}'",
                    )
                if isinstance(d, bool) or not isinstance(d, int):  # a family default that is no single size
                    raise self.error(
                        keys[0] if not self.prefix else (),
                        f"missing key '{self.key_name(keys[0])}' (the family's default, {_short_repr(d)}, "
                        "is not one integer: state the value)",
                    )
                default = d
            if field:
                self.record(field, keys[0], default=True)
            return default
        v = self._value(k)
        if v.__class__ is not int:  # bool is a subclass of int, and no integer here
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise self.error(k, f"'{self.key_name(k)}' must be an integer, got {_describe(v)}")
            if isinstance(v, float):
                if not math.isfinite(v) or v != int(v):
                    raise self.error(k, f"'{self.key_name(k)}' must be an integer, got {v!r}")
                v = int(v)
        if v < minimum:
            raise self.error(k, f"'{self.key_name(k)}' must be at least {minimum}, got {v}")
        if maximum is None:
            maximum = FIELD_MAXIMUM.get(field or "", MAX_DIM)
        if v > maximum:
            raise self.error(k, f"'{self.key_name(k)}' is {v:.3g}, beyond any real model (limit {maximum:.3g})")
        if field:
            self.record(field, k)
        return v

    def opt_int(
        self, field: builtins.str | None, *keys: builtins.str, minimum: builtins.int = 0
    ) -> builtins.int | None:
        if self.first_present(keys) is None:
            return None
        return self.int(field, *keys, minimum=minimum)

    def float(self, field: str | None, *keys: str, default: Any = MISSING, minimum: float | None = None) -> Any:
        k = self.first_present(keys)
        if k is None:
            if default is MISSING:
                d = self.defaults.get(keys[0], MISSING)
                if d is MISSING:
                    raise self.error(keys[0], f"missing key '{self.key_name(keys[0])}'")
                default = d
            return default
        v = self._value(k)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.error(k, f"'{self.key_name(k)}' must be a finite number, got {_describe(v)}")
        if minimum is not None and v < minimum:
            raise self.error(k, f"'{self.key_name(k)}' must be at least {minimum}, got {v}")
        if field:
            self.record(field, k)
        return float(v)

    def bool(self, field: str | None, *keys: str, default: Any = MISSING) -> Any:
        k = self.first_present(keys)
        if k is None:
            if default is MISSING:
                default = self.defaults.get(keys[0], False)
            return default
        v = self._value(k)
        if not isinstance(v, bool):
            raise self.error(k, f"'{self.key_name(k)}' must be true or false, got {_describe(v)}")
        if field:
            self.record(field, k)
        return v

    def str(self, field: str | None, *keys: str, default: Any = None) -> Any:
        k = self.first_present(keys)
        if k is None:
            return self.defaults.get(keys[0], default) if default is None else default
        v = self._value(k)
        if not isinstance(v, str):
            raise self.error(k, f"'{self.key_name(k)}' must be a string, got {_describe(v)}")
        if field:
            self.record(field, k)
        return v

    def list(self, field: builtins.str | None, *keys: builtins.str) -> builtins.list | None:
        k = self.first_present(keys)
        if k is None:
            return None
        v = self._value(k)
        if not isinstance(v, list):
            raise self.error(k, f"'{self.key_name(k)}' must be a list, got {_describe(v)}")
        if field:
            self.record(field, k)
        return v

    def sub(self, key: builtins.str) -> Reader:
        """A reader rooted at a nested mapping (``text_config``, ``ffn_config``)."""
        r = Reader(self.doc, self.path(key), defaults={}, aliases={})
        r.sources = self.sources
        return r


def _describe(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f"the string {v[:40]!r}"
    if isinstance(v, (list, dict)):
        return f"a {'list' if isinstance(v, list) else 'mapping'}"
    return repr(v)


def _short_repr(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else _describe(v)
