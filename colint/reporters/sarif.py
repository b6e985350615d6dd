"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run; ``tool.driver.rules`` lists every registered rule (id, name, short/full description,
help, helpUri when the rule's doc cites a URL, default level, family tag). Results point at the
key of the finding with a path relative to the working directory (``uriBaseId: %SRCROOT%``;
files outside it get a ``../`` path, never an absolute ``file://`` URI). A fix becomes a SARIF ``fix`` when every one
of its edits can be located in the file (the loader recorded the value's span, in JSON and
YAML alike): ``deletedRegion`` = the old value, ``insertedContent`` = the new one (in YAML the
scalar ``colint --fix`` splices there). Files that could not be checked are
``toolExecutionNotifications``. Severity: error → ``error``, warning → ``warning``, info → ``note``.
"""

from __future__ import annotations

import json
import os
import re
from typing import Optional
from urllib.parse import quote

from colint import __version__

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}  # GitHub's property
SRCROOT = "%SRCROOT%"
_URL = re.compile(r"https?://[^\s)\]>,;]+")


def display_path(path: str, cwd: Optional[str] = None) -> str:
    """``path`` relative to ``cwd`` with '/' separators when it lies inside it, else absolute."""
    cwd = os.path.abspath(cwd or os.getcwd())
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, cwd)
    except ValueError:
        return absolute.replace(os.sep, "/")
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return absolute.replace(os.sep, "/")
    return rel.replace(os.sep, "/")


def artifact_location(path: str, cwd: Optional[str] = None) -> dict:
    """A URI relative to ``%SRCROOT%`` (the working directory): ``../other/config.json`` for a file outside it,
    never an absolute ``file:///`` URI that would publish the runner's directory layout. Only a file on
    another Windows drive (no relative path exists) gets an absolute URI."""
    cwd = os.path.abspath(cwd or os.getcwd())
    try:
        rel = os.path.relpath(os.path.abspath(path), cwd).replace(os.sep, "/")
    except ValueError:  # another drive
        from pathlib import Path

        return {"uri": Path(os.path.abspath(path)).as_uri()}
    return {"uri": quote(rel, safe="/"), "uriBaseId": SRCROOT}


def _markdown(r) -> str:
    md = [f"**{r.code} {r.name}** ({r.family})", "", r.summary, "", "**What**: " + r.doc.what, "",
          "**Why**: " + r.doc.why, "", "**Example**: `" + r.doc.example.replace("`", "'") + "`", "",
          "**Fix**: " + r.doc.fix]
    if r.options:
        md += ["", f"**Thresholds** (`[tool.colint.rules.{r.code}]`):"]
        md += [f"- `{k}` = `{default!r}`: {desc}" for k, (default, desc) in r.options.items()]
    if r.doc.sources:
        md += ["", "**Sources**:"] + [f"- {s}" for s in r.doc.sources]
    return "\n".join(md)


def rule_descriptor(r) -> dict:
    d = {
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": f"{r.doc.what} {r.doc.why}".strip()},
        "help": {"text": r.render_doc(), "markdown": _markdown(r)},
    }
    url = next((m.group(0) for s in r.doc.sources for m in [_URL.search(s)] if m), None)
    if url:
        d["helpUri"] = url
    d["defaultConfiguration"] = {"level": LEVELS[r.severity]}
    d["properties"] = {"tags": [r.family], "problem.severity": PROBLEM_SEVERITY[r.severity]}
    return d


def _value_regions(doc, keys=None) -> dict[str, dict]:
    """Dotted key → SARIF region of its value (where the loader recorded the value's span), for
    ``keys`` only when given (a big YAML file has thousands of spans; fixes name a few)."""
    if doc is None:
        return {}
    from colint.loading.document import format_path, line_column, line_starts

    out = {}
    starts = None
    for p, span in doc.spans.items():
        if span.value_start is None or span.value_end is None:
            continue
        if keys is not None and format_path(p) not in keys:
            continue
        if starts is None:
            starts = line_starts(doc.text)
        sl, sc = line_column(starts, span.value_start)
        el, ec = line_column(starts, span.value_end)
        out[format_path(p)] = {"startLine": sl, "startColumn": sc, "endLine": el, "endColumn": ec}
    return out


def _inserted(value, syntax: str = "json") -> Optional[str]:
    """The new value's text: JSON, or the YAML scalar colint.fixing splices (None for a YAML
    mapping or list, which only the round trip writes)."""
    if syntax == "yaml":
        from colint.fixing import yaml_literal

        return yaml_literal(value)
    return json.dumps(value, ensure_ascii=False)


def _fixes(f, regions: dict, location: dict, syntax: str = "json") -> list[dict]:
    out = []
    for fx in f.fixes:
        if not fx.edits or any(e.key not in regions for e in fx.edits):
            continue
        texts = [_inserted(e.new, syntax) for e in fx.edits]
        if any(t is None for t in texts):
            continue
        out.append({
            "description": {"text": f"{fx.title} ({fx.safety})"},
            "artifactChanges": [{
                "artifactLocation": dict(location),
                "replacements": [{"deletedRegion": dict(regions[e.key]), "insertedContent": {"text": t}}
                                 for e, t in zip(fx.edits, texts)],
            }],
        })
    return out


def _message(f) -> str:
    return "\n".join([f"{f.code} {f.message}" + (f" [{f.gpu}]" if f.gpu else "")] + list(f.details))


def build(results, rules: dict, *, cwd: Optional[str] = None) -> dict:
    ordered = sorted(rules.values(), key=lambda r: r.code)
    index = {r.code: i for i, r in enumerate(ordered)}
    sarif_results = []
    notifications = []
    for r in results:
        loc = artifact_location(r.path, cwd)
        if r.error is not None:
            e = r.error
            msg = e.message_with_key()
            phys = {"artifactLocation": dict(loc)}
            if e.line:
                phys["region"] = {"startLine": e.line, **({"startColumn": e.column} if e.column else {})}
            notifications.append({"level": "error", "message": {"text": f"file not checked: {msg}"},
                                  "locations": [{"physicalLocation": phys}]})
            continue
        regions = _value_regions(r.doc, {e.key for f in r.findings for fx in f.fixes for e in fx.edits})
        for f in r.findings:
            region = {"startLine": f.line or 1}  # GitHub rejects a result without a region: a file-level finding sits on line 1
            if f.line and f.column:
                region["startColumn"] = f.column
            res = {"ruleId": f.code}
            if f.code in index:
                res["ruleIndex"] = index[f.code]
            res.update({
                "level": LEVELS[f.severity],
                "message": {"text": _message(f)},
                "locations": [{"physicalLocation": {"artifactLocation": dict(loc), "region": region}}],
            })
            fixes = _fixes(f, regions, loc, getattr(r.doc, "syntax", "json"))
            if fixes:
                res["fixes"] = fixes
            props = {"key": f.key, "severity": f.severity}
            if f.gpu:
                props["gpu"] = f.gpu
            if f.impact.estimated_loss_pct is not None:
                props["estimated_loss_pct"] = f.impact.estimated_loss_pct
            if f.evidence:
                props["evidence"] = f.evidence
            res["properties"] = props
            sarif_results.append(res)
    invocation = {"executionSuccessful": not notifications}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "colint", "version": __version__, "semanticVersion": __version__,
                                "rules": [rule_descriptor(r) for r in ordered]}},
            "invocations": [invocation],
            "columnKind": "unicodeCodePoints",
            "results": sarif_results,
        }],
    }


def render(results, rules: dict, *, cwd: Optional[str] = None) -> str:
    return json.dumps(build(results, rules, cwd=cwd), indent=2, ensure_ascii=False, allow_nan=False)
