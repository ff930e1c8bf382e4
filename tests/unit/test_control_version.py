"""Which engine version a host runs: the interpreter's question and the answers read, by value."""

from __future__ import annotations


import pytest

from mtptui.control.launch import find_launch
from mtptui.control.version import interpreter_argv, version_of, vtuple




@pytest.mark.parametrize("argv", [
    ["/opt/venv/bin/sglang", "serve", "--model-path", "m"],  # a console script
    ["docker", "run", "--rm", "img", "python3", "-m", "vllm.entrypoints.openai.api_server"],  # not the host's python
])
def test_other_launches_are_not_asked(argv):
    assert interpreter_argv(argv, find_launch(argv)) is None


@pytest.mark.parametrize("text, want", [
    ("0.5.12\n", "0.5.12"), ("0.10.2rc1\n", "0.10.2rc1"), ("0.9.2+cu126", "0.9.2+cu126"),
    ("", None), ("Traceback ...\nPackageNotFoundError: sglang", None), ("x" * 100, None), ("$(rm -rf /)", None),
])
def test_version_of(text, want):
    assert version_of(text) == want


def test_vtuple():
    assert vtuple("0.5.12") == (0, 5, 12) and vtuple("0.10.2rc1") == (0, 10, 2) and vtuple("0.9.2+cu126") == (0, 9, 2)
    assert vtuple("0.5.4") < vtuple("0.5.12")
