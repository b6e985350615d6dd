"""CL007 findings of a config read by its structure (colint.normalize.hf.structure): every key of the file that the
family it was read as neither reads nor knows. A shape key (a size, a count, a layer pattern) among them is
``ignored`` (a warning: whatever it sizes is not counted); any other key is ``unknown`` (info); a key one edit from
one the family reads is a typo, as for any family. Unlike a known family's file with ``auto_map``, every such key is
reported: the family read as is colint's guess, so what it leaves out must be visible."""

from __future__ import annotations

from dataclasses import replace

from colint.loading.document import Document
from colint.normalize.hf.structure import shape_keys
from colint.normalize.model_spec import KeyIssue
from colint.normalize.hf_harmless import HF_HARMLESS
from colint.normalize.unknown_keys import hf_known, near_known_keys, suggest_key, unknown_key_issue


def structure_key_issues(doc: Document, root: tuple, accessed: set[tuple], read_as: str) -> list[KeyIssue]:
    node = doc.get(root) if root else doc.data
    if not isinstance(node, dict):
        return []
    n = len(root)
    looked = {p[n] for p in accessed if len(p) > n and p[:n] == root}
    known = hf_known(read_as) or frozenset()
    shape = set(shape_keys(node))
    issues = []
    for k in node:
        if not isinstance(k, str) or k in looked or k in known or k in HF_HARMLESS:
            continue
        hint = suggest_key(k, looked, set(node), near_known_keys(k, read_as))
        issue = unknown_key_issue(doc, root + (k,), read_as, hint, "hf")
        if hint is None and k in shape:
            issue = replace(
                issue,
                kind="ignored",
                detail=f"a shape key that {read_as}, the closest family, neither reads nor knows: whatever it sizes "
                "is not counted",
            )
        elif hint is None:
            issue = replace(
                issue,
                detail=f"read by structure as {read_as}, which has no such key: whatever it adds is not counted",
            )
        issues.append(issue)
    return issues
