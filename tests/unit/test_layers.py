"""The layers of DESIGN.md, held: every import statement of every module (at its top or inside a
function) reaches only its own layer or those below it; the simulator reaches nothing of mtptui
outside sim/. KNOWN lists the imports that still run up, each a debt with its reason: the test
fails on any other, and on a KNOWN one that is gone (so the list never lies)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "mtptui"
# lowest first; a layer may import its own and those before it (DESIGN.md, "Layers")
ORDER = [("errors", "printable", "files"), "config", "transport", "core", "sources", "control", ("prove", "fleet", "export"), "tui",
         ("commands", "cli", "__main__", "__init__")]
RANK = {name: i for i, layer in enumerate(ORDER) for name in ((layer,) if isinstance(layer, str) else layer)}

KNOWN: set[tuple[str, str]] = set()  # none left (issue 21 paid the last ones)


def layer_of(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for n in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(n, ast.Import):
            out += [(n.lineno, a.name) for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            out += [(n.lineno, n.module)] + [(n.lineno, f"{n.module}.{a.name}") for a in n.names
                                             if n.module == "mtptui"]
    return [(line, m) for line, m in out if m == "mtptui" or m.startswith("mtptui.")]


def violations(root: Path = ROOT) -> set[tuple[str, str, int]]:
    found = set()
    for f in sorted(root.rglob("*.py")):
        me = layer_of(f, root)
        for line, mod in imports(f):
            parts = mod.split(".")
            if len(parts) < 2:
                continue
            target = parts[1]
            if me == "sim":
                ok = target == "sim"
            elif target == "sim":
                ok = RANK.get(me, 0) >= RANK["tui"]  # the demo and the CLI start the simulator
            else:
                ok = target not in RANK or RANK[target] <= RANK[me]
            if not ok:
                found.add((str(f.relative_to(root)), mod, line))
    return found


def _known(f: str, mod: str) -> bool:
    return (f.removesuffix(".py"), mod) in KNOWN or (f, mod) in KNOWN


def test_no_import_runs_up_the_layers():
    bad = sorted(v for v in violations() if not _known(v[0], v[1]))
    assert not bad, "imports that run up the layers of DESIGN.md:\n" + "\n".join(f"{f}:{n} imports {m}" for f, m, n in bad)


def test_every_known_debt_is_still_there():
    still = {(f.removesuffix(".py"), m) for f, m, _ in violations()} | {(f, m) for f, m, _ in violations()}
    assert KNOWN <= still, f"paid off, remove from KNOWN: {sorted(KNOWN - still)}"


@pytest.mark.parametrize("where, line, what", [
    ("core/store.py", "from mtptui.tui.viewmodel import spec_text", "core importing tui"),
    ("transport/local.py", "import mtptui.control.session", "transport importing control"),
    ("sim/engine.py", "from mtptui.core.parse import LineParser", "the simulator importing mtptui"),
    ("control/verify.py", "def f():\n    from mtptui.prove import smoke", "an import inside a function"),
])
def test_a_forbidden_import_is_caught(tmp_path, where, line, what):
    target = tmp_path / "mtptui" / where
    target.parent.mkdir(parents=True)
    target.write_text(line + "\n")
    assert violations(tmp_path / "mtptui"), what
