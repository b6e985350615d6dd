"""tie_word_embeddings of multimodal wrappers (colint/normalize/hf/tie.py), one function for every adapter.

Expected values: transformers 5.24 building each wrapper's *ForConditionalGeneration on the meta device
with the outer key, the text config's key, both (disagreeing) and neither, and testing
``lm_head.weight is embed_tokens.weight`` (Qwen3-Omni: the thinker, Qwen3OmniMoeThinkerForConditionalGeneration).
"""

from __future__ import annotations

import json

import pytest

from colint.analysis.inventory import param_counts
from colint.loading import load_text
from colint.normalize import normalize

_LLAMA = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "vocab_size": 1000,
}
TEXT = {
    "llava": dict(_LLAMA),  # no model_type: llama
    "gemma3": {**_LLAMA, "model_type": "gemma3_text", "head_dim": 32},
    "mistral3": {**_LLAMA, "model_type": "mistral"},
    "qwen3_vl_moe": {
        **_LLAMA,
        "model_type": "qwen3_vl_moe_text",
        "moe_intermediate_size": 32,
        "num_experts": 4,
        "num_experts_per_tok": 2,
    },
    "llama4": {**_LLAMA, "model_type": "llama4_text", "intermediate_size_mlp": 128, "num_local_experts": 4},
    "my_vlm": {**_LLAMA, "model_type": "llama"},  # a wrapper transformers does not know: the general convention
}

# (wrapper, outer tie, text-config tie, tied?); None: the key is absent
CASES = [
    # outer governs; LlavaConfig copies a text-config true up when its own is false
    ("llava", None, None, False),
    ("llava", True, None, True),
    ("llava", None, True, True),
    ("llava", True, False, True),
    ("llava", False, True, True),
    # outer governs, its class default true; the text config's key is ignored
    ("gemma3", None, None, True),
    ("gemma3", False, None, False),
    ("gemma3", None, False, True),
    ("gemma3", False, True, False),
    ("gemma3", True, False, True),
    ("mistral3", None, None, True),
    ("mistral3", None, False, True),
    ("mistral3", False, True, False),
    # outer governs, default false; Qwen3VLMoeTextConfig's default true does not tie the wrapper's head
    ("qwen3_vl_moe", None, None, False),
    ("qwen3_vl_moe", None, True, False),
    ("qwen3_vl_moe", True, False, True),
    # Llama 4: the language model is a Llama4ForCausalLM with its own head: only the text config counts
    ("llama4", True, None, False),
    ("llama4", None, True, True),
    ("llama4", False, True, True),
    ("llama4", True, False, False),
    # unknown wrapper: the outer key, else the text config's, else the text family's default
    ("my_vlm", True, False, True),
    ("my_vlm", None, True, True),
    ("my_vlm", None, None, False),
]


def _wrapper(mt: str, outer, inner) -> dict:
    text = dict(TEXT[mt])
    if inner is not None:
        text["tie_word_embeddings"] = inner
    cfg = {"model_type": mt}
    if outer is not None:
        cfg["tie_word_embeddings"] = outer
    cfg["text_config"] = text
    return cfg


def spec_from(cfg: dict):
    return normalize(load_text(json.dumps(cfg, indent=1), "wrapper.json"), "hf")


@pytest.mark.parametrize("mt,outer,inner,tied", CASES, ids=[f"{c[0]}-outer{c[1]}-inner{c[2]}" for c in CASES])
def test_wrapper_tie_is_transformers(mt, outer, inner, tied):
    spec = spec_from(_wrapper(mt, outer, inner))
    assert spec.key_prefix == "text_config."
    assert spec.tie_word_embeddings is tied


@pytest.mark.parametrize(
    "thinker,text,top,tied",
    [
        (True, None, None, True),
        (None, True, None, False),
        (None, None, True, False),
        (False, True, True, False),
        (True, False, None, True),
    ],
)
def test_qwen3_omni_thinker_config_decides(thinker, text, top, tied):
    tc = {
        **_LLAMA,
        "model_type": "qwen3_omni_moe_text",
        "moe_intermediate_size": 32,
        "num_experts": 4,
        "num_experts_per_tok": 2,
    }
    if text is not None:
        tc["tie_word_embeddings"] = text
    th = {"text_config": tc} if thinker is None else {"tie_word_embeddings": thinker, "text_config": tc}
    cfg = {
        "model_type": "qwen3_omni_moe",
        **({} if top is None else {"tie_word_embeddings": top}),
        "thinker_config": th,
    }
    spec = spec_from(cfg)
    assert spec.key_prefix == "thinker_config.text_config."
    assert spec.tie_word_embeddings is tied


@pytest.mark.parametrize(
    "mt,outer,inner,key,line",
    [
        ("gemma3", False, True, "tie_word_embeddings", 3),  # the outer key decided
        ("llava", False, True, "text_config.tie_word_embeddings", 11),  # LlavaConfig copied the text config's true
        ("llama4", True, False, "text_config.tie_word_embeddings", 14),
    ],
)
def test_tie_source_is_the_key_that_decided(mt, outer, inner, key, line):
    src = spec_from(_wrapper(mt, outer, inner)).sources["tie_word_embeddings"]
    assert (src.key, src.line, src.default) == (key, line, False)


def test_disagreeing_keys_give_the_oracle_count():
    # Gemma3ForConditionalGeneration with tie false outside and true inside: untied head. The oracle
    # (language model + lm_head, tied once, on the meta device) counts 1000 * 64 more than the tied build.
    untied = spec_from(_wrapper("gemma3", False, True))
    tied = spec_from(_wrapper("gemma3", True, False))
    assert param_counts(untied).total - param_counts(tied).total == 1000 * 64
    assert param_counts(untied).total == 165_248


def test_wrapper_defaults_and_copy_up_match_installed_transformers():
    # The table's outer defaults and its "copies a text-config true up" column, against the config classes.
    pytest.importorskip("transformers")
    import inspect
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import CONFIG_MAPPING

    from colint.normalize.hf.tie import WRAPPER_TIE

    for mt, (outer_default, copies_up, _) in WRAPPER_TIE.items():
        cls = CONFIG_MAPPING[mt]
        thinker = getattr(cls, "sub_configs", {}).get("thinker_config")
        owner = thinker if thinker is not None else cls
        assert owner.__dataclass_fields__["tie_word_embeddings"].default is outer_default, mt
        src = inspect.getsource(owner)
        # LlavaConfig.__post_init__: "if not self.tie_word_embeddings and self.text_config.tie_word_embeddings"
        assert ("if not self.tie_word_embeddings and" in src) is copies_up, mt
