"""The family registry: FAMILIES is the TRAITS rows plus the bespoke builders, each importable."""

import importlib

from colint.normalize.hf import BESPOKE, FAMILIES
from colint.normalize.hf.decoder import TRAITS


def test_a_model_type_is_a_row_or_bespoke_never_both():
    assert sorted(set(BESPOKE) & set(TRAITS)) == []
    assert set(FAMILIES) == set(BESPOKE) | set(TRAITS)
    assert {FAMILIES[mt] for mt in TRAITS} == {"decoder"}


def test_every_bespoke_module_exists_and_builds():
    # a missing module is a bug, never a silent skip
    for module in sorted(set(BESPOKE.values())):
        assert callable(importlib.import_module(f"colint.normalize.hf.{module}").build), module
