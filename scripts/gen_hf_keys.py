"""Generate colint/normalize/hf_keys.json: the keys each Hugging Face model_type's config class knows.

CL007 (unknown-key) reports a key of a config.json that the family's config class neither defines
nor aliases, and that colint's adapter does not read, when it is one edit away from a key that is
known (a typo: ``num_key_value_head``). The table holds, per model_type colint reads, the keys of
``AutoConfig.for_model(model_type).to_dict()`` plus the attribute map's names (transformers is the
authority; reading it at lint time would cost seconds, so the table is generated once).

Run: ``HF_HUB_OFFLINE=1 .venv/bin/python scripts/gen_hf_keys.py [--check]``
"""

from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
OUT = os.path.join(ROOT, "colint", "normalize", "hf_keys.json")


def _consumed(cls) -> set:
    """Keys the class (and its bases up to PretrainedConfig) takes as parameters, dataclass fields, or pops /
    gets from its kwargs in its own source (transformers 5 converts legacy keys such as Qwen3.5's
    full_attention_interval or rope_theta this way: read, though not stored under that name)."""
    import dataclasses
    import inspect
    import re

    from transformers import PretrainedConfig

    out: set = set()
    for c in cls.__mro__:
        if c is PretrainedConfig or not issubclass(c, PretrainedConfig):
            continue
        try:
            out |= {p for p in inspect.signature(c.__init__).parameters if p not in ("self", "kwargs")}
        except (TypeError, ValueError):
            pass
        if dataclasses.is_dataclass(c):
            out |= {f.name for f in dataclasses.fields(c)}
        out |= set(getattr(c, "__annotations__", {}))
        try:
            src = inspect.getsource(c)
        except (OSError, TypeError):
            continue
        out |= set(re.findall(r"kwargs\.(?:pop|get)\(\s*[\"']([A-Za-z0-9_]+)[\"']", src))
        out |= set(re.findall(r"getattr\(self,\s*[\"']([A-Za-z0-9_]+)[\"']", src))
    return {k for k in out if not k.startswith("_")}


def generate() -> dict:
    """The table the installed transformers gives."""
    import transformers
    from transformers import AutoConfig, PretrainedConfig

    from colint.normalize.hf import FAMILIES, WRAPPER_TEXT_TYPES

    common = sorted(PretrainedConfig().to_dict())
    table = {}
    for mt in sorted(set(FAMILIES) | set(WRAPPER_TEXT_TYPES.values())):
        try:
            cfg = AutoConfig.for_model(mt)
        except Exception:  # a type this transformers does not know (remote-code families): accessed keys only
            continue
        keys = (
            set(cfg.to_dict())
            | set(getattr(cfg, "attribute_map", {}))
            | set(getattr(cfg, "attribute_map", {}).values())
            | _consumed(type(cfg))
        )
        table[mt] = sorted(keys - set(common))
    return {"transformers_version": transformers.__version__, "common": common, "model_types": table}


def main() -> int:
    """Write the table; ``--check``: exit 1 when the committed table differs from the installed transformers'."""
    data = generate()
    if "--check" in sys.argv[1:]:
        with open(OUT, encoding="utf-8") as fh:
            same = json.load(fh) == data
        print("hf_keys.json is up to date" if same else "hf_keys.json differs from the installed transformers")
        return 0 if same else 1
    with open(OUT, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=0, sort_keys=True)
        fh.write("\n")
    print(f"wrote {OUT}: {len(data['model_types'])} model types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
