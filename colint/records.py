"""Record: what is left of colint's home-made value base, kept for ``colint.settings.FileSettings`` only.

Every other value type is a frozen stdlib dataclass (colint.plain_data). ``FileSettings`` — the
``[tool.colint]`` table — still declares its fields here, because a project with a config file must not
import pydantic and another change (issue 16 item 2) replaces it with a typed table. Delete this module
and tests/test_records.py once settings.py no longer imports it.

    class FileSettings(Record, extra="forbid"):
        ep: Optional[int] = field(None, ge=1, le=1 << 20)
        fail_on: Optional[str] = field(None, alias="fail-on")

``FileSettings.model_validate(table)`` validates untrusted data: a table whose values already have the
declared types and meet the constraints and checks is built without pydantic (:func:`_exact`);
anything else goes to a pydantic model mirroring the class (:func:`schema_model`), which coerces what it
can and raises its ``ValidationError`` for what it cannot.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Optional

_REQUIRED = object()
_EXTRA = ("ignore", "forbid")


class FieldInfo:
    """A Record field's default and its schema-only facts (constraints, alias, check)."""

    __slots__ = ("name", "default", "default_factory", "constraints", "alias", "check")

    def __init__(
        self,
        default: Any = _REQUIRED,
        *,
        default_factory: Any = None,
        alias: Optional[str] = None,
        check: Any = None,
        **constraints: Any,
    ) -> None:
        unknown = set(constraints) - {"gt", "ge", "lt", "le"}
        if unknown:
            raise TypeError(f"unknown field constraint(s): {', '.join(sorted(unknown))}")
        self.name = ""
        self.default, self.default_factory = default, default_factory
        self.constraints, self.alias, self.check = constraints, alias, check

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED and self.default_factory is None


def field(
    default: Any = _REQUIRED,
    *,
    default_factory: Any = None,
    alias: Optional[str] = None,
    check: Any = None,
    **bounds: Any,
) -> Any:
    """A field's default, and what only validation looks at: constraints (``gt``, ``ge``, ``lt``, ``le``),
    ``alias`` (the name in validated input; the field's own name is accepted too) and ``check``
    (``value -> value``, raising ValueError for a value the type admits but the field does not)."""
    return FieldInfo(default, default_factory=default_factory, alias=alias, check=check, **bounds)


class Record:
    """Fields declared as annotations, values validated by :meth:`model_validate` (module docstring)."""

    __record_fields__: dict[str, FieldInfo] = {}
    __record_extra__ = "ignore"

    def __init_subclass__(cls, extra: Optional[str] = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if extra is not None and extra not in _EXTRA:
            raise TypeError(f"{cls.__name__}: extra must be one of {', '.join(_EXTRA)}")
        fields = dict(cls.__record_fields__)
        for name in cls.__dict__.get("__annotations__", {}):
            if name.startswith("_"):
                continue
            value = cls.__dict__.get(name, _REQUIRED)
            info = value if isinstance(value, FieldInfo) else FieldInfo(value)
            info.name = name
            if isinstance(value, FieldInfo):
                delattr(cls, name)
            fields[name] = info
        cls.__record_fields__ = fields
        if extra is not None:
            cls.__record_extra__ = extra

    def __eq__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        """``cls`` from untrusted data, fully validated (pydantic's ``ValidationError`` on failure)."""
        value = _exact(cls, data)
        if value is not _NO:
            return value
        mirror = schema_model(cls).model_validate(data)
        new = cls.__new__(cls)
        new.__dict__.update({name: getattr(mirror, name) for name in cls.__record_fields__})
        return new


def _hints(cls: Any) -> dict:
    """The evaluated annotations of ``cls``'s fields (cached; the class bodies store them as strings)."""
    hints = cls.__dict__.get("__record_hints__")
    if hints is None:
        import typing

        hints = typing.get_type_hints(cls)
        hints = {name: hints[name] for name in cls.__record_fields__}
        cls.__record_hints__ = hints
    return hints


# -- the pydantic side: built on first use -------------------------------------------------------------
_MIRRORS: dict[type, Any] = {}


def schema_model(cls: Any) -> Any:
    """The pydantic model that mirrors Record ``cls``: the same fields, types, defaults, constraints,
    aliases, checks and ``extra``."""
    mirror = _MIRRORS.get(cls)
    if mirror is not None:
        return mirror
    from pydantic import ConfigDict, Field, create_model, field_validator

    fields: dict[str, Any] = {}
    validators = {}
    for name, f in cls.__record_fields__.items():
        kw = dict(f.constraints)
        if f.default_factory is not None:
            kw["default_factory"] = f.default_factory
        elif f.default is not _REQUIRED:
            kw["default"] = f.default
        if f.alias is not None:
            kw["alias"] = f.alias
        fields[name] = (_hints(cls)[name], Field(**kw))
        if f.check is not None:
            validators[f"check_{name}"] = field_validator(name)(_checker(f.check))
    aliased = any(f.alias is not None for f in cls.__record_fields__.values())
    config = ConfigDict(extra=cls.__record_extra__, populate_by_name=aliased)
    mirror = create_model(
        cls.__name__, __config__=config, __module__=cls.__module__, __validators__=validators, **fields
    )
    _MIRRORS[cls] = mirror
    return mirror


def _checker(check: Any) -> Any:
    def run(cls: Any, value: Any) -> Any:
        return check(value)

    return run


# -- validation without pydantic, for data that needs no coercion --------------------------------------
_NO = object()
_BOUNDS = {"gt": lambda v, b: v > b, "ge": lambda v, b: v >= b, "lt": lambda v, b: v < b, "le": lambda v, b: v <= b}


def _exact(cls: Any, data: Any) -> Any:
    """``cls`` from ``data`` when every value already has its declared type and every constraint and check
    holds; else :data:`_NO`, and pydantic decides (it coerces what it can and explains what it cannot)."""
    if type(data) is not dict:
        return _NO
    fields = cls.__record_fields__
    hints = _hints(cls)
    values: dict[str, Any] = {}
    names = {}
    for name, f in fields.items():
        names[name] = name
        if f.alias is not None:
            names[f.alias] = name
    for key, raw in data.items():
        name = names.get(key) if type(key) is str else None
        if name is None:
            if cls.__record_extra__ == "forbid":
                return _NO
            continue
        if name in values:
            return _NO  # both a field's name and its alias: let pydantic say what it makes of it
        f = fields[name]
        v = _exact_value(hints[name], raw)
        if v is _NO or (f.constraints and not _within(v, f.constraints)):
            return _NO
        if f.check is not None:
            try:
                v = f.check(v)
            except ValueError:
                return _NO
        values[name] = v
    for name, f in fields.items():
        if name not in values:
            if f.required:
                return _NO
            values[name] = f.default_factory() if f.default_factory is not None else copy.deepcopy(f.default)
    new = cls.__new__(cls)
    new.__dict__.update({name: values[name] for name in fields})
    return new


def _within(v: Any, constraints: dict) -> bool:
    if type(v) not in (int, float) or (type(v) is float and math.isnan(v)):
        return False
    return all(_BOUNDS[op](v, bound) for op, bound in constraints.items())


def _exact_value(tp: Any, v: Any) -> Any:
    """``v`` as validation would return it for type ``tp`` when no coercion is involved, else _NO."""
    import typing

    if tp is Any:
        return v
    if tp is str or tp is bool:
        return v if type(v) is tp else _NO
    if tp is int:
        return v if type(v) is int else _NO
    if tp is float:
        if type(v) is float:
            return v
        return float(v) if type(v) is int else _NO
    if tp is type(None):
        return v if v is None else _NO
    if tp is list or tp is dict:
        return tp(v) if type(v) is tp else _NO
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return v if any(type(v) is type(a) and v == a for a in args) else _NO
    if origin is list and len(args) == 1:
        if type(v) is not list:
            return _NO
        out = [_exact_value(args[0], x) for x in v]
        return _NO if any(x is _NO for x in out) else out
    if origin is dict and len(args) == 2:
        if type(v) is not dict:
            return _NO
        mapping = {}
        for k, x in v.items():
            k2, x2 = _exact_value(args[0], k), _exact_value(args[1], x)
            if k2 is _NO or x2 is _NO:
                return _NO
            mapping[k2] = x2
        return mapping
    if origin is typing.Union or (origin is not None and type(tp).__name__ == "UnionType"):
        matches = [m for m in (_exact_value(a, v) for a in args) if m is not _NO]
        return matches[0] if len(matches) == 1 else _NO  # none, or ambiguous: pydantic's union rules decide
    return _NO
