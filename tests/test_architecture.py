"""One direction of flow inside ``colint`` (docs/architecture.md, "Who may import whom").

Every ``import colint...`` in the package — at module level, inside a function, or under
``TYPE_CHECKING`` — must point at a unit of a lower layer or at its own unit, and no two modules
may import each other, directly or through others. A unit is a top-level module or sub-package.

No module imports another module's private names (``_name``): what crosses a module border is public
(docs/architecture.md, "Public names across modules"); the few exceptions are listed in PRIVATE_IMPORTS.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "colint"

# Lowest first; a unit may import its own unit and the units of any lower layer, never a higher one.
LAYERS: list[tuple[str, ...]] = [
    ("colint", "errors", "util"),  # the package root re-exports __version__ and, lazily, the API
    ("loading", "findings"),
    ("normalize", "hardware_profiles"),
    ("analysis",),
    ("rules", "fixing", "triage"),
    ("reporters",),
    ("engine",),
    ("suggesting", "design"),
    ("api",),
    ("cli", "lsp"),
    ("__main__",),
]
# Inside a sub-package the same rule holds between its modules, lowest first (a package's __init__ imports
# nothing of its own).
SUBLAYERS: dict[str, list[tuple[str, ...]]] = {
    "util": [("version", "records"), ("plain_data", "typed_table", "memo", "fileio", "globs", "escape", "parallel")],
    "fixing": [("fix_text", "edited_document")],
    "engine": [
        ("deployment",),
        ("settings",),
        ("config_files",),
        ("suppression", "sources", "revisions"),
        ("closure",),
        ("checking",),
    ],
    "suggesting": [("axes",), ("model",), ("search",)],
    "design": [("pareto",), ("inspecting", "reporting", "diffing")],
    "cli": [("output",), ("options",), ("check",), ("design", "reference"), ("main",)],
}
RANK = {unit: i for i, units in enumerate(LAYERS) for unit in units}
# The one sanctioned arrow up: the package root re-exports the Python API lazily (``colint.check`` imports
# colint.api on first attribute access, inside ``__getattr__``), so ``import colint`` stays cheap.
FACADE = {("colint", "colint.api")}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("colint",) + path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> list[tuple[str, int]]:
    """(imported colint module, line) for every import in ``module``."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    is_package = MODULES[module].name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                pkg = module.split(".") if is_package else module.split(".")[:-1]
                base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for name in names:
            target = _resolve(name) if name.startswith("colint") else None
            if target and target != module:
                out.append((target, node.lineno))
    return out


def _private_imports(module: str) -> list[tuple[str, int]]:
    """("target.name", line) for each private name (``_x``, not ``__x__``) that ``module`` takes from another
    colint module: ``from colint.a import _x`` or ``a._x`` on a colint module it imported."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    is_package = MODULES[module].name == "__init__.py"
    private = lambda name: name.startswith("_") and not name.endswith("__")  # noqa: E731
    aliases: dict[str, str] = {}  # local name -> the colint module it is bound to
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("colint") and a.name in MODULES:
                    aliases[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_package else module.split(".")[:-1]
                base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
            if not base.startswith("colint"):
                continue
            for a in node.names:
                if f"{base}.{a.name}" in MODULES:
                    aliases[a.asname or a.name] = f"{base}.{a.name}"
                elif private(a.name) and base != module:
                    out.append((f"{base}.{a.name}", node.lineno))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr) and isinstance(node.value, (ast.Name, ast.Attribute)):
            target = aliases.get(ast.unparse(node.value))
            if target and target != module:
                out.append((f"{target}.{node.attr}", node.lineno))
    return sorted(out)


# (importing module, "module.private_name") -> why it may reach in.
PRIVATE_IMPORTS = {
    ("colint.rules", "colint.rules.base._REGISTRY"): "the rules package's __init__ lists the registry its own "
    "base module fills (the registry stays private to the package)",
}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "colint"


GRAPH = {m: [(t, line) for t, line in _imports(m) if (m, t) not in FACADE] for m in MODULES}


def test_every_unit_has_a_layer():
    assert sorted({_unit(m) for m in MODULES} - set(RANK)) == []


def test_no_upward_imports():
    bad = []
    for module, imports in GRAPH.items():
        for target, line in imports:
            if _unit(target) != _unit(module) and RANK[_unit(target)] > RANK[_unit(module)]:
                bad.append(
                    f"{MODULES[module].relative_to(PACKAGE.parent)}:{line}: {module} imports {target} "
                    f"({_unit(module)} is below {_unit(target)})"
                )
    assert bad == []


def _sub(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] in SUBLAYERS else None


SUBRANK = {(pkg, sub): i for pkg, rows in SUBLAYERS.items() for i, subs in enumerate(rows) for sub in subs}


def test_every_module_of_an_ordered_package_has_a_row():
    found = {(_unit(m), _sub(m)) for m in MODULES if _sub(m)}
    assert sorted(found - set(SUBRANK)) == []
    assert sorted(set(SUBRANK) - found) == []


def test_no_module_imports_the_package_root():
    # the root re-exports the Python API (the one arrow up); __version__ and the repository URL come from
    # colint.util.version, so no module depends on the facade
    assert sorted(m for m, imports in GRAPH.items() for target, _ in imports if target == "colint") == []


def test_no_upward_imports_inside_a_package():
    bad = []
    for module, imports in GRAPH.items():
        unit, sub = _unit(module), _sub(module)
        for target, line in imports:
            if sub and _unit(target) == unit and _sub(target) and SUBRANK[unit, _sub(target)] > SUBRANK[unit, sub]:
                bad.append(f"{MODULES[module].relative_to(PACKAGE.parent)}:{line}: {module} imports {target}")
    assert bad == []


def test_no_import_cycles():
    # a package's __init__ runs before its submodules: a submodule importing its package is not a cycle
    graph = {m: {t for t, _ in imps if not m.startswith(t + ".")} for m, imps in GRAPH.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from colint.cli.main import main\n", [("colint.cli.main", 1)]),
        ("import colint.rules.base\n", [("colint.rules.base", 1)]),
        ("def f():\n    from colint.engine.checking import check_paths\n", [("colint.engine.checking", 2)]),
    ],
)
def test_the_import_reader_sees_every_form(source, expected, monkeypatch, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    monkeypatch.setitem(MODULES, "colint.fake_module", path)
    assert _imports("colint.fake_module") == expected


def test_no_module_imports_another_modules_private_names():
    found = {(m, f"{name}"): line for m in MODULES for name, line in _private_imports(m)}
    bad = [
        f"{MODULES[m].relative_to(PACKAGE.parent)}:{line}: {m} imports the private {name}"
        for (m, name), line in sorted(found.items())
        if (m, name) not in PRIVATE_IMPORTS
    ]
    assert bad == []
    # an exception that no import needs any more is dropped from the list, so the list cannot go stale
    assert sorted(set(PRIVATE_IMPORTS) - set(found)) == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from colint.analysis.gemm_rows import _ceil_x, ceil_div\n", [("colint.analysis.gemm_rows._ceil_x", 1)]),
        ("def f():\n    from colint.normalize.reader import _X\n", [("colint.normalize.reader._X", 2)]),
        ("import colint.analysis.gemm_rows as g\ng._memo.clear()\n", [("colint.analysis.gemm_rows._memo", 2)]),
        ("from colint.analysis import gemm_rows\ngemm_rows._memo.clear()\n", [("colint.analysis.gemm_rows._memo", 2)]),
        ("from colint import __version__\nfrom colint.analysis.gemm_rows import ceil_div\n", []),
    ],
)
def test_the_private_name_reader_sees_every_form(source, expected, monkeypatch, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    monkeypatch.setitem(MODULES, "colint.fake_module", path)
    assert _private_imports("colint.fake_module") == expected


def test_value_types_use_the_records_dataclass():
    """colint's dataclasses come from colint.util.records (no __repr__/__eq__/__hash__ compiled at import: start-up)."""
    stdlib = [
        str(p)
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.name != "records.py"
        and re.search(
            r"^\s*from dataclasses import [^\n]*\bdataclass\b(?!es)|@dataclasses\.dataclass", p.read_text(), re.M
        )
    ]
    assert stdlib == []


# Short bodies: a function of LONG_LINES lines or more says why beside its def (``# long: <reason>`` on the def
# line or the line above it), or is split along what it does.
LONG_LINES = 80
# (module, function) still long and waiting to be split (none now); an entry whose function is no longer long fails
# the test below, so the list cannot go stale.
PENDING_LONG: set[tuple[str, str]] = set()


def _long_functions(module: str) -> list[tuple[str, int, int, bool]]:
    """(qualified name, def line, lines, has a ``# long:`` reason) of each function of ``module`` that is
    LONG_LINES lines or longer, methods and nested functions included."""
    text = MODULES[module].read_text(encoding="utf-8")
    lines = text.splitlines()
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert child.end_lineno is not None
                length = child.end_lineno - child.lineno + 1
                if length >= LONG_LINES:
                    first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    beside = [lines[child.lineno - 1]] + ([lines[first - 2]] if first > 1 else [])
                    out.append((name, child.lineno, length, any("# long:" in t for t in beside)))
            visit(child, f"{name}." if name != prefix else prefix)

    visit(ast.parse(text), "")
    return out


def test_no_long_function_without_a_reason():
    found = {(m, name): (line, length, reason) for m in MODULES for name, line, length, reason in _long_functions(m)}
    bad = [
        f"{MODULES[m].relative_to(PACKAGE.parent)}:{line}: {name} is {length} lines; split it along what it does "
        "or write why beside its def ('# long: <reason>')"
        for (m, name), (line, length, reason) in sorted(found.items())
        if not reason and (m, name) not in PENDING_LONG
    ]
    assert bad == []
    # a function shortened since is dropped from PENDING_LONG, so the list cannot go stale
    assert sorted(PENDING_LONG - set(found)) == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ("def f():\n" + "    x = 1\n" * 78 + "    return x\n", [("f", 1, 80, False)]),
        ("def f():\n" + "    x = 1\n" * 77 + "    return x\n", []),
        ("def f():  # long: a table\n" + "    x = 1\n" * 79, [("f", 1, 80, True)]),
        ("# long: a table\ndef f():\n" + "    x = 1\n" * 79, [("f", 2, 80, True)]),
        ("# long: a table\n@decorator\ndef f():\n" + "    x = 1\n" * 79, [("f", 3, 80, True)]),
        ("# long: g's reason\n\n\ndef f():\n" + "    x = 1\n" * 79, [("f", 4, 80, False)]),
        ("class C:\n    def m(self):\n" + "        x = 1\n" * 79, [("C.m", 2, 80, False)]),
        ("def f():\n    def g():\n" + "        x = 1\n" * 79, [("f", 1, 81, False), ("f.g", 2, 80, False)]),
    ],
)
def test_the_long_function_reader_sees_every_form(source, expected, monkeypatch, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    monkeypatch.setitem(MODULES, "colint.fake_module", path)
    assert _long_functions("colint.fake_module") == expected
