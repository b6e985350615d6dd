"""Hardware profiles: schema, shipped data, user files, `colint profiles`."""

import json

import pytest

from colint.cli import main
from colint.errors import ProfileError, UsageError
from colint.hardware_profiles import HW_FORMATS, PROFILE_DIR, list_profiles, load_profile, time_model
from colint.plain_data import dump

NAMES = [
    "a100-sxm-80gb",
    "b200",
    "b300",
    "gb200",
    "gb300",
    "h100-nvl",
    "h100-sxm",
    "h200",
    "l40s",
    "mi300x",
    "mi325x",
    "mi355x",
    "rtx-pro-6000",
]


def test_shipped_profile_names_are_stable():
    assert list_profiles() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_profile_validates_and_sources_every_rate(name):
    p = load_profile(name)
    assert p.name == name
    assert set(p.peak_tflops) <= set(HW_FORMATS)
    for fmt in p.peak_tflops:
        assert f"peak_tflops.{fmt}" in p.sources or "peak_tflops" in p.sources
        assert fmt in p.alignment
    for key in ("sm_count", "memory_tbps", "memory_gb", "tiles", "launch_overhead_us"):
        assert key in p.sources
    # every reference key cited in sources is defined
    import re

    cited = {w for v in p.sources.values() for w in re.findall(r"\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+\b", v)}
    assert cited and cited <= set(p.references), cited - set(p.references)
    assert time_model(p).compute_efficiency  # its architecture has time-model constants


@pytest.mark.parametrize("name", NAMES)
def test_shipped_profile_passes_the_full_schema_and_the_trusted_build_equals_it(name):
    """load_profile builds shipped profiles without validation (start-up, issue 7): this is the
    validation. The validated value must equal the trusted one, types included (repr: 2250 vs 2250.0)."""
    from colint.hardware_profiles import PROFILE_DIR, Profile, _read_yaml
    from colint.plain_data import validate

    validated = validate(Profile, _read_yaml(PROFILE_DIR / f"{name}.yaml"))
    assert repr(load_profile(name)) == repr(validated)
    assert isinstance(load_profile(name).tiles.candidates[0], type(validated.tiles.base))


def test_shipped_architectures_pass_the_full_schema_and_equal_the_trusted_build():
    from colint.hardware_profiles import _architectures

    validated, trusted = _architectures(validate=True), _architectures()
    assert set(trusted) == {"ampere", "ada", "hopper", "blackwell-dc", "blackwell-rtx", "cdna3", "cdna4"}
    assert {a: repr(t) for a, t in trusted.items()} == {a: repr(v) for a, v in validated.items()}


def test_a_user_profile_is_validated_even_at_a_shipped_name_path(tmp_path):
    """A path is user input: the full schema applies (its model validator too)."""
    data = dump(load_profile("b200"), json=True)
    data["sources"] = {}
    path = tmp_path / "b200.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    with pytest.raises(ProfileError, match="no source for") as exc:
        load_profile(str(path))
    assert exc.value.key == "sources" and exc.value.line == 1  # JSON on one line: the key's line


def test_shipped_json_index_holds_every_yaml_file_as_parsed():
    """colint reads shipped profiles from _shipped.json (no YAML parser at start-up); it must be current:
    regenerate with scripts/gen_profiles_json.py after editing a profile."""
    from colint.hardware_profiles import PROFILE_DIR, _fingerprint, _read_yaml, _shipped_index

    index = _shipped_index()
    names = sorted(p.name for p in PROFILE_DIR.glob("*.yaml"))
    assert sorted(index) == names
    for name in names:
        path = PROFILE_DIR / name
        assert index[name]["fingerprint"] == _fingerprint(path.read_bytes()), (
            f"{name}: run scripts/gen_profiles_json.py"
        )
        parsed = _read_yaml(path)
        assert index[name]["data"] == parsed and list(index[name]["data"]) == list(parsed), name


def test_a_yaml_edited_after_the_index_is_read_from_the_yaml(monkeypatch):
    import colint.hardware_profiles as hp

    stale = {
        name: {"fingerprint": "0:00000000", "data": {**entry["data"], "display_name": "stale"}}
        for name, entry in hp._shipped_index().items()
    }
    monkeypatch.setattr(hp, "_shipped_index", lambda: stale)
    assert hp._read_shipped(hp.PROFILE_DIR / "b200.yaml") == hp._read_yaml(hp.PROFILE_DIR / "b200.yaml")
    fresh = {
        **stale,
        "b200.yaml": {
            **stale["b200.yaml"],
            "fingerprint": hp._fingerprint((hp.PROFILE_DIR / "b200.yaml").read_bytes()),
        },
    }
    monkeypatch.setattr(hp, "_shipped_index", lambda: fresh)
    assert hp._read_shipped(hp.PROFILE_DIR / "b200.yaml")["display_name"] == "stale"  # the index is used


@pytest.mark.parametrize(
    "name, fmt, tflops",
    [
        ("a100-sxm-80gb", "bf16", 312),
        ("h100-sxm", "bf16", 989.4),
        ("h100-sxm", "fp8", 1978.9),
        ("h100-nvl", "fp8", 1670.5),
        ("h200", "fp8", 1978.9),
        ("b200", "nvfp4", 9000),
        ("gb200", "bf16", 2500),
        ("gb300", "nvfp4", 15000),
        ("l40s", "bf16", 362.05),
        ("rtx-pro-6000", "nvfp4", 2015),
        ("mi300x", "bf16", 1307.4),
        ("mi355x", "mxfp4", 10066.3),
    ],
)
def test_dense_peaks_from_hardware_reference(name, fmt, tflops):
    assert load_profile(name).peak_tflops[fmt] == tflops


@pytest.mark.parametrize(
    "name, absent",
    [
        ("a100-sxm-80gb", "fp8"),
        ("h100-sxm", "nvfp4"),
        ("h200", "mxfp4"),
        ("l40s", "nvfp4"),
        ("mi300x", "fp8_block"),
        ("mi300x", "mxfp4"),
        ("mi355x", "nvfp4"),
        ("gb300", "int8"),
    ],
)
def test_formats_a_chip_lacks_are_absent(name, absent):
    assert not load_profile(name).has(absent)


def test_tile_facts():
    b = load_profile("gb300").tiles
    assert (b.base.m, b.base.n) == (128, 128)
    assert (b.cooperative.n, b.cooperative.sms, b.cga.n) == (256, 2, 512)
    assert load_profile("h100-sxm").tiles.cooperative is None
    assert load_profile("b200").alignment["nvfp4"] == 32
    assert load_profile("h100-sxm").alignment["fp8"] == 16


def test_unknown_name_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown GPU 'h900'"):
        load_profile("h900")


def test_user_profile_through_the_same_schema(tmp_path):
    data = dump(load_profile("h100-sxm"), json=True)
    data.update(name="my-h100", memory_tbps=4.0)
    from ruamel.yaml import YAML

    path = tmp_path / "my.yaml"
    with open(path, "w") as fh:
        YAML(typ="safe", pure=True).dump(data, fh)
    p = load_profile(str(path))
    assert (p.name, p.memory_tbps) == ("my-h100", 4.0)
    assert p.ridge("bf16") == pytest.approx(989.4e12 / 4e12)


def test_user_profile_errors_name_the_key(tmp_path):
    path = tmp_path / "bad.yaml"
    data = dump(load_profile("b200"), json=True)
    data["peak_tflops"]["fp5"] = 100
    from ruamel.yaml import YAML

    with open(path, "w") as fh:
        YAML(typ="safe", pure=True).dump(data, fh)
    with pytest.raises(ProfileError, match="unknown format") as exc:
        load_profile(str(path))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if t.startswith("peak_tflops:"))
    assert exc.value.located() == (
        f"{path}:{line}:1: error: peak_tflops: unknown format(s) fp5; known: "
        "tf32, bf16, fp16, fp8, fp8_block, int8, fp6, mxfp8, nvfp4, mxfp4"
    )
    text = (PROFILE_DIR / "h200.yaml").read_text()
    assert text.count("  base: {m: 128, n: 128, sms: 1}\n") == 1
    path.write_text(text.replace("  base: {m: 128, n: 128, sms: 1}\n", "  base: {m: 128, n: -1, sms: 1}\n"))
    with pytest.raises(ProfileError) as exc:
        load_profile(str(path))
    line = text.splitlines().index("  base: {m: 128, n: 128, sms: 1}") + 1
    assert exc.value.located() == f"{path}:{line}:18: error: tiles.base.n: Input should be greater than 0"
    path.write_text("name: x\nsm_count: [\n")
    with pytest.raises(ProfileError, match="invalid YAML"):
        load_profile(str(path))


def test_cli_profiles_list_and_one(capsys):
    assert main(["profiles"]) == 0
    out = capsys.readouterr().out
    assert all(n in out for n in NAMES)
    assert main(["profiles", "gb300", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["peak_tflops"]["nvfp4"] == 15000 and d["time_model"]["compute_efficiency"]["nvfp4"] > 0
    assert main(["profiles", "nope"]) == 2
    assert capsys.readouterr().err.startswith("colint: error: unknown GPU 'nope'")


def test_a_huge_or_binary_user_profile_is_a_clear_error(tmp_path, monkeypatch):
    import colint.hardware_profiles as hp

    big = tmp_path / "big.yaml"
    big.write_text("a" * (hp.MAX_PROFILE_BYTES + 1))
    monkeypatch.setattr(hp, "read_limited", lambda *a, **k: pytest.fail("a huge profile must not be read"))
    with pytest.raises(ProfileError, match="a GPU profile over 256 KiB is refused unread"):
        load_profile(str(big))
    monkeypatch.undo()
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(ProfileError) as exc:
        load_profile(str(binary))
    assert exc.value.located() == f"{binary}:1:7: error: not UTF-8 text (byte 0xff at offset 6)"
