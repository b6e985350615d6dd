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

A frozen class (without InitVar fields) is made frozen here too: its ``__init__`` is generated once from its
fields (the stdlib's signature, defaults, default factories and values, then ``__post_init__()``), writing the
instance's ``__dict__`` (~3x faster to call than the stdlib's ``object.__setattr__`` per field) or, with
``__slots__``, through ``object.__setattr__``; ``__setattr__``/``__delattr__`` raise FrozenInstanceError on a field
(closures, not compiled source: about 15 ms of a check's start-up for its ~40 frozen classes, measured by
swapping them in, 10 alternated runs); a slotted one pickles field by field. The stdlib's
``__dataclass_params__.frozen`` then reads False: :func:`is_frozen` says whether a class is frozen.

Type checkers see the stdlib's ``dataclass`` (the ``TYPE_CHECKING`` branch): the decorator takes the same
arguments and makes the same classes. tests/test_records.py compares both on every case above.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import reprlib
from typing import TYPE_CHECKING, Any

__all__ = ["dataclass", "is_frozen", "makes_eq"]

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
    return bool(cls.__dict__.get("__colint_eq__") or cls.__dataclass_params__.eq)  # type: ignore[attr-defined]


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
    own_init = init and frozen and "__init__" not in body and _own_init_applies(cls)
    # frozenness is this module's where it writes the __init__ (the stdlib's frozen one assigns through
    # object.__setattr__ in code of its own) or where there is none to write
    own_frozen = frozen and (own_init or not init)
    # the stdlib checks the rest; it sees this module's frozen classes as mutable, so a frozen class it makes (one
    # with an InitVar) cannot derive from one made here (none does)
    if own_frozen or not frozen:
        _check_frozen_bases(cls, frozen, body)
    made = dataclasses.dataclass(
        cls,
        init=init and not own_init,
        repr=False,
        eq=False,
        frozen=frozen and not own_frozen,
        match_args=match_args,
        kw_only=kw_only,
        slots=slots,
    )
    fields = dataclasses.fields(made)
    if own_frozen:
        _make_frozen(made, [f.name for f in fields], slots)
    if own_init:
        _build_init(made, slotted=slots)
        if not body.get("__doc__"):  # the stdlib wrote it from the signature before this __init__ existed
            made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(" -> None", "")
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


def is_frozen(cls: type) -> bool:
    """Whether dataclass ``cls`` is frozen, by this module's decorator (which keeps the stdlib's
    ``__dataclass_params__.frozen`` False: it makes the class frozen itself) or the stdlib's."""
    return bool(cls.__dict__.get("__colint_frozen__") or cls.__dataclass_params__.frozen)  # type: ignore[attr-defined]


def _check_frozen_bases(cls: type, frozen: bool, body: dict) -> None:
    """The stdlib's checks, for the classes whose frozenness this module makes: a frozen class defines no
    __setattr__/__delattr__, and a class is frozen exactly when its dataclass bases are."""
    if frozen:
        for name in ("__setattr__", "__delattr__"):
            if name in body:
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    bases = [b for b in cls.__mro__[1:] if "__dataclass_fields__" in b.__dict__]
    if frozen and any(not is_frozen(b) for b in bases):
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    if not frozen and any(is_frozen(b) for b in bases):
        raise TypeError("cannot inherit non-frozen dataclass from a frozen one")


def _make_frozen(cls: Any, names: list[str], slotted: bool) -> None:
    """The stdlib's frozen ``__setattr__``/``__delattr__`` (assigning or deleting a field raises
    FrozenInstanceError), as closures rather than compiled source; a slotted class pickles through
    object.__setattr__, as the stdlib's frozen slotted classes do."""
    fields = frozenset(names)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in fields:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in fields:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    cls.__setattr__ = _named(__setattr__, cls, "__setattr__")
    cls.__delattr__ = _named(__delattr__, cls, "__delattr__")
    cls.__colint_frozen__ = True
    if slotted:
        set_attr = object.__setattr__

        def __getstate__(self: Any) -> list:
            return [getattr(self, n) for n in names]

        def __setstate__(self: Any, state: list) -> None:
            for n, v in zip(names, state):
                set_attr(self, n, v)

        cls.__getstate__ = _named(__getstate__, cls, "__getstate__")
        cls.__setstate__ = _named(__setstate__, cls, "__setstate__")


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


def _own_init_applies(cls: type) -> bool:
    """Whether a frozen class, not yet processed, may take this module's ``__init__``: no InitVar (by its
    annotation, or a base's field) and no field named like the generated function's own names."""
    notes = cls.__dict__.get("__annotations__", {})
    if any("InitVar" in str(a) for a in notes.values()) or any(n.startswith("__fi_") for n in notes):
        return False
    return not any(
        f._field_type is not dataclasses._FIELD  # type: ignore[attr-defined]
        for base in cls.__mro__[1:]
        for f in getattr(base, "__dataclass_fields__", {}).values()
    )


def _build_init(cls: Any, *, slotted: bool) -> Any:
    """The ``__init__`` of a frozen dataclass: the stdlib's signature, defaults, default factories and values,
    then ``__post_init__()`` where the class has one. Without slots it writes the instance's ``__dict__`` (~3x
    faster to call than the stdlib's object.__setattr__ per field: a 15-field record 2.7 -> 0.8 us, timeit on
    this project's 2-vCPU VM, CPython 3.11); with slots it sets each field through object.__setattr__, as the
    stdlib does."""
    fields = dataclasses.fields(cls)
    env: dict[str, Any] = {"__fi_missing": dataclasses._HAS_DEFAULT_FACTORY, "__fi_set": object.__setattr__}  # type: ignore[attr-defined]
    positional: list[str] = []
    keyword: list[str] = []
    lines: list[str] = []

    def store(name: str, value: str) -> str:
        return f"    __fi_set(__fi_self, {name!r}, {value})" if slotted else f"    __fi_dict[{name!r}] = {value}"

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
        if not f.init:  # as dataclasses does: a factory runs; a plain default stays the class attribute's (slots: set)
            if f.default_factory is not dataclasses.MISSING or (slotted and f.default is not dataclasses.MISSING):
                lines.append(store(name, value))
            continue
        (keyword if f.kw_only else positional).append(param)
        if f.default_factory is not dataclasses.MISSING:
            lines.append(store(name, f"{value} if {name} is __fi_missing else {name}"))
        else:
            lines.append(store(name, name))
    if hasattr(cls, "__post_init__"):
        lines.append("    __fi_self.__post_init__()")
    signature = ", ".join(["__fi_self", *positional, *(["*", *keyword] if keyword else [])])
    head = "" if slotted else "    __fi_dict = __fi_self.__dict__\n"
    source = f"def __init__({signature}):\n{head}" + "\n".join(lines or ["    pass"]) + "\n"
    exec(source, env)  # noqa: S102 - generated from the class's own fields, as dataclasses builds its __init__
    init = _named(env["__init__"], cls, "__init__")
    init.__annotations__ = {f.name: f.type for f in fields if f.init} | {"return": None}
    init.__colint_fast__ = True
    cls.__init__ = init
    return cls
