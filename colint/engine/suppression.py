"""Suppressing accepted findings: YAML comments, per-file-ignores and a baseline.

- YAML files take ``# colint: ignore[CL201]`` (several codes: ``ignore[CL201, CL005]``; no
  brackets: every code) as a trailing comment on the line of the finding, or on a line of its
  own, where it covers the next line that holds a key. ``# colint: ignore-file[CL201]``
  anywhere covers the whole file. They are read from the Document's text: rules never see them.
- ``config.json`` cannot hold comments, so a baseline file records accepted findings keyed by
  (path relative to the baseline file, code, key path) — never by line, so reformatting the file
  does not invalidate it. ``colint check --write-baseline FILE`` writes one; ``--baseline FILE``
  reports only findings that are not in it.
- Suppressions that no longer suppress anything are reported as CL000 unused-suppression
  (when CL000 is selected), as are comments naming an unknown code and baseline entries whose
  finding is gone. Only codes whose rules ran are judged: a comment for CL201 is not unused
  because the run was ``--select CL0``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import field
from typing import Optional

from colint.errors import UsageError
from colint.util.fileio import read_limited
from colint.findings import Finding, rank
from colint.loading.document import format_path
from colint.rules import all_rules
from colint.rules.unused_suppression import UNUSED_CODE
from colint.rules.unused_suppression import unused_finding as _unused
from colint.engine.settings import Settings
from colint.util.records import dataclass

# ---------------------------------------------------------------- YAML comment directives

_DIRECTIVE = re.compile(r"#\s*colint:\s*(?P<kind>ignore-file|ignore)(?P<rest>.*)$")
_CODES = re.compile(r"^\[(?P<codes>[^\]]*)\]\s*(?:#.*)?$")


@dataclass
class Directive:
    line: int  # 1-based line of the comment
    column: int  # 1-based column of its '#'
    file_wide: bool
    target_line: Optional[int]  # the line it covers (None: file-wide, or nothing follows)
    codes: tuple[str, ...]  # upper-case; empty = every code
    error: Optional[str] = None  # malformed directive
    used: set = field(default_factory=set)  # codes it suppressed ("*" for a bare ignore)


def parse_directives(text: str) -> list[Directive]:
    """Every ``# colint:`` directive in a YAML text, with the line each one covers."""
    lines = text.splitlines()
    out: list[Directive] = []
    for i, raw in enumerate(lines):
        if "colint:" not in raw:
            continue
        m = _DIRECTIVE.search(raw)
        if m is None:
            continue
        col = m.start() + 1
        rest = m.group("rest").strip()
        codes: tuple[str, ...] = ()
        error = None
        if rest and not rest.startswith("#"):
            cm = _CODES.match(rest)
            if cm is None:
                error = (
                    f"malformed suppression comment: expected `# colint: {m.group('kind')}[CODE, ...]`, "
                    f"got `{m.group(0).strip()}`"
                )
            else:
                codes = tuple(c.strip().upper() for c in cm.group("codes").split(",") if c.strip())
                if not codes:
                    error = "suppression comment names no code inside [ ]"
        file_wide = m.group("kind") == "ignore-file"
        target: Optional[int] = None
        if not file_wide:
            if raw[: m.start()].strip():
                target = i + 1
            else:  # own line: covers the next line with content
                for j in range(i + 1, len(lines)):
                    stripped = lines[j].strip()
                    if stripped and not stripped.startswith("#"):
                        target = j + 1
                        break
        out.append(Directive(line=i + 1, column=col, file_wide=file_wide, target_line=target, codes=codes, error=error))
    return out


def _covers(d: Directive, f: Finding) -> bool:
    if d.error is not None:
        return False
    if not d.file_wide and (f.line is None or d.target_line != f.line):
        return False
    return not d.codes or f.code in d.codes


# ---------------------------------------------------------------- baseline

BASELINE_VERSION = 1
MAX_BASELINE_BYTES = 64 * 1024 * 1024  # 10,000 findings take about 2 MiB; refused unread beyond 64 MiB


def _rel(path: str, base_dir: str) -> str:
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, base_dir)
    except ValueError:  # another drive (Windows)
        rel = absolute
    return rel.replace(os.sep, "/")


@dataclass
class Baseline:
    """Accepted findings, keyed by (path relative to the baseline file, code, key path)."""

    path: str
    entries: dict[tuple[str, str, str], str] = field(default_factory=dict)  # key -> message (for humans)
    used: set = field(default_factory=set)

    @property
    def base_dir(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    @classmethod
    def load(cls, path: str) -> Baseline:

        if not os.path.lexists(path):
            raise UsageError("baseline file not found (create it with `colint check --write-baseline FILE`)", path=path)
        raw = read_limited(path, MAX_BASELINE_BYTES, UsageError, limit_for=" for a baseline")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(
                f"baseline is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", path=path
            ) from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"baseline is not valid JSON: {exc.msg}", path=path, line=exc.lineno, column=exc.colno
            ) from None
        except (ValueError, RecursionError) as exc:  # a 5,000-digit number, nesting beyond the stack
            raise UsageError(
                f"baseline is not valid JSON: {str(exc).split(';')[0]}", path=path, line=1, column=1
            ) from None
        if (
            not isinstance(data, dict)
            or data.get("colint_baseline") != BASELINE_VERSION
            or not isinstance(data.get("findings"), list)
        ):
            raise UsageError(
                f'not a colint baseline (expected {{"colint_baseline": {BASELINE_VERSION}, "findings": [...]}}}})',
                path=path,
            )
        out = cls(path=path)
        for i, e in enumerate(data["findings"]):
            if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in ("path", "code", "key")):
                raise UsageError(f"baseline entry {i} needs string fields path, code and key", path=path)
            out.entries[(e["path"], e["code"].upper(), e["key"])] = str(e.get("message", ""))
        return out

    def key_of(self, path: str, f: Finding) -> tuple[str, str, str]:
        return (_rel(path, self.base_dir), f.code, f.key or "")

    def suppresses(self, path: str, f: Finding) -> bool:
        k = self.key_of(path, f)
        if k in self.entries:
            self.used.add(k)
            return True
        return False

    def stale_for(self, path: str) -> list[tuple[str, str, str]]:
        rel = _rel(path, self.base_dir)
        return sorted(k for k in self.entries if k[0] == rel and k not in self.used)


def render_baseline(results, baseline_path: str) -> tuple[str, int]:
    """The baseline JSON accepting every finding in ``results`` (except CL000); and its entry count."""
    base_dir = os.path.dirname(os.path.abspath(baseline_path))
    entries: dict[tuple[str, str, str], str] = {}
    for r in results:
        for f in r.findings:
            if f.code == UNUSED_CODE:
                continue
            entries.setdefault((_rel(r.path, base_dir), f.code, f.key or ""), f.message)
    rows = [{"path": p, "code": c, "key": k, "message": m} for (p, c, k), m in sorted(entries.items())]
    text = json.dumps({"colint_baseline": BASELINE_VERSION, "findings": rows}, indent=2, ensure_ascii=False)
    return text + "\n", len(rows)


# ---------------------------------------------------------------- applying them all


def _locate(doc, key: str) -> tuple[Optional[int], Optional[int]]:
    if doc is None or not key:
        return None, None

    for p in doc.spans:
        if format_path(p) == key:
            return doc.location(p)
    return None, None


def apply_suppressions(
    path: str, doc, findings: list[Finding], ran_codes: set[str], opts: Settings
) -> tuple[list[Finding], int]:
    """Drop suppressed findings; add CL000 for suppressions that suppress nothing.

    Order: YAML comments, then the baseline, then per-file-ignores (which also apply to CL000).
    Returns the remaining findings (ranked) and how many were suppressed.
    """
    kept = list(findings)
    extra: list[Finding] = []
    report_unused = UNUSED_CODE in ran_codes
    known = set(all_rules())

    if doc is not None and doc.syntax == "yaml":
        directives = parse_directives(doc.text)
        if directives:
            remaining = []
            for f in kept:
                hit = next((d for d in directives if _covers(d, f)), None)
                if hit is None:
                    remaining.append(f)
                else:
                    hit.used.add(f.code if hit.codes else "*")
            kept = remaining
            if report_unused:
                for d in directives:
                    if d.error is not None:
                        extra.append(_unused(d.error, d.line, d.column))
                        continue
                    scope = "in this file" if d.file_wide else "on the line it covers"
                    if not d.codes:
                        if not d.used:
                            extra.append(_unused(f"unused suppression: no finding {scope}", d.line, d.column))
                        continue
                    for c in d.codes:
                        if c not in known:
                            extra.append(
                                _unused(
                                    f"suppression names unknown rule code {c} (see `colint rules`)",
                                    d.line,
                                    d.column,
                                    code=c,
                                )
                            )
                        elif c in ran_codes and c not in d.used:
                            extra.append(
                                _unused(f"unused suppression: no {c} finding {scope}", d.line, d.column, code=c)
                            )

    baseline = opts.loaded_baseline
    if baseline is not None:
        kept = [f for f in kept if not baseline.suppresses(path, f)]
        if report_unused:
            for _p, code, key in baseline.stale_for(path):
                if code in ran_codes or code not in known:
                    line, col = _locate(doc, key)
                    where = f" at {key}" if key else ""
                    extra.append(
                        _unused(
                            f"baseline entry {code}{where} no longer matches a finding "
                            "(rewrite the baseline with --write-baseline)",
                            line,
                            col,
                            code=code,
                        )
                    )

    kept += extra
    pfi = opts.per_file_ignore_codes if opts.per_file_ignores else ()
    if pfi:
        from colint.util.globs import per_file_ignored_codes

        ignored = per_file_ignored_codes(path, pfi)
        if ignored:
            kept = [f for f in kept if f.code not in ignored]
    suppressed = len(findings) + len(extra) - len(kept)
    return rank(kept), suppressed
