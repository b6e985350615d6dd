"""Normalizing: Document → ModelSpec, one adapter per source format.

``normalize(doc, input_format=None)`` detects the format from the keys (or takes the
forced one) and hands the document to that format's adapter. Adapters live in
``colint/normalize/<format>.py`` (Hugging Face families under ``colint/normalize/hf/``) and are
imported only when a file needs them, so that start-up stays fast.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import replace

from colint.errors import FormatNotRecognized, UsageError
from colint.loading.document import Document, format_path
from colint.loading.witness import HF_QUANT_NAME, checkpoint_files, modelopt_quantization
from colint.normalize.model_spec import FFN, KeyIssue, LayerKind, Mixer, ModelSpec, Quantization, Source
from colint.normalize.reader import collect_accessed
from colint.normalize.unknown_keys import unknown_key_issues

__all__ = ["normalize", "detect_format", "FORMATS", "ModelSpec", "LayerKind", "Mixer", "FFN", "Quantization", "Source"]

# format name -> (module, detector function, normalizer function); detection runs in this order.
FORMATS: dict[str, str] = {
    "colint": "colint.normalize.design_file",
    "hf": "colint.normalize.hf",
    "megatron": "colint.normalize.megatron",
    "maxtext": "colint.normalize.maxtext",
    "gpt-neox": "colint.normalize.neox",
    "olmo": "colint.normalize.olmo_trainer",
    "meta": "colint.normalize.meta_params",
}


def _module(fmt: str):
    name = FORMATS[fmt]  # an adapter is imported when a file needs it (then found in sys.modules: detection
    return sys.modules.get(name) or importlib.import_module(name)  # asks ~3 adapters per file checked)


def available_formats() -> list[str]:
    return list(FORMATS)


def detect_format(doc: Document) -> str:
    tried = []
    for fmt in available_formats():
        tried.append(fmt)
        if _module(fmt).detect(doc):
            return fmt
    raise FormatNotRecognized(
        "format not recognized: the keys match none of the formats tried ("
        + ", ".join(tried)
        + "); use --input-format to force one",
        path=doc.path,
        line=1,
        column=1,
    )


def normalize(doc: Document, input_format: str | None = None, vocab_size: int | None = None) -> ModelSpec:
    if input_format is not None and input_format not in FORMATS:
        raise UsageError(f"unknown input format {input_format!r}; choose from {', '.join(FORMATS)}")
    fmt = input_format or detect_format(doc)
    module = _module(fmt)

    with collect_accessed() as log:
        if vocab_size is not None and getattr(module, "ACCEPTS_VOCAB_SIZE", False):
            spec = module.normalize(doc, vocab_size=vocab_size)  # the adapter pads it as its framework does
        else:
            spec = module.normalize(doc)
    spec = _with_unknown_keys(spec, doc, log)
    spec = _with_document_issues(spec, doc)
    found = checkpoint_files(doc.path) if isinstance(doc.path, str) else None
    if found is not None:  # the checkpoint's weights beside the file (CL011 compares them with the config)
        from colint.loading.weights import witness_of  # only beside safetensors (start-up)

        spec = replace(spec, weights=witness_of(*found))
    if spec.quantization is None and isinstance(doc.path, str) and (mo := modelopt_quantization(doc.path)):
        # a ModelOpt export states its format beside the config, not in it (issue 29)
        q = Quantization(quant_method="modelopt", raw=mo, origin="hf_quant_config.json")
        spec = replace(
            spec, quantization=q, notes=spec.notes + [f"quantization from {HF_QUANT_NAME}: {mo['quant_algo']}"]
        )
    if vocab_size is not None and spec.vocab_size is None:
        spec = replace(spec, vocab_size=vocab_size, notes=spec.notes + [f"vocab_size {vocab_size} from --vocab-size"])
    return spec


def _with_unknown_keys(spec: ModelSpec, doc: Document, log) -> ModelSpec:
    """Keys of the adapter's root mapping that no reader looked up and the family does not know (CL007)."""
    root = log.root if log.root is not None else ()
    reported = {i.source.key for i in spec.key_issues}
    read_as = next((i.suggestion for i in spec.key_issues if i.kind == "structure"), None)
    if read_as is not None:  # an unknown model_type read as a known family (colint.normalize.hf.structure)
        from colint.normalize.structure_keys import structure_key_issues

        found = structure_key_issues(doc, root, log.paths, read_as)
    else:
        found = unknown_key_issues(doc, spec.format, spec.model_type, root, log.paths)
    issues = [i for i in found if i.source.key not in reported]
    return replace(spec, key_issues=list(spec.key_issues) + issues) if issues else spec


def _with_document_issues(spec: ModelSpec, doc: Document) -> ModelSpec:
    """Carry what the loader saw (duplicate keys, non-standard literals) into the spec, so that
    rules can report it without reading the file."""
    issues = list(spec.key_issues)
    for path, line, col in doc.duplicate_keys:
        later = doc.span(path)
        issues.append(
            KeyIssue(
                kind="duplicate",
                source=Source(key=format_path(path), line=line, column=col),
                detail=f"appears again at line {later.line}; the later value wins"
                if later
                else "appears more than once; the later value wins",
            )
        )
    for path, token in doc.nonstandard:
        at_line, at_col = doc.location(path)  # None where no ancestor is located (Source takes that)
        issues.append(
            KeyIssue(
                kind="nonstandard", source=Source(key=format_path(path), line=at_line, column=at_col), detail=token
            )
        )
    if len(issues) == len(spec.key_issues):
        return spec
    return replace(spec, key_issues=issues)
