"""The compiled lane is on whichever module of mtptui is imported first, and a lane that is here but
does not load is said (issue 44): `parse -> envelope -> recorded -> latency -> stats -> compiled ->
_compiled -> parse` was an import cycle that turned the lane off, without a word, whenever
`core.parse` came first. tests/unit/test_import_cycles.py finds such cycles statically."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mtptui.core import compiled

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "mtptui"
SAMPLE = ROOT / "sample_logs" / "mtp-off-baseline.log"
LANE = "_compiled" + sysconfig.get_config_var("EXT_SUFFIX")


# a lane built for this Python beside its source: then it must be on, whichever module came first
LANE_HERE = (PACKAGE / "core" / LANE).exists()
FIRST = """
import importlib, sys
importlib.import_module(sys.argv[1])
from mtptui.core import compiled
print(compiled.ENABLED)
"""


def _each_first() -> list[str]:
    """Every module's dotted name, but the lane itself and what runs a program (__main__)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] != "__main__":
            names.append(".".join(parts))
    return names


def _first(name: str) -> str | None:
    """What went wrong with `name` imported first in a fresh interpreter, or None."""
    r = subprocess.run([sys.executable, "-c", FIRST, name], capture_output=True, text=True, cwd=ROOT, timeout=300)
    if r.returncode != 0:
        return r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
    if r.stdout.split()[-1] != str(LANE_HERE):
        return f"the lane is {'on' if r.stdout.split()[-1] == 'True' else 'off'}"
    return None


def test_each_module_imports_first_in_a_fresh_interpreter(monkeypatch):
    """In strict mode (tests/conftest.py), so a lane that is here but does not load fails it too. The
    interpreters run side by side, as many as there are cores (`make test` runs a file on one worker)."""
    monkeypatch.delenv("MTPTUI_PURE", raising=False)
    names = _each_first()
    assert len(names) > 150 and "mtptui.core.parse" in names
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        wrong = {name: why for name, why in zip(names, pool.map(_first, names)) if why is not None}
    assert wrong == {}


def _copy(tmp_path: Path) -> Path:
    """The package, as a user's install of it (no editable finder: PYTHONPATH names the copy)."""
    shutil.copytree(ROOT / "mtptui", tmp_path / "mtptui", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "mtptui" / "core"


def _summary(top: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("MTPTUI_LANE_STRICT", "MTPTUI_PURE")}
    return subprocess.run([sys.executable, "-m", "mtptui", "summary", str(SAMPLE)], cwd=top, capture_output=True,
                          text=True, env={**clean, "PYTHONPATH": str(top), **env}, timeout=300)


@pytest.mark.skipif(not compiled.BUILT, reason="the compiled lane was not built here (no C compiler at install)")
def test_a_lane_that_does_not_load_is_one_line_for_a_user_and_an_error_in_the_tests(tmp_path):
    core = _copy(tmp_path)
    (core / LANE).write_bytes(b"not an ELF file")  # a damaged install: the stamp still matches
    r = _summary(tmp_path)
    assert r.returncode == 0, r.stderr
    warned = [line for line in r.stderr.splitlines() if "compiled lane" in line]
    assert len(warned) == 1 and warned[0].startswith("mtptui: warning: the compiled lane does not load (")
    assert "Traceback" not in r.stderr and r.stdout  # the summary, read in Python
    strict = _summary(tmp_path, MTPTUI_LANE_STRICT="1")
    assert strict.returncode != 0 and "ImportError: mtptui's compiled lane does not load" in strict.stderr


@pytest.mark.skipif(not compiled.BUILT, reason="the compiled lane was not built here (no C compiler at install)")
def test_the_lane_that_loads_says_nothing(tmp_path):
    _copy(tmp_path)
    r = _summary(tmp_path)
    assert r.returncode == 0 and "compiled lane" not in r.stderr, r.stderr
