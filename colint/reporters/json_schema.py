"""The JSON Schema of ``colint check --output-format json`` (the stable output contract).

``colint schema report`` prints it; docs/check-report.schema.json is that output (a test keeps them
equal, and validates real outputs against it). Adding an optional key is a compatible change;
removing or retyping one is not.
"""

from __future__ import annotations

from colint import REPOSITORY_URL, __version__

_NULLABLE_INT = {"type": ["integer", "null"], "minimum": 1}


def report_schema() -> dict:
    edit = {
        "type": "object",
        "required": ["key", "old", "new"],
        "additionalProperties": False,
        "properties": {
            "key": {"type": "string", "description": "dotted key path in the file"},
            "old": {"description": "the value in the file"},
            "new": {"description": "the value the fix writes"},
        },
    }
    fix = {
        "type": "object",
        "required": ["title", "safety", "edits"],
        "additionalProperties": False,
        "properties": {
            "title": {"type": "string"},
            "safety": {
                "enum": ["safe", "unsafe", "display"],
                "description": "safe: --fix applies it; unsafe: only with --unsafe-fixes "
                "(changes the architecture); display: advice, no edit",
            },
            "edits": {"type": "array", "items": edit},
        },
    }
    finding = {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "code",
            "name",
            "rule",
            "kind",
            "severity",
            "message",
            "key",
            "line",
            "column",
            "gpu",
            "impact",
            "evidence",
            "fixes",
        ],
        "properties": {
            "code": {"type": "string", "pattern": "^CL[0-9]{3}$", "description": "docs/rules.md#<code>"},
            "name": {"type": "string", "description": "the rule's kebab-case name"},
            "rule": {"type": "string", "description": "the rule family"},
            "kind": {
                "enum": ["architecture", "deployment"],
                "description": "architecture: what the config's shapes cost on the GPU; deployment: what the "
                "deployment checked (named, or chosen by colint: then its findings are info) does",
            },
            "severity": {"enum": ["error", "warning", "info"]},
            "message": {"type": "string"},
            "key": {"type": ["string", "null"], "description": "dotted key path the finding points at"},
            "line": _NULLABLE_INT,
            "column": _NULLABLE_INT,
            "gpu": {"type": ["string", "null"], "description": "the GPU profile of a GPU-specific finding"},
            "impact": {
                "type": "object",
                "required": ["estimated_loss_pct"],
                "properties": {"estimated_loss_pct": {"type": ["number", "null"]}},
            },
            "evidence": {"type": "object", "description": "numbers with their units in their names"},
            "fixes": {"type": "array", "items": fix},
        },
    }
    file_entry = {
        "type": "object",
        "additionalProperties": False,
        "required": ["path", "format", "model_type", "error", "skipped", "findings"],
        "properties": {
            "path": {"type": "string"},
            "format": {
                "type": ["string", "null"],
                "description": "hf, megatron, maxtext, gpt-neox, olmo, meta, colint; null when not read",
            },
            "model_type": {"type": ["string", "null"]},
            "error": {
                "oneOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "required": ["message", "line", "column"],
                        "additionalProperties": False,
                        "properties": {"message": {"type": "string"}, "line": _NULLABLE_INT, "column": _NULLABLE_INT},
                    },
                ],
                "description": "why the file could not be checked (exit 2)",
            },
            "skipped": {
                "oneOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "required": ["kind", "reason"],
                        "additionalProperties": False,
                        "properties": {"kind": {"enum": ["skip", "out-of-scope"]}, "reason": {"type": "string"}},
                    },
                ],
                "description": "not checked: not a decoder LLM config (skip) or a model colint does not price "
                "(out-of-scope: encoders, encoder-decoders); --strict checks it",
            },
            "findings": {"type": "array", "items": finding},
        },
    }
    count = {"type": "integer", "minimum": 0}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{REPOSITORY_URL}/blob/v{__version__}/docs/check-report.schema.json",
        "title": "colint check --output-format json",
        "type": "object",
        "additionalProperties": False,
        "required": ["version", "files", "summary"],
        "properties": {
            "version": {"type": "string", "description": "colint's version"},
            "files": {"type": "array", "items": file_entry, "description": "in the order the paths were given"},
            "summary": {
                "type": "object",
                "additionalProperties": False,
                "required": ["files", "skipped", "errors", "warnings", "infos"],
                "properties": {"files": count, "skipped": count, "errors": count, "warnings": count, "infos": count},
            },
        },
    }
