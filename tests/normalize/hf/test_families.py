"""The family registry: FAMILIES is the TRAITS rows plus the bespoke builders, each importable, and every
decoder family has its variants in the oracle tables."""

import importlib

from colint.normalize.hf import BESPOKE, FAMILIES
from colint.normalize.hf.decoder import TRAITS
from tests.normalize.hf import test_dense_variants, test_hybrid_variants, test_moe_variants

VARIANTS = {**test_dense_variants.VARIANTS, **test_moe_variants.VARIANTS, **test_hybrid_variants.VARIANTS}


def test_a_model_type_is_a_row_or_bespoke_never_both():
    assert sorted(set(BESPOKE) & set(TRAITS)) == []
    assert set(FAMILIES) == set(BESPOKE) | set(TRAITS)
    assert {FAMILIES[mt] for mt in TRAITS} == {"decoder"}


def test_every_bespoke_module_exists_and_builds():
    # a missing module is a bug, never a silent skip
    for module in sorted(set(BESPOKE.values())):
        assert callable(importlib.import_module(f"colint.normalize.hf.{module}").build), module


def test_every_decoder_family_has_a_defaults_and_a_sized_variant():
    from colint.normalize.hf import WRAPPER_TEXT_TYPES

    for mt in (m for m, mod in FAMILIES.items() if mod in ("decoder", "lfm2", "hybrid")):
        mine = [cfg for cfg, _ in VARIANTS.values() if cfg["model_type"] == mt]
        if mt in WRAPPER_TEXT_TYPES:
            # a wrapper's model_type read flat: transformers builds its default text config and ignores
            # top-level sizes, so only the defaults variant is exact; the sized ones are the text type's
            assert {"model_type": mt} in mine, mt
            continue
        assert len(mine) >= 2, mt
        assert any("hidden_size" in c or "n_embd" in c for c in mine), mt
