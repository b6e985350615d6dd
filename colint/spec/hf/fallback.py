"""Fallback for a model_type that colint has no adapter for: read it through transformers.

transformers is imported here only (it costs 1-2 s; see scripts/gen_hf_defaults.py), offline
(``HF_HUB_OFFLINE=1``), quietly, and never with ``trust_remote_code``. The config class gives the
family's defaults and attribute map; if the result looks like a standard decoder (hidden size,
layers, heads and intermediate size all readable) colint reads it as a Llama-like model and
says that its parameter counts are approximate. Anything else is a clear "not supported" error.
"""

from __future__ import annotations

import os

from colint.errors import FormatNotRecognized
from colint.loading.document import Document
from colint.spec.model import ModelSpec

NOTE = "read through transformers' generic config; parameter counts approximate"
_DECODER_KEYS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")
_OPTIONAL_KEYS = ("num_key_value_heads", "head_dim", "vocab_size", "tie_word_embeddings", "attention_bias",
                  "mlp_bias", "max_position_embeddings", "hidden_act")
_DROP = ("model_type", "auto_map", "quantization_config", "transformers_version", "architectures")


def _unsupported(doc: Document, prefix: tuple, model_type: str, why: str = "") -> FormatNotRecognized:
    from colint.spec.hf import FAMILIES

    line, col = doc.location(prefix + ("model_type",))
    msg = f"model_type {model_type!r} is not supported by colint{why}; supported: " + ", ".join(sorted(FAMILIES))
    return FormatNotRecognized(msg, path=doc.path, line=line or 1, column=col or 1)


def _transformers():
    os.environ["HF_HUB_OFFLINE"] = "1"  # never download, whatever the user's environment says
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    import warnings

    warnings.filterwarnings("ignore", module="transformers")
    from transformers import CONFIG_MAPPING, AutoConfig

    return CONFIG_MAPPING, AutoConfig


def _read(cfg, key: str):
    try:
        return getattr(cfg, key)
    except (AttributeError, RuntimeError):  # RuntimeError: AmbiguousGlobalPerLayerAttributeError (gemma4_text)
        return None


def build_with_transformers(doc: Document, prefix: tuple, model_type: str) -> ModelSpec:
    try:
        config_mapping, auto_config = _transformers()
    except ImportError:
        raise _unsupported(doc, prefix, model_type, " (and transformers is not installed to try its config)") \
            from None
    if model_type not in config_mapping:
        raise _unsupported(doc, prefix, model_type)
    raw = doc.get(prefix) if prefix else doc.data
    values = {k: v for k, v in raw.items() if k not in _DROP}
    try:
        cfg = auto_config.for_model(model_type, **values)
    except Exception as exc:  # transformers' strict dataclass validation, missing sub-configs, ...
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise _unsupported(doc, prefix, model_type, f" (transformers rejects this config: {first})") from None
    defaults = {k: _read(cfg, k) for k in _DECODER_KEYS + _OPTIONAL_KEYS}
    defaults = {k: v for k, v in defaults.items() if v is not None}
    if not all(isinstance(defaults.get(k), int) and not isinstance(defaults.get(k), bool) for k in _DECODER_KEYS):
        raise _unsupported(doc, prefix, model_type, " (not a standard decoder: hidden_size, num_hidden_layers, "
                           "num_attention_heads or intermediate_size is missing)")
    from colint.spec.hf import llama
    from colint.spec.hf.base import HFReader

    aliases = dict(getattr(type(cfg), "attribute_map", {}) or {})
    r = HFReader(doc, prefix, defaults=defaults, aliases=aliases, model_type=model_type)
    spec = llama.build(r)
    return spec.model_copy(update={"notes": spec.notes + [NOTE]})
