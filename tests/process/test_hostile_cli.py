"""Issue 42 as a user meets it, command by command: hostile text, files, values and flags each get
one clear line and a non-zero exit, or are counted and shown; never a traceback, never raw escape
sequences on the terminal. The process tier: each runs `python -m mtptui` as a child."""

from __future__ import annotations

import subprocess
import sys

BATCH = ("Mar 09 16:03:25 gpu-a python3[1]: [2026-03-09 16:03:25 TP0] Decode batch, #running-req: 3, "
         "#token: 100, token usage: 0.01, accept len: 2.50, accept rate: 0.50, cuda graph: True, "
         "gen throughput (token/s): 100.00, #queue-req: 0\n")
RAW = ("\x1b", "\x07", "\x9b")


def run(*args: str, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtptui", *args], input=stdin, capture_output=True, timeout=120,
                          env=env, stdin=None if stdin is not None else subprocess.DEVNULL)


def one_line_error(r: subprocess.CompletedProcess, code: int, *words: str) -> str:
    err = r.stderr.decode(errors="replace")
    assert r.returncode == code and err.count("\n") == 1 and "Traceback" not in err, (r.returncode, err)
    for w in words:
        assert w in err, err
    return err


def test_summary_shows_an_event_text_escaped(tmp_path):
    log = tmp_path / "ev.log"
    log.write_text(BATCH + "Mar 09 16:03:26 gpu-a python3[1]: [2026-03-09 16:03:26 TP0] Scheduler hit an "
                   "exception: \x1b]0;owned\x07 boom\n")
    r = run("summary", str(log))
    out = r.stdout.decode()
    assert r.returncode == 0 and "owned" in out and not any(c in out for c in RAW), out
