"""Glob matching for per-file-ignores and ``--include``/``--exclude``: ``**`` spans directories, ``*`` and
``?`` stay within a name, and a glob without ``/`` matches a file name anywhere. Linear in the path's
length whatever the pattern (an automaton over states, never a backtracking regex)."""

from __future__ import annotations

import os
from functools import lru_cache

_LIT, _ONE, _STAR, _ANY, _DIRS = range(5)  # a character, ?, * (within a name), ** (anything), **/ (any dirs)


@lru_cache(maxsize=256)
def _glob_tokens(glob: str) -> tuple:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append((_DIRS, ""))
            i += 3
        elif glob.startswith("**", i):
            out.append((_ANY, ""))
            i += 2
        elif glob[i] == "*":
            out.append((_STAR, ""))
            i += 1
        elif glob[i] == "?":
            out.append((_ONE, ""))
            i += 1
        else:
            out.append((_LIT, glob[i]))
            i += 1
    # repeated wildcards match what one does: drop them (keeps the state sets small)
    merged: list = []
    for t in out:
        if merged and t[0] in (_STAR, _ANY, _DIRS) and merged[-1] == t:
            continue
        merged.append(t)
    return tuple(merged)


def _glob_match(tokens: tuple, text: str) -> bool:
    """Whether ``text`` matches the glob ``tokens`` in its entirety: a simulation of the pattern's automaton
    over the set of states it can be in, so time is len(text) x len(tokens) whatever the pattern (a regex
    with 30 ``**`` backtracked for minutes on a pull request's per-file-ignores)."""
    n = len(tokens)

    def closure(states: set) -> set:
        todo = list(states)
        while todo:
            i = todo.pop()
            if i < n and tokens[i][0] in (_STAR, _ANY, _DIRS) and i + 1 not in states:
                states.add(i + 1)
                todo.append(i + 1)
        return states

    states = closure({0})
    for c in text:
        nxt: set = set()
        for i in states:
            if i >= n:
                continue
            kind, lit = tokens[i]
            if kind == _LIT:
                if c == lit:
                    nxt.add(i + 1)
            elif kind == _ONE:
                if c != "/":
                    nxt.add(i + 1)
            elif kind == _STAR:
                if c != "/":
                    nxt.add(i)
            elif kind == _ANY:
                nxt.add(i)
            else:  # _DIRS: any characters up to and including a "/"
                nxt.add(i)
                if c == "/":
                    nxt.add(i + 1)
        if not nxt:
            return False
        states = closure(nxt)
    return n in states


def glob_matches(glob: str, path: str, base_dir: str) -> bool:
    """``glob`` relative to ``base_dir`` (``**`` spans directories); one without '/' matches a file name."""
    absolute = os.path.abspath(path)
    if "/" not in glob:
        return _glob_match(_glob_tokens(glob), os.path.basename(absolute))
    rel = os.path.relpath(absolute, base_dir).replace(os.sep, "/")
    if rel.startswith("../"):
        return False
    return _glob_match(_glob_tokens(glob[2:] if glob.startswith("./") else glob), rel)


def per_file_ignored_codes(path: str, per_file_ignores) -> frozenset:
    codes: frozenset = frozenset()
    for base, glob, cs in per_file_ignores:
        if glob_matches(glob, path, base):
            codes = codes | cs
    return codes
