"""What every HF variant table checks: colint's total equals the oracle's, and `inspect` / `check` agree.

The tables (tests/normalize/hf/test_*_variants.py) map a name to ``(config, params_total)``, the total
from scripts/gen_golden.py's ``build()`` on the meta device (each table's docstring says how).
"""

from __future__ import annotations

import json

from colint.analysis.inventory import gemms, param_counts
from colint.cli.main import main
from colint.loading import load_text
from colint.normalize import normalize


def spec_from(cfg: dict):
    return normalize(load_text(json.dumps(cfg, indent=1), "unseen.json"), "hf")


def gemm(spec, name):
    found = [g for g in gemms(spec) if g.name == name]
    assert found, [g.name for g in gemms(spec)]
    return found[0]


def assert_total_equals_transformers(cfg: dict, total: int) -> None:
    spec = spec_from(cfg)
    assert spec.model_type == cfg["model_type"]
    assert param_counts(spec).total == total


def assert_inspect_and_check(name: str, cfg: dict, total: int, tmp_path, capsys) -> None:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(cfg, indent=1), encoding="utf-8")
    assert main(["inspect", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["total"] == total
    assert main(["check", str(path)]) in (0, 1)
