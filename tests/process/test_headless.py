"""Textual stays out of everything but the dashboard: proved in a fresh interpreter, for every
module of the package (walked, so a new module is covered the day it is added). Outside
mtptui/tui no module may load Textual when imported; inside it, a module that does not import
Textual itself (the view model, the feed, the key table ...) must not load it through another."""

import ast
import importlib.util
import pkgutil
import subprocess
import sys

import mtptui


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(mtptui.__path__, "mtptui.")
                  if not m.name.endswith(".__main__"))  # those run a program when imported


def _imports_textual_itself(name: str) -> bool:
    with open(importlib.util.find_spec(name).origin) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found = [node.module or ""]
        else:
            continue
        if any(n == "textual" or n.startswith(("textual.", "textual_")) for n in found):
            return True
    return False


def test_the_walk_finds_both_kinds():
    names = _modules()
    assert "mtptui.sources.parallel" in names and "mtptui.tui.viewmodel" in names
    assert _imports_textual_itself("mtptui.tui.app") and not _imports_textual_itself("mtptui.tui.viewmodel")


def test_no_headless_module_loads_textual():
    names = _modules()
    headless = [n for n in names if not n.startswith("mtptui.tui.") and n != "mtptui.tui"]
    plain_tui = [n for n in names if n.startswith("mtptui.tui.") and not _imports_textual_itself(n)]
    assert len(plain_tui) >= 5, plain_tui
    code = (
        "import importlib, sys\n"
        f"for name in {headless + plain_tui!r}:\n"
        "    importlib.import_module(name)\n"
        "    if 'textual' in sys.modules:\n"
        "        print(name); break\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "", f"importing {out.strip()} loads Textual"
