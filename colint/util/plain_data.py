"""colint's value types as plain data, and back.

The value types (``ModelSpec`` and its parts, ``Finding``, ``Scenario``, the GPU ``Profile``) are frozen,
keyword-only stdlib dataclasses: a check builds them from the located, typed readers or from data that
was validated already, and never imports pydantic for them (it would cost more start-up than the rest of
a check). Field constraints sit beside each field as ``field(metadata={"gt": 0})`` (keys pydantic's
``Field`` takes), ``__pydantic_config__ = {"extra": "forbid"}`` refuses unknown keys, and a class's
``__post_init__`` holds its cross-field checks. This module is the rest:

* :func:`dump` — a value as plain data: nested dataclasses as dicts in field order; ``json=True`` makes it
  JSON-ready (tuples as lists, non-finite floats as None, dict keys as strings);
* :func:`validate` and :func:`json_schema` — untrusted data (a user's ``--gpu file.yaml``) through
  pydantic, with a ``TypeAdapter`` of the dataclass built on first use (pydantic reads the metadata
  constraints, the config and runs ``__post_init__``, reporting its ValueError at that dataclass);
* :func:`build` — a value from plain data known to satisfy the schema (the shipped GPU profiles, which
  tests/hardware_profiles/test_profiles.py validates with :func:`validate`): nested dataclasses from mappings and ints as
  floats where a field is a float, as validation would make them; it checks nothing else.
"""

from __future__ import annotations

import math
import typing
from dataclasses import fields

from colint.util.records import is_frozen, makes_eq
from typing import Any
from collections.abc import Collection


def dump(value: Any, *, json: bool = False, exclude: Collection[str] = ()) -> dict:
    """The fields of dataclass ``value`` as a dict (nested values as plain data), less ``exclude``."""
    return {f.name: _dump(getattr(value, f.name), json) for f in fields(value) if f.name not in exclude}


def _dump(v: Any, as_json: bool) -> Any:
    t = type(v)
    if hasattr(t, "__dataclass_fields__"):
        return {name: _dump(getattr(v, name), as_json) for name in t.__dataclass_fields__}
    if t is list:
        return [_dump(x, as_json) for x in v]
    if t is tuple:
        return [_dump(x, as_json) for x in v] if as_json else tuple(_dump(x, as_json) for x in v)
    if t is dict:
        return {(_json_key(k) if as_json else k): _dump(x, as_json) for k, x in v.items()}
    if as_json and t is float and not math.isfinite(v):
        return None
    return v


def _json_key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    return str(k)


# -- untrusted data: pydantic, imported on first use -------------------------------------------------------
_ADAPTERS: dict[type, Any] = {}


def _adapter(cls: type) -> Any:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        from pydantic import TypeAdapter

        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


def validate(cls: type, data: Any) -> Any:
    """``cls`` from untrusted ``data``, fully validated; pydantic's ``ValidationError`` on failure."""
    return _adapter(cls).validate_python(data)


def json_schema(cls: type) -> dict:
    """The JSON Schema of dataclass ``cls`` (constraints, defaults and ``extra`` included)."""
    return _adapter(cls).json_schema()


# -- trusted data -----------------------------------------------------------------------------------------
_HINTS: dict[type, dict[str, Any]] = {}


def build(cls: type, data: Any) -> Any:
    """``cls`` from plain data that is known to satisfy its schema (see the module docstring)."""
    return _convert(cls, data)


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    if tp is float:
        return float(value) if type(value) is int else value
    if isinstance(tp, type) and hasattr(tp, "__dataclass_fields__"):
        hints = _HINTS.get(tp)
        if hints is None:
            hints = _HINTS[tp] = typing.get_type_hints(tp)
        return tp(**{name: _convert(hints[name], v) if name in hints else v for name, v in value.items()})
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list and args:
        return [_convert(args[0], v) for v in value]
    if origin is dict and len(args) == 2:
        return {k: _convert(args[1], v) for k, v in value.items()}
    if origin is typing.Union or (origin is not None and type(tp).__name__ == "UnionType"):
        members = [a for a in args if a is not type(None)]
        return _convert(members[0], value) if len(members) == 1 else value
    return value


_T = typing.TypeVar("_T")


class HashSlot:
    """A base of slotted frozen dataclasses whose hash is kept (keeps_hash): the slot that holds it."""

    __slots__ = ("_hash",)


def keeps_hash(cls: type[_T]) -> type[_T]:
    """``cls``, a frozen dataclass, with a ``__hash__`` that computes the generated one (the hash of the fields
    that take part in it, in order) once per object and keeps it: for values the analysis keys its memos by and
    hashes again and again (a layer kind, a GEMM). Kept in the instance's ``__dict__``, or in the ``_hash`` slot
    of a slotted class (which must derive from HashSlot); never pickled or copied (a string's hash is per
    process). Apply it above ``@dataclass``."""
    import operator

    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not is_frozen(cls) or not makes_eq(cls):
        raise TypeError(f"keeps_hash: {cls.__name__} is not a frozen dataclass with eq")
    slotted = "__slots__" in cls.__dict__
    if slotted and not issubclass(cls, HashSlot):
        raise TypeError(f"keeps_hash: slotted {cls.__name__} does not derive from HashSlot")
    names = [f.name for f in fields(cls) if (f.hash if f.hash is not None else f.compare)]  # type: ignore[arg-type]
    values = operator.attrgetter(*names) if len(names) > 1 else (lambda obj: (getattr(obj, names[0]),))
    set_attr = object.__setattr__

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            h = hash(values(self))
            set_attr(self, "_hash", h)
            return h

    cls.__hash__ = __hash__  # type: ignore[method-assign]
    if not slotted:  # the slotted dataclass pickles its fields alone; a __dict__ must leave the hash out

        def __getstate__(self) -> dict:
            return {k: v for k, v in self.__dict__.items() if k != "_hash"}

        cls.__getstate__ = __getstate__  # type: ignore[attr-defined]
    return cls
