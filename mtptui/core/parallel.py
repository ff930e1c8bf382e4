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
import gc
import itertools
import multiprocessing
import os
import re
import tempfile
from dataclasses import dataclass
from typing import BinaryIO

from mtptui.core.eventlog import EventLog
from mtptui.core.ingest import Ingest, LineCounts
from mtptui.core.parse import LineParser
from mtptui.core.summary import UNRESOLVED, Summary
from mtptui.sources.file import InputError, line_blocks, open_lines, splittable

PARALLEL_MIN_BYTES = 32 << 20
_DATE = re.compile(rb"(?:\[|^)(\d{4}-\d\d-\d\d) \d\d:\d\d:\d\d", re.MULTILINE)  # SGLang's or Python logging's


@dataclass
class Part:
    """Bytes [start, end) of a plain file, or (end None) a whole input of any kind."""

    path: str
    start: int = 0
    end: int | None = None
    first: bool = True  # no input before it
    spool: int | None = None  # in a worker: which of the files its parent made takes its events


def plan(path: str, jobs: int, first: bool = True) -> list[Part]:
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as f:
        for k in range(1, jobs):
            f.seek(size * k // jobs)
            f.readline()  # move to the start of the next line
            pos = f.tell()
            if cuts[-1] < pos < size:
                cuts.append(pos)
    cuts.append(size)
    return [Part(path, a, b, first and not i) for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]


def _date_before(path: str, start: int) -> str | None:
    if start == 0:
        return None
    with open(path, "rb") as f:
        back = min(start, 1 << 20)
        f.seek(start - back)
        found = _DATE.findall(f.read(back))
    return found[-1].decode() if found else None


def _batched(lines, n: int = 4096):
    """Lists of up to n lines from an iterator, so that the parser loops over lists."""
    it = iter(lines)
    while True:
        chunk = list(itertools.islice(it, n))
        if not chunk:
            return
        yield chunk


_spools: list[BinaryIO] = []  # in a worker: the files its parent made for the parts' events


def _init_worker(spools: list[BinaryIO]) -> None:
    global _spools
    _spools = spools


def _read(args: tuple) -> tuple[Summary, LineCounts, dict]:
    """One input's summary, its line counts, and the vLLM rank each host ended on."""
    part, since, until = args
    events = EventLog(_spools[part.spool]) if part.spool is not None else None
    summary = Summary(since, until, events=events)
    ingest = Ingest(summary, parser=LineParser(unresolved_rank="" if part.first else UNRESOLVED))
    if part.end is None:
        blocks = _batched(open_lines(part.path))  # raises InputError, after the head checks
    else:
        date = _date_before(part.path, part.start)
        if date is not None:
            ingest.parser.assume_date(date)
        blocks = line_blocks(part.path, part.start, part.end)
    for lines in blocks:
        ingest.feed_many(lines)
    summary.seal()  # in a worker, on its own core
    return summary, ingest.counts, ingest.parser.vllm_rank


class _Total:
    """The inputs' results merged in order."""

    def __init__(self, since, until) -> None:
        self.summary = Summary(since, until)
        self.counts = LineCounts()
        self.ranks: dict = {}  # host -> the vLLM rank the inputs so far ended on

    def add(self, result: tuple[Summary, LineCounts, dict], spool: BinaryIO | None = None) -> None:
        summary, counts, ranks = result
        if spool is not None:
            summary.events.adopt(spool)
        self.summary.merge(summary, self.ranks)
        self.counts.merge(counts)
        self.ranks.update(ranks)


@contextlib.contextmanager
def _without_cycle_collector():
    """A read makes millions of short-lived records that reference counting frees at once; none
    forms a cycle, so the cyclic collector's passes over them are pure cost (about 10%)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def summarise(paths: list[str], since=None, until=None, jobs: int | None = None) -> tuple[Summary, LineCounts]:
    """Raises InputError (one line) for an input that cannot be read."""
    with _without_cycle_collector():
        return _summarise(paths, since, until, jobs)


def _summarise(paths: list[str], since, until, jobs: int | None) -> tuple[Summary, LineCounts]:
    jobs = jobs or os.cpu_count() or 1
    total = _Total(since, until)
    for i, path in enumerate(paths):
        parallel = jobs > 1 and splittable(path) and os.path.getsize(path) >= PARALLEL_MIN_BYTES
        if not parallel:
            total.add(_read((Part(path, first=not i), since, until)))
            continue
        next(iter(open_lines(path)), None)  # the same head checks as a sequential read
        parts = plan(path, jobs, first=not i)
        if len(parts) == 1:
            total.add(_read((parts[0], since, until)))
            continue
        # the workers' events go to files made here, read back after: not through the pipe
        spools = [tempfile.TemporaryFile() for _ in parts[1:]]
        for k, part in enumerate(parts[1:]):
            part.spool = k
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(len(parts) - 1, initializer=_init_worker, initargs=(spools,)) as pool:
            later = pool.imap(_read, [(p, since, until) for p in parts[1:]])
            # this process reads the first part itself meanwhile: one fork and one transfer fewer
            total.add(_read((parts[0], since, until)))
            for spool, result in zip(spools, later):
                total.add(result, spool)
    return total.summary, total.counts


__all__ = ["summarise", "plan", "InputError", "PARALLEL_MIN_BYTES"]
