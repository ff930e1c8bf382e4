"""The server's version is asked of its interpreter with a fixed program (a real child interpreter).

The process tier: these start child processes (tests/unit starts none)."""

from __future__ import annotations
import subprocess
import sys
import pytest
from mtptui.control.launch import find_launch
from mtptui.control.version import interpreter_argv, version_of


def test_the_interpreter_is_asked_with_a_fixed_program_and_the_package_as_an_argument():
    argv = ["/opt/venv/bin/python3.11", "-m", "sglang.launch_server", "--model-path", "m"]
    ask = interpreter_argv(argv, find_launch(argv))
    assert ask[:2] == ["/opt/venv/bin/python3.11", "-c"] and ask[-1] == "sglang"
    # the program really answers, for a package this interpreter has
    r = subprocess.run([sys.executable, *ask[1:-1], "pytest"], capture_output=True, text=True, check=True)
    assert version_of(r.stdout) == pytest.__version__
