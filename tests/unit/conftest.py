"""The unit tier starts no child process: it is the tier that runs in seconds on any machine, with
nothing but Python. A test that needs a child (the CLI, the simulator, a forked reader, a compiler)
belongs in tests/process/ (or integration/ when it needs container hosts). Held here, not by
convention: any child started from a unit test fails it with where it belongs."""

from __future__ import annotations

import asyncio
import os
import subprocess

import asyncssh  # noqa: F401  importing it looks for a C library with `ldconfig -p`: done once, before the refusal
import pytest


def _refuse(what: str):
    def refused(*args, **kwargs):
        raise AssertionError(f"a unit test started a child process ({what}): move it to tests/process/")
    return refused


@pytest.fixture(autouse=True)
def _no_child_processes(monkeypatch):
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse("subprocess"))
    monkeypatch.setattr(os, "fork", _refuse("os.fork"))
    monkeypatch.setattr(os, "posix_spawn", _refuse("os.posix_spawn"))
    monkeypatch.setattr(asyncio, "create_subprocess_exec", _refuse("asyncio.create_subprocess_exec"))
    monkeypatch.setattr(asyncio, "create_subprocess_shell", _refuse("asyncio.create_subprocess_shell"))
