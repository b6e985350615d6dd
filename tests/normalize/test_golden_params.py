"""colint's parameter counts and weight shapes against transformers' own models.

``tests/golden/<stem>.json`` was written by ``scripts/gen_golden.py``: transformers 5.24 + torch
2.13 built each ``tests/corpus/hf`` file on the meta device and listed its parameters. For every
file whose model_type has an adapter in ``FAMILIES`` (MoE families included, as their modules
land), ``params.total`` must equal the golden total exactly, and the GEMM inventory must have
the same weight shapes (fused q/k/v and gate/up are compared fused on both sides).
"""

from __future__ import annotations

import collections
import glob
import importlib.util
import json
import os
import re

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.loading import load
from colint.normalize import normalize
from colint.normalize.hf import FAMILIES, _text_root, resolve_model_type

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN_FILES = sorted(glob.glob(os.path.join(TESTS, "golden", "*.json")))
CORPUS = os.path.join(TESTS, "corpus", "hf")

# Files transformers cannot build; the count is checked against a derivation instead.
NOT_IN_TRANSFORMERS = {
    # DeciLM is remote code only; tests/normalize/hf/test_dense.py checks it against the reference formula.
    "nemotron-nas__Llama-3_3-Nemotron-Super-49B-v1",
}


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _golden(stem: str) -> dict:
    with open(os.path.join(TESTS, "golden", stem + ".json"), encoding="utf-8") as fh:
        return json.load(fh)


def _spec(stem: str):
    doc = load(os.path.join(CORPUS, stem + ".json"))
    prefix, mt = _text_root(doc)
    try:
        mt = resolve_model_type(doc, prefix, mt)
    except Exception:
        mt = None
    # every golden model has an adapter now: a missing one is a failure, not a skip
    assert mt in FAMILIES and importlib.util.find_spec(f"colint.normalize.hf.{FAMILIES[mt]}") is not None, (
        f"no adapter for model_type {mt!r}"
    )
    return normalize(doc, "hf")


# q, k and v are compared apart (colint lists them apart unless the family fuses them, as transformers does):
# fused over a layer, a stack whose layer types differ in KV heads (MiMo-V2-Flash) has no per-layer sum to compare
_FUSE = [
    (re.compile(r"\b(gate_proj|up_proj|w1|w3|v1)\b"), "gate_up"),
]


def golden_shapes(g: dict) -> collections.Counter:
    """Multiset of (in, out) weight shapes, q/k/v and gate/up fused per module."""
    fused: dict[tuple, list] = {}
    for w in g["weights"]:
        if "in" not in w:
            continue  # embeddings, convolution kernels
        name = w["name"]
        for pat, repl in _FUSE:
            name = pat.sub(repl, name)
        mult = w["count"] * w.get("experts", 1)
        key = (name, w["in"], mult)
        fused.setdefault(key, []).append(w["out"])
    out: collections.Counter = collections.Counter()
    for (_name, k, mult), outs in fused.items():
        out[(k, sum(outs))] += mult
    return out


def inventory_shapes(spec) -> collections.Counter:
    fused: dict[tuple, list] = {}
    for g in gemms(spec, merge=False):
        if g.name == "lm_head" and spec.tie_word_embeddings:
            continue
        key = (g.kind, g.name if g.group == "qkv" else (g.group or g.name), g.k, g.layers * g.count)
        fused.setdefault(key, []).append(g.n)
    out: collections.Counter = collections.Counter()
    for (_, _, k, mult), ns in fused.items():
        out[(k, sum(ns))] += mult
    return out


def _cases():
    return [pytest.param(_stem(p), id=_stem(p)) for p in GOLDEN_FILES]


@pytest.mark.parametrize("stem", _cases())
def test_params_total_equals_transformers(stem):
    g = _golden(stem)
    if "error" in g:
        assert stem in NOT_IN_TRANSFORMERS, f"transformers could not build {stem}: {g['error']}"
        pytest.skip(f"transformers cannot build it: {g['error'][:80]}")
    spec = _spec(stem)
    assert param_counts(spec).total == g["params_total"]


@pytest.mark.parametrize("stem", _cases())
def test_weight_shapes_equal_transformers(stem):
    g = _golden(stem)
    if "error" in g:
        pytest.skip("transformers cannot build it")
    spec = _spec(stem)
    want, got = golden_shapes(g), inventory_shapes(spec)
    assert got == want, f"missing from colint: {dict(want - got)}; extra in colint: {dict(got - want)}"


def test_every_corpus_file_has_a_golden_file():
    corpus = {_stem(p) for p in glob.glob(os.path.join(CORPUS, "*.json"))}
    assert corpus == {_stem(p) for p in GOLDEN_FILES}
