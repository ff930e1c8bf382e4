"""`mtptui audit` run as a user runs it: what it lists, and one line with exit 1 for a directory.

The process tier: these start child processes (tests/unit starts none)."""

from __future__ import annotations
import json
import os
import subprocess
import sys
import pytest
from test_audit_read import GOOD, BAD_LINES, write  # noqa: F401 (fixtures and builders shared with the unit tier)


def audit(path, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, MTPTUI_AUDIT_LOG=str(path))
    return subprocess.run([sys.executable, "-m", "mtptui", "audit", *args], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args", [[], ["--phases"], ["--json"], ["--host", "gpu1", "-n", "1"]])
def test_the_audit_command_lists_the_good_and_says_how_many_were_bad(tmp_path, args):
    log = tmp_path / "audit.jsonl"
    write(log, [json.dumps(GOOD), *BAD_LINES, json.dumps({**GOOD, "id": "a3", "message": None, "phases": None})])
    r = audit(log, *args)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr == f"mtptui audit: {len(BAD_LINES)} bad lines skipped in {log}\n"
    out = r.stdout.splitlines()
    assert len([x for x in out if not x.startswith("    ")]) == (1 if "-n" in args else 2), r.stdout
    if "--phases" in args:
        assert "lock ok" in r.stdout


def test_the_audit_command_on_a_directory_is_one_line_and_exit_1(tmp_path):
    r = audit(tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"mtptui audit: {tmp_path}: is a directory, not an audit log (see MTPTUI_AUDIT_LOG)\n"
