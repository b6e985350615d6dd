"""Write the rule pages from the rule metadata: docs/rules.md (every rule on one page, the page SARIF's
helpUri names; ``colint rules --format markdown`` prints it), docs/rules/ (``index.md`` and one
``CODE.md`` per rule, for the docs site) and the rule pages' lines of mkdocs.yml's nav.
colint/reporters/rules_doc.py is the one generator of the pages.

Run: ``.venv/bin/python scripts/gen_rule_docs.py`` (writes them, removing a page whose rule is gone);
``--check`` exits 1 and names the stale pages instead. tests/test_docs.py fails while they are stale.
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from colint.reporters.rules_doc import render, render_pages  # noqa: E402
from colint.rules import all_rules  # noqa: E402


NAV_START = "      # rule pages: written by scripts/gen_rule_docs.py from the rule metadata\n"
NAV_END = "      # end of rule pages\n"


def _nav(pages: dict[str, str], mkdocs_yml: str) -> str:
    """mkdocs.yml with the nav lines between its rule-page markers listing every rule page."""
    head, _, rest = mkdocs_yml.partition(NAV_START)
    _, _, tail = rest.partition(NAV_END)
    lines = "".join(f"      - {n[:-3]}: rules/{n}\n" for n in sorted(pages) if n != "index.md")
    return head + NAV_START + lines + NAV_END + tail


def expected() -> dict[str, str]:
    """Repository-relative path -> the text the rule metadata gives it."""
    rules = all_rules()
    pages = render_pages(rules)
    out = {"docs/rules.md": render(rules)}
    out.update({f"docs/rules/{name}": text for name, text in pages.items()})
    with open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8") as f:
        yml = f.read()
    if NAV_START not in yml or NAV_END not in yml:
        raise SystemExit("mkdocs.yml: the rule-page markers of its nav are missing")
    out["mkdocs.yml"] = _nav(pages, yml)
    return out


def stale() -> list[str]:
    """Pages that differ from :func:`expected`, are missing, or are left over in docs/rules/."""
    want = expected()
    bad = []
    for rel, text in want.items():
        path = os.path.join(ROOT, rel)
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            bad.append(rel)
    folder = os.path.join(ROOT, "docs", "rules")
    if os.path.isdir(folder):
        bad += [f"docs/rules/{n}" for n in sorted(os.listdir(folder)) if f"docs/rules/{n}" not in want]
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 naming the stale pages; write nothing")
    args = ap.parse_args(argv)
    if args.check:
        bad = stale()
        for rel in bad:
            print(f"stale: {rel}")
        return 1 if bad else 0
    want = expected()
    os.makedirs(os.path.join(ROOT, "docs", "rules"), exist_ok=True)
    for rel in stale():
        path = os.path.join(ROOT, rel)
        if rel in want:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(want[rel])
        else:
            os.remove(path)
        print(f"wrote {rel}" if rel in want else f"removed {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
