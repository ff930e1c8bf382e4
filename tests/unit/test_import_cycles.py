"""No module of mtptui imports itself back at module level (issue 44).

A cycle works or fails by which module is imported first: `parse -> envelope -> recorded -> latency
-> stats -> compiled -> _compiled -> parse` made the compiled lane fail to load ("cannot import name
MAX_LINE") whenever `core.parse` came before `core.compiled`, and the process ran in Python, slower,
without a word. This reads every import statement at module level (functions' imports run later, once
every module is whole); tests/process/test_lane_first.py imports every module first, each in a fresh
interpreter, and checks that it loads and that the lane is on where it was built."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mtptui"


def module_names(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by its dotted name: .py files and the lane's .pyx."""
    out = {}
    for path in sorted([*package.rglob("*.py"), *package.rglob("*.pyx")]):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The import statements a module runs as it loads: at its top, or under an `if` or a `try` there
    (not under `if TYPE_CHECKING:`, which never runs), never inside a function or a class."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(node)
            elif isinstance(node, ast.If):
                checking = isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                if not checking:
                    walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                for part in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                    walk(part)

    walk(tree.body)
    return found


_PYX_IMPORT = re.compile(r"^(?:from\s+([\w.]+)\s+import\s+([\w, ]+)|import\s+([\w.]+))", re.M)


def imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that loading `name` loads first. Importing a.b.c loads a.b before
    it, so each package on the way counts too, except the importer's own packages: those are
    loading already whenever it runs (that edge is never a cycle that can fail)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: list[str] = []
    if path.suffix == ".pyx":  # the lane's Python imports, in Cython's syntax
        for m in _PYX_IMPORT.finditer(path.read_text()):
            base = m.group(1) or m.group(3)
            named.append(base)
            if m.group(2):
                named += [f"{base}.{n.strip().split()[0]}" for n in m.group(2).split(",") if n.strip()]
    else:
        for node in _top_level_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                named += [a.name for a in node.names]
                continue
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            named += [base, *(f"{base}.{a.name}" for a in node.names)]
    mine = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
    out = set()
    for target in named:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            step = ".".join(parts[:i])
            if step in modules and step not in mine:
                out.add(step)
    return out


def cycles(modules: dict[str, Path]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's), each sorted."""
    graph = {name: imported(name, path, modules) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_level_import_cycle_in_mtptui():
    assert cycles(module_names()) == []


def test_the_finder_finds_the_cycle_this_issue_found(tmp_path):
    """The finder itself, on a copy of the old shape: a package's __init__ that reaches a module which
    imports a name from the package (the lane's `from mtptui.core.parse import MAX_LINE`)."""
    pkg = tmp_path / "mtptui"
    (pkg / "core" / "parse").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "core/__init__.py": "",
        "core/parse/__init__.py": "from mtptui.core.parse.envelope import X\nMAX_LINE = 1\n",
        "core/parse/envelope.py": "from mtptui.core import stats\nX = 1\n",
        "core/stats.py": "from mtptui.core import compiled\n",
        "core/compiled.py": "try:\n    from mtptui.core import _compiled\nexcept ImportError:\n    pass\n",
        "core/_compiled.pyx": "cimport cython\nfrom mtptui.core.parse import MAX_LINE, X\n",
        "core/leaf.py": "from mtptui.core.parse import envelope\n",  # into the cycle, not of it
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    assert cycles(module_names(pkg)) == [["mtptui.core._compiled", "mtptui.core.compiled", "mtptui.core.parse",
                                          "mtptui.core.parse.envelope", "mtptui.core.stats"]]
    (pkg / "core/parse/envelope.py").write_text("X = 1\n")
    assert cycles(module_names(pkg)) == []


def test_the_lane_takes_whole_modules_from_a_package_never_a_name_of_its_init():
    """`from package import NAME` fails while the package's __init__ is still loading (NAME is set
    after its imports: "cannot import name MAX_LINE"); `from package import module` does not, Python
    imports the module then. So whatever order a future import takes, the lane's imports from mtptui
    name modules (MAX_LINE lives in core/parse/limits.py, a leaf the parser imports too)."""
    modules = module_names()
    lane = modules["mtptui.core._compiled"]
    names_of_an_init = []
    for m in _PYX_IMPORT.finditer(lane.read_text()):
        base, names = m.group(1), m.group(2)
        if not base or not names or not base.startswith("mtptui") or not modules[base].name == "__init__.py":
            continue
        for n in names.split(","):
            name = n.strip().split()[0] if n.strip() else ""
            if name and f"{base}.{name}" not in modules:
                names_of_an_init.append(f"{base}.{name}")
    assert names_of_an_init == []
    assert "from mtptui.core.parse.limits import MAX_LINE" in lane.read_text()
