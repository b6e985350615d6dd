"""Generate colint/hardware_profiles/_shipped.json from the shipped profile YAML files.

The YAML files stay the source (reviewed, commented, cited). ``colint check`` reads this JSON
index instead, because a YAML parser is a start-up cost (issue 7): importing PyYAML and parsing
b200.yaml + _architectures.yaml with its C loader costs ~15 ms of CPU per run on the project's
2-vCPU VM (``import yaml`` + ``yaml.load(..., CSafeLoader)`` vs ``python -c pass``, medians of 11
fresh processes), and without PyYAML (it is not a colint dependency) ruamel.yaml's pure-Python
loader is slower still; ``json`` is already imported on that path. Each entry carries the SHA-256
of its YAML text: a YAML edited without regenerating is parsed from the YAML at run time (correct,
only slower) and tests/hardware_profiles/test_profiles.py fails until this script is re-run.

Run: ``.venv/bin/python scripts/gen_profiles_json.py`` (writes the index); ``--check`` exits 1 when
the committed index is stale.
"""

from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from colint.hardware_profiles import PROFILE_DIR, SHIPPED_INDEX, _fingerprint, _read_yaml  # noqa: E402


def build() -> str:
    files = {}
    for path in sorted(PROFILE_DIR.glob("*.yaml")):
        files[path.name] = {"fingerprint": _fingerprint(path.read_bytes()), "data": _read_yaml(path)}
    index = {"_generated_by": "scripts/gen_profiles_json.py from the *.yaml files here (the source)", "files": files}
    return json.dumps(index, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = build()
    if "--check" in argv:
        current = SHIPPED_INDEX.read_text(encoding="utf-8") if SHIPPED_INDEX.exists() else ""
        if current != text:
            print(f"{SHIPPED_INDEX} is stale: run .venv/bin/python scripts/gen_profiles_json.py", file=sys.stderr)
            return 1
        return 0
    SHIPPED_INDEX.write_text(text, encoding="utf-8")
    print(f"wrote {SHIPPED_INDEX} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
