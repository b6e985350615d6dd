"""The rule families (docs/design.md §6): one module per family, each registering its rules.

| family        | codes | guideline |
|---------------|-------|-----------|
| consistency   | CL0xx | config values that cannot load or contradict each other |
| near_square   | CL1xx | 1: near-square weight matrices, no tiny projection dims |
| alignment     | CL2xx | 2: dims multiples of 128 (better 256/512) per shard |
| width_depth   | CL3xx | 3: wider over deeper |
| quantization  | CL4xx | 4: designed for low precision |
| moe_ep        | CL5xx | 5: MoE sized for wide expert parallelism |
| layer_pattern | CL6xx | 6: regular layer patterns, balanced pipeline stages |
| decoupling    | CL7xx | 7: attention and FFN parallelized independently |
| memory        | CL8xx | weights + KV cache + activations fit the GPU's memory |

Adding a rule touches one module (and its test file): the module is the family (its ``FAMILY``), and
``@rule(code=..., ...)`` takes every field by keyword, its thresholds as ``Option`` rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from colint.rules.base import _REGISTRY, Context, Family, Option, Rule, RuleDoc, rule
from colint.errors import UsageError

FAMILY_MODULES = (
    "consistency",
    "near_square",
    "alignment",
    "width_depth",
    "quantization",
    "moe_ep",
    "layer_pattern",
    "decoupling",
    "memory",
)

_loaded = False


def all_rules() -> dict[str, Rule]:
    """Every registered rule by code (imports the family modules on first use: each registers its rules; a
    module missing from the package is an ImportError, never skipped)."""
    global _loaded
    if not _loaded:
        import importlib

        for mod in FAMILY_MODULES:
            importlib.import_module(f"colint.rules.{mod}")
        importlib.import_module("colint.rules.unused_suppression")  # CL000, emitted by the engine
        _loaded = True
    return dict(sorted(_REGISTRY.items()))


def find_rule(code_or_name: str) -> Rule | None:
    """The rule with this code (any case) or name, or None."""
    rules = all_rules()
    return rules.get(code_or_name.upper()) or next((r for r in rules.values() if r.name == code_or_name), None)


def select_rules(
    select: Sequence[str] | None = None, ignore: Sequence[str] | None = None, extend_select: Sequence[str] | None = None
) -> list[Rule]:
    """Rules matching ``select`` (codes, code prefixes such as ``CL2``, names, families, or a kind:
    ``architecture`` / ``deployment``; default all)
    minus ``ignore``. Unknown selectors raise UsageError (exit 2)."""
    rules = all_rules()

    def matches(r: Rule, sel: str) -> bool:
        s = sel.strip()
        return (
            r.code == s.upper()
            or r.code.startswith(s.upper())
            or r.name == s
            or r.family == s
            or r.kind == s
            or s.upper() == "ALL"
        )

    for sel in (*(select or ()), *(ignore or ()), *(extend_select or ())):
        if not any(matches(r, sel) for r in rules.values()):
            raise UsageError(
                f"unknown rule selector {sel!r} (not a code, code prefix, rule name, family or kind; see `colint rules`)"
            )
    chosen = [r for r in rules.values() if not select or any(matches(r, s) for s in select)]
    if extend_select:
        chosen += [r for r in rules.values() if r not in chosen and any(matches(r, s) for s in extend_select)]
    if ignore:
        chosen = [r for r in chosen if not any(matches(r, s) for s in ignore)]
    return sorted(chosen, key=lambda r: r.code)


__all__ = ["all_rules", "select_rules", "Context", "Family", "Option", "Rule", "RuleDoc", "rule", "FAMILY_MODULES"]
