"""Record: colint's value types as plain Python classes, with pydantic as their lazily built schema.

colint's internal value types (ModelSpec and its parts, Finding, Scenario, the GPU profiles) are
Records. Their values come from the located, typed Reader or from data that was already validated,
so ``colint check`` must not pay for pydantic at start-up: importing pydantic's model machinery and
defining ~18 model classes costs more than the rest of a check (issue 7). A Record is declared like
a pydantic model or a dataclass, and pydantic is imported only when a schema is asked for::

    class Tile(Record, frozen=True, extra="forbid"):
        m: int = field(gt=0)
        sms: int = field(default=1, gt=0, description="SMs that work on one tile together")

* ``Tile(m=128, n=128)`` trusts its arguments: values as given (no coercion, no copies, no
  constraint checks), defaults and ``default_factory`` applied (a mutable plain default is copied).
  An unknown name or a missing required field is a ``TypeError`` (a programming error);
* ``Tile.model_validate(data)`` validates untrusted input (a user's ``--gpu file.yaml``) against the
  declared types, ``field`` constraints, ``extra`` and the class's ``_invariants`` — with pydantic:
  a model mirroring the Record is built on first use (:func:`schema_model`) and its
  ``ValidationError`` is raised as is. ``model_json_schema()`` comes from the same mirror;
* ``model_dump(mode="python"|"json", exclude=...)``, ``model_dump_json``, ``model_copy(update=...,
  deep=...)``, equality by value, ``repr`` and, for ``frozen`` classes, hashing and immutability
  work as on a pydantic model, without importing pydantic.

Set ``COLINT_CHECK_RECORDS=1`` to also validate every Record built through ``__init__`` with pydantic
and fail when validation would have produced a different value (the test suite's safety net for
"trusted").
"""

from __future__ import annotations

import copy
import math
import os
import sys
from typing import Any, Optional

_REQUIRED = object()
_set = object.__setattr__
_CHECK = os.environ.get("COLINT_CHECK_RECORDS", "") not in ("", "0")
_EXTRA = ("ignore", "forbid")


class FieldInfo:
    """A Record field's default and its schema-only facts (constraints, description)."""

    __slots__ = ("name", "default", "default_factory", "constraints", "description", "alias", "check")

    def __init__(
        self,
        default: Any = _REQUIRED,
        *,
        default_factory: Any = None,
        description: Optional[str] = None,
        alias: Optional[str] = None,
        check: Any = None,
        **constraints: Any,
    ) -> None:
        if default is not _REQUIRED and default_factory is not None:
            raise TypeError("give a default or a default_factory, not both")
        unknown = set(constraints) - {"gt", "ge", "lt", "le"}
        if unknown:
            raise TypeError(f"unknown field constraint(s): {', '.join(sorted(unknown))}")
        self.name = ""
        self.default, self.default_factory = default, default_factory
        self.constraints, self.description = constraints, description
        self.alias, self.check = alias, check

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED and self.default_factory is None

    def __repr__(self) -> str:
        return f"FieldInfo({self.name!r})"


def field(
    default: Any = _REQUIRED,
    *,
    default_factory: Any = None,
    description: Optional[str] = None,
    alias: Optional[str] = None,
    check: Any = None,
    **constraints: Any,
) -> Any:
    """A field's default, and what only validation looks at: constraints (``gt``, ``ge``, ``lt``, ``le``),
    ``alias`` (the name in validated input; the field's own name is accepted too) and ``check``
    (``value -> value``, raising ValueError for a value the type admits but the field does not)."""
    return FieldInfo(
        default, default_factory=default_factory, description=description, alias=alias, check=check, **constraints
    )


class Record:
    """A value type built without validation from trusted values (see the module docstring)."""

    # the fields live in __dict__; a frozen Record caches its hash beside them (never compared or dumped)
    __slots__ = ("__dict__", "__weakref__", "_record_hash")
    __record_fields__: dict[str, FieldInfo] = {}
    __record_frozen__ = False
    __record_extra__ = "ignore"

    def __init_subclass__(cls, frozen: Optional[bool] = None, extra: Optional[str] = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "model_config" in cls.__dict__:
            raise TypeError(f"{cls.__name__}: a Record takes frozen=/extra= as class arguments, not model_config")
        if extra is not None and extra not in _EXTRA:
            raise TypeError(f"{cls.__name__}: extra must be one of {', '.join(_EXTRA)}")
        fields = dict(cls.__record_fields__)  # inherited first, in declaration order
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")) or name.startswith("_"):
                continue
            value = cls.__dict__.get(name, _REQUIRED)
            info = value if isinstance(value, FieldInfo) else FieldInfo(value)
            info.name = name
            if isinstance(value, FieldInfo):
                delattr(cls, name)  # instances always hold the value; the class keeps no FieldInfo
            fields[name] = info
        cls.__record_fields__ = fields
        if frozen is not None:
            cls.__record_frozen__ = frozen
        if extra is not None:
            cls.__record_extra__ = extra
        cls.__record_plan__ = None
        cls.__record_hints__ = None
        cls.__hash__ = _frozen_hash if cls.__record_frozen__ else None  # type: ignore[assignment]
        cls.__init__ = _first_init  # replaced by the class's generated constructor on first use

    def __init__(self, /, **data: Any) -> None:
        """The reference constructor: what the generated one (:func:`_make_init`) does, field by field."""
        cls = type(self)
        plan = cls.__record_plan__ or _plan(cls)
        values: dict[str, Any] = {}
        found = 0
        for name, default, factory in plan:
            if name in data:
                values[name] = data[name]
                found += 1
            elif factory is not None:
                values[name] = factory()
            elif default is _REQUIRED:
                raise TypeError(f"{cls.__name__}() missing required field '{name}'")
            else:
                values[name] = default
        if found != len(data):
            unknown = ", ".join(sorted(k for k in data if k not in cls.__record_fields__))
            raise TypeError(f"{cls.__name__}() got unknown field(s): {unknown}")
        _set(self, "__dict__", values)
        if _CHECK:
            _check_against_schema(self, data)

    # -- value semantics ----------------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        if cls.__record_frozen__:
            raise AttributeError(f"{cls.__name__} is frozen: cannot set {name!r}")
        if name not in cls.__record_fields__:
            raise AttributeError(f"{cls.__name__} has no field {name!r}")
        _set(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__}: cannot delete field {name!r}")

    def __eq__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # frozen subclasses get _frozen_hash

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"

    def __str__(self) -> str:
        return " ".join(f"{k}={v!r}" for k, v in self.__dict__.items())

    def __iter__(self):
        return iter(self.__dict__.items())

    # copy, deepcopy and pickle carry the fields only (not a cached hash) and bypass frozen __setattr__
    def __getstate__(self) -> dict:
        return self.__dict__

    def __setstate__(self, state: dict) -> None:
        _set(self, "__dict__", dict(state))

    # -- pydantic-compatible API ----------------------------------------------------------------------
    def model_copy(self, *, update: Optional[dict] = None, deep: bool = False) -> Any:
        """A copy with ``update`` applied, trusted like the constructor (unknown names are refused)."""
        cls = type(self)
        values = copy.deepcopy(self.__dict__) if deep else dict(self.__dict__)
        if update:
            unknown = [k for k in update if k not in values]
            if unknown:
                raise TypeError(f"{cls.__name__}.model_copy() got unknown field(s): {', '.join(sorted(unknown))}")
            values.update(update)
        new = cls.__new__(cls)
        _set(new, "__dict__", values)
        return new

    def model_dump(self, *, mode: str = "python", exclude: Optional[set] = None) -> dict:
        """A dict of the fields (nested Records as dicts); ``mode="json"`` makes it JSON-ready the way
        pydantic does: tuples as lists, non-finite floats as None, dict keys as strings."""
        if mode not in ("python", "json"):
            raise ValueError(f"mode must be 'python' or 'json', not {mode!r}")
        as_json = mode == "json"
        return {k: _dump(v, as_json) for k, v in self.__dict__.items() if not exclude or k not in exclude}

    def model_dump_json(self, *, indent: Optional[int] = None, exclude: Optional[set] = None) -> str:
        import json

        data = self.model_dump(mode="json", exclude=exclude)
        if indent is None:
            return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return json.dumps(data, ensure_ascii=False, indent=indent)

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        """``cls`` from untrusted data, fully validated (pydantic's ``ValidationError`` on failure).

        Data that already has the declared types exactly (ints where ints belong, no coercion to do)
        and meets the constraints and invariants is built without pydantic (:func:`_exact`): the
        value pydantic would return, at a fraction of its import cost. Anything else — coercion, an
        error to explain — goes through pydantic."""
        value = _exact(cls, data)
        if value is not _NO:
            return value
        return _adapter(cls).validate_python(data)

    @classmethod
    def model_json_schema(cls) -> dict:
        return _adapter(cls).json_schema()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """To pydantic a Record is its mirror model (:func:`schema_model`), converted after validation; an
        instance of the Record is taken as it is (as pydantic takes a model instance)."""
        from pydantic_core import core_schema

        def validate(value: Any, inner: Any) -> Any:
            return value if type(value) is cls else cls._from_mirror(inner(value))

        return core_schema.no_info_wrap_validator_function(
            validate,
            handler(schema_model(cls)),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda r, info: r.model_dump(mode=info.mode), info_arg=True
            ),
        )

    @classmethod
    def _from_mirror(cls, m: Any) -> Any:
        new = cls.__new__(cls)
        _set(new, "__dict__", {name: getattr(m, name) for name in cls.__record_fields__})
        return new

    def _invariants(self) -> None:
        """Cross-field checks that validation runs after the fields (raise ValueError); none by default."""


def _first_init(self: Record, /, *args: Any, **data: Any) -> None:
    cls = type(self)
    if "__init__" not in cls.__dict__ or cls.__dict__["__init__"] is _first_init:
        cls.__init__ = _make_init(cls)
    cls.__init__(self, *args, **data)


def _make_init(cls: type) -> Any:
    """A constructor for ``cls`` with one keyword-only parameter per field (Python matches the arguments
    and rejects unknown ones), defaults applied in line, the values stored as the instance dict: three
    times faster than the generic loop for colint's wide records (ModelSpec, Mixer)."""
    plan = cls.__record_plan__ or _plan(cls)
    env: dict[str, Any] = {
        "_M": _REQUIRED,
        "_set": _set,
        "_reference": Record.__init__,
        "_module": sys.modules[__name__],
    }
    params, body, names = [], [], []
    for i, (name, default, factory) in enumerate(plan):
        if not name.isidentifier() or name in ("self", *env):
            return Record.__init__  # an exotic field name: keep the generic constructor
        params.append(f"{name}=_M")
        names.append(name)
        if factory is not None:
            env[f"_f{i}"] = factory
            body.append(f"    if {name} is _M: {name} = _f{i}()")
        elif default is _REQUIRED:
            body.append(f"    if {name} is _M: raise TypeError(\"{cls.__name__}() missing required field '{name}'\")")
        else:
            env[f"_d{i}"] = default
            body.append(f"    if {name} is _M: {name} = _d{i}")
    passed = "".join(f"({n!r}, {n}), " for n in names)
    check = (
        f"    if _module._CHECK:  # COLINT_CHECK_RECORDS: the reference constructor validates\n"
        f"        return _reference(self, **{{k: v for k, v in ({passed}) if v is not _M}})\n"
    )
    src = (
        f"def {cls.__name__}(self, /{', *, ' + ', '.join(params) if params else ''}):\n"
        + check
        + "\n".join(body)
        + ("\n" if body else "")
        + f"    _set(self, '__dict__', {{{', '.join(f'{n!r}: {n}' for n in names)}}})\n"
    )
    exec(compile(src, f"<record {cls.__qualname__}>", "exec"), env)
    fn = env[cls.__name__]
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    fn.__doc__ = f"{cls.__name__}(**fields): values trusted as given (colint.records)."
    return fn


def _frozen_hash(self: Record) -> int:
    try:
        return self._record_hash
    except AttributeError:
        h = hash((type(self), *self.__dict__.values()))
        _set(self, "_record_hash", h)
        return h


def _plan(cls: type) -> tuple:
    plan = []
    for name, f in cls.__record_fields__.items():
        factory = f.default_factory
        if factory is None and isinstance(f.default, (list, dict, set, bytearray)):
            factory = _copier(f.default)  # pydantic copies a mutable default too
        plan.append((name, f.default, factory))
    cls.__record_plan__ = out = tuple(plan)
    return out


def _copier(default: Any):
    return lambda: copy.deepcopy(default)


def _json_key(k: Any) -> Any:
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    return str(k)


def _dump(v: Any, as_json: bool) -> Any:
    if isinstance(v, Record):
        return {k: _dump(x, as_json) for k, x in v.__dict__.items()}
    t = type(v)
    if t is list:
        return [_dump(x, as_json) for x in v]
    if t is tuple:
        return [_dump(x, as_json) for x in v] if as_json else tuple(_dump(x, as_json) for x in v)
    if t is dict:
        return {(_json_key(k) if as_json else k): _dump(x, as_json) for k, x in v.items()}
    if as_json and t is float and not math.isfinite(v):
        return None
    return v


def _hints(cls: type) -> dict:
    """The evaluated annotations of ``cls``'s fields (cached; the class bodies store them as strings)."""
    hints = cls.__dict__.get("__record_hints__")
    if hints is None:
        import typing

        hints = typing.get_type_hints(cls)
        cls.__record_hints__ = hints = {name: hints[name] for name in cls.__record_fields__}
    return hints


# -- the pydantic side: built on first use -------------------------------------------------------------
_MIRRORS: dict[type, type] = {}
_ADAPTERS: dict[type, Any] = {}


def schema_model(cls: type) -> type:
    """The pydantic model that mirrors Record ``cls``: the same fields, types, defaults, constraints,
    ``extra`` and ``_invariants`` (an after-validator). Nested Records validate through their own mirror
    and come out as Records."""
    mirror = _MIRRORS.get(cls)
    if mirror is not None:
        return mirror
    from pydantic import ConfigDict, Field, create_model, field_validator, model_validator

    fields = {}
    for name, f in cls.__record_fields__.items():
        kw = dict(f.constraints)
        if f.description is not None:
            kw["description"] = f.description
        if f.default_factory is not None:
            kw["default_factory"] = f.default_factory
        elif f.default is not _REQUIRED:
            kw["default"] = f.default
        if f.alias is not None:
            kw["alias"] = f.alias
        fields[name] = (_hints(cls)[name], Field(**kw))
    validators = {}
    for name, f in cls.__record_fields__.items():
        if f.check is not None:
            validators[f"check_{name}"] = field_validator(name)(_checker(f.check))
    if cls._invariants is not Record._invariants:

        def _after(m: Any) -> Any:
            cls._invariants(m)
            return m

        validators["record_invariants"] = model_validator(mode="after")(_after)
    aliased = any(f.alias is not None for f in cls.__record_fields__.values())
    config = ConfigDict(extra=cls.__record_extra__, **({"populate_by_name": True} if aliased else {}))
    mirror = create_model(
        cls.__name__,
        __config__=config,
        __doc__=cls.__doc__,
        __module__=cls.__module__,
        __validators__=validators,
        **fields,
    )
    _MIRRORS[cls] = mirror
    return mirror


def _checker(check: Any) -> Any:
    def run(cls: Any, value: Any) -> Any:
        return check(value)

    return run


def _adapter(cls: type) -> Any:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        from pydantic import TypeAdapter

        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


def _check_against_schema(record: Record, data: dict) -> None:
    validated = _adapter(type(record)).validate_python(data)  # pydantic itself, not the exact-data path
    if repr(validated) != repr(record):
        raise AssertionError(
            f"trusted {type(record).__name__} differs from its validated value:\n"
            f"  trusted:   {record!r}\n  validated: {validated!r}"
        )


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
        hints = _hints(tp)
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


# -- validation without pydantic, for data that needs no coercion --------------------------------------
_NO = object()
_BOUNDS = {"gt": lambda v, b: v > b, "ge": lambda v, b: v >= b, "lt": lambda v, b: v < b, "le": lambda v, b: v <= b}


def _exact(cls: type, data: Any) -> Any:
    """``cls`` from ``data`` when every value already has its declared type (an int where a float belongs
    counts, as the float pydantic makes of it) and every constraint, check and invariant holds; else
    :data:`_NO`, and pydantic decides (it coerces what it can and explains what it cannot)."""
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
    _set(new, "__dict__", {name: values[name] for name in fields})
    try:
        new._invariants()
    except ValueError:
        return _NO
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
    if isinstance(tp, type) and issubclass(tp, Record):
        return v if type(v) is tp else _exact(tp, v)
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
        out = {}
        for k, x in v.items():
            k2, x2 = _exact_value(args[0], k), _exact_value(args[1], x)
            if k2 is _NO or x2 is _NO:
                return _NO
            out[k2] = x2
        return out
    if origin is typing.Union or (origin is not None and type(tp).__name__ == "UnionType"):
        matches = [m for m in (_exact_value(a, v) for a in args) if m is not _NO]
        return matches[0] if len(matches) == 1 else _NO  # none, or ambiguous: pydantic's union rules decide
    return _NO
