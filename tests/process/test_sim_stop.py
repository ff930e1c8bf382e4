"""The simulator's SIGTERM ends the process however its logging is stuck: with its stderr a pipe
that nobody reads (its main thread blocked in a write), it still exits within STOP_GRACE_S of the
signal, leaving its threads' stacks in a file (sim/live.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from mtptui.sim import live


def test_a_sigterm_ends_a_simulator_whose_log_nobody_reads():
    proc = subprocess.Popen([sys.executable, "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3-8B", "--tp", "8",
                             "--sim-load", "saturate", "--sim-startup-seconds", "1", "--decode-log-interval", "1",
                             "--port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stuck = Path(f"/tmp/mtptui-sim-stuck-{proc.pid}.txt")
    try:
        deadline = time.monotonic() + 30
        # its writes fill the pipe (64 KiB): the main thread then waits in write() for a reader
        while not any("pipe_w" in w.read_text() for w in Path(f"/proc/{proc.pid}/task").glob("*/wchan")):
            assert time.monotonic() < deadline and proc.poll() is None, "the pipe never filled"
            time.sleep(0.2)
        t = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(live.STOP_GRACE_S + 10) == 0
        took = time.monotonic() - t
        assert live.STOP_GRACE_S - 1 <= took, took  # it was stuck: not the drain's own way out
        assert "File " in stuck.read_text()  # where it was stuck
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stderr.close()
        stuck.unlink(missing_ok=True)
