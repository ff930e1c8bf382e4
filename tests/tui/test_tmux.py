"""The real `mtptui replay` in a real terminal (tmux), read back from the screen.

Pilot tests drive the app object; this one runs the command as a user does, in a 160x48 tmux
pane on its own tmux server (-L), and reads what is drawn.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path


SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "dp-attention-8.log"


# pytest exports COLUMNS=80 and LINES=24 to children; Rich would believe them over the pane.
ENV = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}


def _tmux(sock: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True, timeout=10, env=ENV)


def _screen(sock: str) -> str:
    return _tmux(sock, "capture-pane", "-p", "-t", "t").stdout


def _wait_for(sock: str, text: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _screen(sock)
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")


def _settled(sock: str, text: str, timeout: float = 20.0) -> str:
    """The screen once text is on it and two captures a moment apart agree: the frame that shows
    an open's end may come before the one that fits the panels to the row its bar gave back."""
    screen = _wait_for(sock, text, timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.3)
        again = _screen(sock)
        if again == screen:
            return screen
        screen = again
    raise AssertionError(f"the screen never settled; the last was:\n{screen}")


def test_replay_in_tmux_reads_right(need):
    need(shutil.which("tmux"), "tmux is not installed")
    sock = f"mtptui-test-{uuid.uuid4().hex[:8]}"
    cmd = shlex.join([sys.executable, "-m", "mtptui", "replay", "--speed", "max", "--window", "all", str(SAMPLE)])
    started = _tmux(sock, "new-session", "-d", "-x", "160", "-y", "48", "-s", "t", cmd)
    assert started.returncode == 0, started.stderr
    try:
        screen = _settled(sock, "OPEN; ← to seek")  # --speed max: the file opened
        # What a newcomer reads: the host and its settings, a badge per rank, labelled numbers.
        assert "host gpu-h2" in screen and "spec EAGLE (MTP) steps=3 topk=1 draft=4" in screen
        assert screen.count("SPEC ON") == 8
        for rank in ("DP0 TP0 EP0", "DP7 TP7 EP7"):
            assert rank in screen
        assert "accept len" in screen and "gen tok/s" in screen and "now   min  mean   max" in screen
        assert "1,876 lines: 0 dropped, 1,732 parsed, 144 unparsed" in screen
        assert "accept len (tokens per step, 1.00 = nothing accepted)" in screen
        # Lines are never cut: the log pane folds a long batch line onto the next row.
        assert "ready to roll!" in screen
        _tmux(sock, "send-keys", "-t", "t", "m")
        screen = _wait_for(sock, "accept rate (fraction of draft tokens accepted)")
        _tmux(sock, "send-keys", "-t", "t", "q")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _tmux(sock, "has-session", "-t", "t").returncode == 0:
            time.sleep(0.2)
        assert _tmux(sock, "has-session", "-t", "t").returncode != 0, "q did not quit"
    finally:
        _tmux(sock, "kill-server")


def test_replay_at_80x24_keeps_what_matters(need):
    """The smallest common terminal: host, source and the time shown stay; the rank table's
    numbers are whole and the ranks it has no room for are counted; l enlarges the log above the
    status bar and keys, its lines folded within the pane."""
    need(shutil.which("tmux"), "tmux is not installed")
    sock = f"mtptui-test-{uuid.uuid4().hex[:8]}"
    cmd = shlex.join([sys.executable, "-m", "mtptui", "replay", "--speed", "max", "--window", "all", str(SAMPLE)])
    started = _tmux(sock, "new-session", "-d", "-x", "80", "-y", "24", "-s", "t", cmd)
    assert started.returncode == 0, started.stderr
    try:
        screen = _settled(sock, "OPEN; ← to seek")
        lines = screen.splitlines()
        assert all(len(line) <= 80 for line in lines)
        assert "host gpu-h2  TP 8 · DP 8" in screen and "\n epoch 1/1 " in screen
        assert "spec EAGLE (MTP) steps=3 topk=1 draft=4" in screen  # the status bar's settings
        assert "open dp-attention-8.log │ OPEN; ← to seek at 16:02:57" in screen  # max: opened
        assert "╭─ accept len (tokens per step" in screen
        rows = [line for line in lines if line.startswith("│ ") and " SPEC ON " in line]
        assert rows
        for row in rows:  # rank, badge, then ten numbers, none cut
            assert re.fullmatch(r"│ +\d DP\d +SPEC ON( +\d+(\.\d\d)?){10} *│", row), row
        assert f"{8 - len(rows)} more ranks (" in screen and "r shows all" in screen
        _tmux(sock, "send-keys", "-t", "t", "l")
        screen = _wait_for(sock, "l or Esc shrinks")
        lines = screen.splitlines()
        assert "OPEN; ← to seek at 16:02:57" in lines[-3] and "q quit" in lines[-1]
        pane = lines[1:lines.index(next(line for line in lines if line.startswith("╰")))]
        assert len(pane) >= 15 and all(line.startswith("│") and line.rstrip().endswith("│") for line in pane)
        _tmux(sock, "send-keys", "-t", "t", "l", "r")
        screen = _wait_for(sock, "r or Esc shrinks")
        assert sum(bool(re.match(r"│ +\d DP\d ", line)) for line in screen.splitlines()) == 8
    finally:
        _tmux(sock, "kill-server")


SMALL = Path(__file__).resolve().parent / "data" / "small.log"


def _run_in_tmux(need, cmd: list[str], size: tuple[int, int] = (80, 24)) -> str:
    need(shutil.which("tmux"), "tmux is not installed")
    sock = f"mtptui-test-{uuid.uuid4().hex[:8]}"
    # the shell reports the exit code on the pane when the command ends
    line = shlex.join(cmd) + '; echo "exit code $?"; sleep 60'
    started = _tmux(sock, "new-session", "-d", "-x", str(size[0]), "-y", str(size[1]), "-s", "t", line)
    assert started.returncode == 0, started.stderr
    return sock


def test_after_a_replay_ends_left_seeks_back_from_the_end(need):
    cmd = [sys.executable, "-m", "mtptui", "replay", "--speed", "1000", "--window", "1m", str(SMALL)]
    sock = _run_in_tmux(need, cmd)
    try:
        _wait_for(sock, "REPLAY ended; ← to seek at 16:04:05")
        time.sleep(1.0)  # at 1000x the clock would be 1000 s past the end by now
        _tmux(sock, "send-keys", "-t", "t", *["-"] * 7)  # down to 1x
        _wait_for(sock, "speed 1x")
        _tmux(sock, "send-keys", "-t", "t", "Left")
        screen = _wait_for(sock, "REPLAY playing 1x at 16:0")
        shown = screen.split("REPLAY playing 1x at ")[1][:8]
        assert "16:03:55" <= shown < "16:04:05", f"one step (6 s) back from the end, not {shown}"
    finally:
        _tmux(sock, "kill-server")


def test_live_host_that_refuses_at_80x24(need):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    name = f"127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "mtptui", "live", name, "--unit", "sglang", "--give-up-after", "4"]
    sock = _run_in_tmux(need, cmd)
    try:
        screen = _wait_for(sock, "(retry in")
        rows = screen.splitlines()
        assert any(r.startswith(f" host {name}") for r in rows), screen
        status = next(r for r in rows if "(retry in" in r)
        assert status.startswith(f" {name} (retry in ") and "connection refused" in status, status
        assert "RECONNECTING" in screen and "│ LIVE" not in screen
        screen = _wait_for(sock, "exit code 1")
        assert f"mtptui live: {name}: connection refused (no sshd listening?); gave up after 4s" \
               in screen.replace("\n", ""), screen
    finally:
        _tmux(sock, "kill-server")
