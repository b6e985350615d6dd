"""What a release needs: the distribution name the README installs is the one the wheel carries,
one version everywhere, a LICENSE, a CHANGELOG entry for the version, and README/docs links that
resolve inside the repository."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # 3.10
        import tomli as tomllib
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _readme_install_names() -> set[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    names = set()
    for m in re.finditer(r"pip install (?:-[-\w]+ )*'?([A-Za-z][\w.-]*)(?:\[[\w,]+\])?'?", text):
        if m.group(1) not in (".", "-e"):
            names.add(m.group(1))
    return names


def test_readme_installs_the_distribution_pyproject_declares():
    name = _pyproject()["project"]["name"]
    assert name == "colint-llm"  # "colint" on PyPI is an unrelated tool: never tell users to install it
    assert _readme_install_names() == {name}
    action = (REPO / "action.yml").read_text(encoding="utf-8")
    assert f'spec="{name}==$COLINT_VERSION"' in action
    assert "colint==" not in action


@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None, reason="needs setuptools to build the wheel")
def test_built_wheel_metadata_matches_the_readme(tmp_path):
    import setuptools

    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip("the PEP 639 license string needs setuptools>=77 (the test extra installs it)")
    rc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rc.returncode == 0, rc.stdout + rc.stderr
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        names = z.namelist()
        entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    fields = dict(line.split(": ", 1) for line in meta.split("\n\n", 1)[0].splitlines() if ": " in line)
    assert _readme_install_names() == {fields["Name"]}
    from colint import __version__

    assert fields["Version"] == __version__
    assert fields["License-Expression"] == "Apache-2.0"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "colint = colint.__main__:run" in entry_points  # the command keeps its name
    assert "colint/__init__.py" in names and "colint/hardware_profiles/_shipped.json" in names
    requires = [line for line in meta.splitlines() if line.startswith("Requires-Dist: ")]
    runtime = [r for r in requires if "extra ==" not in r]
    assert not any("pre-commit" in r for r in runtime)  # a test dependency, not a runtime one
    assert any(r.startswith("Requires-Dist: pre-commit") and 'extra == "test"' in r for r in requires)


def test_one_version_everywhere():
    from colint import __version__

    assert _pyproject()["project"]["version"] == __version__
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    first = re.search(r"^## \[?(\d+\.\d+\.\d+)\]?", changelog, re.M)
    assert first and first.group(1) == __version__


def test_license_is_the_apache_2_text():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply the Apache License" in text
    assert _pyproject()["project"]["license"] == "Apache-2.0"


def test_project_urls():
    urls = _pyproject()["project"]["urls"]
    assert {"Homepage", "Source", "Issues", "Changelog"} <= set(urls)
    from colint import REPOSITORY_URL

    assert all(u.startswith(REPOSITORY_URL) for u in urls.values())


_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(md: str) -> set[str]:
    """GitHub's heading anchors: lower-case, punctuation dropped, spaces to '-'."""
    out = set()
    for line in md.splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(slug)
    out |= set(re.findall(r'<a (?:id|name)="([^"]+)"', md))
    return out


def _doc_files() -> list[Path]:
    return [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").rglob("*.md"))]


@pytest.mark.parametrize("doc", _doc_files(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(doc):
    text = doc.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold examples, not links
    targets = [a or b for a, b in _LINK.findall(text)]
    broken = []
    for target in targets:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http(s), mailto: not checked here (no network)
            continue
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest.read_text(encoding="utf-8")):
            broken.append(target)
    assert not broken, f"{doc.name}: links that do not resolve: {broken}"
    if doc.name == "README.md":
        assert len(targets) >= 5  # the README links into docs/; the test must be looking at them


def test_readme_points_only_at_files_in_the_repository():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    for outside in ("DESIGN.md", "domain.md", "issue 7", "../shared"):
        assert outside not in text, outside


def test_generated_docs_are_current():
    import json

    from colint.reporters.json_schema import report_schema
    from colint.reporters.rules_doc import render
    from colint.rules import all_rules

    assert (REPO / "docs" / "rules.md").read_text(encoding="utf-8") == render(all_rules()), (
        "regenerate: colint rules --format markdown > docs/rules.md"
    )
    assert json.loads((REPO / "docs" / "check-report.schema.json").read_text(encoding="utf-8")) == json.loads(
        json.dumps(report_schema())
    ), "regenerate: colint schema report -o docs/check-report.schema.json"


def test_json_outputs_validate_against_the_published_schema(capsys, monkeypatch):
    import json

    import jsonschema

    from colint.cli.main import main

    schema = json.loads((REPO / "docs" / "check-report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    golden = json.loads((REPO / "tests" / "golden_output" / "expected.json.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(golden)  # errors, suppressions, fixes
    monkeypatch.chdir(REPO / "tests" / "data" / "model_repos")
    monkeypatch.delenv("COLINT_OUTPUT_FORMAT", raising=False)
    main(
        [
            "check",
            "llm/config.json",
            "bert/config.json",
            "vit/config.json",
            "--tp",
            "8",
            "--isolated",
            "--output-format",
            "json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert [f["skipped"] is None for f in out["files"]] == [True, False, False]
    jsonschema.Draft202012Validator(schema).validate(out)
