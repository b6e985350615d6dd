"""Hardware profiles: schema, shipped data, user files, `colint profiles`."""

import json
import typing
from dataclasses import replace

import pytest

from colint.cli.main import main
from colint.errors import ProfileError, UsageError
from colint.hardware_profiles import HW_FORMATS, PROFILE_DIR, list_profiles, load_profile, time_model
from colint.hardware_profiles.schema import Architecture
from colint.util.plain_data import dump

NAMES = [
    "a10",
    "a100-sxm-80gb",
    "b200",
    "b300",
    "dgx-spark",
    "gb200",
    "gb300",
    "h100-nvl",
    "h100-pcie",
    "h100-sxm",
    "h200",
    "jetson-thor",
    "l4",
    "l40s",
    "mi300x",
    "mi325x",
    "mi355x",
    "rtx-4090",
    "rtx-5090",
    "rtx-6000-ada",
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
    from colint.util.plain_data import validate

    validated = validate(Profile, _read_yaml(PROFILE_DIR / f"{name}.yaml"))
    assert repr(load_profile(name)) == repr(validated)
    assert isinstance(load_profile(name).tiles.candidates[0], type(validated.tiles.base))


def test_shipped_architectures_pass_the_full_schema_and_equal_the_trusted_build():
    from colint.hardware_profiles import _architectures

    validated, trusted = _architectures(validate=True), _architectures()
    assert set(trusted) == set(typing.get_args(Architecture))  # every architecture a profile may name has its row
    # an architecture `like:` another takes its constants (GB10 runs sm_120's kernels, Thor sm_100's)
    assert repr(trusted["blackwell-gb10"]).split("sources=")[0] == repr(trusted["blackwell-rtx"]).split("sources=")[0]
    assert repr(trusted["blackwell-thor"]).split("sources=")[0] == repr(trusted["blackwell-dc"]).split("sources=")[0]
    # Blackwell Ultra: blackwell-dc's constants but twice the SFU's exponentials per SM per clock
    ultra, dc = trusted["blackwell-ultra"], trusted["blackwell-dc"]
    assert (ultra.softmax_exp_per_clk, dc.softmax_exp_per_clk) == (32.0, 16.0)
    assert repr(replace(ultra, softmax_exp_per_clk=16.0)).split("sources=")[0] == repr(dc).split("sources=")[0]
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


@pytest.mark.parametrize(
    "given, name",
    [
        ("h200-sxm", "h200"),
        ("h200_sxm", "h200"),
        ("H200", "h200"),
        ("NVIDIA H200", "h200"),
        ("h200-141gb", "h200"),
        ("h100_sxm", "h100-sxm"),
        ("H100", "h100-sxm"),
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),  # nvidia-smi's name
        ("H100 NVL", "h100-nvl"),
        ("b200_sxm", "b200"),
        ("HGX-B200", "b200"),
        ("b200-192gb", "b200"),  # 192 GB raw, 180 usable in the profile: within 10 %
        ("gb200-nvl72", "gb200"),
        ("gb200_nvl72", "gb200"),
        ("GB300 NVL72", "gb300"),
        ("a100", "a100-sxm-80gb"),
        ("a100_sxm", "a100-sxm-80gb"),
        ("A100-SXM4-80GB", "a100-sxm-80gb"),  # nvidia-smi's name: the memory suffix stripped, 80 = 80
        ("L40S", "l40s"),
        ("NVIDIA L4", "l4"),
        ("RTX 4090", "rtx-4090"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("4090", "rtx-4090"),
        ("rtx_5090", "rtx-5090"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"),
        ("GB10", "dgx-spark"),
        ("DGX Spark", "dgx-spark"),
        ("Jetson AGX Thor", "jetson-thor"),
        ("thor", "jetson-thor"),
        ("AMD Instinct MI300X", "mi300x"),
        ("H100 PCIe", "h100-pcie"),
        ("NVIDIA A10", "a10"),
        ("RTX 6000 Ada", "rtx-6000-ada"),
        ("MI355X", "mi355x"),
    ],
)
def test_gpus_resolve_as_users_name_them(given, name):
    assert load_profile(given).name == name


def test_no_two_profiles_share_a_name_or_alias():
    from colint.hardware_profiles import gpu_key

    owner: dict[str, str] = {}
    for name in NAMES:
        p = load_profile(name)
        for n in [name, *p.aliases]:
            assert owner.setdefault(gpu_key(n), name) == name, (n, owner[gpu_key(n)], name)


def test_an_unknown_gpu_suggests_the_closest_names():
    with pytest.raises(UsageError) as exc:
        load_profile("h300")
    assert str(exc.value) == (
        "unknown GPU 'h300'; did you mean h200, h100-sxm, b300? (`colint profiles` lists them all; or give a path "
        "to a profile .yaml)"
    )
    with pytest.raises(UsageError) as exc:
        load_profile("RTX 3090")
    assert str(exc.value) == (
        "unknown GPU 'RTX 3090'; did you mean rtx-5090, rtx-4090? (`colint profiles` lists them all; or give a path "
        "to a profile .yaml)"
    )
    # a memory size that is not the profile's: another part, not this one
    with pytest.raises(UsageError) as exc:
        load_profile("a100-40gb")
    assert str(exc.value) == (
        "unknown GPU 'a100-40gb': the a100-sxm-80gb profile has 80 GB, not 40; write a profile for that part and "
        "give its path (see docs/hardware.md)"
    )
    with pytest.raises(UsageError, match=r"^unknown GPU 'qqq'; known: a10, a100-sxm-80gb, b200, "):
        load_profile("qqq")


def test_an_alias_is_validated(tmp_path):
    data = dump(load_profile("h200"), json=True)
    for bad, msg in ((["H200_SXM"], "'H200_SXM' must be lower-case"), (["h200"], "profile's own name")):
        path = tmp_path / "bad.yaml"
        path.write_text(json.dumps({**data, "aliases": bad}))
        with pytest.raises(ProfileError, match=msg) as exc:
            load_profile(str(path))
        assert exc.value.key == "aliases.0"
    path.write_text(json.dumps({**data, "pcie_gen": 7}))
    with pytest.raises(ProfileError, match="7 is not a PCIe generation"):
        load_profile(str(path))


@pytest.mark.parametrize(
    "gpu, cli_name",
    [("h200", "h200-sxm"), ("gb200", "GB200_NVL72"), ("rtx-4090", "RTX 4090"), ("dgx-spark", "gb10")],
)
def test_an_alias_works_on_the_command_line_in_settings_and_the_api(gpu, cli_name, capsys, tmp_path):
    import colint

    example = "examples/llama-2-7b.json"
    assert main(["profiles", cli_name, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == gpu
    assert main(["check", example, "--gpu", cli_name, "--isolated", "--fail-on", "never", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["error"] is None
    assert main(["check", example, "--gpu", "h300", "--isolated"]) == 2  # (an unknown name is refused)
    assert "did you mean" in capsys.readouterr().err
    (tmp_path / "pyproject.toml").write_text(f'[tool.colint]\ngpus = ["{cli_name}"]\n')
    cfg = tmp_path / "m.json"
    cfg.write_text(open(example).read())
    assert main(["check", str(cfg), "--fail-on", "never", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["error"] is None
    assert colint.inspect(example, gpu=cli_name)["estimates"]["gpu"] == gpu
    assert colint.report_data(example, gpu=cli_name)["gpu"] == gpu


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


@pytest.mark.parametrize(
    "name, fmt, dense_tflops, tbps",
    [
        ("l4", "fp8", 485 / 2, 0.300),  # L4 datasheet: FP8 485 TFLOPS with sparsity, 300 GB/s
        ("rtx-4090", "bf16", 330.4 / 2, 1.008),  # Ada whitepaper: BF16 FP32-accumulate 165.2 / 330.4 sparse
        ("rtx-5090", "nvfp4", 3352 / 2, 1.792),  # 3,352 AI TOPS = FP4 with sparsity; 1,792 GB/s GDDR7
        ("dgx-spark", "nvfp4", 1000 / 2, 0.273),  # 1 PFLOP FP4 with sparsity; 273 GB/s LPDDR5X
        ("jetson-thor", "nvfp4", 2070 / 2, 0.273),  # 2,070 FP4 TFLOPS with sparsity; 273 GB/s LPDDR5X
        ("jetson-thor", "bf16", 2070 / 2 / 4, 0.273),  # tcgen05: FP4 = 4x FP16 per clock
        ("h100-pcie", "fp8", 3026 / 2, 2.0),  # H100 PCIe: FP8 3,026 TFLOPS with sparsity, 2.0 TB/s HBM2e
        ("a10", "bf16", 72 * 1695e6 * 1024 / 1e12, 0.600),  # 72 SMs x 1695 MHz x GA102's 1024 FLOP/clk (A40 sheet)
        ("rtx-6000-ada", "fp8", 142 * 2505e6 * 2048 / 1e12, 0.960),  # 142 SMs x 2505 MHz x Ada's 2048 FP8 FLOP/clk
    ],
)
def test_new_profiles_ridge_point_from_their_sourced_peak_and_bandwidth(name, fmt, dense_tflops, tbps):
    p = load_profile(name)
    assert p.peak_tflops[fmt] == pytest.approx(dense_tflops, abs=0.051)  # the sheets print one decimal
    assert p.memory_tbps == tbps
    assert p.ridge(fmt) == pytest.approx(dense_tflops * 1e12 / (tbps * 1e12), rel=1e-3)


@pytest.mark.parametrize(
    "name, absent",
    [("l4", "nvfp4"), ("rtx-4090", "nvfp4"), ("rtx-4090", "mxfp8"), ("rtx-5090", "fp8_block"), ("jetson-thor", "int8")],
)
def test_new_profiles_lack_what_their_chip_lacks(name, absent):
    assert not load_profile(name).has(absent)


def test_the_profiles_list_shows_aliases(capsys):
    assert main(["profiles", "h200"]) == 0
    assert "  aliases: h200-sxm, hgx-h200" in capsys.readouterr().out
