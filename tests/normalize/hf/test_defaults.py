"""colint/normalize/hf_defaults.json agrees with the installed transformers, and is read the right way."""

from __future__ import annotations

import json
import os

import pytest

from colint.loading import load_text
from colint.normalize.hf import FAMILIES
from colint.normalize.hf.base import HFReader, family_defaults
from tests.scripts import load_script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TABLE = os.path.join(ROOT, "colint", "normalize", "hf_defaults.json")


def _script():
    return load_script("gen_hf_defaults")


@pytest.fixture(scope="module")
def generated():
    pytest.importorskip("transformers")
    return _script().generate()


def _committed() -> dict:
    with open(TABLE, encoding="utf-8") as fh:
        return json.load(fh)


def test_committed_table_equals_installed_transformers(generated):
    committed = _committed()
    assert committed["transformers_version"] == generated["transformers_version"]
    for mt, entry in generated["model_types"].items():
        assert committed["model_types"].get(mt) == entry, f"{mt}: rerun scripts/gen_hf_defaults.py"
    assert set(committed["model_types"]) == set(generated["model_types"])


def test_every_family_transformers_knows_is_in_the_table(generated):
    from transformers import CONFIG_MAPPING

    known = set(CONFIG_MAPPING.keys())
    missing = sorted(mt for mt in FAMILIES if mt in known and mt not in _committed()["model_types"])
    assert missing == []


def test_table_holds_the_keys_that_shape_a_model():
    t = _committed()["model_types"]
    assert t["llama"]["defaults"]["intermediate_size"] == 11008
    assert t["gemma3_text"]["defaults"]["head_dim"] == 256
    assert t["gemma3_text"]["defaults"]["tie_word_embeddings"] is True
    assert t["falcon"]["defaults"]["multi_query"] is True
    assert t["opt"]["defaults"]["word_embed_proj_dim"] == 768
    assert t["deepseek_v3"]["defaults"]["kv_lora_rank"] == 512


def test_alias_direction_gpt2():
    defaults, aliases = family_defaults("gpt2")
    assert aliases["hidden_size"] == "n_embd"  # canonical -> the family's key
    assert defaults["n_embd"] == defaults["hidden_size"] == 768
    doc = load_text('{"model_type": "gpt2",\n "n_embd": 1600}', "g.json")
    r = HFReader(doc, (), defaults=defaults, aliases=aliases, model_type="gpt2")
    assert r.int("hidden_size", "hidden_size") == 1600
    assert (r.sources["hidden_size"].key, r.sources["hidden_size"].line) == ("n_embd", 2)
    assert r.int("num_layers", "num_hidden_layers") == 12  # n_layer absent: the class default
    assert r.sources["num_layers"].default
    assert r.sources["num_layers"].key == "n_layer"  # the key a gpt2 user would add


def test_table_is_shipped_as_package_data():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as fh:
        text = fh.read()
    assert '"colint.normalize" = ["*.json"]' in text
