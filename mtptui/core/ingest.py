"""The pipeline's front door: raw lines in, counted, parsed, and handed to sinks.

A sink has ``add_batch(BatchStats)`` and ``add_event(Event)``; it may also have
``add_line(Parsed)`` to see every line (the dashboard's log pane does), and
``add_recorded(key, host, payload)`` to take mtptui's own entries of a record (core/recorded.py).
Every line is counted exactly once: ``read == batch + event + unparsed + dropped + recorded``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from mtptui.core import compiled
from mtptui.core.parse import BATCH, DROPPED, EVENT, RECORDED, LineParser, Parsed, ParsedOther
from mtptui.core.records import BatchStats, Event

if TYPE_CHECKING:
    from mtptui.core._compiled import Lane

_Data = TypeVar("_Data", list[str], bytes)

# A line's time must be one a clock can show (1970-01-01 to 9999-12-31 UTC): one entry dated
# year 10000 crashed every table and chart (issue 42). Outside, the line is dropped and counted.
FIRST_TS, END_TS = 0.0, 253402300800.0
OUT_OF_TIME = "time outside 1970-9999"


class Sink(Protocol):
    """What Ingest hands records to (a Store, a Summary, the exporter's state, ...). One that also
    has ``add_line(Parsed)`` sees every line."""

    def add_batch(self, rec: BatchStats, /) -> None: ...

    def add_event(self, ev: Event, /) -> None: ...


@dataclass
class LineCounts:
    read: int = 0
    batch: int = 0
    event: int = 0
    unparsed: int = 0  # lines that are neither a batch nor an event: ordinary log text
    dropped: int = 0  # lines that could not be read at all (see drop_reasons)
    malformed: int = 0  # batch lines cut short or with unreadable fields (also in `batch`)
    recorded: int = 0  # mtptui's own entries of a record (scrapes, GPU samples): not the host's lines
    drop_reasons: Counter[str] = field(default_factory=Counter)
    # host -> how far its server's stamps are off the envelope's clock (LineParser.clock_offsets)
    clock_offsets: dict[str | None, float] = field(default_factory=dict)
    # host -> its compose service or Kubernetes workload, for the hosts a container's prefix named
    # (EnvelopeReader.replicas): what core/services.py sums
    replicas: dict[str, str] = field(default_factory=dict)

    def merge(self, later: LineCounts) -> None:
        """Adds the counts of another input (the next part of a file read in parallel)."""
        for f in fields(self):
            if f.name not in ("drop_reasons", "clock_offsets", "replicas"):
                setattr(self, f.name, getattr(self, f.name) + getattr(later, f.name))
        self.drop_reasons.update(later.drop_reasons)
        for host, off in later.clock_offsets.items():
            self.clock_offsets.setdefault(host, off)
        for host, service in later.replicas.items():
            self.replicas.setdefault(host, service)

    def to_json(self) -> dict[str, Any]:
        return {"read": self.read, "batch": self.batch, "unparsed": self.unparsed,
                "dropped": self.dropped, "event": self.event, "malformed": self.malformed,
                "recorded": self.recorded,
                "drop_reasons": dict(self.drop_reasons),
                "clock_offsets": {str(h): off for h, off in self.clock_offsets.items() if off}}


class Ingest:
    def __init__(self, *sinks: Sink, parser: LineParser | None = None) -> None:
        self.parser = parser or LineParser()
        self.parser.keep_lines = False
        self.counts = LineCounts(clock_offsets=self.parser.clock_offsets, replicas=self.parser.envelope.replicas)
        self.sinks: list[Sink] = []
        self._batch_sinks: list[Callable[[BatchStats], None]] = []
        self._line_sinks: list[Callable[[Parsed], None]] = []
        self._recorded_sinks: list[Callable[[str, str | None, object], None]] = []
        self._lane: Lane | None = None
        for s in sinks:
            self.add_sink(s)

    def add_sink(self, sink: Sink) -> None:
        self.sinks.append(sink)
        self._batch_sinks.append(sink.add_batch)
        add_line = getattr(sink, "add_line", None)
        if add_line is not None:
            self._line_sinks.append(add_line)
            self.parser.keep_lines = True
        add_recorded = getattr(sink, "add_recorded", None)
        if add_recorded is not None:
            self._recorded_sinks.append(add_recorded)
        self._lane = None if self._line_sinks else compiled.lane_for(self.parser, self.sinks)

    def feed(self, raw: str, host: str | None = None) -> Parsed:
        return self.take(self.parser.parse(raw, host))

    def take(self, p: Parsed) -> Parsed:
        """Counts a line already parsed (by this ingest's parser) and hands it to the sinks."""
        if p.outcome == BATCH and not FIRST_TS <= (p.record.ts or 0.0) < END_TS:
            p = _out_of_time(p)
        if p.outcome == BATCH:
            c = self.counts
            c.read += 1
            c.batch += 1
            rec = p.record
            if rec.truncated:
                c.malformed += 1
            for add_batch in self._batch_sinks:
                add_batch(rec)
        else:
            self._count_other(p)
        for add_line in self._line_sinks:
            add_line(p)
        return p

    def feed_many(self, lines: Iterable[str], host: str | None = None) -> None:
        """feed() for each line; the same results, with the common case (a batch line, no line
        sinks, one sink or two) kept in one loop, because a log has millions of them."""
        if self._line_sinks:
            for raw in lines:
                self.feed(raw, host)
            return
        if self._lane is not None:
            self._feed_lane(self._lane, lines if isinstance(lines, list) else list(lines), host)
            return
        parse = self.parser.parse
        c = self.counts
        sinks = self._batch_sinks
        batches = malformed = 0
        try:
            for raw in lines:
                p = parse(raw, host)
                if p.outcome == BATCH and FIRST_TS <= (p.record.ts or 0.0) < END_TS:
                    rec = p.record
                    batches += 1
                    if rec.truncated:
                        malformed += 1
                    for add_batch in sinks:
                        add_batch(rec)
                else:
                    self._count_other(p)
        finally:
            c.read += batches
            c.batch += batches
            c.malformed += malformed

    def feed_block(self, data: bytes) -> None:
        """feed_many() for the lines of a block of a file (UTF-8; a newline after each line but
        maybe the last): the lane reads it as bytes, decoding only the lines it leaves to Python."""
        lane = self._lane
        if lane is None:
            lines = data.decode("utf-8", "replace").split("\n")
            if lines[-1] == "":
                lines.pop()
            self.feed_many(lines)
            return
        self._through_lane(lane, lane.scan_bytes, data, len(data), _line_of_block, None)

    def _feed_lane(self, lane: Lane, lines: list[str], host: str | None) -> None:
        scan = lane.scan
        self._through_lane(lane, lambda lines, i: scan(lines, i, host), lines, len(lines), _item, host)

    def _through_lane(self, lane: Lane, scan: Callable[[_Data, int], int], data: _Data, end: int,
                      line_at: Callable[[_Data, int], tuple[str, int]], host: str | None) -> None:
        """The lane reads what it can (scan: where it stopped); the line there is parsed here.
        The sink settles with the lane when it needs what the lane read (Summary.lane)."""
        parse = self.parser.parse
        c = self.counts
        pos = 0
        batches, unparsed, events = lane.batches, lane.unparsed, lane.events
        try:
            while True:
                pos = scan(data, pos)
                if pos >= end:
                    break
                raw, pos = line_at(data, pos)
                p = parse(raw, host)
                if p.outcome == BATCH and FIRST_TS <= (p.record.ts or 0.0) < END_TS:
                    rec = p.record
                    c.read += 1
                    c.batch += 1
                    if rec.truncated:
                        c.malformed += 1
                    for add_batch in self._batch_sinks:
                        add_batch(rec)
                else:
                    self._count_other(p)
        finally:
            lane.flush()
            batches, unparsed, events = lane.batches - batches, lane.unparsed - unparsed, lane.events - events
            c.read += batches + unparsed + events
            c.batch += batches
            c.unparsed += unparsed
            c.event += events

    def _count_other(self, p: Parsed) -> None:
        """Counts a line that is not a batch (or one out of time), and hands an event to the sinks."""
        c = self.counts
        c.read += 1
        if p.outcome in (BATCH, EVENT) and not FIRST_TS <= (p.record.ts or 0.0) < END_TS:
            p = _out_of_time(p)
        if p.outcome == EVENT:
            c.event += 1
            for s in self.sinks:
                s.add_event(p.record)
        elif p.outcome == DROPPED:
            c.dropped += 1
            c.drop_reasons[p.reason] += 1
        elif p.outcome == RECORDED:
            c.recorded += 1
            assert p.line is not None and p.line.own is not None
            key, payload = p.line.own
            for add_recorded in self._recorded_sinks:
                add_recorded(key, p.line.host, payload)
        else:
            c.unparsed += 1

    def count_dropped(self, reason: str, n: int = 1) -> None:
        """For sources that lose lines before they reach the parser (a full queue, a cut stream)."""
        self.counts.read += n
        self.counts.dropped += n
        self.counts.drop_reasons[reason] += n


def _out_of_time(p: Parsed) -> Parsed:
    return ParsedOther(DROPPED, p.line, reason=OUT_OF_TIME)


def _item(lines: list[str], i: int) -> tuple[str, int]:
    return lines[i], i + 1


def _line_of_block(data: bytes, pos: int) -> tuple[str, int]:
    """The line that begins at pos, decoded as the whole block would be (no newline byte is part
    of a UTF-8 sequence, so a line decodes alone to what it is in the whole), and where the next
    one begins."""
    end = data.find(b"\n", pos)
    if end < 0:
        end = len(data)
    return data[pos:end].decode("utf-8", "replace"), end + 1
