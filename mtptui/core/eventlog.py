"""Every event of a whole input, in order, for `summary`: held on disk, not in memory.

A busy log has an event in every few dozen lines (a retract when the KV cache fills, say), so a
week of journal holds millions, and `summary` lists each. The first few are held in memory; past
``HELD`` they go, as JSON texts a line each, to files that are read back for output: the files
`spill` makes (its caller's temporary files: sources/parallel.py hands in tempfile's; the core
makes no file), else buffers in memory. The parts of a file read in parallel each write their own
file; joining two logs joins their lists of files, without copying.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import BinaryIO

import orjson

from mtptui.core.jsontext import dumps
from mtptui.core.records import Event

HELD = 1024
# The newest events stay in memory when the rest are written: a traceback's event takes its text
# from the exception line a few lines after it (LineParser's Block), in place.
RECENT = 16


def _lines(docs: list[dict]) -> bytes:
    """The docs as the file holds them: JSON (jsontext.dumps), a line each."""
    return b"".join([dumps(d, newline=True) for d in docs])


class EventLog:
    def __init__(self, file: BinaryIO | None = None, spill: Callable[[], BinaryIO] = io.BytesIO) -> None:
        """With `file`: the log writes there (a worker of a parallel read writes to a file its
        parent made and reads back after; see adopt()), else to a file that spill() makes (a
        temporary file, where the caller hands in tempfile.TemporaryFile; by default a buffer in
        memory). spill crosses processes with the log: give a function of a module (pickled by
        its name), not a lambda."""
        self._spill = spill
        self._segments: list[BinaryIO] = [] if file is None else [file]
        self._writable = file  # the last segment, when this log may append to it
        self._held: list[Event] = []
        self.count = 0

    def append(self, ev: Event) -> None:
        self._held.append(ev)
        self.count += 1
        if len(self._held) >= HELD:
            self._write_held(RECENT)

    def __len__(self) -> int:
        return self.count

    def _write_held(self, keep: int = 0) -> None:
        """Writes the held events to the file, all but the newest `keep`."""
        if len(self._held) <= keep:
            return
        if self._writable is None:
            self._writable = self._spill()
            self._segments.append(self._writable)
        f = self._writable
        f.seek(0, 2)
        n = len(self._held) - keep
        f.write(_lines([e.to_json() for e in self._held[:n]]))
        del self._held[:n]

    def extend(self, later: EventLog) -> None:
        """Appends the events of a log that came after this one's (`later` is used up)."""
        self._write_held()
        self._segments += later._segments
        self._writable = None  # later's files come after this log's
        self._held, later._held = later._held, []
        self.count += later.count
        later._segments, later.count = [], 0

    def json_texts(self) -> Iterator[bytes]:
        """The events as JSON (orjson, of Event.to_json()), in order."""
        for f in self._segments:
            f.flush()
            f.seek(0)
            for line in f:
                yield line[:-1]
        for e in self._held:
            yield dumps(e.to_json())

    def __iter__(self) -> Iterator[dict]:
        """The events as Event.to_json() gives them, in order."""
        return map(orjson.loads, self.json_texts())

    # A parallel read's worker writes its events to the file it was given (its parent made it
    # before the fork); only the count and what it did not write cross back.
    def __getstate__(self) -> tuple:
        if self._writable is None or self._segments != [self._writable]:
            raise TypeError("only an EventLog that writes to a file it was given crosses processes")
        self._write_held()
        self._writable.flush()
        return (self.count, self._spill)

    def __setstate__(self, state: tuple) -> None:
        self.count, self._spill = state
        self._segments, self._writable, self._held = [], None, []

    def adopt(self, file: BinaryIO) -> None:
        """After unpickling: the file that the worker wrote these events to."""
        self._segments = [file]
