"""Summaries of saved logs, using every core for big plain files.

A plain file of at least ``PARALLEL_MIN_BYTES`` is cut at line boundaries into one part per job;
each part is read in a forked worker, and the parts' summaries are merged in file order, so the
result equals a sequential read. Two pieces of parser state cross part boundaries and are carried
over explicitly: the rank of vLLM spec lines that precede their part's first throughput line
(resolved from the previous part's last one), and the date of the last full stamp, for year-less
and time-only stamps (read back from the text before the part). Gzip and stdin cannot be split and are read sequentially.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import multiprocessing
import os
import re
from dataclasses import dataclass

from mtptui.core.ingest import Ingest, LineCounts
from mtptui.core.summary import Summary
from mtptui.sources.file import GZIP_MAGIC, InputError, open_lines

PARALLEL_MIN_BYTES = 32 << 20
UNRESOLVED = "\x00unresolved"
_DATE = re.compile(rb"(?:\[|^)(\d{4}-\d\d-\d\d) \d\d:\d\d:\d\d", re.MULTILINE)  # SGLang's or Python logging's


@dataclass
class Part:
    path: str
    start: int
    end: int
    index: int


def _splittable(path: str) -> bool:
    if path == "-" or not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(2) != GZIP_MAGIC


def plan(path: str, jobs: int) -> list[Part]:
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
    return [Part(path, a, b, i) for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]


def _date_before(path: str, start: int) -> str | None:
    if start == 0:
        return None
    with open(path, "rb") as f:
        back = min(start, 1 << 20)
        f.seek(start - back)
        found = _DATE.findall(f.read(back))
    return found[-1].decode() if found else None


def _blocks(path: str, start: int, end: int, block: int = 1 << 20):
    """The lines of bytes [start, end) in lists, decoded and split a block at a time (cheaper
    per line than a text stream); a line longer than a block is carried over until its end."""
    with open(path, "rb") as f:
        f.seek(start)
        left = end - start
        tail = b""
        while left > 0:
            data = f.read(min(block, left))
            if not data:
                break
            left -= len(data)
            data = tail + data
            if left > 0:
                cut = data.rfind(b"\n") + 1
                tail, data = data[cut:], data[:cut]
            else:
                tail = b""
            if data:
                lines = data.decode("utf-8", "replace").split("\n")
                if lines[-1] == "":
                    lines.pop()
                yield lines
        if tail:
            yield [tail.decode("utf-8", "replace")]


def _work(args):
    part, since, until = args
    summary = Summary(since, until)
    ingest = Ingest(summary)
    ingest.parser.unresolved_rank = UNRESOLVED if part.index else ""
    date = _date_before(part.path, part.start)
    if date is not None:
        ingest.parser.assume_date(date)
    for lines in _blocks(part.path, part.start, part.end):
        ingest.feed_many(lines)
    summary.seal()
    return summary, ingest.counts, ingest.parser.vllm_rank


def _merge(total: Summary, counts: LineCounts, vllm_rank: dict, part: tuple) -> None:
    summary, pcounts, prank = part
    summary.flush()
    # Spec lines from before this part's first throughput line belong to the rank the parts
    # before ended on; their values come first in this part, so they are added first.
    for key in [k for k in summary.series if k[1] == UNRESOLVED]:
        s = summary.series.pop(key)
        host, _, engine = key
        _extend(total, (host, vllm_rank.get(host, ""), engine), s)
    for key, s in summary.series.items():
        _extend(total, key, s)
    total.events.extend(summary.events)
    for host, epochs in summary.epochs.epochs.items():
        for e in epochs:
            if UNRESOLVED in e.per_rank:
                e.rename_rank(UNRESOLVED, vllm_rank.get(host, ""))
    total.epochs.merge(summary.epochs)
    for name in ("read", "batch", "event", "unparsed", "dropped", "malformed"):
        setattr(counts, name, getattr(counts, name) + getattr(pcounts, name))
    counts.drop_reasons.update(pcounts.drop_reasons)
    vllm_rank.update(prank)


def _extend(total: Summary, key: tuple, s) -> None:
    t = total.series.get(key)
    if t is None:
        s.host, s.rank, s.engine = key
        total.series[key] = s
    else:
        t.merge(s)


def _batched(lines, n: int = 4096):
    """Lists of up to n lines from an iterator, so that the parser loops over lists."""
    it = iter(lines)
    while True:
        chunk = list(itertools.islice(it, n))
        if not chunk:
            return
        yield chunk


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
    total = Summary(since, until)
    counts = LineCounts()
    vllm_rank: dict = {}
    for path in paths:
        parallel = jobs > 1 and _splittable(path) and os.path.getsize(path) >= PARALLEL_MIN_BYTES
        if not parallel:
            ingest = Ingest()
            ingest.parser.vllm_rank = vllm_rank
            sub = Summary(since, until)
            ingest.add_sink(sub)
            for lines in _batched(open_lines(path)):  # raises InputError, after the head checks
                ingest.feed_many(lines)
            _merge(total, counts, vllm_rank, (sub, ingest.counts, ingest.parser.vllm_rank))
            continue
        next(iter(open_lines(path)), None)  # the same head checks as a sequential read
        parts = plan(path, jobs)
        if len(parts) == 1:
            _merge(total, counts, vllm_rank, _work((parts[0], since, until)))
            continue
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(len(parts) - 1) as pool:
            later = pool.imap(_work, [(p, since, until) for p in parts[1:]])
            # this process reads the first part itself meanwhile: one fork and one transfer fewer
            _merge(total, counts, vllm_rank, _work((parts[0], since, until)))
            for result in later:
                _merge(total, counts, vllm_rank, result)
    return total, counts


__all__ = ["summarise", "plan", "InputError", "PARALLEL_MIN_BYTES"]
