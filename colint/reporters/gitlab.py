"""`--format gitlab`: GitLab Code Quality report (a JSON array; ``artifacts: reports: codequality:``).

Each finding: ``description``, ``check_name`` (the code), ``fingerprint`` (stable across line
moves: hash of path, code, key path and GPU, plus an occurrence number when those repeat),
``severity`` (error → ``critical``, warning → ``minor``, info → ``info``) and
``location: {path, lines: {begin}}`` with the path relative to the working directory.
Files that could not be checked appear as ``blocker`` entries with check_name ``colint-error``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Optional

from colint.reporters.sarif import display_path

SEVERITIES = {"error": "critical", "warning": "minor", "info": "info"}


def _fingerprint(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def build(results, *, cwd: Optional[str] = None) -> list[dict]:
    out = []
    seen: dict[tuple, int] = {}
    for r in results:
        path = display_path(r.path, cwd)
        if r.error is not None:
            e = r.error
            msg = e.message_with_key()
            out.append(
                {
                    "description": f"file not checked: {msg}",
                    "check_name": "colint-error",
                    "fingerprint": _fingerprint(path, "colint-error"),
                    "severity": "blocker",
                    "location": {"path": path, "lines": {"begin": e.line or 1}},
                }
            )
            continue
        for f in r.findings:
            ident = (path, f.code, f.key or "", f.gpu or "")
            n = seen.get(ident, 0)
            seen[ident] = n + 1
            out.append(
                {
                    "description": f"{f.code} {f.message}" + (f" [{f.gpu}]" if f.gpu else ""),
                    "check_name": f.code,
                    "fingerprint": _fingerprint(*ident, str(n)),
                    "severity": SEVERITIES[f.severity],
                    "location": {"path": path, "lines": {"begin": f.line or 1}},
                }
            )
    return out


def render(results, *, cwd: Optional[str] = None) -> str:
    return json.dumps(build(results, cwd=cwd), indent=2, ensure_ascii=False)
