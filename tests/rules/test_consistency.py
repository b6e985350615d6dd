"""CL0xx consistency: each fixture config in tests/rules/fixtures/consistency/ and, beside it, the exact
findings the family reports on it (NAME.json -> NAME.findings.txt, as tests.rules.helpers.render writes
them). After an intended change of a message, regenerate with ``COLINT_REGEN_EXPECTED=1`` and review the
diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.rules.helpers import render, run_spec_rules

FIXTURES = Path(__file__).parent / "fixtures" / "consistency"

# fixture -> what it shows (every fixture is listed, so that each says why it is there)
WHY = {
    "clean_llama": "a consistent Llama-3-8B config: nothing to say",
    "cl001_head_dim_not_integral": "H 4000 over 48 heads with no head_dim: the projections would lose columns",
    "cl001_explicit_head_dim": "an explicit head_dim (Qwen3: 64 x 128 != 5120) is fine",
    "cl001_not_for_mla": "MLA's head widths are qk_nope + qk_rope and v_head_dim, whatever H / heads "
    "(GLM-4.7-Flash: hidden 2048, 20 heads)",
    "cl002_kv_heads_not_divisor": "12 KV heads for 32 query heads, with the divisors on both sides as fixes",
    "cl004_layer_types_length": "a per-layer list one entry longer than the layers",
    "cl005_duplicate_key": "a duplicate key: located at the first occurrence, the later value wins",
    "cl006_bare_infinity": "bare Infinity (and a key this model type does not read: CL007)",
    "cl009_window_covers_context": "a sliding window as long as the context: full attention in practice",
}


def test_every_fixture_says_why_it_is_there():
    assert sorted(p.stem for p in FIXTURES.glob("*.json")) == sorted(WHY)


@pytest.mark.parametrize("name", sorted(WHY))
def test_fixture_findings(name):
    got = render(run_spec_rules((FIXTURES / f"{name}.json").read_text(encoding="utf-8"), ["CL0"]))
    expected = FIXTURES / f"{name}.findings.txt"
    if os.environ.get("COLINT_REGEN_EXPECTED"):
        expected.write_text(got, encoding="utf-8")
    assert got == expected.read_text(encoding="utf-8")
