"""Property-based robustness (issue 7): configs generated around the real architectures in
tests/corpus/hf — dimensions perturbed within sane ranges — and broken ones (wrong types,
deleted keys, nulls, huge and non-finite numbers, truncated or corrupted text).

For every input ``colint check --format json`` must: return (never raise), exit 0, 1 or 2 with
the code matching its report, print valid JSON, and place every finding and error on a line
that exists in the file (column >= 1), or on no line for keys that are not in the file.

``colint check --fix`` (safe fixes, or with ``--unsafe-fixes``) must leave a file that still
parses, write nothing else, and be a fixed point: a second ``--fix`` changes nothing.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colint.cli.main import main

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HF = os.path.join(TESTS, "corpus", "hf")


def _bases() -> dict[str, dict]:
    out = {}
    for name in sorted(os.listdir(HF)):
        if name.endswith(".json"):
            with open(os.path.join(HF, name), encoding="utf-8") as fh:
                out[name] = json.load(fh)
    return out


BASES = _bases()
WRAPPERS = ("text_config", "llm_config", "language_config")

# Dimension keys and the range a perturbation stays in (layers stay small to keep examples fast).
DIM_KEYS = {
    "hidden_size": (64, 16384),
    "intermediate_size": (64, 65536),
    "moe_intermediate_size": (64, 8192),
    "num_attention_heads": (1, 128),
    "num_key_value_heads": (1, 128),
    "head_dim": (8, 256),
    "num_hidden_layers": (1, 96),
    "vocab_size": (256, 262144),
    "num_local_experts": (1, 512),
    "num_experts": (1, 512),
    "n_routed_experts": (1, 512),
    "num_experts_per_tok": (1, 16),
    "shared_expert_intermediate_size": (64, 16384),
    "kv_lora_rank": (16, 1024),
    "q_lora_rank": (16, 2048),
    "qk_rope_head_dim": (8, 128),
    "qk_nope_head_dim": (8, 256),
    "v_head_dim": (8, 256),
    "first_k_dense_replace": (0, 8),
    "sliding_window": (16, 131072),
    "n_embd": (64, 8192),
    "n_head": (1, 64),
    "n_layer": (1, 48),
    "n_inner": (64, 32768),
    "ffn_hidden_size": (64, 65536),
    "num_kv_heads": (1, 64),
}

BAD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**6), max_value=0),
    st.sampled_from([10**12, 10**18, 10**100, -(10**100), 2**63, 0.5, 1e300, -0.0]),
    st.lists(st.integers(min_value=-3, max_value=5000), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _root(d: dict) -> dict:
    for w in WRAPPERS:
        if isinstance(d.get(w), dict) and ("hidden_size" in d[w] or "num_hidden_layers" in d[w]):
            return d[w]
    return d


@st.composite
def perturbed_configs(draw) -> dict:
    """A real config with some of its dimensions changed to other plausible values."""
    d = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES)))])
    root = _root(d)
    for key in sorted(set(DIM_KEYS) & set(root)):
        value = root[key]
        if not isinstance(value, int) or isinstance(value, bool) or not draw(st.booleans()):
            continue
        lo, hi = DIM_KEYS[key]
        root[key] = draw(
            st.one_of(
                st.integers(min_value=lo, max_value=hi),
                st.sampled_from([m for m in (64, 128, 256) if lo <= m <= hi] or [1]).map(
                    lambda m, v=value, lo=lo, hi=hi: min(hi, max(lo, round(v / m) * m))
                ),
                st.integers(min_value=-3, max_value=3).map(lambda k, v=value, lo=lo, hi=hi: min(hi, max(lo, v + k))),
            )
        )
    return d


@st.composite
def broken_configs(draw) -> dict:
    """A perturbed config with one to three keys given a wrong value or deleted."""
    d = draw(perturbed_configs())
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        target = draw(st.sampled_from([d, _root(d)]))
        if not target:
            break
        key = draw(st.sampled_from(sorted(target, key=str)))
        if draw(st.integers(min_value=0, max_value=4)) == 0:
            del target[key]
        else:
            target[key] = draw(BAD_VALUES)
    return d


@st.composite
def corrupted_text(draw) -> str:
    """The text of a config cut short, or with a slice replaced by arbitrary characters."""
    text = json.dumps(draw(perturbed_configs()), indent=2)
    i = draw(st.integers(min_value=0, max_value=len(text)))
    if draw(st.booleans()):
        return text[:i]
    j = draw(st.integers(min_value=i, max_value=min(len(text), i + 20)))
    return text[:i] + draw(st.text(max_size=8)) + text[j:]


_DIRS: list[str] = []


def _workdir() -> str:
    if not _DIRS:
        _DIRS.append(tempfile.mkdtemp(prefix="colint-properties-"))
    return _DIRS[0]


def _check_contract(text: str, suffix: str) -> None:
    path = os.path.join(_workdir(), "config" + suffix)
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(text)
    n_lines = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["check", path, "--format", "json"])  # must return, never raise
    assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), err.getvalue()
    assert rc in (0, 1, 2), rc
    report = json.loads(out.getvalue())
    (f,) = report["files"]
    assert (rc == 2) == (f["error"] is not None), (rc, f["error"])
    located = [f["error"]] if f["error"] else f["findings"]
    for item in located:
        line, col = item["line"], item["column"]
        if line is None:
            assert col is None, item
            continue
        assert 1 <= line <= n_lines, (item, n_lines)
        assert col is not None and col >= 1, item
    if rc != 2:
        worst = {x["severity"] for x in f["findings"]}
        assert (rc == 1) == bool(worst & {"error", "warning"}), (rc, worst)


COMMON = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@COMMON
@given(config=perturbed_configs(), suffix=st.sampled_from([".json", ".json", ".yaml"]))
def test_perturbed_real_architectures(config, suffix):
    _check_contract(json.dumps(config, indent=2), suffix)


@COMMON
@given(config=broken_configs(), suffix=st.sampled_from([".json", ".yaml"]))
def test_broken_values_and_deleted_keys(config, suffix):
    _check_contract(json.dumps(config, indent=2), suffix)


@settings(COMMON, max_examples=60)
@given(text=corrupted_text(), suffix=st.sampled_from([".json", ".yaml"]))
def test_truncated_and_corrupted_text(text, suffix):
    _check_contract(text, suffix)


def _quiet_main(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = main(list(args))
    return rc, out.getvalue()


@settings(COMMON, max_examples=40)
@given(config=perturbed_configs(), suffix=st.sampled_from([".json", ".yaml"]), unsafe=st.booleans())
def test_fix_output_parses_and_is_a_fixed_point(config, suffix, unsafe):
    from colint.loading import load

    workdir = _workdir()
    for name in os.listdir(workdir):
        os.remove(os.path.join(workdir, name))
    path = os.path.join(workdir, "config" + suffix)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(config, indent=2) + "\n")
    flags = ["--fix"] + (["--unsafe-fixes"] if unsafe else [])
    rc, out = _quiet_main("check", path, *flags)
    assert rc in (0, 1, 2) and "internal error" not in out and "Traceback" not in out, out
    assert os.listdir(workdir) == ["config" + suffix]  # nothing written beside the linted file
    with open(path, encoding="utf-8") as fh:
        fixed = fh.read()
    load(path)  # still parses (raises LoadError otherwise)
    rc, out = _quiet_main("check", path, *flags)
    assert "internal error" not in out, out
    with open(path, encoding="utf-8") as fh:
        assert fh.read() == fixed  # a fixed point


def test_every_corpus_config_meets_the_contract():
    """The unperturbed corpus itself (the seeds of the generators) is checked without error."""
    for name, config in BASES.items():
        text = json.dumps(config, indent=2)
        _check_contract(text, ".json")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(["check", os.path.join(HF, name), "--format", "json"])
        assert rc in (0, 1), (name, json.loads(out.getvalue())["files"][0]["error"])


@pytest.fixture(scope="module", autouse=True)
def _cleanup():
    yield
    import shutil

    for d in _DIRS:
        shutil.rmtree(d, ignore_errors=True)
    _DIRS.clear()
