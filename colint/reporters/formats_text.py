"""`colint formats`: the input formats and the Hugging Face model types colint reads, as text."""

from __future__ import annotations

import textwrap
from collections.abc import Collection, Iterable


def render(formats: Iterable[str], families: Collection[str]) -> str:
    return "\n".join(
        (
            "input formats: " + ", ".join(formats),
            f"Hugging Face model types ({len(families)}; others are tried through transformers' config class):",
            textwrap.fill(", ".join(sorted(families)), width=100, initial_indent="  ", subsequent_indent="  "),
        )
    )
