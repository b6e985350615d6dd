"""The documentation stands inside the repository: every reference to a document that the code, the
tests, the scripts and the docs make resolves to a file (and a section) of this repository, the
generated rule pages are current, and CI runs exactly the README's test command.

References look like ``docs/design.md §5``, ``docs/design.md §9.3``, ``docs/time-model.md "Op model
accuracy"``, ``docs/rules.md#cl201`` or ``README "Configuration"``; relative Markdown links are checked by
tests/test_release.py (and by ``mkdocs build --strict``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.scripts import load_script

REPO = Path(__file__).resolve().parents[1]

# documents that live outside this repository: the code must not send a reader there
OUTSIDE = ("DESIGN.md", "domain.md", "ANALYSIS_API", "/work/", "../shared", "hardware.md open question")

# data folders hold third-party files, not references
SKIP_DIRS = ("tests/corpus", "tests/data", "tests/golden", "tests/golden_output")
SUFFIXES = (".py", ".md", ".yaml", ".yml", ".toml")

_DOC_REF = re.compile(
    r"""(?<![\w/.-])(?P<path>(?:docs/[\w./-]+\.(?:md|json|png)|README(?:\.md)?))"""
    r"""(?:\#(?P<anchor>[\w-]+)|(?P<sections>(?:[ ,]*§[\d.]*\d)+)|\s+"(?P<title>[^"\n]+)")?"""
)


def _sources() -> list[Path]:
    """The files whose references must resolve: colint/, tests/, scripts/, docs/ and mkdocs.yml."""
    out = [REPO / "mkdocs.yml"]
    for top in ("colint", "tests", "scripts", "docs"):
        for path in sorted((REPO / top).rglob("*")):
            rel = path.relative_to(REPO).as_posix()
            # an empty file (a package's __init__.py) holds no reference to check
            if path.suffix in SUFFIXES and path.is_file() and path.stat().st_size and not rel.startswith(SKIP_DIRS):
                out.append(path)
    return [p for p in out if p.name not in ("test_docs.py", "test_release.py")]  # they name OUTSIDE to forbid it


def _headings(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return [m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)]


def _slug(heading: str) -> str:
    """The anchor GitHub and mkdocs give a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def unresolved(text: str) -> list[str]:
    """The document references in ``text`` that do not resolve inside the repository."""
    bad = [f"points outside the repository: {o}" for o in OUTSIDE if o in text]
    for m in _DOC_REF.finditer(text):
        name = m.group("path")
        path = REPO / ("README.md" if name.startswith("README") else name)
        if not path.exists():
            if name.startswith("README"):
                continue  # a README beside data (tests/data/measured/README.md) is named by its folder
            bad.append(f"{name}: no such file")
            continue
        if path.suffix != ".md":
            continue
        heads = _headings(path)
        if m.group("anchor") and m.group("anchor") not in {_slug(h) for h in heads}:
            bad.append(f"{name}#{m.group('anchor')}: no such heading")
        for number in re.findall(r"§([\d.]*\d)", m.group("sections") or ""):
            if not any(re.match(rf"{re.escape(number)}[. ]", h) for h in heads):
                bad.append(f"{name} §{number}: no heading numbered {number}")
        title = m.group("title")
        if title and name.startswith(("docs/", "README")) and not any(title in h for h in heads):
            # a quoted phrase after a document names one of its headings
            bad.append(f'{name} "{title}": no such heading')
    return bad


def test_the_reference_checker_catches_what_it_should():
    assert unresolved('see docs/design.md §5 and docs/design.md §9.3, §9.5; docs/time-model.md "Op model"') == []
    assert unresolved("docs/rules.md#cl201 and docs/check-report.schema.json") == []
    assert unresolved("DESIGN.md §5") == ["points outside the repository: DESIGN.md"]
    assert unresolved("docs/nothing.md") == ["docs/nothing.md: no such file"]
    assert unresolved("NVIDIA/cutlass media/docs/cpp/x.md") == []  # another repository's docs/
    assert unresolved("docs/design.md §42") == ["docs/design.md §42: no heading numbered 42"]
    assert unresolved('docs/design.md "No such part"') == ['docs/design.md "No such part": no such heading']
    assert unresolved('README "Severity policy"') == ['README "Severity policy": no such heading']
    assert unresolved("docs/rules.md#cl999") == ["docs/rules.md#cl999: no such heading"]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_document_reference_resolves_inside_the_repository(path):
    assert unresolved(path.read_text(encoding="utf-8")) == []


def test_the_references_are_really_checked():
    """The scan must see the code's references (a pattern that silently stopped matching would pass)."""
    refs = sum(len(_DOC_REF.findall(p.read_text(encoding="utf-8"))) for p in _sources())
    workload = (REPO / "colint" / "analysis" / "workload.py").read_text(encoding="utf-8")
    assert "docs/design.md §5" in workload and "docs/analysis.md" in workload
    assert refs >= 40


def _gen_rule_docs():
    return load_script("gen_rule_docs")


def test_rule_pages_are_generated_from_the_rule_metadata():
    gen = _gen_rule_docs()
    assert gen.stale() == [], "regenerate: .venv/bin/python scripts/gen_rule_docs.py"
    from colint.rules import all_rules

    pages = set(gen.expected())
    assert {f"docs/rules/{code}.md" for code in all_rules()} | {"docs/rules/index.md", "docs/rules.md"} <= pages
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert all(f"rules/{code}.md" in nav for code in all_rules())


def test_a_rule_page_holds_the_rule_s_own_text():
    from colint.reporters.rules_doc import render_pages
    from colint.rules import all_rules

    rules = all_rules()
    page = render_pages(rules)["CL201.md"]
    assert page.startswith("# CL201: dim-not-tile-aligned\n")
    assert " ".join(rules["CL201"].doc.why.split()) in page
    assert "`warning_loss_pct` = `1.0`" in page
    assert "| [CL201](CL201.md) | `dim-not-tile-aligned` |" in render_pages(rules)["index.md"]


def test_ci_runs_exactly_the_readme_test_command():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (command,) = re.findall(r"^(\.venv/bin/pip install -q -e .*&& \.venv/bin/python -m pytest)$", readme, re.M)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command in ci
    assert "mkdocs build --strict" in command  # links in the docs site cannot rot


# nav slots of pages that other branches add: mkdocs.yml lists them before they land (validation.nav.not_found
# is info, so the strict build passes without them); drop a name once its page is in docs/
PENDING_PAGES: set[str] = set()  # pages the nav may list before they land (mkdocs' strict build fails on one)


def test_every_nav_entry_names_a_page_but_the_pending_slots():
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1]
    entries = re.findall(r"^\s*- (?:[^:\n]+: )?([\w./-]+\.md)\s*$", nav, re.M)
    assert "index.md" in entries and "rules/CL201.md" in entries  # the pattern sees the nav
    missing = {e for e in entries if not (REPO / "docs" / e).exists()}
    assert missing <= PENDING_PAGES, f"nav entries without a page: {sorted(missing - PENDING_PAGES)}"
    pages = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")}
    assert pages <= set(entries), f"pages the nav omits: {sorted(pages - set(entries))}"


def test_readme_stays_short():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 400
