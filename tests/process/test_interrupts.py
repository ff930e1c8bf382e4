"""What a signal means while a command changes a host (commands/interrupts.py, shared by `spec`,
`bench` and `tune`), in a child process that gets real signals: the first of ctrl-c, SIGTERM and
SIGHUP stops the change ("put back"); a second without a terminal says what it leaves and leaves it.

The process tier: these start child processes (tests/unit starts none)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

CHILD = r"""
import asyncio, sys
from mtptui.commands.interrupts import Interrupts

async def main():
    task = asyncio.current_task()
    putting_back = asyncio.Event()

    def stop(why):
        print(f"stop: {why}", flush=True)
        putting_back.set()

    def leave():
        task.cancel()

    try:
        with Interrupts("x", stop=stop, leaving=lambda: "gpu1 mid-rollback", leave=leave):
            print("ready", flush=True)
            await putting_back.wait()
            print("putting back", flush=True)
            await asyncio.sleep(60)  # a put-back that takes its time
    except asyncio.CancelledError:
        print("left", flush=True)
        return 4
    return 130

sys.exit(asyncio.run(main()))
"""


def child() -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL)
    assert p.stdout is not None and p.stdout.readline() == "ready\n"
    return p


@pytest.mark.parametrize("first,name", [(signal.SIGINT, "ctrl-c"), (signal.SIGTERM, "SIGTERM"), (signal.SIGHUP, "SIGHUP")])
def test_first_signal_stops_and_a_second_without_a_terminal_leaves(first, name):
    p = child()
    try:
        assert p.stdout is not None
        p.send_signal(first)
        assert p.stdout.readline() == f"stop: {name}\n"
        assert p.stdout.readline() == "putting back\n"  # the first signal did not end it
        p.send_signal(signal.SIGINT)  # no terminal to ask on: left at once
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert out == "left\n" and p.returncode == 4, out + err
    assert err.strip() == "mtptui x: ctrl-c: stopping at once; leaving gpu1 mid-rollback", err
