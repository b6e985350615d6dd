"""Terminal conventions for the human formats: when to colour, the run's estimate context, stdin.

Colour follows the usual precedence (ruff, cargo, no-color.org, force-color.org):
``--color always|never`` wins; otherwise a non-empty ``NO_COLOR`` turns it off, a non-empty
``FORCE_COLOR`` turns it on, and else colour is used only when writing to a terminal. Reports
written with ``-o FILE`` and machine formats are never coloured.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional


def use_colour(choice: str, isatty: bool, env: Optional[Mapping[str, str]] = None) -> bool:
    env = os.environ if env is None else env
    if choice == "always":
        return True
    if choice == "never":
        return False
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return isatty


def estimate_labels(groups) -> list[str]:
    """The estimate context of each distinct settings group, as the rules write it into their details
    (``estimate: b200, throughput scenario: bf16, decode 256 seq, ...``), in first-seen order. The text
    reporters print each once per run instead of once per finding."""
    from colint.checking import build_targets
    from colint.errors import ColintError

    labels: list[str] = []
    for eff in {id(g): g for g in groups if g is not None}.values():
        try:
            targets = build_targets(eff.check_options())
        except ColintError:
            continue
        for t in targets:
            label = f"estimate: {t.gpu}, {t.scenario.label()}"
            if label not in labels:
                labels.append(label)
    return labels


def stdin_syntax(name: Optional[str], raw: bytes) -> Optional[str]:
    """The syntax of standard input: from ``--stdin-filename``'s extension, else JSON when it starts
    with ``{`` (a pasted config.json), else YAML."""
    if name and name.lower().endswith((".json", ".yaml", ".yml")):
        return None  # the loader reads it from the name
    return "json" if raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") else "yaml"
