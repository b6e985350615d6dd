"""Qwen3-Omni: the language model is thinker_config.text_config, a wrapper nested two deep.

Totals from the oracle building Qwen3OmniMoeThinkerForConditionalGeneration(cfg.thinker_config) on the
meta device (transformers 5.24.0 + torch 2.13.0 CPU) and counting model.language_model + lm_head (tied
once); scripts/gen_golden.py has no nested-wrapper path.
"""

from __future__ import annotations

import json

import pytest

from colint.analysis.inventory import param_counts
from colint.cli.main import main
from tests.normalize.hf.oracle import spec_from

_OMNI_TEXT = {
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "moe_intermediate_size": 256,
    "num_hidden_layers": 3,
    "num_attention_heads": 16,
    "num_key_value_heads": 4,
    "head_dim": 64,
    "num_experts": 16,
    "num_experts_per_tok": 4,
    "vocab_size": 152064,
    "mlp_only_layers": [0],
    "decoder_sparse_step": 1,
}
OMNI = {
    "defaults": ({"model_type": "qwen3_omni_moe"}, 17_201_485_816),
    "sized": (
        {
            "model_type": "qwen3_omni_moe",
            "thinker_config": {
                "model_type": "qwen3_omni_moe_thinker",
                "text_config": {**_OMNI_TEXT, "model_type": "qwen3_omni_moe_text"},
            },
        },
        353_934_720,
    ),
    # the thinker's tie_word_embeddings ties; the text config's and the top level's do not
    "thinker_tie": (
        {
            "model_type": "qwen3_omni_moe",
            "thinker_config": {"tie_word_embeddings": True, "text_config": dict(_OMNI_TEXT)},
        },
        198_221_184,
    ),
    "text_tie_ignored": (
        {
            "model_type": "qwen3_omni_moe",
            "thinker_config": {"text_config": {**_OMNI_TEXT, "tie_word_embeddings": True}},
        },
        353_934_720,
    ),
    "top_tie_ignored": (
        {
            "model_type": "qwen3_omni_moe",
            "tie_word_embeddings": True,
            "thinker_config": {"text_config": dict(_OMNI_TEXT)},
        },
        353_934_720,
    ),
}


@pytest.mark.parametrize("name", sorted(OMNI))
def test_qwen3_omni_thinker_text_model(name):
    cfg, total = OMNI[name]
    assert param_counts(spec_from(cfg)).total == total


def test_qwen3_omni_keys_keep_the_nested_prefix(tmp_path, capsys):
    spec = spec_from(OMNI["sized"][0])
    assert spec.model_type == "qwen3_omni_moe_text"
    assert spec.key_prefix == "thinker_config.text_config."
    assert spec.sources["hidden_size"].key == "thinker_config.text_config.hidden_size"
    assert spec.sources["hidden_size"].line is not None
    assert [spec.kind_of(i).ffn.kind for i in range(3)] == ["dense", "moe", "moe"]
    assert spec_from(OMNI["thinker_tie"][0]).sources["tie_word_embeddings"].key == "thinker_config.tie_word_embeddings"
    path = tmp_path / "omni.json"
    path.write_text(json.dumps(OMNI["sized"][0], indent=1), encoding="utf-8")
    assert main(["inspect", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["total"] == OMNI["sized"][1]
    assert main(["check", str(path)]) in (0, 1)
