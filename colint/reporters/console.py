"""Terminal conventions for the human formats: when to colour, the run's estimate context, stdin.

Colour follows the usual precedence (ruff, cargo, no-color.org, force-color.org):
``--color always|never`` wins; otherwise a non-empty ``NO_COLOR`` turns it off, a non-empty
``FORCE_COLOR`` turns it on, and else colour is used only when writing to a terminal. Reports
written with ``-o FILE`` and machine formats are never coloured.
"""

from __future__ import annotations

import os
from typing import Optional
from collections.abc import Mapping


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


def stdin_syntax(name: Optional[str], raw: bytes) -> Optional[str]:
    """The syntax of standard input: from ``--stdin-filename``'s extension, else JSON when it starts
    with ``{`` (a pasted config.json), else YAML."""
    if name and name.lower().endswith((".json", ".yaml", ".yml")):
        return None  # the loader reads it from the name
    return "json" if raw.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") else "yaml"
