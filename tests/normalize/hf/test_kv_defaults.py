"""An absent key takes the config class's default, which is not always what the other keys suggest.

``num_key_value_heads`` is not always the head count; ``head_dim`` not always hidden_size // heads;
MiniCPM3's ``q_lora_rank`` is 768 unless null; GPT-2 has no ``intermediate_size`` at all.

transformers 5.24: LlamaConfig's default is None (= num_attention_heads), but MistralConfig's is 8,
Qwen2Config's/Qwen3Config's 32, GemmaConfig's 16 and Gemma-2/3's 4. Gemma-3's published wrapper
configs (gemma-3-4b-it) leave the key out, so reading it as the head count doubled its K/V projections.
The counts below were taken from transformers building each config on the meta device
(``scripts/gen_golden.py --count``).
"""

from __future__ import annotations

import json
import os

import pytest

from colint.analysis.inventory import param_counts
from colint.errors import SpecError
from colint.loading import load, load_text
from colint.normalize import normalize

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "corpus", "hf")

BASE = {
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
    "pad_token_id": 0,
    "bos_token_id": 1,
    "eos_token_id": 2,
}


def _spec(cfg: dict):
    return normalize(load_text(json.dumps(cfg, indent=1), "config.json"), "hf")


@pytest.mark.parametrize(
    "extra, kv, total",
    [
        ({"model_type": "llama"}, 4, 6_269_440),  # default None: the head count
        ({"model_type": "mistral"}, 8, 7_318_016),
        ({"model_type": "qwen2"}, 32, 13_626_880),
        ({"model_type": "qwen3", "head_dim": 128}, 32, 13_609_984),
        ({"model_type": "gemma", "head_dim": 128}, 16, 8_903_168),
        ({"model_type": "gemma2", "head_dim": 128, "num_attention_heads": 8}, 4, 6_808_064),
        ({"model_type": "gemma3_text", "head_dim": 128, "num_attention_heads": 8}, 4, 6_808_576),
    ],
)
def test_absent_kv_heads_take_the_class_default(extra, kv, total):
    s = _spec({**BASE, **extra})
    assert s.num_kv_heads == kv
    assert s.sources["num_kv_heads"].default and s.sources["num_kv_heads"].key == "num_key_value_heads"
    assert param_counts(s).total == total


def test_explicit_null_kv_heads():
    # LlamaConfig turns null into the head count; Gemma's typed config rejects it.
    assert _spec({**BASE, "model_type": "llama", "num_key_value_heads": None}).num_kv_heads == 4
    with pytest.raises(SpecError, match="num_key_value_heads"):
        _spec({**BASE, "model_type": "gemma2", "num_key_value_heads": None})


def test_gemma3_4b_wrapper_without_kv_key():
    s = normalize(load(os.path.join(CORPUS, "gemma__gemma-3-4b-it.json")), "hf")
    assert (s.num_heads, s.num_kv_heads, s.head_dim) == (8, 4, 256)
    assert s.sources["num_kv_heads"].key == "text_config.num_key_value_heads"
    assert s.tie_word_embeddings is True  # Gemma3ForConditionalGeneration's default, as built
    assert param_counts(s).total == 3_880_263_168


# Other keys whose absence means the class default (or a derivation), not hidden_size // heads.
@pytest.mark.parametrize(
    "cfg, total",
    [
        # Qwen3Config and Ministral3Config fix head_dim at 128, not hidden_size // heads (512 / 8 = 64)
        ({"model_type": "qwen3"}, 6_794_240),
        ({"model_type": "ministral3"}, 6_793_728),
    ],
)
def test_absent_head_dim_takes_the_class_default(cfg, total):
    s = _spec({**BASE, **cfg, "num_attention_heads": 8, "num_key_value_heads": 2})
    assert s.head_dim == 128
    assert param_counts(s).total == total


def test_minicpm3_absent_keys():
    # q_lora_rank absent: MiniCPM3Config's 768 (q_a_proj + q_b_proj); v_head_dim absent: hidden // heads = 128
    s = _spec({**BASE, "model_type": "minicpm3", "num_key_value_heads": 4})
    mixer = s.layer_kinds[0].mixer
    assert (mixer.q_lora_rank, mixer.v_head_dim) == (768, 128)
    assert param_counts(s).total == 6_251_008
    # explicit null: a plain q_proj
    s = _spec({**BASE, "model_type": "minicpm3", "num_key_value_heads": 4, "q_lora_rank": None})
    assert s.layer_kinds[0].mixer.q_lora_rank is None
    assert param_counts(s).total == 5_266_432


def test_gpt2_ignores_intermediate_size():
    # GPT2MLP's width is n_inner (default 4 x n_embd); GPT2Config has no intermediate_size attribute
    s = _spec(
        {
            "model_type": "gpt2",
            "n_embd": 512,
            "n_layer": 2,
            "n_head": 4,
            "vocab_size": 1000,
            "n_positions": 1024,
            "intermediate_size": 1024,
        }
    )
    assert s.intermediate_size == 2048
    assert param_counts(s).total == 7_342_080


def test_qwen2_vl_text_ignores_head_dim():
    # Qwen2_5_VLAttention: head_dim = hidden_size // num_heads (512 / 4 = 128); Qwen2Attention reads the key (96)
    cfg = {**BASE, "num_key_value_heads": 2, "head_dim": 96}
    s = _spec({**cfg, "model_type": "qwen2_5_vl_text"})
    assert s.head_dim == 128 and param_counts(s).total == 5_747_200
    s = _spec({**cfg, "model_type": "qwen2"})
    assert s.head_dim == 96 and param_counts(s).total == 5_353_472
