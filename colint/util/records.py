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

Type checkers see the stdlib's ``dataclass`` (the ``TYPE_CHECKING`` branch): the decorator takes the same
arguments and makes the same classes. tests/test_records.py compares both on every case above.
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from typing import TYPE_CHECKING, Any

__all__ = ["dataclass", "makes_eq"]

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
    made = dataclasses.dataclass(
        cls,
        init=init,
        repr=False,
        eq=False,
        frozen=frozen,
        match_args=match_args,
        kw_only=kw_only,
        slots=slots,
    )
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
