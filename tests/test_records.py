"""colint.records.Record: plain value types whose schema is pydantic, imported only when asked for (issue 7)."""

import json
import os
import shutil
import subprocess
import sys
from typing import Optional

import pytest
from pydantic import ValidationError

from colint import records
from colint.records import Record, field, from_trusted_data, schema_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HF = os.path.join(ROOT, "tests", "corpus", "hf")


@pytest.fixture(autouse=True)
def _trusting(monkeypatch):
    """These tests build values validation would change on purpose: not under COLINT_CHECK_RECORDS=1."""
    monkeypatch.setattr(records, "_CHECK", False)


class Point(Record, frozen=True):
    x: int
    y: int = 0
    label: Optional[str] = None


class Bag(Record):
    name: str
    items: list[int] = field(default_factory=list)
    tags: dict[str, str] = {}  # a mutable plain default: pydantic copies it per instance, so do we
    count: int = field(default=1, ge=1, description="how many")
    at: Optional[Point] = None


class Scaled(Record):
    ratio: float
    points: list[Point] = field(default_factory=list)
    by_name: dict[str, Point] = field(default_factory=dict)
    origin: Optional[Point] = None


def test_defaults_and_factories_are_applied_and_fresh_per_instance():
    a, b = Bag(name="a"), Bag(name="b")
    assert (a.items, a.tags, a.count, a.at) == ([], {}, 1, None)
    a.items.append(3)
    a.tags["k"] = "v"
    assert (b.items, b.tags) == ([], {})
    assert Bag.tags == {} and Bag.__record_fields__["tags"].default == {}  # the class default is untouched
    assert "items" not in Bag.__dict__  # a field() declaration leaves no FieldInfo on the class


def test_values_are_trusted_not_coerced_or_checked():
    b = Bag(name="a", count=0, items=(1, 2))  # validation would reject count=0 and make a list
    assert (b.count, b.items) == (0, (1, 2))
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        Bag.model_validate({"name": "a", "count": 0})  # model_validate is still the full schema
    assert Bag.model_validate({"name": "a", "items": ("1", 2)}).items == [1, 2]


def test_unknown_or_missing_fields_are_programming_errors():
    with pytest.raises(TypeError, match=r"Bag.__init__\(\) got an unexpected keyword argument 'colour'"):
        Bag(name="a", colour="red")
    with pytest.raises(TypeError, match=r"Bag\(\) got unknown field\(s\): colour"):
        Record.__init__(Bag.__new__(Bag), name="a", colour="red")  # the reference constructor says it so
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        Bag("a")
    with pytest.raises(TypeError, match=r"Point\(\) missing required field 'x'"):
        Point(y=1)


def test_the_generated_constructor_matches_the_reference_one():
    """Each class's generated __init__ (defaults in line) builds what the generic loop builds, for every
    subset of arguments of colint's own records."""
    import itertools

    from colint.analysis.scenario import Scenario
    from colint.normalize.model_spec import FFN, Mixer, Source

    for cls, values in (
        (Bag, {"name": "b", "items": [1], "tags": {"k": "v"}, "count": 3, "at": Point(x=1)}),
        (Point, {"x": 1, "y": 2, "label": "p"}),
        (Mixer, {"kind": "mla", "num_heads": 8, "kv_lora_rank": 512, "window": None}),
        (FFN, {"kind": "moe", "num_experts": 8, "top_k": 2}),
        (Source, {"key": "a.b", "line": 3, "column": 1, "default": False}),
        (Scenario, {"tp": 8, "context": 1024}),
    ):
        required = [n for n, f in cls.__record_fields__.items() if f.required]
        optional = [n for n in values if n not in required]
        for r in range(len(optional) + 1):
            for names in itertools.combinations(optional, r):
                kwargs = {n: values[n] for n in (*required, *names)}
                reference = cls.__new__(cls)
                Record.__init__(reference, **kwargs)
                built = cls(**kwargs)
                assert type(built) is cls and built.__dict__ == reference.__dict__, (cls, names)
                assert list(built.__dict__) == list(cls.__record_fields__)
    assert Bag(name="a").items is not Bag(name="a").items  # factories run per instance


def test_frozen_records_are_hashable_equal_by_value_and_immutable():
    p, q = Point(x=1, y=2), Point(x=1, y=2)
    assert p == q and hash(p) == hash(q) and len({p, q, Point(x=2)}) == 2
    assert p != Point(x=1, y=3)
    with pytest.raises(AttributeError, match="Point is frozen: cannot set 'x'"):
        p.x = 5
    assert p.x == 1
    b = Bag(name="a")
    b.count = 3  # a mutable Record takes its own fields ...
    with pytest.raises(AttributeError, match="Bag has no field 'colour'"):
        b.colour = "red"  # ... and nothing else, so dumps and equality stay the declared fields
    assert b == Bag(name="a", count=3) and b != Point(x=1) and b.model_dump()["count"] == 3
    with pytest.raises(TypeError, match="unhashable"):
        hash(b)


def test_model_copy_updates_and_keeps_the_original():
    p = Point(x=1)
    q = p.model_copy(update={"y": 7})
    assert (p.y, q.x, q.y) == (0, 1, 7)
    with pytest.raises(TypeError, match=r"Point.model_copy\(\) got unknown field\(s\): z"):
        p.model_copy(update={"z": 1})
    b = Bag(name="a", items=[1])
    c = b.model_copy(deep=True)
    c.items.append(2)
    assert b.items == [1]


def test_model_dump_and_json_schema_still_work():
    b = Bag(name="a", at=Point(x=1, label="p"))
    assert b.model_dump(mode="json") == {
        "name": "a",
        "items": [],
        "tags": {},
        "count": 1,
        "at": {"x": 1, "y": 0, "label": "p"},
    }
    assert json.loads(b.model_dump_json())["at"]["x"] == 1
    schema = Bag.model_json_schema()
    assert schema["properties"]["count"] == {
        "default": 1,
        "description": "how many",
        "minimum": 1,
        "title": "Count",
        "type": "integer",
    }
    assert schema["required"] == ["name"] and "Point" in schema["$defs"]
    assert repr(Point(x=1)) == "Point(x=1, y=0, label=None)" and str(Point(x=1)) == "x=1 y=0 label=None"
    assert dict(Point(x=1)) == {"x": 1, "y": 0, "label": None}


def test_json_dump_is_what_pydantic_would_write():
    """The hand-written dump agrees with pydantic's serializer on the mirror model, json and python mode."""
    b = Bag(name="a", items=[1], tags={"k": "v"}, at=Point(x=1, label="p"))
    mirror = schema_model(Bag).model_validate(b.model_dump())
    assert b.model_dump(mode="json") == mirror.model_dump(mode="json")
    assert b.model_dump() == mirror.model_dump()
    assert b.model_dump(mode="json", exclude={"at", "tags"}) == {"name": "a", "items": [1], "count": 1}

    class Loose(Record):
        raw: dict = field(default_factory=dict)

    raw = {"t": (1, 2), "inf": float("inf"), "nan": float("nan"), 3: "three", True: "yes", "n": [None, 1.5]}
    assert (
        Loose(raw=raw).model_dump(mode="json")
        == schema_model(Loose)(raw=raw).model_dump(mode="json")
        == {"raw": {"t": [1, 2], "inf": None, "nan": None, "3": "three", "true": "yes", "n": [None, 1.5]}}
    )
    assert Loose(raw={"t": (1, 2)}).model_dump() == {"raw": {"t": (1, 2)}}


def test_validation_errors_name_the_field_and_run_invariants():
    class Pair(Record, extra="forbid"):
        lo: int
        hi: int
        points: list[Point] = field(default_factory=list)

        def _invariants(self) -> None:
            if self.lo > self.hi:
                raise ValueError("lo must not exceed hi")

    p = Pair.model_validate({"lo": "1", "hi": 2, "points": [{"x": 3}]})
    assert type(p) is Pair and p == Pair(lo=1, hi=2, points=[Point(x=3)]) and type(p.points[0]) is Point
    with pytest.raises(ValidationError, match="lo must not exceed hi"):
        Pair.model_validate({"lo": 3, "hi": 2})
    with pytest.raises(ValidationError) as exc:
        Pair.model_validate({"lo": 1, "hi": 2, "colour": "red"})
    assert [(e["type"], e["loc"]) for e in exc.value.errors()] == [("extra_forbidden", ("colour",))]
    with pytest.raises(ValidationError) as exc:
        Pair.model_validate({"lo": 1, "hi": 2, "points": [{"x": "a"}]})
    assert [e["loc"] for e in exc.value.errors()] == [("points", 0, "x")]
    Pair(lo=3, hi=2)  # the constructor trusts: invariants are a validation matter


def test_declaration_mistakes_are_refused():
    with pytest.raises(TypeError, match="not model_config"):

        class A(Record):
            model_config = {"frozen": True}

    with pytest.raises(TypeError, match="extra must be one of"):

        class B(Record, extra="allow"):
            x: int

    with pytest.raises(TypeError, match="unknown field constraint"):
        field(default=1, multiple_of=2)
    with pytest.raises(TypeError, match="not both"):
        field(default=1, default_factory=list)


def test_from_trusted_data_builds_nested_records_and_floats_like_validation():
    data = {"ratio": 2, "points": [{"x": 1}], "by_name": {"o": {"x": 0, "y": 3}}, "origin": {"x": 4}}
    trusted = from_trusted_data(Scaled, data)
    assert repr(trusted) == repr(Scaled.model_validate(data))
    assert type(trusted.ratio) is float and isinstance(trusted.by_name["o"], Point)
    assert from_trusted_data(Scaled, {"ratio": 1.5, "origin": None}).origin is None


def test_check_mode_reports_a_value_validation_would_change(monkeypatch):
    monkeypatch.setattr(records, "_CHECK", True)
    assert Bag(name="a", items=[1]).items == [1]  # agrees with validation
    with pytest.raises(AssertionError, match="trusted Bag differs from its validated value"):
        Bag(name="a", items=(1,))
    with pytest.raises(ValidationError):
        Bag(name="a", count=0)


def test_colint_value_types_are_records():
    from colint.analysis.scenario import Scenario
    from colint.findings import Edit, Finding, Fix, Impact
    from colint.hardware_profiles.schema import Profile, Tile, Tiles, TimeModel
    from colint.normalize.model_spec import FFN, KeyIssue, LayerKind, Mixer, ModelSpec, Quantization, Source

    for cls in (
        Scenario,
        Edit,
        Finding,
        Fix,
        Impact,
        Profile,
        Tile,
        Tiles,
        TimeModel,
        FFN,
        KeyIssue,
        LayerKind,
        Mixer,
        ModelSpec,
        Quantization,
        Source,
    ):
        assert issubclass(cls, Record) and not hasattr(cls, "model_config"), cls
    with pytest.raises(ValidationError):
        Scenario.model_validate({"tp": 0})


# Run in a fresh interpreter: whatever this test process imported before must not count.
_HOT_PATH = r"""
import json, os, sys
from colint.cli import main
codes = [main(["check", "--isolated", *sys.argv[1:-1]]), main(["check", "--format", "json", "--fail-on", "info", sys.argv[-1]])]
heavy = [m for m in ("numpy", "transformers", "torch", "matplotlib", "rich", "yaml", "ruamel.yaml", "hashlib")
         if m in sys.modules]  # shipped GPUs come from a JSON index: no YAML parser
os.chdir(os.path.dirname(sys.argv[-1]))  # a [tool.colint] table here: settings validated too
codes.append(main(["check", "--fail-on", "never", sys.argv[-1]]))
codes.append(main(["check", "--gpu", os.path.join(os.path.dirname(sys.argv[-1]), "my-gpu.yaml"), sys.argv[-1]]))
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core", "annotated_types"))
print(json.dumps({"codes": codes, "pydantic": loaded, "heavy": heavy}))
"""


def test_check_path_never_imports_pydantic(tmp_path):
    """A check — several GPUs, JSON output, a [tool.colint] table, a user's GPU file — builds every Record
    (ModelSpec, Finding, Scenario, Profile) and the settings without importing pydantic at all."""
    files = []
    for name in ("deepseek__DeepSeek-V3.json", "gpt2__gpt2-medium-early-revision.json", "gpt-oss__gpt-oss-20b.json"):
        shutil.copy(os.path.join(HF, name), tmp_path / name)
        files.append(str(tmp_path / name))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.colint]\ngpus = ["h100-sxm"]\ntp = 8\nextend-select = ["CL2"]\n[tool.colint.severity]\nCL201 = "error"\n'
    )
    from colint.hardware_profiles import PROFILE_DIR

    shutil.copy(PROFILE_DIR / "h200.yaml", tmp_path / "my-gpu.yaml")
    env = {k: v for k, v in os.environ.items() if k != "COLINT_CHECK_RECORDS"}
    proc = subprocess.run(
        [sys.executable, "-c", _HOT_PATH, *files, "--gpu", "b200", "--gpu", "h100-sxm", files[0]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["codes"] == [1, 1, 0, 1]  # these configs have warnings: findings were built and reported
    assert result["pydantic"] == []
    assert result["heavy"] == []


# -- model_validate's exact-data path (no pydantic) must return what pydantic returns ------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from colint import records as _records  # noqa: E402


def _valid_samples() -> list:
    from colint.hardware_profiles import PROFILE_DIR, _read_yaml
    from colint.hardware_profiles.schema import Profile, Tile
    from colint.analysis.scenario import Scenario

    return [
        (Profile, _read_yaml(PROFILE_DIR / "b200.yaml")),
        (Profile, _read_yaml(PROFILE_DIR / "mi300x.yaml")),
        (Scenario, {"name": "latency", "tp": 8, "ep": 16, "context": 131072, "gpu": "b200"}),
        (Tile, {"m": 128, "n": 256, "sms": 2}),
        (Bag, {"name": "a", "items": [1, 2], "tags": {"k": "v"}, "at": {"x": 1, "label": "p"}}),
    ]


_SAMPLES = _valid_samples()
_ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([10**100, 2**63, 128, 1e-9, 0.5, 7.0]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.sampled_from(["auto", "bf16", "b200"]),
    st.lists(st.one_of(st.integers(-1, 3), st.text(max_size=3), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=3), st.one_of(st.integers(-1, 3), st.floats(), st.text(max_size=3)), max_size=3),
    st.tuples(st.integers(), st.integers()),
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def _mutated(data, path, new, drop):
    import copy as _copy

    out = _copy.deepcopy(data)
    if not path:
        return new
    holder = out
    for p in path[:-1]:
        holder = holder[p]
    if drop and isinstance(holder, dict):
        del holder[path[-1]]
    else:
        holder[path[-1]] = new
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_exact_data_path_agrees_with_pydantic(data):
    """Mutate one value anywhere in valid data (a shipped profile, settings, a scenario): whenever the
    exact-data path builds a value, pydantic accepts the same input and builds an equal value."""
    cls, valid = data.draw(st.sampled_from(_SAMPLES))
    path = data.draw(st.sampled_from(list(_paths(valid))))
    new = data.draw(_ODD_VALUES)
    drop = data.draw(st.booleans())
    value = _mutated(valid, path, new, drop)
    fast = _records._exact(cls, value)
    try:
        slow = _records._adapter(cls).validate_python(value)
    except ValidationError:
        assert fast is _records._NO, (path, new)
        return
    if fast is not _records._NO:
        assert type(fast) is type(slow) and repr(fast) == repr(slow), (path, new)


def test_exact_data_path_takes_real_data_and_declines_what_needs_coercion():
    for cls, valid in _SAMPLES:
        fast = _records._exact(cls, valid)
        assert fast is not _records._NO, cls
        assert repr(fast) == repr(_records._adapter(cls).validate_python(valid)), cls
    from colint.analysis.scenario import Scenario

    assert _records._exact(Scenario, {"tp": "8"}) is _records._NO  # "8" -> 8 is pydantic's coercion
    assert _records._exact(Scenario, {"tp": True}) is _records._NO  # a bool is not an int here
    assert _records._exact(Scenario, {"tp": 0}) is _records._NO  # ge=1: pydantic explains
    assert Scenario.model_validate({"tp": "8"}).tp == 8
