"""The JSON Schema of ``colint check --output-format json`` (the stable output contract).

``colint schema report`` prints it; docs/check-report.schema.json is that output (a test keeps them
equal, and validates real outputs against it). Adding an optional key is a compatible change;
removing or retyping one is not.
"""

from __future__ import annotations

from colint.util.version import REPOSITORY_URL, __version__

_NULLABLE_INT = {"type": ["integer", "null"], "minimum": 1}
_COUNT = {"type": "integer", "minimum": 0}


def report_schema() -> dict:
    return _document(
        "check-report.schema.json",
        "colint check --output-format json",
        {
            "version": {"type": "string", "description": "colint's version"},
            "files": {"type": "array", "items": _file_entry(), "description": "in the order the paths were given"},
            "summary": _summary("files", "skipped", "errors", "warnings", "infos"),
        },
    )


def _document(file: str, title: str, properties: dict) -> dict:
    """A top-level schema: an object of exactly ``properties``, every one required, published as docs/``file``."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{REPOSITORY_URL}/blob/v{__version__}/docs/{file}",
        "title": title,
        "type": "object",
        "additionalProperties": False,
        "required": list(properties),
        "properties": properties,
    }


def _summary(*counts: str) -> dict:
    """The summary object: a count (an integer >= 0) of each name."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(counts),
        "properties": {k: _COUNT for k in counts},
    }


def _edit() -> dict:
    """One text edit of a fix: the key, its value in the file and the value the fix writes."""
    return {
        "type": "object",
        "required": ["key", "old", "new"],
        "additionalProperties": False,
        "properties": {
            "key": {"type": "string", "description": "dotted key path in the file"},
            "old": {"description": "the value in the file"},
            "new": {"description": "the value the fix writes"},
        },
    }


def _fix() -> dict:
    return {
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
            "edits": {"type": "array", "items": _edit()},
        },
    }


def _finding() -> dict:
    """One finding, as the report and the diff (``findings.new`` / ``fixed`` / ``unchanged``) write it."""
    return {
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
            "fixes": {"type": "array", "items": _fix()},
        },
    }


def _file_entry() -> dict:
    """One checked path: its format, why it could not be checked or was skipped, its findings."""
    return {
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
            "findings": {"type": "array", "items": _finding()},
        },
    }


def diff_schema() -> dict:
    """The JSON Schema of ``colint diff --format json`` and ``colint check --base REF --format json``
    (colint.design.diffing.run_public): what a change to each config does. ``colint schema diff`` prints it;
    docs/diff.schema.json is that output."""
    return _document(
        "diff.schema.json",
        "colint diff / colint check --base REF, --format json",
        {
            "version": {"type": "string"},
            "estimate": {"type": "string"},
            "base": {"type": "string", "description": "the git revision (check --base) or the base file (diff)"},
            "commit": {"type": ["string", "null"], "description": "the commit the revision names (null: diff)"},
            "regression_threshold_pct": {"type": "number", "minimum": 0},
            "frontier_levels_tokens_per_s_per_user": {"type": "array", "items": {"type": "number"}},
            "unchanged_files": {**_COUNT, "description": "configs given but identical at the revision: not checked"},
            "configs": {"type": "array", "items": _config()},
            "summary": _summary("configs", "new", "fixed", "unchanged", "regressions"),
        },
    )


def _delta() -> dict:
    """A figure at the base and at the head, and how it changed."""
    number = {"type": ["number", "null"]}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["before", "after", "delta", "delta_pct"],
        "properties": {
            "before": {**number, "description": "the base's figure (null: no base, or it could not be read)"},
            "after": {**number, "description": "the head's figure (null: the config was removed)"},
            "delta": {**number, "description": "after - before, in the figure's unit"},
            "delta_pct": {**number, "description": "100 * delta / before (null without both sides or from 0)"},
        },
    }


def _config() -> dict:
    """One changed config: its sides, the parameter, KV and step-time deltas, the frontier, the findings."""
    delta = _delta()
    findings = {"type": "array", "items": _finding()}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "path",
            "base",
            "status",
            "base_error",
            "head_error",
            "skipped",
            "params_total",
            "params_active_per_token",
            "kv_cache_bytes_per_token_bf16",
            "steps",
            "frontier",
            "findings",
            "regressions",
        ],
        "properties": {
            "path": {"type": "string", "description": "the head's path (removed: where it was)"},
            "base": {"type": ["string", "null"], "description": "the base file, or REF:path (null: added)"},
            "status": {"enum": ["modified", "renamed", "added", "removed"]},
            "base_error": {
                "type": ["string", "null"],
                "description": "the base could not be read or checked (one line); every finding then counts as new",
            },
            "head_error": {"type": ["string", "null"], "description": "the head could not be checked (exit 2)"},
            "skipped": {"type": ["string", "null"], "description": "the head is not a decoder LLM config"},
            "params_total": delta,
            "params_active_per_token": delta,
            "kv_cache_bytes_per_token_bf16": {**delta, "description": "whole model, 2 bytes per element"},
            "steps": {"type": "array", "items": _step(delta), "description": "one per target GPU"},
            "frontier": {
                "oneOf": [{"type": "null"}, {"type": "array", "items": _frontier(delta)}],
                "description": "null unless asked for (--frontier)",
            },
            "findings": {
                "type": "object",
                "additionalProperties": False,
                "required": ["new", "fixed", "unchanged"],
                "properties": {
                    "new": {**findings, "description": "not at the base (matched by SARIF's fingerprints): they block"},
                    "fixed": {**findings, "description": "at the base, gone at the head"},
                    "unchanged": {**findings, "description": "at both: existing, never blocking"},
                },
            },
            "regressions": {
                "type": "array",
                "description": "steps slower by more than regression_threshold_pct",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["gpu", "step", "delta_pct"],
                    "properties": {
                        "gpu": {"type": "string"},
                        "step": {"enum": ["decode", "prefill"]},
                        "delta_pct": {"type": "number"},
                    },
                },
            },
        },
    }


def _step(delta: dict) -> dict:
    """One GPU's step times, weights and KV bytes at the base and the head, at the head's deployment."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "gpu",
            "deployment",
            "label",
            "decode_s",
            "prefill_s",
            "ftl_s",
            "weight_bytes_per_gpu",
            "kv_cache_bytes_per_token",
            "note",
        ],
        "properties": {
            "gpu": {"type": "string"},
            "deployment": {
                "type": "string",
                "description": "the layout and decode concurrency both sides are priced at (the head's)",
            },
            "label": {"type": "string", "description": "the estimate context: GPU and scenario"},
            "decode_s": {**delta, "description": "estimated decode step time (one token per sequence), seconds"},
            "prefill_s": {**delta, "description": "estimated prefill forward time, seconds"},
            "ftl_s": {**delta, "description": "estimated time to first token of one context-length prompt, seconds"},
            "weight_bytes_per_gpu": delta,
            "kv_cache_bytes_per_token": {**delta, "description": "one replica, in the scenario's KV format"},
            "note": {"type": ["string", "null"], "description": "the base priced elsewhere, or a side not priced"},
        },
    }


def _frontier(delta: dict) -> dict:
    """One GPU's frontier at the interactivity levels: tokens per second per GPU at the base and the head."""
    level = {
        "type": "object",
        "additionalProperties": False,
        "required": ["tokens_per_s_per_user", "tokens_per_s_per_gpu"],
        "properties": {
            "tokens_per_s_per_user": {"type": "number"},
            "tokens_per_s_per_gpu": {**delta, "description": "on the frontier (null: out of reach)"},
        },
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["gpu", "levels"],
        "properties": {"gpu": {"type": "string"}, "levels": {"type": "array", "items": level}},
    }
