"""Summaries of saved logs, using every core for big plain files.

A plain file of at least ``PARALLEL_MIN_BYTES`` is cut at line boundaries into one part per job;
each part is read in a forked worker, and the summaries of the parts and files are merged in input
order (``Summary.merge``), so the result equals one sequential read. Each input after the first
(a part, or a file after another) is read by a parser of its own, so two pieces of state that
cross its start are carried over explicitly: the rank of vLLM spec lines before its first
throughput line (marked ``UNRESOLVED``, and given on merging the rank that the input before
ended on), and the date of the last full stamp, for year-less and time-only stamps (read back
from the text before a part). Gzip and stdin cannot be split and are read sequentially.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Generic, Protocol, TypeAlias, TypeVar

from mtptui.core.eventlog import EventLog
from mtptui.core.ingest import Ingest, LineCounts
from mtptui.core.nogc import without_cycle_collector
from mtptui.core.parse import LineParser
from mtptui.core.records import BatchStats, Event
from mtptui.core.epochs import UNRESOLVED
from mtptui.core.summary import Summary
from mtptui.sources.file import TRUNCATED, InputError, byte_blocks, open_lines, splittable
from mtptui.sources.forked import Forked, Gone

PARALLEL_MIN_BYTES = 32 << 20
_S = TypeVar("_S", bound="PartSink")
# host -> the vLLM rank an input ended on (LineParser.vllm_rank)
Ranks: TypeAlias = dict[str | None, str]


class PartSink(Protocol):
    """What an input, or a part of one, is read into (a Summary, a Store): fed as Ingest feeds
    a sink, sealed where it was read, merged in input order."""

    def add_batch(self, rec: BatchStats, /) -> None: ...

    def add_event(self, ev: Event, /) -> None: ...

    def seal(self) -> None: ...

    def merge(self: _S, later: _S, ranks_before: Ranks | None = None) -> None: ...


class _Slots(Protocol):
    """A shared array of byte counts, one slot per reader (multiprocessing.RawArray("q", n))."""

    def __setitem__(self, i: int, n: int, /) -> None: ...

    def __iter__(self) -> Iterator[int]: ...

_DATE = re.compile(rb"(?:\[|^)(\d{4}-\d\d-\d\d) \d\d:\d\d:\d\d", re.MULTILINE)  # SGLang's or Python logging's


@dataclass
class Part:
    """Bytes [start, end) of a plain file, or (end None) a whole input of any kind."""

    path: str
    start: int = 0
    end: int | None = None
    first: bool = True  # no input before it


def plan(path: str, jobs: int, first: bool = True) -> list[Part]:
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as f:
        for k in range(1, jobs):
            pos = _next_line(f, size * k // jobs)
            if cuts[-1] < pos < size:
                cuts.append(pos)
    cuts.append(size)
    return [Part(path, a, b, first and not i) for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]


def _next_line(f: BinaryIO, pos: int, step: int = 1 << 16) -> int:
    """Where the line after the one at `pos` begins (the file's end if none does), found a block at a
    time: readline() would hold a 500 MB line whole."""
    f.seek(pos)
    while block := f.read(step):
        cut = block.find(b"\n")
        if cut >= 0:
            return pos + cut + 1
        pos += len(block)
    return pos


ENDS = 200  # lines read at each end of a file to see which way its times run
BACKWARDS_S = 60.0  # a log whose first times are later than its last by more than this runs backwards


def _in_time_order(path: str) -> None:
    """Raises InputError, one line, for a log whose times run backwards (`journalctl -r`): read as
    it is, it made 7 runs of 3 and false changes between them (issue 42)."""
    parser = LineParser()  # one for both ends: a year-less stamp after the head's is in its year or the next

    def times(lines: Iterable[str]) -> list[float]:
        out = []
        for raw in lines:
            p = parser.parse(raw)
            ts = p.record.ts if p.record is not None else p.line.ts if p.line is not None else None
            if ts is not None:
                out.append(ts)
        return out

    with open(path, "rb") as f:  # 64 KiB at each end, whatever the lines there (one may be 500 MB)
        head = times(f.read(1 << 16).decode("utf-8", "replace").split("\n")[:ENDS])
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - (1 << 16)))
        end = f.read(1 << 16).decode("utf-8", "replace").split("\n")[1:][-ENDS:]  # the first is cut
    tail = times(end) if head else []
    first, last = (head[0], tail[-1]) if head and tail else (None, None)
    steps = [b - a for a, b in zip(head, head[1:]) if b != a]
    # and its head too, line by line: a year-less log over new year's eve is not reversed
    backwards = sum(s < 0 for s in steps) > sum(s > 0 for s in steps)
    if first is not None and last is not None and first - last > BACKWARDS_S and backwards:
        raise InputError(f"{path}: its times run backwards (a reversed log: journalctl -r?); give it in time "
                         "order (journalctl without -r, or tac)")


def _date_before(path: str, start: int) -> str | None:
    if start == 0:
        return None
    with open(path, "rb") as f:
        back = min(start, 1 << 20)
        f.seek(start - back)
        found = _DATE.findall(f.read(back))
    return found[-1].decode() if found else None


def _batched(lines: Iterable[str], n: int = 4096) -> Iterator[list[str]]:
    """Lists of up to n lines from an iterator, so that the parser loops over lists."""
    it = iter(lines)
    while True:
        chunk = list(itertools.islice(it, n))
        if not chunk:
            return
        yield chunk


def _read(part: Part, sink: _S, progress: Callable[[int], None] | None = None) -> tuple[_S, LineCounts, Ranks]:
    """One input read into a new sink (Summary or Store): it, the line counts, and the vLLM rank
    each host ended on. `progress(bytes)` is told the bytes read of a plain file's part."""
    ingest = Ingest(sink, parser=LineParser(unresolved_rank="" if part.first else UNRESOLVED))
    if part.end is None:
        def truncated() -> None:  # a gzip cut short: its lines read, its missing end counted (issue 42)
            ingest.count_dropped(TRUNCATED)

        for lines in _batched(open_lines(part.path, truncated=truncated)):  # InputError, after the head checks
            ingest.feed_many(lines)
            if progress is not None:
                progress(0)  # no byte count to give (gzip, stdin): a moment to give up
    else:
        date = _date_before(part.path, part.start)
        if date is not None:
            ingest.parser.dates.note(date)
        done = 0
        for data in byte_blocks(part.path, part.start, part.end):
            ingest.feed_block(data)
            if progress is not None:
                done += len(data)
                progress(done)
    sink.seal()  # in a worker, on its own core
    return sink, ingest.counts, ingest.parser.vllm_rank


class _Worker(Generic[_S]):
    """A forked process that reads one part of a file (sources/forked.py). Its events cross back in a
    file of their own made before the fork. The process ends when its part is read, and its memory
    with it."""

    def __init__(self, part: Part, make: Callable[..., _S], done: _Slots | None = None, slot: int = 0) -> None:
        self.part = part
        self.events = tempfile.TemporaryFile()

        def progress(n: int) -> None:
            if done is not None:
                done[slot] = n

        self.forked = Forked(lambda: _read(part, make(EventLog(self.events, spill=tempfile.TemporaryFile)),
                                           None if done is None else progress))

    def join(self, wait: Callable[[], None] | None = None) -> tuple[_S, LineCounts, Ranks]:
        """The part's results; `wait` is called every tenth of a second until it is read."""
        try:
            read = self.forked.join(wait)
        except Gone as e:
            p = self.part
            raise InputError(f"{p.path}: the reader of bytes {p.start} to {p.end} stopped ({e})") from None
        adopt = getattr(getattr(read[0], "events", None), "adopt", None)  # a Summary's events wait on disk
        if adopt is not None:
            adopt(self.events)
        return read

    def stop(self) -> None:
        self.forked.stop()


@contextlib.contextmanager
def _workers(parts: list[Part], make: Callable[..., _S], done: _Slots | None = None) -> Iterator[list[_Worker[_S]]]:
    """Forked readers of the parts, that a Ctrl-C stops without a word from them (sources/forked.py):
    leaving this block ends them."""
    workers: list[_Worker[_S]] = []
    try:
        for i, p in enumerate(parts):
            workers.append(_Worker(p, make, done, i + 1))
        yield workers
    finally:
        for w in workers:
            w.stop()


class _Total(Generic[_S]):
    """The inputs' results merged in order."""

    def __init__(self, sink: _S) -> None:
        self.sink = sink
        self.counts = LineCounts()
        self.ranks: Ranks = {}  # host -> the vLLM rank the inputs so far ended on

    def add(self, result: tuple[_S, LineCounts, Ranks]) -> None:
        sink, counts, ranks = result
        self.sink.merge(sink, self.ranks)
        self.counts.merge(counts)
        self.ranks.update(ranks)


def summarise(paths: list[str], since: float | None = None, until: float | None = None,
              jobs: int | None = None) -> tuple[Summary, LineCounts]:
    """Raises InputError (one line) for an input that cannot be read. The summaries' events past
    the first thousand wait in temporary files (core/eventlog.py)."""

    def make(events: EventLog | None = None) -> Summary:
        return Summary(since, until, events=EventLog(spill=tempfile.TemporaryFile) if events is None else events)

    return read_inputs(paths, make, jobs)


class Progress:
    """Bytes read so far of the plain files' parts, from every reader (a shared array: workers
    are processes), against the bytes there are to read; `stop()` makes the read give up."""

    def __init__(self) -> None:
        self.total = 0
        self._before = 0  # bytes of the inputs already read
        self._done: _Slots | None = None
        self.stopped = False

    @property
    def read(self) -> int:
        return self._before + (sum(self._done) if self._done is not None else 0)

    def fraction(self) -> float | None:
        return None if not self.total else min(1.0, self.read / self.total)

    def stop(self) -> None:
        self.stopped = True

    def _check(self) -> None:
        if self.stopped:
            raise Stopped()


class Stopped(Exception):
    """The read was given up (Progress.stop())."""


def read_inputs(paths: list[str], make: Callable[..., _S], jobs: int | None = None,
                progress: Progress | None = None, read_here: bool = True) -> tuple[_S, LineCounts]:
    """Every input read into a sink made by make(events=None) (a Summary or a Store), the parts of
    big plain files by one process each; returns the sink of the whole, merged in order, and the
    line counts. read_here: this process reads a big file's first part itself (one fork and one
    transfer fewer); else every part is read by a process of its own, and this one is free
    meanwhile (the dashboard starts its screen). Raises InputError (one line) for an input that
    cannot be read; Stopped when progress.stop() was called meanwhile."""
    with without_cycle_collector():
        return _read_inputs(paths, make, jobs, progress or Progress(), read_here)


def _read_inputs(paths: list[str], make: Callable[..., _S], jobs: int | None, progress: Progress,
                 read_here: bool = True) -> tuple[_S, LineCounts]:
    jobs = jobs or os.cpu_count() or 1
    total = _Total(make())
    progress.total = sum(os.path.getsize(p) for p in paths if splittable(p))
    for i, path in enumerate(paths):
        if splittable(path):
            _in_time_order(path)
        parallel = jobs > 1 and splittable(path) and os.path.getsize(path) >= PARALLEL_MIN_BYTES
        parts = plan(path, jobs, first=not i) if parallel else [Part(path, first=not i)]
        done = progress._done = multiprocessing.RawArray("q", len(parts) + 1)  # [0]: this process's part

        def mine(n: int) -> None:
            done[0] = n
            progress._check()

        if len(parts) == 1:
            total.add(_read(parts[0], make(), mine))
        else:
            next(iter(open_lines(path)), None)  # the same head checks as a sequential read
            forked = parts[1:] if read_here else parts
            with _workers(forked, make, done) as workers:
                if read_here:
                    total.add(_read(parts[0], make(), mine))
                for w in workers:
                    total.add(w.join(progress._check))
        progress._before += os.path.getsize(path) if splittable(path) else 0
        progress._done = None
    return total.sink, total.counts


__all__ = ["summarise", "read_inputs", "plan", "Progress", "Stopped", "InputError", "PARALLEL_MIN_BYTES"]
