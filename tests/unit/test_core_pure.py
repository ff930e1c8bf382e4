"""The core is pure (issue 44, DESIGN.md's rules): nothing under mtptui/core/ forks, starts a process,
exits the process, freezes the cycle collector or makes a temporary file. What needs those lives
where its callers are (sources/forked.py, sources/parallel.py) and is handed in: EventLog takes the
files it spills to.

Read statically: every module's code (inside functions too), by ast for the .py files and by text for
the lane's .pyx."""

from __future__ import annotations

import ast
import pickle
import re
import tempfile
from pathlib import Path

from mtptui.core import eventlog
from mtptui.core.eventlog import EventLog
from mtptui.core.records import Event

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "mtptui" / "core"

# modules whose use is a process trick or a file of the core's own
MODULES = {"subprocess", "tempfile", "multiprocessing", "signal", "concurrent.futures", "pty"}
# module -> its functions that fork, start or end a process, or freeze the collector
CALLS = {
    "os": {"fork", "forkpty", "_exit", "abort", "kill", "killpg", "system", "popen", "register_at_fork",
           "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe",
           "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe",
           "posix_spawn", "posix_spawnp"},
    "gc": {"freeze", "unfreeze"},
    "sys": {"exit"},
}


def impurities(source: str, name: str = "<text>") -> list[str]:
    """What the module's code uses of MODULES and CALLS, as 'line: what'."""
    found = []
    aliases: dict[str, str] = {}  # a name bound in the module -> the module it is
    tree = ast.parse(source, name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in MODULES or a.name.split(".")[0] in MODULES:
                    found.append(f"{node.lineno}: import {a.name}")
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if node.module in MODULES or node.module.split(".")[0] in MODULES or full in MODULES:
                    found.append(f"{node.lineno}: from {node.module} import {a.name}")
                elif a.name in CALLS.get(node.module, ()):
                    found.append(f"{node.lineno}: from {node.module} import {a.name}")
                else:
                    aliases[a.asname or a.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = aliases.get(node.value.id)
            if module is not None and node.attr in CALLS.get(module, ()):
                found.append(f"{node.lineno}: {module}.{node.attr}")
    return sorted(set(found), key=lambda s: int(s.split(":")[0]))


_PYX = re.compile(r"^\s*(?:c?import\s+([\w.]+)|from\s+([\w.]+)\s+c?import\s+([\w, ]+))", re.M)


def pyx_impurities(text: str) -> list[str]:
    """The same, of the lane's Cython: its imports by text, and calls written module.function."""
    found = []
    for m in _PYX.finditer(text):
        module = m.group(1) or m.group(2)
        names = [n.strip().split()[0] for n in (m.group(3) or "").split(",") if n.strip()]
        if module in MODULES or module.split(".")[0] in MODULES or any(n in CALLS.get(module, ()) for n in names):
            found.append(m.group(0).strip())
    for module, names in CALLS.items():
        for n in names:
            if re.search(rf"\b{module}\.{re.escape(n)}\s*\(", text):
                found.append(f"{module}.{n}")
    return found


def test_nothing_in_core_forks_exits_freezes_or_makes_a_temporary_file():
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 30
    found = {str(p.relative_to(ROOT)): why for p in files if (why := impurities(p.read_text(), str(p)))}
    lane = CORE / "_compiled.pyx"
    if why := pyx_impurities(lane.read_text()):
        found[str(lane.relative_to(ROOT))] = why
    assert found == {}


def test_the_checker_finds_each_trick():
    """What it must find (the ways of the old core/forked.py and of the process end `summary` once had among them),
    and what it must not (a name that only looks like one)."""
    tricks = """
import os, gc as collector, tempfile
import multiprocessing
from os import _exit
from sys import exit as leave
import subprocess as sp
from concurrent.futures import ProcessPoolExecutor
def later():
    os.fork()
    collector.freeze()
    os._exit(0)
"""
    assert impurities(tricks) == [
        "2: import tempfile", "3: import multiprocessing", "4: from os import _exit", "5: from sys import exit",
        "6: import subprocess", "7: from concurrent.futures import ProcessPoolExecutor",
        "9: os.fork", "10: gc.freeze", "11: os._exit"]
    assert impurities("import os\nimport gc\ngc.disable()\nos.path.join('a')\nfork = 1\nfreeze = os.getpid\n") == []
    assert pyx_impurities("from libc.stdlib cimport malloc\nimport os\nos._exit(0)\nimport tempfile\n") == [
        "import tempfile", "os._exit"]


def _event(i: int) -> Event:
    return Event("error", float(i), "h", f"e{i}")


def test_an_event_log_spills_to_the_files_its_caller_hands_in(monkeypatch, tmp_path):
    """The core makes no file: a log's events past HELD go where spill() says (in memory by default;
    `summary` hands in tempfile.TemporaryFile), and spill crosses processes with the log."""
    monkeypatch.setattr(eventlog, "HELD", 4)
    monkeypatch.setattr(eventlog, "RECENT", 2)
    made: list[object] = []

    def spill():
        f = tempfile.TemporaryFile(dir=tmp_path)
        made.append(f)
        return f

    log = EventLog(spill=spill)
    for i in range(9):
        log.append(_event(i))
    assert len(made) == 1 and log._segments == made
    assert [d["ts"] for d in log] == [float(i) for i in range(9)]
    plain = EventLog()
    for i in range(9):
        plain.append(_event(i))
    assert list(plain.json_texts()) == list(log.json_texts())
    given = EventLog(tempfile.TemporaryFile(dir=tmp_path), spill=tempfile.TemporaryFile)
    given.append(_event(0))
    assert pickle.loads(pickle.dumps(given))._spill is tempfile.TemporaryFile


def test_summarise_spills_its_events_to_temporary_files(tmp_path):
    from mtptui.sources import parallel

    path = tmp_path / "one.log"
    path.write_text("")
    s, _ = parallel.summarise([str(path)], jobs=1)
    assert s.events._spill is tempfile.TemporaryFile
