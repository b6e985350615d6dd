"""A TOML value checked against a type annotation, without pydantic.

``[tool.colint]`` is read on every run of a project that has one, so its validation must not import
pydantic (about 200 ms). TOML gives only strings, integers, floats, booleans, dates, arrays and
tables, so the few annotations colint's settings use are checked here, with pydantic's wording so
that a user reads the same message whichever validator ran: ``str``, ``int``, ``float``, ``bool``,
``Any``, ``Literal[...]``, unions (``X | None``), ``tuple[X, ...]`` / ``list[X]`` and ``Mapping[str, X]``.

:func:`conform` returns the value in the annotation's shape (an array as a tuple for ``tuple[X, ...]``,
an integral float as an int, a digit string as an int, as pydantic's lax mode does) or raises
:class:`TableError` with the location inside the value (``("a/**", 0)``). Booleans are not integers
here (pydantic took ``tp = true`` as 1: a silently wrong answer).
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Literal, Union


class TableError(ValueError):
    """``message`` about ``value`` at ``loc`` (the keys and indices inside the checked value)."""

    def __init__(self, message: str, value: Any, loc: tuple = ()) -> None:
        super().__init__(message)
        self.message, self.value, self.loc = message, value, loc


def _literals(args: tuple) -> str:
    words = [repr(a) for a in args]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def describe(tp: Any) -> str:
    """What a value of ``tp`` is, in an error message (``a valid integer``, ``'a', 'b' or 'c'``)."""
    origin = typing.get_origin(tp)
    if origin is Literal:
        return _literals(typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return " or ".join(describe(a) for a in typing.get_args(tp) if a is not type(None))
    if origin in (tuple, list, collections.abc.Sequence):
        return "a valid list"
    if origin in (dict, collections.abc.Mapping):
        return "a valid dictionary"
    return {str: "a valid string", int: "a valid integer", float: "a valid number", bool: "a valid boolean"}.get(
        tp, repr(tp)
    )


def _int(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, float):
        raise TableError("Input should be a valid integer, got a number with a fractional part", value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise TableError("Input should be a valid integer, unable to parse string as an integer", value) from None
    raise TableError("Input should be a valid integer", value)


def conform(value: Any, tp: Any) -> Any:
    """``value`` checked against the annotation ``tp`` (see the module's docstring)."""
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin is Literal:
        if any(type(value) is type(a) and value == a for a in typing.get_args(tp)):
            return value
        raise TableError(f"Input should be {_literals(typing.get_args(tp))}", value)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        for a in args:  # an exact type first ("auto" is the Literal, not a string to parse as an int)
            if typing.get_origin(a) is None and a is not type(None) and type(value) is a:
                return value
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return conform(value, a)
            except TableError as exc:
                errors.append(exc)
        inner = [e for e in errors if e.loc]  # the value had the right shape but an item was wrong: say that one
        if len(errors) == 1 or len(inner) == 1:
            raise (inner or errors)[0]
        raise TableError(f"Input should be {describe(tp)}", value)
    if origin in (tuple, list, collections.abc.Sequence):
        if not isinstance(value, (list, tuple)):
            raise TableError("Input should be a valid list", value)
        (item,) = typing.get_args(tp)[:1]
        out = []
        for i, v in enumerate(value):
            try:
                out.append(conform(v, item))
            except TableError as exc:
                raise TableError(exc.message, exc.value, (i, *exc.loc)) from None
        return tuple(out) if origin is not list else out
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            raise TableError("Input should be a valid dictionary", value)
        _key_type, item = typing.get_args(tp)
        checked = {}
        for k, v in value.items():
            try:
                checked[k] = conform(v, item)
            except TableError as exc:
                raise TableError(exc.message, exc.value, (k, *exc.loc)) from None
        return checked
    if tp is int:
        return _int(value)
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise TableError("Input should be a valid number", value)
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise TableError("Input should be a valid boolean", value)
    if tp is str:
        if isinstance(value, str):
            return value
        raise TableError("Input should be a valid string", value)
    raise TypeError(f"typed_table cannot check {tp!r}")  # a programming error: an annotation this module lacks


def within(value: Any, ge: Any = None, le: Any = None) -> None:
    """pydantic's ``ge``/``le`` constraints, with its wording."""
    if ge is not None and value < ge:
        raise TableError(f"Input should be greater than or equal to {ge}", value)
    if le is not None and value > le:
        raise TableError(f"Input should be less than or equal to {le}", value)
