"""The repository's scripts/ as modules, for the tests that check what they generate or compute."""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")


def load_script(name: str) -> ModuleType:
    """scripts/<name>.py, imported (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(SCRIPTS, f"{name}.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
