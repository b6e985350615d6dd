"""Hugging Face ``config.json`` adapters (and the same keys in YAML).

A family is a row of ``decoder.TRAITS`` (a decoder whose structure is shared: attention + dense or
MoE FFN, told apart by key names, biases, norms, windows and expert layout), or, when its structure
is its own (MLA, hybrids, Mamba, per-layer block configs), a bespoke module in ``BESPOKE``.
``FAMILIES`` (model_type -> module) is derived from both; each module exports
``build(r: HFReader) -> ModelSpec`` and reads the shared header with ``base.read_common``. A multimodal wrapper (``text_config``,
``llm_config``, ``language_config``) is linted through its language model, with key paths
that keep the wrapper's prefix (Qwen3-Omni's sits one level deeper: ``thinker_config.text_config``).
A file without ``model_type`` (2019 GPT-2) is recognised by its ``architectures`` entry or its
key names.
"""

from __future__ import annotations

import importlib
import sys

from colint.errors import SpecError
from colint.loading.document import Document
from colint.normalize.hf.base import HFReader, family_defaults
from colint.normalize.hf.decoder import TRAITS
from colint.normalize.hf.wrappers import WRAPPER_TEXT_TYPES
from colint.normalize.model_spec import ModelSpec

# model_type -> module under colint.normalize.hf, for the families whose structure no TRAITS row can say
BESPOKE: dict[str, str] = {
    "llama": "llama",
    "mistral": "llama",
    "ministral": "llama",
    "ministral3": "llama",
    "qwen2": "llama",
    "qwen3": "llama",
    "mimo": "llama",
    "mimo_v2_flash": "mimo_v2",  # per-layer-type attention geometry (sliding layers' own KV heads)
    # MoE and hybrid families (tests/normalize/hf/test_moe.py)
    "qwen2_moe": "qwen2_moe",
    "qwen3_moe": "qwen3_moe",
    "qwen3_vl_moe_text": "qwen3_moe",
    "qwen3_vl_moe": "qwen3_moe",
    "qwen3_next": "qwen3_next",
    "qwen3_5_text": "qwen3_next",
    "qwen3_5": "qwen3_next",
    "qwen3_5_moe_text": "qwen3_next",
    "qwen3_5_moe": "qwen3_next",
    "deepseek_v2": "deepseek",
    "deepseek_v3": "deepseek",
    "deepseek_v32": "deepseek",
    "glm_moe_dsa": "deepseek",  # GLM-5: DeepSeek-V3.2's MLA + DSA layers
    "kimi_k2": "deepseek",
    "kimi_k25": "deepseek",
    "dbrx": "dbrx",
    "gpt_oss": "gpt_oss",
    "jamba": "jamba",
    "nemotron_h": "nemotron_h",
    "minimax": "minimax",
    "minimax_m2": "minimax_m2",
    "llama4_text": "llama4",
    "llama4": "llama4",
    "qwen2_5_vl": "llama",  # flat (pre-v5) layout: the text keys sit at the top level
    "qwen2_5_vl_text": "llama",
    "qwen2_vl": "llama",
    "qwen2_vl_text": "llama",
    "gemma": "gemma",
    "gemma2": "gemma",
    "gemma3_text": "gemma",
    "gemma4_text": "gemma4",
    "phi": "phi",
    "gpt2": "gpt2",
    "opt": "opt",
    "bloom": "bloom",
    "falcon": "falcon",
    "minicpm3": "minicpm3",
    "nemotron-nas": "nemotron_nas",
    "lfm2": "lfm2",
    "bamba": "hybrid",
    "granitemoehybrid": "hybrid",
    "mamba2": "hybrid",
    "falcon_h1": "falcon_h1",  # attention and Mamba-2 in parallel in every layer (LayerKind.parallel_mixer)
    "qwen3_omni_moe": "qwen3_moe",  # the thinker's language model (NESTED_WRAPPER_KEYS)
    "qwen3_omni_moe_text": "qwen3_moe",
}

# Every model_type colint reads: the rows of decoder.TRAITS (tests/normalize/hf/test_dense_variants.py, test_moe_variants.py, test_hybrid_variants.py) and the bespoke builders.
FAMILIES: dict[str, str] = {**BESPOKE, **dict.fromkeys(TRAITS, "decoder")}


WRAPPER_KEYS = ("text_config", "llm_config", "language_config")

# Keys that mark a document as a Hugging Face config even without model_type.
_HF_MARKERS = ("architectures", "model_type", "num_hidden_layers", "n_layer", "n_embd", "transformers_version")

# architectures[0] -> model_type for files that predate model_type.
ARCHITECTURE_TYPES = {
    "GPT2LMHeadModel": "gpt2",
    "GPT2Model": "gpt2",
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "RWForCausalLM": "falcon",
    "FalconForCausalLM": "falcon",
    "BloomForCausalLM": "bloom",
    "OPTForCausalLM": "opt",
}

LEGACY_TYPES = {"RefinedWeb": "falcon", "RefinedWebModel": "falcon"}


def detect(doc: Document) -> bool:
    data = doc.data
    if not isinstance(data, dict):
        return False
    dec = data.get("decoder")
    if (
        isinstance(dec, dict)
        and "dim" in dec
        and "n_layers" in dec
        and not any(isinstance(data.get(w), dict) for w in WRAPPER_KEYS)
    ):
        return False  # torchchat's LLaVA model_params (Meta ModelArgs under decoder:), not an HF config
    if any(k in data for k in _HF_MARKERS):
        return True
    return any(isinstance(data.get(w), dict) for w in WRAPPER_KEYS)


# Wrappers whose language model sits one level deeper (Qwen3-Omni: thinker_config.text_config).
NESTED_WRAPPER_KEYS = ("thinker_config",)


def _text_root(doc: Document) -> tuple[tuple, str | None]:
    """The mapping that holds the language model and its model_type."""
    data = doc.data
    for outer in NESTED_WRAPPER_KEYS:
        if isinstance(data.get(outer), dict):
            found = _wrapped(data, data[outer], (outer,))
            if found is not None:
                return found
    return _wrapped(data, data, ()) or ((), data.get("model_type"))


def _wrapped(data: dict, holder: dict, prefix: tuple) -> tuple[tuple, str | None] | None:
    for w in WRAPPER_KEYS:
        sub = holder.get(w)
        if isinstance(sub, dict) and any(
            k in sub for k in ("hidden_size", "num_hidden_layers", "model_type", "d_model", "n_embd")
        ):
            mt = sub.get("model_type")
            if mt is None and isinstance(data.get("model_type"), str):
                mt = WRAPPER_TEXT_TYPES.get(data["model_type"])
            return prefix + (w,), mt
    return None


def resolve_model_type(doc: Document, prefix: tuple, model_type) -> str:
    if model_type is not None and not isinstance(model_type, str):
        line, col = doc.location(prefix + ("model_type",))
        raise SpecError(
            f"'model_type' must be a string, got {model_type!r}", path=doc.path, line=line, column=col, key="model_type"
        )
    if isinstance(model_type, str):
        model_type = LEGACY_TYPES.get(model_type, model_type)
        if model_type in FAMILIES:
            return model_type
    archs = doc.get(prefix + ("architectures",)) or doc.get(("architectures",)) or []
    if isinstance(archs, list):
        for a in archs:
            if isinstance(a, str) and a in ARCHITECTURE_TYPES and ARCHITECTURE_TYPES[a] in FAMILIES:
                if model_type is None:
                    return ARCHITECTURE_TYPES[a]
    if model_type is None:
        d = doc.get(prefix) if prefix else doc.data
        if isinstance(d, dict) and "n_embd" in d and "gpt2" in FAMILIES:
            return "gpt2"
        line, col = 1, 1
        raise SpecError(
            "no 'model_type' and no known 'architectures' entry: cannot tell the model family",
            path=doc.path,
            line=line,
            column=col,
            key="model_type",
        )
    return model_type


def _module_of(model_type: str):
    """The adapter module of a model_type of FAMILIES (imported on first use)."""
    name = f"colint.normalize.hf.{FAMILIES[model_type]}"
    return sys.modules.get(name) or importlib.import_module(name)


def reader_for(doc: Document, prefix: tuple, mt: str) -> tuple:
    """(adapter module, HFReader) that read ``doc`` as the model_type ``mt`` of FAMILIES."""
    # a TRAITS row named by its multimodal wrapper's model_type (a flat glm4v_moe file) has its text keys at the
    # top level, so the text config's defaults apply
    defaults, aliases = family_defaults(WRAPPER_TEXT_TYPES.get(mt, mt) if mt in TRAITS else mt)
    return _module_of(mt), HFReader(doc, prefix, defaults=defaults, aliases=aliases, model_type=mt)


def normalize(doc: Document) -> ModelSpec:
    prefix, model_type = _text_root(doc)
    mt = resolve_model_type(doc, prefix, model_type)
    if mt not in FAMILIES:
        from colint.normalize.hf.fallback import build_with_transformers

        # FAMILIES: for "supported: ..."; reader_for: the families a structure reading tries (hf/structure.py)
        return build_with_transformers(doc, prefix, mt, FAMILIES, reader_for)
    module, r = reader_for(doc, prefix, mt)
    return module.build(r)
