"""sources/forked.py: a function run in a forked process gives back its value, or raises what it
raised, or says it is gone when the process died; a Ctrl-C is the parent's alone."""

from __future__ import annotations

import os
import signal
import time

import pytest

from mtptui.sources.forked import Forked, Gone


def test_the_value_crosses_back_whole():
    big = {"texts": ["x" * 1000] * 10_000, "pid": None}
    with Forked(lambda: {**big, "pid": os.getpid()}) as f:
        got = f.join()
    assert got["texts"] == big["texts"] and got["pid"] not in (None, os.getpid())


def test_what_it_raised_is_raised_here():
    def fails():
        raise ValueError("bad input: line 7")

    with Forked(fails) as f, pytest.raises(ValueError, match="line 7"):
        f.join()


def test_a_process_that_died_is_gone():
    with Forked(lambda: os._exit(3)) as f, pytest.raises(Gone, match="exit code 3"):
        f.join()


def test_a_ctrl_c_to_the_group_does_not_stop_it():
    def slow():
        time.sleep(0.5)
        return "done"

    with Forked(slow) as f:
        time.sleep(0.1)
        os.kill(f.process.pid, signal.SIGINT)
        assert f.join() == "done"


def test_wait_is_called_while_it_runs():
    calls = []
    with Forked(lambda: time.sleep(0.35)) as f:
        f.join(lambda: calls.append(1))
    assert len(calls) >= 2
