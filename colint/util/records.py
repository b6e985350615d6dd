"""``dataclass``, as the stdlib's, for colint's value types: the same fields, ``__init__``, frozenness,
``fields()``/``replace()``/``asdict()`` support, ``__eq__``, ``__hash__`` and ``__repr__`` — but without
compiling the three comparison/printing methods for each class at import.

Why: CPython 3.11's ``dataclasses`` compiles every generated method from source with ``exec`` when the
class is created. colint defines some fifty value types on the path of one ``colint check``; compiling their
``__repr__``, ``__eq__`` and ``__hash__`` was about half of that (a 20-field class: 2.4 -> 1.0 ms with the
two left out, timeit on this project's 2-vCPU VM, CPython 3.11), and most are never compared or printed in
a check. Here they are built from the class's fields without ``exec`` (``operator.attrgetter``), with
the stdlib's semantics: ``__eq__`` compares the tuples of the ``compare`` fields of objects of the same class
and returns NotImplemented otherwise; a frozen class with ``eq`` hashes that tuple (fields with ``hash=``
override ``compare``), a mutable one with ``eq`` is unhashable; a method or ``__hash__`` the class body
defines is kept; ``__repr__`` is ``QualName(field=value!r, ...)`` over the ``repr`` fields, ``...`` on
recursion. ``order`` and ``unsafe_hash`` are passed to the stdlib as they are.

A frozen class without ``__slots__``, ``__post_init__`` or InitVar fields gets the ``__init__`` of
:func:`fast_init` instead of the stdlib's (compiled once instead of twice where the class asked for it, and
~3x faster to call): it writes the instance's ``__dict__`` rather than calling ``object.__setattr__`` once per
field, with the same signature, defaults, default factories and values; assignment still raises.

Type checkers see the stdlib's ``dataclass`` (the ``TYPE_CHECKING`` branch): the decorator takes the same
arguments and makes the same classes. tests/test_records.py compares both on every case above.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import reprlib
from typing import TYPE_CHECKING, Any

__all__ = ["dataclass", "fast_init", "makes_eq"]

if TYPE_CHECKING:
    from dataclasses import dataclass
else:

    def dataclass(
        cls=None,
        /,
        *,
        init=True,
        repr=True,
        eq=True,
        order=False,
        unsafe_hash=False,
        frozen=False,
        match_args=True,
        kw_only=False,
        slots=False,
    ):
        def wrap(cls):
            return _process(cls, init, repr, eq, order, unsafe_hash, frozen, match_args, kw_only, slots)

        return wrap if cls is None else wrap(cls)


def makes_eq(cls: type) -> bool:
    """Whether dataclass ``cls`` was asked for ``eq`` (the default), by this module's decorator or the
    stdlib's (whose ``__dataclass_params__.eq`` is False for this module's classes: it made them itself)."""
    return bool(getattr(cls, "__colint_eq__", False) or cls.__dataclass_params__.eq)  # type: ignore[attr-defined]


def _process(
    cls: Any,
    init: bool,
    repr: bool,
    eq: bool,
    order: bool,
    unsafe_hash: bool,
    frozen: bool,
    match_args: bool,
    kw_only: bool,
    slots: bool,
) -> Any:
    if order or unsafe_hash:  # rare; the stdlib builds these as it always does
        return dataclasses.dataclass(
            cls,
            init=init,
            repr=repr,
            eq=eq,
            order=order,
            unsafe_hash=unsafe_hash,
            frozen=frozen,
            match_args=match_args,
            kw_only=kw_only,
            slots=slots,
        )
    body = dict(cls.__dict__)  # before the stdlib (with slots=True it returns a new class)
    class_hash = body.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in body))
    fast = init and frozen and not slots and "__init__" not in body and _fast_init_applies(cls)
    made = dataclasses.dataclass(
        cls,
        init=init and not fast,
        repr=False,
        eq=False,
        frozen=frozen,
        match_args=match_args,
        kw_only=kw_only,
        slots=slots,
    )
    if fast:
        fast_init(made)
        if not body.get("__doc__"):  # the stdlib wrote it from the signature before this __init__ existed
            made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(" -> None", "")
    fields = dataclasses.fields(made)
    if repr and "__repr__" not in body:
        made.__repr__ = _repr_fn(made, [f.name for f in fields if f.repr])
    if eq:
        made.__colint_eq__ = True
        if "__eq__" not in body:
            made.__eq__ = _eq_fn(made, [f.name for f in fields if f.compare])
        if not explicit_hash:
            if frozen:
                names = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
                made.__hash__ = _hash_fn(made, names)
            else:
                made.__hash__ = None
    return made


def _values(names: list[str]) -> Any:
    """A function from an object to the tuple of its ``names`` attributes, in C (operator.attrgetter)."""
    if len(names) == 1:
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    if not names:
        return lambda obj: ()
    return operator.attrgetter(*names)


def _named(fn: Any, cls: type, name: str) -> Any:
    fn.__name__ = name
    fn.__qualname__ = f"{cls.__qualname__}.{name}"
    fn.__module__ = cls.__module__
    return fn


def _eq_fn(cls: type, names: list[str]) -> Any:
    values = _values(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return _named(__eq__, cls, "__eq__")


def _hash_fn(cls: type, names: list[str]) -> Any:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return _named(__hash__, cls, "__hash__")


def _repr_fn(cls: type, names: list[str]) -> Any:
    @reprlib.recursive_repr()  # as the stdlib's generated __repr__: '...' where an object contains itself
    def __repr__(self: Any) -> str:
        return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"

    return _named(__repr__, cls, "__repr__")


def _fast_init_applies(cls: type) -> bool:
    """Whether a frozen class, not yet processed, may take fast_init's ``__init__``: no ``__post_init__``, no
    InitVar (by its annotation, or a base's field) and no field named like the generated function's own names."""
    if hasattr(cls, "__post_init__"):
        return False
    notes = cls.__dict__.get("__annotations__", {})
    if any("InitVar" in str(a) for a in notes.values()) or any(n.startswith("__fi_") for n in notes):
        return False
    return not any(
        f._field_type is not dataclasses._FIELD  # type: ignore[attr-defined]
        for base in cls.__mro__[1:]
        for f in getattr(base, "__dataclass_fields__", {}).values()
    )


def fast_init(cls: Any) -> Any:
    """``cls``, a processed frozen dataclass without ``__slots__``, ``__post_init__`` or InitVar fields, with an
    ``__init__`` that writes the instance's ``__dict__`` instead of calling ``object.__setattr__`` once per field,
    as the stdlib's frozen ``__init__`` does: the same signature, defaults and default factories, the same values,
    ~3x faster (a 15-field record: 2.7 -> 0.8 us, timeit on this project's 2-vCPU VM, CPython 3.11)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"fast_init: {cls.__name__} is not a frozen dataclass")
    if "__slots__" in cls.__dict__ or hasattr(cls, "__post_init__"):
        raise TypeError(f"fast_init: {cls.__name__} has __slots__ or __post_init__ (keep its generated __init__)")
    fields = dataclasses.fields(cls)
    if any(f._field_type is not dataclasses._FIELD for f in cls.__dataclass_fields__.values()):  # type: ignore[attr-defined]
        raise TypeError(f"fast_init: {cls.__name__} has an InitVar")
    # the generated function's own names start with __fi_: no field may take one of them
    if any(f.name.startswith("__fi_") for f in fields):
        raise TypeError(f"fast_init: {cls.__name__} has a field named __fi_*")
    env: dict[str, Any] = {"__fi_missing": dataclasses._HAS_DEFAULT_FACTORY}  # type: ignore[attr-defined]
    positional: list[str] = []
    keyword: list[str] = []
    lines: list[str] = []
    for f in fields:
        name = f.name
        if f.default is not dataclasses.MISSING:
            env[f"__fi_d_{name}"] = f.default
            value, param = f"__fi_d_{name}", f"{name}=__fi_d_{name}"
        elif f.default_factory is not dataclasses.MISSING:
            env[f"__fi_f_{name}"] = f.default_factory
            value, param = f"__fi_f_{name}()", f"{name}=__fi_missing"
        else:
            value, param = "", name
        if not f.init:  # as dataclasses does: a plain default stays the class attribute's, a factory runs
            if f.default_factory is not dataclasses.MISSING:
                lines.append(f"    __fi_dict[{name!r}] = {value}")
            continue
        (keyword if f.kw_only else positional).append(param)
        if f.default_factory is not dataclasses.MISSING:
            lines.append(f"    __fi_dict[{name!r}] = {value} if {name} is __fi_missing else {name}")
        else:
            lines.append(f"    __fi_dict[{name!r}] = {name}")
    signature = ", ".join(["__fi_self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({signature}):\n    __fi_dict = __fi_self.__dict__\n" + "\n".join(lines) + "\n"
    exec(source, env)  # noqa: S102 - generated from the class's own fields, as dataclasses builds its __init__
    init = _named(env["__init__"], cls, "__init__")
    init.__annotations__ = {f.name: f.type for f in fields if f.init} | {"return": None}
    init.__colint_fast__ = True
    cls.__init__ = init
    return cls
