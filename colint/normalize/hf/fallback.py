"""Fallback for a model_type that colint has no adapter for: read it through transformers.

transformers is imported here only (it costs 1-2 s; see scripts/gen_hf_defaults.py), offline
(``HF_HUB_OFFLINE=1``), quietly, and never with ``trust_remote_code``. The config class gives the
family's defaults and attribute map; if the result looks like a decoder of attention and MLP
layers (hidden size, layers, heads and intermediate size all readable, no Mamba / linear-attention
/ recurrent layers) colint reads it by the key conventions transformers' families share
(:mod:`colint.normalize.hf.generic`: dense or MoE FFNs, MHA/GQA or MLA) and says that its parameter
counts are approximate. Anything else is a clear "not supported" error. A model_type that transformers does not
know either (a new architecture with its own ``auto_map`` code) is read by its keys as the closest family colint
reads (:mod:`colint.normalize.hf.structure`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from colint.errors import FormatNotRecognized, SpecError
from colint.loading.document import Document, format_path
from colint.normalize.hf import generic
from colint.normalize.hf.base import HFReader
from colint.normalize.hf.structure import read_by_structure
from colint.normalize.model_spec import ModelSpec
from colint.normalize.reader import MAX_DIM, MAX_LAYERS

_DECODER_KEYS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")
_OPTIONAL_KEYS = (
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "tie_word_embeddings",
    "attention_bias",
    "mlp_bias",
    "max_position_embeddings",
    "hidden_act",
)
_DROP = ("model_type", "auto_map", "quantization_config", "transformers_version", "architectures")


def _unsupported(
    doc: Document, prefix: tuple, model_type: str, supported: Iterable[str], why: str = "", field: str | None = None
) -> FormatNotRecognized:
    line, col = doc.location(prefix + ("model_type",))
    if field is not None and doc.has(prefix + (field,)):  # transformers named the field it rejects: point there
        line, col = doc.location(prefix + (field,))
    msg = (
        f"model_type {model_type!r} is not supported by colint{why}; colint reads {len(list(supported))} model "
        "types (`colint formats` lists them)"
    )
    return FormatNotRecognized(
        msg, path=doc.path, line=line or 1, column=col or 1, key=format_path(prefix + (field,)) if field else None
    )


# Layers that are not attention + MLP: reading them as a Llama would be wrong by tens of percent
# (Zamba +133 %, RecurrentGemma +43 % on transformers 5.24's defaults), so the fallback refuses them.
_NON_ATTENTION = ("linear", "mamba", "conv", "recurrent", "rnn", "ssm", "lru", "deltanet", "rwkv", "mlp")
_HYBRID_KEYS = (
    "layers_block_type",
    "block_types",
    "hybrid_layer_ids",
    "hybrid_override_pattern",
    "lru_width",
    "n_recurrent_layers",
    "linear_num_key_heads",
    "conv_L_cache",
    "attn_layer_period",
    "ssm_cfg",
)
_HYBRID_PREFIXES = ("mamba_", "ssm_", "linear_attn", "rwkv_")


def _hybrid_evidence(values: dict) -> str:
    """What in transformers' reading of a config shows non-attention layers ("" for none)."""
    types = values.get("layer_types")
    if isinstance(types, list):
        other = sorted({str(t) for t in types if any(w in str(t) for w in _NON_ATTENTION)})
        if other:
            return f"layer_types has {', '.join(other)}"
    keys = [k for k in values if k in _HYBRID_KEYS or k.startswith(_HYBRID_PREFIXES)]
    return f"keys {', '.join(sorted(keys)[:4])}" if keys else ""


_LAYER_KEYS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "num_decoder_layers")


def _bounded_for_transformers(doc: Document, prefix: tuple, values: dict) -> None:
    """Refuse, located, the values that would make transformers' config classes work for minutes before colint's
    own limits apply (a class that builds a per-layer list took over 120 s on num_hidden_layers 10**8)."""
    for k, v in values.items():
        limit = MAX_LAYERS if k in _LAYER_KEYS else MAX_DIM
        too_big = isinstance(v, int) and not isinstance(v, bool) and abs(v) > limit
        too_long = isinstance(v, (list, str)) and len(v) > MAX_LAYERS
        if too_big or too_long:
            line, col = doc.location(prefix + (k,))
            what = f"is {v:.3g}" if too_big else f"has {len(v):,} entries"
            raise SpecError(
                f"'{k}' {what}, beyond any real model (limit {limit if too_big else MAX_LAYERS:.3g})",
                path=doc.path,
                line=line or 1,
                column=col or 1,
                key=k,
            )


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


def build_with_transformers(
    doc: Document, prefix: tuple, model_type: str, supported: Iterable[str], reader_for=None
) -> ModelSpec:
    """``reader_for(doc, prefix, mt) -> (module, reader)`` reads as a family of ``supported`` (colint.normalize.hf);
    without it, a model_type transformers does not know is refused instead of read by its structure."""
    raw = doc.get(prefix) if prefix else doc.data
    values = {k: v for k, v in raw.items() if k not in _DROP}
    _bounded_for_transformers(doc, prefix, values)  # before transformers is even imported
    try:
        config_mapping, auto_config = _transformers()
    except ImportError:  # no transformers to ask: the keys alone (colint.normalize.hf.structure)
        if reader_for is None:
            raise _unsupported(
                doc, prefix, model_type, supported, " (and transformers is not installed to try its config)"
            ) from None
        return read_by_structure(doc, prefix, model_type, supported, reader_for, " (transformers is not installed)")
    if model_type not in config_mapping:  # neither colint nor transformers knows it: read it by its keys
        if reader_for is None:
            raise _unsupported(doc, prefix, model_type, supported)
        return read_by_structure(doc, prefix, model_type, supported, reader_for, "")
    try:
        cfg = auto_config.for_model(model_type, **values)
    except Exception as exc:  # transformers' strict dataclass validation, missing sub-configs, ...
        said = " ".join(str(exc).split()) or type(exc).__name__  # every line of it, one line
        said = said if len(said) <= 600 else said[:597] + "..."
        named = re.search(r"field '([^']+)'", said)
        field = named.group(1) if named and named.group(1) in values else None
        raise _unsupported(
            doc, prefix, model_type, supported, f" (transformers rejects this config: {said})", field
        ) from None
    defaults = {k: v for k, v in cfg.to_dict().items() if v is not None and not isinstance(v, dict)}
    defaults.update({k: _read(cfg, k) for k in _DECODER_KEYS + _OPTIONAL_KEYS})  # attribute_map names too
    defaults = {k: v for k, v in defaults.items() if v is not None}
    if not all(isinstance(defaults.get(k), int) and not isinstance(defaults.get(k), bool) for k in _DECODER_KEYS):
        raise _unsupported(
            doc,
            prefix,
            model_type,
            supported,
            " (not a standard decoder: hidden_size, num_hidden_layers, "
            "num_attention_heads or intermediate_size is missing)",
        )
    hybrid = _hybrid_evidence(defaults)
    if hybrid:
        raise _unsupported(
            doc,
            prefix,
            model_type,
            supported,
            f" (a hybrid or recurrent stack: {hybrid}; colint reads such "
            "stacks only for the families it has adapters for)",
        )

    aliases = dict(getattr(type(cfg), "attribute_map", {}) or {})
    r = HFReader(doc, prefix, defaults=defaults, aliases=aliases, model_type=model_type)
    source = _modeling_source(model_type)
    return generic.build(r, gated=_gated_mlp(model_type, source), code=generic.code_traits(source))


def _modeling_source(model_type: str) -> str | None:
    """The family's modelling source as text (never imported: that would need torch); None without it."""
    import transformers
    from transformers.models.auto.configuration_auto import model_type_to_module_name

    name = model_type_to_module_name(model_type)
    path = os.path.join(os.path.dirname(transformers.__file__), "models", name, f"modeling_{name}.py")
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return None


def _gated_mlp(model_type: str, source: str | None = None) -> bool:
    """Whether the family's MLP is gated (gate and up projections), which no config key says: its modelling
    source names a ``gate_proj`` / ``gate_up_proj`` or splits one projection in two (``.chunk(2``: ModernBERT's
    ``Wi``, JetMoE's experts) — read as text, never imported (that would need torch). Without the source,
    gated (the Llama convention). Non-gated families (Persimmon, Jais2, NanoChat, Apertus, the BERTs)
    counted 20-35 % high when read as gated."""
    if source is None:
        source = _modeling_source(model_type)
    if source is None:
        return True
    return any(marker in source for marker in ("gate_proj", "gate_up_proj", ".chunk(2"))
