"""A fleet's refresh, read in a process of its own.

A refresh of 1,000 hosts x 8 ranks is 250-300 ms of the interpreter: 50,000 samples of JSON read
and assembled. In a thread of the view's process it took the interpreter from the view's loop half
the time, and keys pressed meanwhile waited (p99 100-170 ms with a refresh a second). In a process
of its own it runs on another core; the view's thread only waits for its hosts and unpickles them
(10-20 ms). The process is spawned (not forked from a process with threads), ignores Ctrl-C (the
view's process ends it), and is started again if it dies.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection

from mtptui.fleet.outliers import Limits, flag_fleet
from mtptui.fleet.prom import Prometheus, PromError
from mtptui.fleet.query import Host, read_fleet


def load(prom: Prometheus, match: str | None, limits: Limits) -> list[Host]:
    """The fleet now, flagged. Raises PromError."""
    return flag_fleet(read_fleet(prom, match), limits)


class ReaderProcess:
    """`read()` (picklable: a partial of `load`) run in a child process at each call; its hosts
    returned, its PromError raised. Calls run one at a time."""

    def __init__(self, read: Callable[[], list[Host]]) -> None:
        self.read = read
        self._lock = threading.Lock()
        self._proc: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None

    def __call__(self) -> list[Host]:
        with self._lock:
            if self._proc is None or not self._proc.is_alive():
                self._start()
            conn = self._conn
            assert conn is not None  # _start() made it
            try:
                conn.send(None)
                ok, value = conn.recv()
            except (EOFError, OSError):  # the process died, or close() ended it meanwhile
                code = self._stop()
                raise PromError(f"the fleet's reader process ended (exit code {code}); "
                                "the next refresh starts another") from None
        if ok:
            return value
        raise value

    def start(self) -> None:
        """Starts the process now (else the first call does)."""
        with self._lock:
            if self._proc is None or not self._proc.is_alive():
                self._start()

    def _start(self) -> None:
        self._stop()
        ctx = multiprocessing.get_context("spawn")
        ours, theirs = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(theirs, self.read), name="mtptui-fleet-reader", daemon=True)
        # Spawning hands the child this process' stderr; under Textual, sys.stderr is its capture,
        # which has no file descriptor ("bad value(s) in fds_to_keep").
        stderr = sys.stderr
        sys.stderr = sys.__stderr__ or stderr
        try:
            proc.start()
        finally:
            sys.stderr = stderr
        theirs.close()
        self._proc, self._conn = proc, ours

    def _stop(self) -> int | None:
        # The child first: a thread waiting on the pipe then reads its end, not a closed descriptor.
        proc, conn, self._proc, self._conn = self._proc, self._conn, None, None
        code = None
        if proc is not None:
            if proc.is_alive():
                proc.terminate()
            proc.join(2)
            if proc.is_alive():
                proc.kill()
                proc.join()
            code = proc.exitcode
        if conn is not None:
            conn.close()
        return code

    def close(self) -> None:
        """Ends the process (a read under way is dropped)."""
        self._stop()


def _serve(conn: Connection, read: Callable[[], list[Host]]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Nothing to the terminal, which the view draws on: what goes wrong is sent back.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    while True:
        try:
            conn.recv()
        except (EOFError, OSError):
            return  # the view's process closed its end
        answer: tuple[bool, list[Host] | PromError]
        try:
            answer = (True, read())
        except PromError as e:
            answer = (False, e)
        except Exception as e:  # noqa: BLE001 (a bug: said in one line, not lost in a child's stderr)
            answer = (False, PromError(f"the fleet's reader failed: {type(e).__name__}: {e}"))
        conn.send(answer)
