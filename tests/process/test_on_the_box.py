"""What mtptui runs on a server's own box (`record --local`, `local`: tests/integration/
test_commands_live.py runs them there, from a copy of the source with the box's python3) loads
without numpy: a host's system Python has none. A module those commands import that imports numpy
at its top breaks them there (core/stats.py did once: its array forms import numpy when called)."""

import subprocess
import sys

import pytest

BLOCK = "import sys; sys.modules['numpy'] = None; "  # `import numpy` then fails, as where it is not installed


@pytest.mark.parametrize("module", ["mtptui.commands.record", "mtptui.commands.local", "mtptui.sources.record"])
def test_what_runs_on_the_box_loads_without_numpy(module):
    r = subprocess.run([sys.executable, "-c", BLOCK + f"import {module}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr.strip().splitlines()[-1]


def test_the_block_works():
    r = subprocess.run([sys.executable, "-c", BLOCK + "import mtptui.core.figures"], capture_output=True, text=True)
    assert r.returncode != 0 and "numpy" in r.stderr
