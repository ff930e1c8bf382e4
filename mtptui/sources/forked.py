"""A function run on another core: a forked process whose value crosses back pickled (here, not in
core/: the core never forks). The readers of a big file's parts run in these (sources/parallel.py).

The value (or what it raised) comes back through a file made before the fork, written and read a
piece at a time, where a pipe would hold all of it at once on each side. The process ignores
Ctrl-C: the terminal sends SIGINT to the whole process group, and the parent alone reports it
(leaving its `with` block ends the child). SIGINT is held (blocked, not lost) while the process
forks, so that it cannot be hit before it ignores the signal.
"""

from __future__ import annotations

import multiprocessing
import pickle
import signal
import tempfile
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Gone(Exception):
    """The process ended without giving a value (killed, or out of memory)."""


class Forked(Generic[T]):
    def __init__(self, fn: Callable[[], T]) -> None:
        self.result = tempfile.TemporaryFile()
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:  # multiprocessing flushes stdout and stderr first: the child would write them again
            self.process = multiprocessing.get_context("fork").Process(target=self._run, args=(fn,), daemon=True)
            self.process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def _run(self, fn: Callable[[], T]) -> None:  # in the child
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        out: tuple[str, object]
        try:
            out = ("done", fn())
        except BaseException as e:  # raised again in the parent
            out = ("failed", e)
        pickle.dump(out, self.result, pickle.HIGHEST_PROTOCOL)
        self.result.flush()

    def join(self, wait: Callable[[], None] | None = None) -> T:
        """The value; what fn raised, raised here; Gone when the process gave neither. `wait` is
        called every tenth of a second until the process is over."""
        while wait is not None and self.process.is_alive():
            wait()
            self.process.join(0.1)
        self.process.join()
        status: str
        value: Any
        with self.result as f:
            f.seek(0)
            try:
                status, value = pickle.load(f)
            except (EOFError, pickle.UnpicklingError):  # cut short
                raise Gone(f"exit code {self.process.exitcode}") from None
        if status == "failed":
            raise value
        done: T = value
        return done

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()
        self.result.close()

    def __enter__(self) -> Forked[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
