"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run; ``tool.driver.rules`` lists every registered rule (id, name, short/full description,
help, ``helpUri`` = the rule's section of docs/rules.md at this version's tag, default level, family
tag). Results point at the key of the finding with a path relative to the working directory
(``uriBaseId: %SRCROOT%``; files outside it get a ``../`` path, never an absolute ``file://`` URI); the
region runs from the key to the end of its value where the loader recorded the value's span
(``endLine``/``endColumn``, exclusive). ``partialFingerprints["colint/v1"]`` hashes file + code + key path
+ GPU + the GEMMs the finding names (and an occurrence number for exact repeats): it survives line moves
and reformatting, and two findings on one key stay two results. A fix becomes a SARIF ``fix`` made of the
text replacements ``colint --fix`` splices (``colint.fixing.fix_text.text_edits``, carried on the file result):
``deletedRegion`` = the old value (empty for an inserted key), ``insertedContent`` = the new text.
A YAML fix that only the round trip can write (a new key, a collection) has none. Files that could not be
checked are ``toolExecutionNotifications`` (level ``error``; files not checked because they are not decoder
LLM configs: level ``note``, and the run still succeeded). Severity: error → ``error``, warning → ``warning``,
info → ``note``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional
from urllib.parse import quote

from colint.util.version import REPOSITORY_URL, __version__
from colint.loading.document import format_path, line_column, line_starts

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}  # GitHub's property
SRCROOT = "%SRCROOT%"


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


FINGERPRINT = "colint/v1"


def help_uri(code: str) -> str:
    """The rule's section of docs/rules.md (``colint rule CODE`` prints the same text), at this version's tag."""
    return f"{REPOSITORY_URL}/blob/v{__version__}/docs/rules.md#{code.lower()}"


def _subject(f) -> str:
    """What a finding is about beyond its key: the GEMMs it names (two CL101s on one key differ here)."""
    ev = f.evidence or {}
    names = (
        [g.get("gemm") for g in ev.get("gemms", []) if isinstance(g, dict)] if isinstance(ev.get("gemms"), list) else []
    )
    if isinstance(ev.get("gemm"), str):
        names.append(ev["gemm"])
    return ",".join(sorted(n for n in names if isinstance(n, str)))


def fingerprints(path: str, findings, cwd: Optional[str] = None) -> list[str]:
    """One stable hash per finding: display path + code + key + GPU + subject (+ #n for exact repeats)."""
    import hashlib

    shown = display_path(path, cwd)
    seen: dict[str, int] = {}
    out = []
    for f in findings:
        ident = "\0".join((shown, f.code, f.key or "", f.gpu or "", _subject(f)))
        n = seen[ident] = seen.get(ident, 0) + 1
        if n > 1:
            ident += f"\0#{n}"
        out.append(hashlib.sha256(ident.encode("utf-8")).hexdigest()[:32])
    return out


def _markdown(r) -> str:
    md = [
        f"**{r.code} {r.name}** ({r.family})",
        "",
        r.summary,
        "",
        "**What**: " + r.doc.what,
        "",
        "**Why**: " + r.doc.why,
        "",
        "**Example**: `" + r.doc.example.replace("`", "'") + "`",
        "",
        "**Fix**: " + r.doc.fix,
    ]
    if r.options:
        md += ["", f"**Thresholds** (`[tool.colint.rules.{r.code}]`):"]
        md += [f"- `{o.name}` = `{o.default!r}`: {o.doc}" for o in r.options.values()]
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
    d["helpUri"] = help_uri(r.code)
    d["defaultConfiguration"] = {"level": LEVELS[r.severity]}
    d["properties"] = {"tags": [r.family, r.kind], "kind": r.kind, "problem.severity": PROBLEM_SEVERITY[r.severity]}
    return d


def _fixes(f, result, location: dict) -> list[dict]:
    """SARIF fixes: each fix as the text replacements --fix makes (an insertion is an empty region)."""
    out = []
    for fx in f.fixes:
        edits = result.text_edits(fx)
        if not edits:
            continue
        out.append(
            {
                "description": {"text": f"{fx.title} ({fx.safety})"},
                "artifactChanges": [
                    {
                        "artifactLocation": dict(location),
                        "replacements": [
                            {
                                "deletedRegion": {
                                    "startLine": t.start_line,
                                    "startColumn": t.start_column,
                                    "endLine": t.end_line,
                                    "endColumn": t.end_column,
                                },
                                "insertedContent": {"text": t.text},
                            }
                            for t in edits
                        ],
                    }
                ],
            }
        )
    return out


def _message(f) -> str:
    return "\n".join([f"{f.code} {f.message}" + (f" [{f.gpu}]" if f.gpu else "")] + list(f.details))


def _value_regions(doc, keys=None) -> dict[str, dict]:
    """Dotted key → SARIF region of its value (where the loader recorded the value's span), for
    ``keys`` only when given (a big YAML file has thousands of spans; fixes name a few)."""
    if doc is None:
        return {}

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


def build(results, rules: dict, *, cwd: Optional[str] = None) -> dict:
    ordered = sorted(rules.values(), key=lambda r: r.code)
    index = {r.code: i for i, r in enumerate(ordered)}
    sarif_results = []
    notifications = []
    skipped: list[dict] = []
    for r in results:
        loc = artifact_location(r.path, cwd)
        if getattr(r, "skipped", None) is not None:
            skipped.append(
                {
                    "level": "note",
                    "message": {"text": r.skipped.message()},
                    "locations": [{"physicalLocation": {"artifactLocation": dict(loc)}}],
                }
            )
            continue
        if r.error is not None:
            notifications.append(_not_checked(r.error, loc))
            continue
        regions = _value_regions(r.doc, {f.key for f in r.findings if f.key})
        for f, fingerprint in zip(r.findings, fingerprints(r.path, r.findings, cwd)):
            sarif_results.append(_result(f, fingerprint, r, loc, index.get(f.code), regions))
    invocation: dict[str, Any] = {"executionSuccessful": not notifications}
    if notifications or skipped:
        invocation["toolExecutionNotifications"] = notifications + skipped
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "colint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": REPOSITORY_URL,
                        "rules": [rule_descriptor(r) for r in ordered],
                    }
                },
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",
                "results": sarif_results,
            }
        ],
    }


def _not_checked(e, loc: dict) -> dict:
    """The tool notification of a file that could not be checked, at the error's line where it has one."""
    msg = e.message_with_key()
    phys = {"artifactLocation": dict(loc)}
    if e.line:
        phys["region"] = {"startLine": e.line, **({"startColumn": e.column} if e.column else {})}
    return {
        "level": "error",
        "message": {"text": f"file not checked: {msg}"},
        "locations": [{"physicalLocation": phys}],
    }


def _result(f, fingerprint: str, r, loc: dict, rule_index: int | None, regions: dict) -> dict:
    """One finding as a SARIF result: its region (to the end of the key's value), fixes and properties."""
    region = {"startLine": f.line or 1}  # GitHub rejects a result without a region: a file-level finding sits on line 1
    if f.line and f.column:
        region["startColumn"] = f.column
        value = regions.get(f.key or "")
        if value and (value["endLine"], value["endColumn"]) > (f.line, f.column):
            region["endLine"], region["endColumn"] = value["endLine"], value["endColumn"]
    res = {"ruleId": f.code}
    if rule_index is not None:
        res["ruleIndex"] = rule_index
    res.update(
        {
            "level": LEVELS[f.severity],
            "message": {"text": _message(f)},
            "locations": [{"physicalLocation": {"artifactLocation": dict(loc), "region": region}}],
            "partialFingerprints": {FINGERPRINT: fingerprint},
        }
    )
    fixes = _fixes(f, r, loc)
    if fixes:
        res["fixes"] = fixes
    props = {"key": f.key, "severity": f.severity, "kind": f.kind}
    if f.gpu:
        props["gpu"] = f.gpu
    if f.impact.estimated_loss_pct is not None:
        props["estimated_loss_pct"] = f.impact.estimated_loss_pct
    if f.evidence:
        props["evidence"] = f.evidence
    res["properties"] = props
    return res


def render(results, rules: dict, *, cwd: Optional[str] = None) -> str:
    return json.dumps(build(results, rules, cwd=cwd), indent=2, ensure_ascii=False, allow_nan=False)
