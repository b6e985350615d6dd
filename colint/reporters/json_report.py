"""`--format json`: the stable shape documented in docs/output.md (JSON Schema: docs/check-report.schema.json,
``colint schema report``). ``skipped`` says why a file was not checked (colint.triage)."""

from __future__ import annotations

import json

from colint.util.version import __version__


def render(results, summary: dict) -> str:
    files = []
    for r in results:
        err = None
        if r.error is not None:
            err = {"message": r.error.message_with_key(), "line": r.error.line, "column": r.error.column}
        skipped = r.skipped.public() if getattr(r, "skipped", None) is not None else None
        files.append(
            {
                "path": r.path,
                "format": r.format,
                "model_type": r.model_type,
                "error": err,
                "skipped": skipped,
                "findings": [f.public() for f in r.findings],
            }
        )
    return json.dumps(
        {"version": __version__, "files": files, "summary": summary}, indent=2, ensure_ascii=False, allow_nan=False
    )
