"""`mtptui open` (and `replay --speed max`): the files read at once into the dashboard's store.

The read begins as the dashboard is made (start()), in a thread, with a forked reader for each part
of a big file (sources/opener.py), so the screen starts meanwhile, draws its progress and keys keep
working; quitting gives the read up. When it is done the screen shows the whole file, its playhead at
the end, as a replay that has ended. No Textual here: the app waits for ``read`` in a worker and hands
the result to ``Dashboard.adopt``.
"""

from __future__ import annotations

import os
import threading
import time

from mtptui.sources.opener import Opened, Progress, open_store
from mtptui.sources.file import splittable, tail_lines


class Opening:
    def __init__(self, paths: list[str], names: list[str] | None = None) -> None:
        self.paths = list(paths)
        shown = names or self.paths
        self.label = "open " + ", ".join(os.path.basename(p) for p in shown)
        self.progress = Progress()
        self.started: float | None = None
        self.seconds: float | None = None  # how long the read took, once done
        self.done = False
        self.error: str | None = None
        self._reader: threading.Thread | None = None
        self._result: Opened | BaseException | None = None

    def start(self, capacity: int, max_events: int) -> None:
        """Begins the read, in a thread of its own (once): into a store of this capacity."""
        if self._reader is not None:
            return
        self.started = time.monotonic()
        self._reader = threading.Thread(target=self._read, args=(capacity, max_events), name="open", daemon=True)
        self._reader.start()

    def _read(self, capacity: int, max_events: int) -> None:
        try:
            self._result = open_store(self.paths, capacity=capacity, max_events=max_events, progress=self.progress)
        except BaseException as e:  # InputError, Stopped: raised by read(), in the app's worker
            self._result = e

    def read(self) -> Opened:
        """The whole input, in a store: start()'s read, waited for (in a worker thread). Raises
        InputError, or Stopped when the session ends first."""
        assert self._reader is not None, "start() begins the read (the dashboard calls it)"
        self._reader.join()
        if isinstance(self._result, BaseException):
            raise self._result
        assert self._result is not None
        return self._result

    def log_tail(self, n: int) -> list[str]:
        """The last n lines of each plain file, for the log pane (read again from the file's end:
        the store keeps figures, not text)."""
        out: list[str] = []
        for p in self.paths:
            if splittable(p):
                out += tail_lines(p, n)
        return out[-n:]

    def finish(self, error: str | None = None) -> None:
        self.done = True
        self.error = error
        if self.started is not None:
            self.seconds = time.monotonic() - self.started

    def status(self) -> str:
        """`opening a.log: 45%` while it reads."""
        frac = self.progress.fraction()
        return f"{self.label}: " + ("reading" if frac is None else f"{frac:.0%}")
