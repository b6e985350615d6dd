"""Record: a pydantic model whose constructor trusts its arguments (issue 7: start-up budget).

colint's internal value types (ModelSpec and its parts, Finding, Scenario, the shipped GPU profiles)
are pydantic models — pydantic stays their schema of record (``model_json_schema``, ``model_dump``,
``model_validate``) — but their values come from the located, typed Reader or from data that was
already validated, so ``colint check`` need not pay for pydantic's schema build (tens of ms of
start-up for colint's ~18 classes). A Record:

* is declared with ``defer_build=True``: no core schema is built when the class is defined;
* ``Record(**values)`` does what :meth:`BaseModel.model_construct` does, on ``self``: values as
  given (no coercion, no copies, no constraint checks), defaults and ``default_factory`` applied,
  ``model_fields_set`` = the names passed. Unlike ``model_construct`` it refuses an unknown name or
  a missing required field (``TypeError``: a programming error, not an input error);
* ``Record.model_validate(data)`` still validates fully against the declared schema (the trusted
  ``__init__`` is marked as pydantic's base ``__init__``, so the validator never calls it): use it
  for untrusted input (a user's ``--gpu file.yaml``). The schema is built then, lazily, as it is
  for ``model_dump`` / ``model_json_schema`` off the hot path;
* ``model_copy(update=...)``, equality, ``repr`` and, for ``frozen`` classes, hashing and
  immutability work as on any pydantic model, without a schema.

Set ``COLINT_CHECK_RECORDS=1`` to also validate every Record built through ``__init__`` and fail
when validation would have produced a different value (the test suite's safety net for "trusted").
"""

from __future__ import annotations

import copy
import os
from functools import partial
from typing import Any

from pydantic import BaseModel, ConfigDict

_REQUIRED = object()
_set = object.__setattr__
# class -> ((field name, default, factory, factory takes data), ...), built on first construction
_PLANS: dict[type, tuple] = {}
_CHECK = os.environ.get("COLINT_CHECK_RECORDS", "") not in ("", "0")


def _plan(cls: type) -> tuple:
    plan = []
    for name, f in cls.__pydantic_fields__.items():
        if f.alias is not None or f.validation_alias is not None:
            raise TypeError(f"{cls.__name__}.{name}: a Record field may not have an alias")
        factory = f.default_factory
        # a class (list, dict, a Record) takes no data; asking pydantic parses a signature (ms of start-up)
        takes_data = factory is not None and not isinstance(factory, type) and bool(
            getattr(f, "default_factory_takes_validated_data", False))
        default = _REQUIRED if f.is_required() else f.default
        if factory is None and isinstance(default, (list, dict, set, bytearray)):
            factory = partial(copy.deepcopy, default)  # pydantic copies a mutable default too
        plan.append((name, default, factory, takes_data))
    if cls.__private_attributes__:
        raise TypeError(f"{cls.__name__}: a Record may not have private attributes")
    _PLANS[cls] = out = tuple(plan)
    return out


def _trusted_init(self, /, **data: Any) -> None:
    cls = type(self)
    plan = _PLANS.get(cls) or _plan(cls)
    values: dict[str, Any] = {}
    found = 0
    for name, default, factory, takes_data in plan:
        if name in data:
            values[name] = data[name]
            found += 1
        elif factory is not None:
            values[name] = factory(values) if takes_data else factory()
        elif default is _REQUIRED:
            raise TypeError(f"{cls.__name__}() missing required field '{name}'")
        else:
            values[name] = default
    if found != len(data):
        unknown = ", ".join(sorted(k for k in data if k not in cls.__pydantic_fields__))
        raise TypeError(f"{cls.__name__}() got unknown field(s): {unknown}")
    _set(self, "__dict__", values)
    _set(self, "__pydantic_fields_set__", set(data))
    _set(self, "__pydantic_extra__", None)
    _set(self, "__pydantic_private__", None)
    if cls.__pydantic_post_init__:
        self.model_post_init(None)
    if _CHECK:
        _check_against_schema(self, data)


# pydantic calls a model's own __init__ from its validator unless the __init__ says it is the base one;
# this keeps model_validate a full validation while Record(...) trusts its arguments.
_trusted_init.__pydantic_base_init__ = True  # type: ignore[attr-defined]


def _check_against_schema(record: BaseModel, data: dict) -> None:
    validated = type(record).model_validate(data)
    if repr(validated) != repr(record):
        raise AssertionError(f"trusted {type(record).__name__} differs from its validated value:\n"
                             f"  trusted:   {record!r}\n  validated: {validated!r}")


def from_trusted_data(cls: type, data: Any) -> Any:
    """``cls`` built from plain data (a mapping for a Record) that is known to satisfy its schema — the
    shipped GPU profiles, which a test validates with the full schema. Converts what validation would:
    nested Records from mappings (also inside ``list[...]``, ``dict[str, ...]``, ``Optional[...]``) and
    ints to ``float`` where a field is a float; checks nothing else."""
    return _convert(cls, data)


def _convert(tp: Any, value: Any) -> Any:
    import typing

    if value is None:
        return None
    if tp is float:
        return float(value) if type(value) is int else value
    if isinstance(tp, type) and issubclass(tp, Record):
        return tp(**{name: _convert(tp.__pydantic_fields__[name].annotation, v) if name in tp.__pydantic_fields__
                     else v for name, v in value.items()})
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list and args:
        return [_convert(args[0], v) for v in value]
    if origin is dict and len(args) == 2:
        return {k: _convert(args[1], v) for k, v in value.items()}
    if origin is typing.Union or (origin is not None and type(tp).__name__ == "UnionType"):
        members = [a for a in args if a is not type(None)]
        return _convert(members[0], value) if len(members) == 1 else value
    return value


class Record(BaseModel):
    """A pydantic model built without validation from trusted values (see the module docstring)."""

    model_config = ConfigDict(defer_build=True)

    __init__ = _trusted_init
