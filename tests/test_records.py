"""colint.util.records.dataclass against the stdlib's: the same equality, hashing, repr and frozenness on
every case the module's docstring names (a subset of fields compared, hash= overrides, a body's own
methods, slots, inheritance, recursion)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from colint.util import records
from colint.util.plain_data import keeps_hash

KINDS = {"stdlib": dataclasses.dataclass, "colint": records.dataclass}


def _classes(dc: Any) -> dict[str, type]:
    @dc(frozen=True, kw_only=True)
    class Frozen:
        a: int
        b: float = 1.5
        note: str = dataclasses.field(default="x", compare=False, repr=False)
        tag: str = dataclasses.field(default="t", hash=False)

    @dc
    class Mutable:
        a: int
        items: list = dataclasses.field(default_factory=list)

    @dc(frozen=True, slots=True)
    class Slotted:
        a: int
        b: str

    @dc(frozen=True)
    class OwnMethods:
        a: int

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 7

        def __repr__(self) -> str:
            return "own"

    @dc(frozen=True)
    class Single:
        only: float

    @dc(frozen=True)
    class Empty:
        pass

    @dc(eq=False)
    class Identity:
        a: int

    return {c.__name__: c for c in (Frozen, Mutable, Slotted, OwnMethods, Single, Empty, Identity)}


STD, OURS = _classes(dataclasses.dataclass), _classes(records.dataclass)

CASES = [
    ("Frozen", {"a": 1}, {"a": 1, "note": "other"}),  # note does not compare
    ("Frozen", {"a": 1}, {"a": 1, "tag": "u"}),  # tag compares, does not hash
    ("Frozen", {"a": 1}, {"a": 2}),
    ("Frozen", {"a": 1, "b": float("nan")}, {"a": 1, "b": float("nan")}),
    ("Mutable", {"a": 1, "items": [1]}, {"a": 1, "items": [1]}),
    ("Mutable", {"a": 1}, {"a": 2}),
    ("Slotted", {"a": 1, "b": "x"}, {"a": 1, "b": "x"}),
    ("OwnMethods", {"a": 1}, {"a": 2}),
    ("Single", {"only": 2.0}, {"only": 2.0}),
    ("Single", {"only": float("nan")}, {"only": float("nan")}),
    ("Empty", {}, {}),
    ("Identity", {"a": 1}, {"a": 1}),
]


def _observe(classes: dict[str, type], name: str, left: dict, right: dict) -> tuple:
    cls = classes[name]
    x, y = cls(**left), cls(**right)
    try:
        hashes: Any = (hash(x) == hash(y), hash(x) == hash(cls(**left)))
    except TypeError as e:
        hashes = str(e).replace(cls.__qualname__, "C")
    try:
        dataclasses.replace(x, **{dataclasses.fields(cls)[0].name: left.get(dataclasses.fields(cls)[0].name)})
        setattr(x, "__probe__", 1) if not records.is_frozen(cls) else None
        frozen = None
    except (dataclasses.FrozenInstanceError, IndexError, AttributeError) as e:
        frozen = type(e).__name__
    return (x == y, x != y, x == object(), repr(x), hashes, frozen, [f.name for f in dataclasses.fields(cls)])


@pytest.mark.parametrize(("name", "left", "right"), CASES)
def test_behaves_as_the_stdlib_dataclass(name: str, left: dict, right: dict) -> None:
    assert _observe(OURS, name, left, right) == _observe(STD, name, left, right)


def test_the_nan_fields_compare_by_identity_as_in_a_tuple() -> None:
    nan = float("nan")
    # the stdlib compares field tuples, whose items compare `is` first: the same nan object is equal
    assert OURS["Single"](only=nan) == OURS["Single"](only=nan)
    assert STD["Single"](only=nan) == STD["Single"](only=nan)
    assert OURS["Single"](only=float("nan")) != OURS["Single"](only=float("nan"))


def test_frozen_assignment_raises_and_slots_hold() -> None:
    f = OURS["Frozen"](a=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.a = 2  # type: ignore[misc]
    s = OURS["Slotted"](1, "x")
    assert "__slots__" in OURS["Slotted"].__dict__ and not hasattr(s, "__dict__")


def test_the_repr_marks_recursion_and_uses_the_qualified_name() -> None:
    m = OURS["Mutable"](a=1)
    m.items.append(m)
    assert repr(m).endswith("Mutable(a=1, items=[...])")
    assert repr(OURS["Frozen"](a=3)).endswith("Frozen(a=3, b=1.5, tag='t')")
    assert repr(OURS["Frozen"](a=3)) == repr(STD["Frozen"](a=3))


def test_a_subclass_that_adds_no_fields_compares_with_its_parents_fields_and_class() -> None:
    class Child(OURS["Frozen"]):  # type: ignore[misc, valid-type]
        pass

    class StdChild(STD["Frozen"]):  # type: ignore[misc, valid-type]
        pass

    assert (Child(a=1) == Child(a=1), Child(a=1) == OURS["Frozen"](a=1)) == (
        StdChild(a=1) == StdChild(a=1),
        StdChild(a=1) == STD["Frozen"](a=1),
    )
    assert repr(Child(a=1)).endswith("Child(a=1, b=1.5, tag='t')")


def test_keeps_hash_accepts_the_records_classes_and_keeps_the_same_hash() -> None:
    cls = keeps_hash(
        records.dataclass(frozen=True)(type("K", (), {"__annotations__": {"a": "int"}, "__module__": __name__}))
    )
    assert records.makes_eq(cls) and hash(cls(3)) == hash((3,))
    with pytest.raises(TypeError, match="not a frozen dataclass with eq"):
        keeps_hash(
            records.dataclass(frozen=True, eq=False)(
                type("N", (), {"__annotations__": {"a": "int"}, "__module__": __name__})
            )
        )


def _with_init(dc: Any) -> dict[str, type]:
    @dc(frozen=True)
    class Plain:
        a: int
        b: list = dataclasses.field(default_factory=list)
        c: str = "c"
        d: dict = dataclasses.field(default_factory=dict, init=False)
        e: int = dataclasses.field(default=5, init=False)
        k: float = dataclasses.field(default=1.0, kw_only=True)

    @dc(frozen=True, kw_only=True)
    class Posted:
        a: int
        twice: int = 0

        def __post_init__(self) -> None:
            object.__setattr__(self, "twice", 2 * self.a)

    return {"Plain": Plain, "Posted": Posted}


STD_INIT, OUR_INIT = _with_init(dataclasses.dataclass), _with_init(records.dataclass)


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [("Plain", (1,), {}), ("Plain", (1, [2], "x"), {"k": 3.0}), ("Posted", (), {"a": 4})],
)
def test_a_frozen_records_init_builds_the_same_instance_and_signature(name: str, args: tuple, kwargs: dict) -> None:
    ours, std = OUR_INIT[name](*args, **kwargs), STD_INIT[name](*args, **kwargs)
    assert vars(ours) == vars(std) and repr(ours) == repr(std)
    sig = {p.name: (p.kind, p.default) for p in inspect.signature(OUR_INIT[name]).parameters.values()}
    std_sig = {p.name: (p.kind, p.default) for p in inspect.signature(STD_INIT[name]).parameters.values()}
    assert sig == std_sig
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours.a = 0  # type: ignore[misc]


def test_the_fast_init_is_used_where_it_applies_and_its_factory_runs_per_instance() -> None:
    assert getattr(OUR_INIT["Plain"].__init__, "__colint_fast__", False)
    assert getattr(OUR_INIT["Posted"].__init__, "__colint_fast__", False)  # and it calls __post_init__ last
    assert OUR_INIT["Posted"](a=4).twice == 8
    x, y = OUR_INIT["Plain"](1), OUR_INIT["Plain"](1)
    assert x.b is not y.b and x.d is not y.d and "e" not in vars(x) and x.e == 5
    assert (
        OUR_INIT["Plain"].__doc__
        == STD_INIT["Plain"].__doc__
        == ("Plain(a: 'int', b: 'list' = <factory>, c: 'str' = 'c', *, k: 'float' = 1.0)")
    )


def test_frozen_records_refuse_assignment_and_deletion_as_the_stdlib_does() -> None:
    for kinds in (OURS, STD):
        for obj in (kinds["Frozen"](a=1), kinds["Slotted"](1, "x")):
            with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'a'"):
                obj.a = 2  # type: ignore[misc]
            with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'a'"):
                del obj.a  # type: ignore[misc]
    assert records.is_frozen(OURS["Frozen"]) and records.is_frozen(OURS["Slotted"])
    assert not records.is_frozen(OURS["Mutable"])


def test_slotted_frozen_records_pickle_and_copy_field_by_field() -> None:
    import copy
    import pickle

    from colint.findings import Finding

    f = Finding(code="CL201", name="n", rule="r", severity="warning", message="m", key="hidden_size", gpu="b200")
    assert pickle.loads(pickle.dumps(f)) == f and copy.deepcopy(f) == f and copy.copy(f) == f
    assert "__slots__" in Finding.__dict__ and records.is_frozen(Finding)


def test_a_frozen_record_and_a_mutable_one_do_not_inherit_from_each_other() -> None:
    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):
        records.dataclass(type("M", (OURS["Frozen"],), {"__annotations__": {"z": "int"}, "__module__": __name__}))
    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):
        records.dataclass(frozen=True)(
            type("F", (OURS["Mutable"],), {"__annotations__": {"z": "int"}, "__module__": __name__})
        )
    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):
        records.dataclass(frozen=True)(type("S", (), {"__setattr__": lambda self, k, v: None, "__module__": __name__}))
