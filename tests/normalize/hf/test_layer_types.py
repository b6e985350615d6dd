"""A layer_types list shorter than num_hidden_layers reads the same in every HF family.

transformers 5.24 rejects such a config (``PreTrainedConfig.validate_layer_type``: num_hidden_layers
must equal len(layer_types)), so colint reports the mismatch (CL004 from ``spec.per_layer_lists``) and
reads the layers the list does not name as full attention (``colint.normalize.hf.base.layer_types_of``).
"""

from __future__ import annotations

import json

import pytest

from colint.cli.main import main
from colint.loading import load_text
from colint.normalize import normalize

_SHORT = ["sliding_attention", "full_attention", "sliding_attention"]  # 3 entries for 4 layers
_DIMS = {
    "hidden_size": 512,
    "intermediate_size": 1536,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "vocab_size": 32000,
    "sliding_window": 256,
    "layer_types": _SHORT,
}
CONFIGS = {
    "ministral": {"model_type": "ministral", **_DIMS},  # colint/normalize/hf/llama.py
    "qwen2": {"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": 0, **_DIMS},  # llama.py
    "gemma2": {"model_type": "gemma2", **_DIMS},  # gemma.py (sliding_full_kinds)
    "smollm3": {"model_type": "smollm3", "use_sliding_window": True, **_DIMS},  # decoder.py
}


def _spec(cfg: dict):
    return normalize(load_text(json.dumps(cfg, indent=1), "short.json"), "hf")


@pytest.mark.parametrize("family", sorted(CONFIGS))
def test_short_layer_types_missing_layers_are_full(family):
    spec = _spec(CONFIGS[family])
    assert [spec.kind_of(i).mixer.attention for i in range(4)] == ["sliding", "full", "sliding", "full"]
    assert [spec.kind_of(i).mixer.window for i in range(4)] == [256, None, 256, None]
    assert spec.per_layer_lists["layer_types"] == 3


def test_extra_layer_types_entries_are_ignored():
    spec = _spec({**CONFIGS["ministral"], "layer_types": _SHORT + ["full_attention", "sliding_attention"]})
    assert [spec.kind_of(i).mixer.attention for i in range(4)] == ["sliding", "full", "sliding", "full"]
    assert spec.per_layer_lists["layer_types"] == 5


@pytest.mark.parametrize("family", ["ministral", "gemma2"])
def test_short_layer_types_is_reported(family, tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIGS[family], indent=1))
    main(["check", "--format", "json", "--select", "CL004", str(path)])
    findings = json.loads(capsys.readouterr().out)["files"][0]["findings"]
    assert [(f["code"], f["message"], f["key"], f["line"]) for f in findings] == [
        ("CL004", "layer_types has 3 entries for 4 layers", "layer_types", 11)
    ]
