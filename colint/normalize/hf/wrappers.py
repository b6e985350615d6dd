"""The multimodal wrappers whose text model a family reads (a leaf: colint.normalize.unknown_keys reads it
without importing the readers)."""

from __future__ import annotations

# Multimodal wrapper model_type -> the text model_type when text_config has none (transformers' default).
WRAPPER_TEXT_TYPES: dict[str, str] = {
    "gemma3": "gemma3_text",
    "gemma4": "gemma4_text",
    "mistral3": "mistral",
    "llava": "llama",
    "llava_next": "llama",
    "qwen3_vl_moe": "qwen3_vl_moe_text",
    "qwen3_5": "qwen3_5_text",
    "qwen3_5_moe": "qwen3_5_moe_text",
    "llama4": "llama4_text",
    "kimi_k25": "deepseek_v3",
    "glm4v_moe": "glm4v_moe_text",
    "qwen3_omni_moe": "qwen3_omni_moe_text",  # under thinker_config.text_config
}
