"""colint.records.Record: trusted construction keeps pydantic's semantics without a schema build (issue 7)."""

import json
import os
import shutil
import subprocess
import sys
from typing import Optional

import pytest
from pydantic import ConfigDict, Field, ValidationError

from colint import records
from colint.records import Record, from_trusted_data

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HF = os.path.join(ROOT, "tests", "corpus", "hf")


@pytest.fixture(autouse=True)
def _trusting(monkeypatch):
    """These tests build values validation would change on purpose: not under COLINT_CHECK_RECORDS=1."""
    monkeypatch.setattr(records, "_CHECK", False)


class Point(Record):
    model_config = ConfigDict(frozen=True)

    x: int
    y: int = 0
    label: Optional[str] = None


class Bag(Record):
    name: str
    items: list[int] = Field(default_factory=list)
    tags: dict[str, str] = {}  # a mutable plain default: pydantic copies it per instance, so do we
    count: int = Field(default=1, ge=1)
    at: Optional[Point] = None


class Scaled(Record):
    ratio: float
    points: list[Point] = Field(default_factory=list)
    by_name: dict[str, Point] = Field(default_factory=dict)
    origin: Optional[Point] = None


def test_defaults_and_factories_are_applied_and_fresh_per_instance():
    a, b = Bag(name="a"), Bag(name="b")
    assert (a.items, a.tags, a.count, a.at) == ([], {}, 1, None)
    a.items.append(3)
    a.tags["k"] = "v"
    assert (b.items, b.tags) == ([], {})
    assert Bag.model_fields["tags"].default == {}  # the class default itself is untouched


def test_fields_set_is_the_names_passed():
    assert Bag(name="a", count=2).model_fields_set == {"name", "count"}
    assert Point(x=1).model_fields_set == {"x"}
    assert Bag(name="a").model_dump(exclude_unset=True) == {"name": "a"}


def test_values_are_trusted_not_coerced_or_checked():
    b = Bag(name="a", count=0, items=(1, 2))  # validation would reject count=0 and make a list
    assert (b.count, b.items) == (0, (1, 2))
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        Bag.model_validate({"name": "a", "count": 0})  # model_validate is still the full schema
    assert Bag.model_validate({"name": "a", "items": ("1", 2)}).items == [1, 2]


def test_unknown_or_missing_fields_are_programming_errors():
    with pytest.raises(TypeError, match=r"Bag\(\) got unknown field\(s\): colour"):
        Bag(name="a", colour="red")
    with pytest.raises(TypeError, match=r"Point\(\) missing required field 'x'"):
        Point(y=1)


def test_frozen_records_are_hashable_equal_by_value_and_immutable():
    p, q = Point(x=1, y=2), Point(x=1, y=2)
    assert p == q and hash(p) == hash(q) and len({p, q, Point(x=2)}) == 2
    assert p != Point(x=1, y=3)
    with pytest.raises(ValidationError, match="frozen"):
        p.x = 5
    assert p.x == 1


def test_model_copy_updates_and_keeps_the_original():
    p = Point(x=1)
    q = p.model_copy(update={"y": 7})
    assert (p.y, q.x, q.y) == (0, 1, 7)
    assert q.model_fields_set == {"x", "y"}
    b = Bag(name="a", items=[1])
    c = b.model_copy(deep=True)
    c.items.append(2)
    assert b.items == [1]


def test_model_dump_and_json_schema_still_work():
    b = Bag(name="a", at=Point(x=1, label="p"))
    assert b.model_dump(mode="json") == {"name": "a", "items": [], "tags": {}, "count": 1,
                                         "at": {"x": 1, "y": 0, "label": "p"}}
    assert json.loads(b.model_dump_json())["at"]["x"] == 1
    assert Bag.model_json_schema()["properties"]["count"]["minimum"] == 1
    assert repr(Point(x=1)) == "Point(x=1, y=0, label=None)"


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
    from colint.spec.model import FFN, KeyIssue, LayerKind, Mixer, ModelSpec, Quantization, Source

    for cls in (Scenario, Edit, Finding, Fix, Impact, Profile, Tile, Tiles, TimeModel, FFN, KeyIssue, LayerKind,
                Mixer, ModelSpec, Quantization, Source):
        assert issubclass(cls, Record) and cls.model_config.get("defer_build") is True, cls
    with pytest.raises(ValidationError):
        Scenario.model_validate({"tp": 0})


# Run in a fresh interpreter: whatever this test process built before must not count.
_HOT_PATH = r"""
import json, sys
from colint.cli import main
codes = [main(["check", "--isolated", *sys.argv[1:-1]]), main(["check", "--format", "json", "--fail-on", "info", sys.argv[-1]])]
from colint.records import Record
from colint.settings import FileSettings
seen, todo = {}, [Record]
while todo:
    c = todo.pop()
    for s in c.__subclasses__():
        seen[s.__qualname__] = s.__pydantic_complete__
        todo.append(s)
seen["FileSettings"] = FileSettings.__pydantic_complete__
heavy = [m for m in ("numpy", "transformers", "torch", "matplotlib", "rich", "yaml", "ruamel.yaml") if m in sys.modules]
print(json.dumps({"codes": codes, "complete": seen, "heavy": heavy}))
"""


def test_check_path_builds_no_pydantic_schema(tmp_path):
    files = []
    for name in ("deepseek__DeepSeek-V3.json", "gpt2__gpt2-medium-early-revision.json", "gpt-oss__gpt-oss-20b.json"):
        shutil.copy(os.path.join(HF, name), tmp_path / name)
        files.append(str(tmp_path / name))
    env = {k: v for k, v in os.environ.items() if k != "COLINT_CHECK_RECORDS"}
    proc = subprocess.run([sys.executable, "-c", _HOT_PATH, *files, "--gpu", "b200", "--gpu", "h100-sxm",
                           files[0]], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["codes"] == [1, 1]  # these configs have warnings: findings were built and reported
    complete = result["complete"]
    assert {"ModelSpec", "LayerKind", "Mixer", "FFN", "Source", "Finding", "Fix", "Edit", "Impact", "Scenario",
            "Profile", "Tile", "Tiles", "TimeModel", "FileSettings"} <= set(complete)
    assert [name for name, built in complete.items() if built] == []
    assert result["heavy"] == []
