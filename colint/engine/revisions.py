"""Config files at a git revision, for `colint check --base REF`: which configs changed since REF (renames
followed, added and removed ones told apart) and each one's bytes at REF.

Git is run as a subprocess (``git`` on PATH); every failure is a one-line UsageError (exit 2): not inside a git
work tree, git missing, or a revision git does not know. Paths are relative to the work tree's root, with '/'.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Optional

from colint.errors import UsageError
from colint.engine.sources import HOOK_FILES
from colint.util.records import dataclass


@dataclass(frozen=True)
class Change:
    """One config between REF and the work tree: ``status`` is added, removed, renamed, modified or unchanged;
    ``old``/``new``: its path at REF / in the work tree (relative to the root; None where it does not exist)."""

    status: str
    old: Optional[str]
    new: Optional[str]


def _git(root: str, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
    except OSError as exc:  # git not installed
        raise UsageError(f"--base needs git: {exc.strerror or exc}") from None


def _first_line(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else "no message"


def repo_root(start: str) -> str:
    """The root of the git work tree holding ``start`` (a directory)."""
    proc = _git(start, "rev-parse", "--show-toplevel")
    if proc.returncode != 0:
        raise UsageError(f"--base needs a git repository: {os.path.abspath(start)} is not inside one")
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def resolve_revision(root: str, ref: str) -> str:
    """The commit ``ref`` names (a branch, tag, sha, HEAD~1, ...); a UsageError when git does not know it (a
    shallow clone may lack it: fetch it, e.g. actions/checkout's ``fetch-depth: 0``)."""
    if not ref or ref.startswith("-"):
        raise UsageError(f"--base {ref!r}: not a git revision")
    proc = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if proc.returncode != 0:
        raise UsageError(
            f"--base {ref}: unknown git revision in {root} (a shallow clone may lack it: fetch it, or check out "
            "with fetch-depth: 0)"
        )
    return proc.stdout.decode("ascii").strip()


def is_config(path: str) -> bool:
    """A name the pre-commit hook lints (colint.engine.sources.HOOK_FILES)."""
    return re.search(HOOK_FILES, path) is not None


def changed_files(root: str, commit: str, *, configs_only: bool = False) -> list[Change]:
    """The files that differ between ``commit`` and the work tree, renames followed (``git diff --name-status
    -M``); untracked files are not listed. ``configs_only``: those with a name the pre-commit hook lints."""
    proc = _git(root, "diff", "--name-status", "-z", "-M", "--no-ext-diff", commit, "--")
    if proc.returncode != 0:
        raise UsageError(f"--base: git diff failed: {_first_line(proc.stderr)}")
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    keep = is_config if configs_only else (lambda _path: True)
    out: list[Change] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status[0] in "RC":
            old, new = fields[i + 1], fields[i + 2]
            i += 3
        else:
            old = new = fields[i + 1]
            i += 2
        kind = status[0]
        if kind == "R" and (keep(old) or keep(new)):
            out.append(Change("renamed", old, new))
        elif not keep(new):
            continue
        elif kind == "A" or kind == "C":
            out.append(Change("added", None, new))
        elif kind == "D":
            out.append(Change("removed", old, None))
        else:  # M, T (a type change), U (unmerged)
            out.append(Change("modified", old, new))
    return out


def files_at(root: str, commit: str) -> set[str]:
    """Every file tracked at ``commit`` (relative paths)."""
    proc = _git(root, "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
    if proc.returncode != 0:
        raise UsageError(f"--base: git ls-tree failed: {_first_line(proc.stderr)}")
    return {p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p}


def show(root: str, commit: str, path: str) -> bytes:
    """The bytes of ``path`` at ``commit`` (``git show commit:path``)."""
    proc = _git(root, "show", f"{commit}:{path}")
    if proc.returncode != 0:
        raise UsageError(f"--base: git show {commit[:12]}:{path} failed: {_first_line(proc.stderr)}")
    return proc.stdout


def relative(root: str, path: str) -> str:
    """``path`` relative to the work tree's root, with '/' (symlinks resolved on both sides, as git sees them)."""
    return os.path.relpath(os.path.realpath(path), os.path.realpath(root)).replace(os.sep, "/")


def classify(root: str, commit: str, paths: list[str], *, tracked: Optional[set[str]] = None) -> list[Change]:
    """What each of ``paths`` (files in the work tree) was at ``commit``: renamed, added (absent at REF, tracked or
    not), modified or unchanged. ``Change.new`` is the path as given."""
    changes = {c.new: c for c in changed_files(root, commit) if c.new is not None}
    out = []
    for p in paths:
        rel = relative(root, p)
        c = changes.get(rel)
        if c is not None:
            out.append(Change(c.status, c.old, p))
            continue
        if tracked is None:
            tracked = files_at(root, commit)
        out.append(Change("unchanged", rel, p) if rel in tracked else Change("added", None, p))
    return out
