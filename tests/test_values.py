"""colint's value types: frozen keyword-only dataclasses, plain data both ways, pydantic only at the edges."""

import dataclasses
import inspect
import json
import math
import os
import shutil
import subprocess
import sys

import pytest

from colint.analysis.scenario import Scenario
from colint.util.records import is_frozen
from colint.errors import ProfileError
from colint.findings import Edit, Finding, Fix, Impact
from colint.hardware_profiles import PROFILE_DIR, load_profile
from colint.hardware_profiles.schema import Profile, Tile, Tiles, TimeModel
from colint.normalize.model_spec import FFN, KeyIssue, LayerKind, Mixer, ModelSpec, Quantization, Source
from colint.loading import load_text
from colint.normalize import normalize
from colint.util.plain_data import build, dump, json_schema, validate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HF = os.path.join(ROOT, "tests", "corpus", "hf")
VALUE_TYPES = (
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
)


@pytest.mark.parametrize("cls", VALUE_TYPES, ids=lambda c: c.__name__)
def test_value_types_are_frozen_keyword_only_dataclasses(cls):
    params = dataclasses.fields(cls)
    assert dataclasses.is_dataclass(cls) and is_frozen(cls)
    assert all(f.kw_only for f in params)
    assert "__slots__" in cls.__dict__  # no per-instance dict


def test_a_value_cannot_be_changed_in_place_only_replaced():
    sc = Scenario(tp=8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.tp = 4  # type: ignore[misc]
    f = Finding(code="CL201", name="n", rule="alignment", severity="warning", message="m")
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.line = 3  # type: ignore[misc]
    moved = dataclasses.replace(f, line=3, column=1)
    assert (f.line, moved.line, moved.column, moved.code) == (None, 3, 1, "CL201")
    with pytest.raises(TypeError):
        dataclasses.replace(f, colour="red")  # an unknown field is a programming error
    with pytest.raises(TypeError):
        Scenario("latency")  # type: ignore[misc]  # keyword-only


def test_dump_is_the_json_shape_in_field_order():
    issue = KeyIssue(kind="unknown", source=Source(key="a.b", line=3), detail="d")
    assert dump(issue) == {
        "kind": "unknown",
        "source": {"key": "a.b", "line": 3, "column": None, "default": False, "derived": False},
        "detail": "d",
        "suggestion": None,
    }
    q = Quantization(quant_method="fp8", weight_block_size=[128, 128], raw={1: (1, 2), False: math.inf})
    assert dump(q)["raw"] == {1: (1, 2), False: math.inf}  # python: as held
    assert dump(q, json=True)["raw"] == {"1": [1, 2], "false": None}  # JSON: str keys, lists, no infinities
    assert list(dump(Scenario(), json=True, exclude={"name", "weights"}))[:2] == ["activations", "outputs"]


def test_the_schema_carries_each_fields_constraints():
    profile = json_schema(Profile)
    assert profile["additionalProperties"] is False and "sm_count" in profile["required"]
    assert profile["properties"]["sm_count"] == {"exclusiveMinimum": 0, "title": "Sm Count", "type": "integer"}
    assert profile["properties"]["domain_size"]["minimum"] == 1
    tm = profile["$defs"]["TimeModel"]["properties"]
    assert (tm["memory_efficiency"]["exclusiveMinimum"], tm["memory_efficiency"]["maximum"]) == (0, 1)
    assert profile["$defs"]["Tile"]["properties"]["sms"] == {
        "default": 1,
        "exclusiveMinimum": 0,
        "title": "Sms",
        "type": "integer",
    }
    assert json_schema(Scenario)["properties"]["tp"] == {"default": 1, "minimum": 1, "title": "Tp", "type": "integer"}


def test_validation_coerces_and_refuses_like_the_schema_says():
    from pydantic import ValidationError

    assert validate(Scenario, {"tp": "8"}).tp == 8
    for bad, loc in (({"tp": 0}, ("tp",)), ({"colour": "red"}, ("colour",))):
        with pytest.raises(ValidationError) as exc:
            validate(Scenario, bad)
        assert exc.value.errors()[0]["loc"] == loc
    with pytest.raises(ValidationError, match="tiles.candidates must list at least one tile"):
        validate(Tiles, {"base": {"m": 128, "n": 128}, "candidates": [], "k_tile": {"bf16": 64}})


def test_the_trusted_build_makes_what_validation_makes():
    data = {"base": {"m": 128, "n": 128}, "candidates": [{"m": 64, "n": 256, "sms": 2}], "k_tile": {"bf16": 64}}
    assert build(Tiles, data) == validate(Tiles, data)
    tm = {"compute_efficiency": {"bf16": 1}, "kernel_floor_us": 4, "k_fill_tiles": 1, "memory_efficiency": 0.9}
    tm.update(per_sm_bandwidth_share=2)
    assert repr(build(TimeModel, tm)) == repr(validate(TimeModel, tm))  # 4 -> 4.0, as validation makes it


@pytest.mark.parametrize(
    "edit, located",
    [
        (("\nfoo: 1\n", None), "{path}:{n}:1: error: foo: Extra inputs are not permitted"),
        (("sm_count: 132", "sm_count: 0"), "{path}:9:1: error: sm_count: Input should be greater than 0"),
        (("vendor: nvidia", "vendor: intel"), "{path}:6:1: error: vendor: Input should be 'nvidia' or 'amd'"),
        (("sm_count: 132\n", ""), "{path}: error: sm_count: Field required"),
    ],
    ids=["unknown-key", "constraint", "literal", "missing"],
)
def test_a_bad_user_profile_is_refused_on_one_located_line(tmp_path, edit, located):
    text = (PROFILE_DIR / "h200.yaml").read_text()
    old, new = edit
    text = text + old if new is None else text.replace(old, new, 1)
    path = tmp_path / "my-gpu.yaml"
    path.write_text(text)
    with pytest.raises(ProfileError) as exc:
        load_profile(str(path))
    assert exc.value.located() == located.format(path=path, n=len(text.splitlines()))


# Run in a fresh interpreter: whatever this test process imported before must not count.
_HOT_PATH = r"""
import json, os, sys
from colint.cli.main import main
def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core", "annotated_types"))
codes = [main(["check", "--isolated", *sys.argv[1:-1]]), main(["check", "--format", "json", "--fail-on", "info", sys.argv[-1]])]
heavy = [m for m in ("numpy", "transformers", "torch", "matplotlib", "rich", "yaml", "ruamel.yaml", "hashlib")
         if m in sys.modules]  # shipped GPUs come from a JSON index: no YAML parser
os.chdir(os.path.dirname(sys.argv[-1]))  # a [tool.colint] table here: settings validated too
codes.append(main(["check", "--fail-on", "never", sys.argv[-1]]))
before_user_gpu = loaded()
codes.append(main(["check", "--gpu", os.path.join(os.path.dirname(sys.argv[-1]), "my-gpu.yaml"), sys.argv[-1]]))
print(json.dumps({"codes": codes, "pydantic": before_user_gpu, "heavy": heavy, "after_user_gpu": loaded()}))
"""


def test_check_path_never_imports_pydantic(tmp_path):
    """A check — several GPUs, JSON output, a [tool.colint] table — builds every value (ModelSpec, Finding,
    Scenario, Profile, the settings) without importing pydantic; a user's GPU file is untrusted input,
    validated by pydantic at that edge."""
    files = []
    for name in ("deepseek__DeepSeek-V3.json", "gpt2__gpt2-medium-early-revision.json", "gpt-oss__gpt-oss-20b.json"):
        shutil.copy(os.path.join(HF, name), tmp_path / name)
        files.append(str(tmp_path / name))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.colint]\ngpus = ["h100-sxm"]\ntp = 8\nextend-select = ["CL2"]\n[tool.colint.severity]\nCL201 = "error"\n'
    )
    shutil.copy(PROFILE_DIR / "h200.yaml", tmp_path / "my-gpu.yaml")
    proc = subprocess.run(
        [sys.executable, "-c", _HOT_PATH, *files, "--gpu", "b200", "--gpu", "h100-sxm", files[0]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # at default settings gpt2's vocab 50257 (off the 16-byte path) blocks; gpt-oss-20b alone advises (exit 0); at
    # the project's tp=8 with CL201 as an error it blocks: findings were built and reported either way
    assert result["codes"] == [1, 1, 0, 1]
    assert result["pydantic"] == []
    assert result["heavy"] == []
    assert "pydantic" in result["after_user_gpu"]  # the user's profile went through the schema


def _twins():
    """The same frozen dataclass twice: the stdlib's, and colint.util.records' (its own __init__)."""
    from colint.util import records

    def make(dc):
        @dc(frozen=True)
        class Rec:
            a: int
            b: float = 2.5
            c: list = dataclasses.field(default_factory=list)
            d: str = dataclasses.field(default="d", init=False)
            e: tuple = dataclasses.field(default=(), kw_only=True)

        return Rec

    return make(dataclasses.dataclass), make(records.dataclass)


def test_the_records_init_builds_what_the_generated_init_builds():
    from colint.util import records

    plain, fast = _twins()
    for args, kwargs in (((1,), {}), ((1, 3.0, [4]), {"e": (5,)}), ((), {"a": 7, "c": [1], "e": (2,)})):
        x, y = plain(*args, **kwargs), fast(*args, **kwargs)
        assert dataclasses.asdict(x) == dataclasses.asdict(y)
        assert repr(x).split("(", 1)[1] == repr(y).split("(", 1)[1]
        assert vars(x) == vars(y) and list(vars(x)) == list(vars(y))  # every field, in field order
    assert fast(1).c is not fast(1).c  # a fresh default per instance, as the factory gives
    assert fast(1) == fast(1) and hash(fast(1, c=())) == hash(fast(1, c=()))
    assert str(inspect.signature(plain)) == str(inspect.signature(fast))
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast(1).a = 2
    for bad_args, bad_kwargs in (((), {}), ((1, 2, 3, 4), {}), ((1,), {"d": 1}), ((1,), {"z": 1})):
        with pytest.raises(TypeError) as plain_err:
            plain(*bad_args, **bad_kwargs)
        with pytest.raises(TypeError) as fast_err:
            fast(*bad_args, **bad_kwargs)
        assert str(plain_err.value) == str(fast_err.value)
    assert dataclasses.replace(fast(1, e=(1,)), b=9.0) == fast(1, 9.0, e=(1,))

    @records.dataclass(frozen=True)
    class Named:  # field names a generated function might use for itself
        d: int
        self: int = 2
        _MISSING: list = dataclasses.field(default_factory=list)

    assert (Named(5).d, Named(5).self, Named(1, self=3, _MISSING=[4])) == (5, 2, Named(1, 3, [4]))


def test_a_frozen_record_with_an_initvar_keeps_the_stdlib_init():
    from colint.util import records

    @records.dataclass(frozen=True)
    class WithInitVar:
        a: int
        scale: dataclasses.InitVar[int] = 1

        def __post_init__(self, scale):
            object.__setattr__(self, "a", self.a * scale)

    assert WithInitVar(2, 3).a == 6 and not getattr(WithInitVar.__init__, "__colint_fast__", False)
    assert records.is_frozen(WithInitVar) and WithInitVar.__dataclass_params__.frozen  # the stdlib's own
    with pytest.raises(dataclasses.FrozenInstanceError):
        WithInitVar(1).a = 2


def test_kept_hashes_are_the_fields_hash_computed_once_and_never_pickled():
    """Gemm and LayerKind keep their hash (keeps_hash: the analysis keys memos by their values): the hash of their
    fields in order, as the generated one; a pickled or copied value computes its own (a string's hash is per
    process). A slotted class needs the HashSlot base to hold it."""
    import copy
    import pickle

    from colint.normalize.weights import Gemm
    from colint.util.plain_data import keeps_hash

    g = Gemm(
        "moe.experts.gate_up", 7168, 4096, 58, 256, 8 / 256, False, "expert", "gate_up", "hidden_size", None, "moe"
    )
    with open(os.path.join(HF, "deepseek__DeepSeek-V3.json"), encoding="utf-8") as fh:
        kind = normalize(load_text(fh.read(), "x.json", syntax="json")).layer_kinds[-1]
    for value in (g, kind):
        assert hash(value) == hash(tuple(getattr(value, f.name) for f in dataclasses.fields(value)))
        assert value._hash == hash(value)
        for twin in (pickle.loads(pickle.dumps(value)), copy.copy(value), dataclasses.replace(value)):
            assert not hasattr(twin, "_hash") and twin == value and hash(twin) == hash(value)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        a: int

    with pytest.raises(TypeError, match="HashSlot"):
        keeps_hash(Slotted)
