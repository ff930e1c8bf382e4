"""The fleet's reader process (mtptui/fleet/reader.py): a real spawned child, asked in turns. Its
answers come back; a Prometheus that cannot be reached is the same one-line PromError as in the
view's own process (bad_query kept); a reader that dies is said in one line and the next call
starts another. (With a real Prometheus: tests/integration/test_fleet_prometheus.py.)"""

from __future__ import annotations

import os
import socket
import threading
import time
from functools import partial

import pytest

from mtptui.fleet.outliers import Limits
from mtptui.fleet.prom import Prometheus, PromError
from mtptui.fleet.reader import ReaderProcess, load


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_answers_and_errors_come_back_from_the_child():
    reader = ReaderProcess(partial(sorted, [3, 1, 2]))
    try:
        assert reader() == [1, 2, 3]
        pid = reader._proc.pid
        assert reader() == [1, 2, 3] and reader._proc.pid == pid != os.getpid()  # one child, asked again
    finally:
        reader.close()
    assert reader._proc is None

    unreachable = ReaderProcess(partial(load, Prometheus(f"http://127.0.0.1:{closed_port()}"), None, Limits()))
    try:
        with pytest.raises(PromError, match="cannot reach Prometheus"):
            unreachable()
    finally:
        unreachable.close()


def test_a_prom_error_keeps_whether_the_query_was_refused():
    reader = ReaderProcess(partial(_raise, "Prometheus refused the query: parse error"))
    try:
        with pytest.raises(PromError, match="refused") as e:
            reader()
        assert e.value.bad_query is True
    finally:
        reader.close()


def test_a_reader_that_dies_is_said_and_started_again():
    reader = ReaderProcess(partial(os._exit, 3))
    try:
        with pytest.raises(PromError, match=r"reader process ended \(exit code 3\)"):
            reader()
        with pytest.raises(PromError, match="exit code 3"):  # a new child, which dies again
            reader()
    finally:
        reader.close()


def _raise(message: str) -> None:
    raise PromError(message, bad_query=True)


def test_close_ends_a_read_under_way():
    """Quitting the view while Prometheus is slow: the waiting thread is told, not left hanging."""
    reader = ReaderProcess(partial(time.sleep, 60))
    got: list[BaseException] = []

    def call() -> None:
        try:
            reader()
        except PromError as e:
            got.append(e)
    t = threading.Thread(target=call)
    t.start()
    for _ in range(500):  # the child is up and asked
        if reader._proc is not None and reader._proc.is_alive():
            break
        time.sleep(0.01)
    reader.close()
    t.join(30)
    assert not t.is_alive() and len(got) == 1 and "reader process ended" in str(got[0])
