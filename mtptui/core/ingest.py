"""The pipeline's front door: raw lines in, counted, parsed, and handed to sinks.

A sink has ``add_batch(BatchStats)`` and ``add_event(Event)``; it may also have
``add_line(Parsed)`` to see every line (the dashboard's log pane does). Every line is counted
exactly once: ``read == batch + event + unparsed + dropped``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, fields

from mtptui.core.parse import BATCH, DROPPED, EVENT, LineParser, Parsed


@dataclass
class LineCounts:
    read: int = 0
    batch: int = 0
    event: int = 0
    unparsed: int = 0  # lines that are neither a batch nor an event: ordinary log text
    dropped: int = 0  # lines that could not be read at all (see drop_reasons)
    malformed: int = 0  # batch lines cut short or with unreadable fields (also in `batch`)
    drop_reasons: Counter = field(default_factory=Counter)

    def merge(self, later: LineCounts) -> None:
        """Adds the counts of another input (the next part of a file read in parallel)."""
        for f in fields(self):
            if f.name != "drop_reasons":
                setattr(self, f.name, getattr(self, f.name) + getattr(later, f.name))
        self.drop_reasons.update(later.drop_reasons)

    def to_json(self) -> dict:
        return {"read": self.read, "batch": self.batch, "unparsed": self.unparsed,
                "dropped": self.dropped, "event": self.event, "malformed": self.malformed,
                "drop_reasons": dict(self.drop_reasons)}


class Ingest:
    def __init__(self, *sinks, parser: LineParser | None = None) -> None:
        self.parser = parser or LineParser()
        self.parser.keep_lines = False
        self.counts = LineCounts()
        self.sinks: list = []
        self._batch_sinks: list = []
        self._line_sinks: list = []
        for s in sinks:
            self.add_sink(s)

    def add_sink(self, sink) -> None:
        self.sinks.append(sink)
        self._batch_sinks.append(sink.add_batch)
        if hasattr(sink, "add_line"):
            self._line_sinks.append(sink.add_line)
            self.parser.keep_lines = True

    def feed(self, raw: str, host: str | None = None) -> Parsed:
        p = self.parser.parse(raw, host)
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
        parse = self.parser.parse
        c = self.counts
        sinks = self._batch_sinks
        batches = malformed = 0
        try:
            for raw in lines:
                p = parse(raw, host)
                if p.outcome == BATCH:
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

    def _count_other(self, p: Parsed) -> None:
        """Counts a line that is not a batch, and hands an event to the sinks."""
        c = self.counts
        c.read += 1
        o = p.outcome
        if o == EVENT:
            c.event += 1
            for s in self.sinks:
                s.add_event(p.record)
        elif o == DROPPED:
            c.dropped += 1
            c.drop_reasons[p.reason] += 1
        else:
            c.unparsed += 1

    def count_dropped(self, reason: str, n: int = 1) -> None:
        """For sources that lose lines before they reach the parser (a full queue, a cut stream)."""
        self.counts.read += n
        self.counts.dropped += n
        self.counts.drop_reasons[reason] += n
