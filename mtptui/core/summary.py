"""`mtptui summary`: whole-input statistics per host and rank, as a table or as JSON.

Unlike the dashboard's store, this keeps every value (counted, see valueset.py) so percentiles are
exact over the whole input while memory stays small.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mtptui.core.epochs import EpochTracker
from mtptui.core.records import DECODE, PREFILL, SPEC, BatchStats, Event
from mtptui.core.valueset import Rows

DECODE_METRICS = ("accept_len", "accept_rate", "gen_throughput", "running_req", "queue_req")
PREFILL_METRICS = ("input_throughput",)


def rank_key(rank: str) -> tuple:
    """Natural order: TP2 before TP10, DP1 TP1 before DP10 TP10."""
    return tuple((int(p) if p.isdigit() else p) for p in re.split(r"(\d+)", rank))


@dataclass
class SeriesSummary:
    host: str | None
    rank: str
    engine: str
    decode_batches: int = 0
    graph_off: int = 0
    prefill_batches: int = 0
    first: float | None = None
    last: float | None = None
    decode: Rows = field(default_factory=lambda: Rows(DECODE_METRICS))
    prefill: Rows = field(default_factory=lambda: Rows(PREFILL_METRICS))

    def add(self, rec: BatchStats) -> None:
        f = rec.fields
        kind = rec.kind
        if kind == DECODE:
            self.decode_batches += 1
            if f.get("graph") is False:
                self.graph_off += 1
            self.decode.add(f)
        elif kind == SPEC:
            self.decode.add(f)
        elif kind == PREFILL:
            self.prefill_batches += 1
            self.prefill.add(f)
        ts = rec.ts
        if ts is not None:
            if self.first is None or ts < self.first:
                self.first = ts
            if self.last is None or ts > self.last:
                self.last = ts

    def merge(self, later: SeriesSummary) -> None:
        """Adds what the same series logged later (the next part of a file read in parallel)."""
        self.decode_batches += later.decode_batches
        self.graph_off += later.graph_off
        self.prefill_batches += later.prefill_batches
        self.decode.merge(later.decode)
        self.prefill.merge(later.prefill)
        for ts in (later.first, later.last):
            if ts is not None:
                self.first = ts if self.first is None or ts < self.first else self.first
                self.last = ts if self.last is None or ts > self.last else self.last

    def to_json(self) -> dict:
        dec = {"batches": self.decode_batches, "graph_off": self.graph_off, **self.decode.describe()}
        pre = {"batches": self.prefill_batches, **self.prefill.describe()}
        return {"host": self.host, "rank": self.rank, "engine": self.engine, "decode": dec,
                "prefill": pre, "first": self.first, "last": self.last}


class Summary:
    """A sink for records, with an optional time range [since, until]."""

    def __init__(self, since: float | None = None, until: float | None = None) -> None:
        self.since = since
        self.until = until
        self.series: dict[tuple, SeriesSummary] = {}
        self.events: list[Event] = []
        self.epochs = EpochTracker()
        self._last_ts = 0.0  # for records without a time of their own

    def _in_range(self, ts: float | None) -> bool:
        if self.since is None and self.until is None:
            return True
        if ts is None:
            return False
        if self.since is not None and ts < self.since:
            return False
        return self.until is None or ts <= self.until

    def add_batch(self, rec: BatchStats) -> None:
        if (self.since is not None or self.until is not None) and not self._in_range(rec.ts):
            return
        key = (rec.host, rec.rank, rec.engine)
        s = self.series.get(key)
        if s is None:
            s = self.series[key] = SeriesSummary(rec.host, rec.rank, rec.engine)
        s.add(rec)
        self.epochs.add_batch(rec, self._time(rec.ts))

    def add_event(self, ev: Event) -> None:
        if self._in_range(ev.ts):
            self.events.append(ev)
            self.epochs.add_event(ev, self._time(ev.ts))

    def _time(self, ts: float | None) -> float:
        """The record's time, or for one without, the last time seen (epochs need some time)."""
        if ts is None:
            return self._last_ts
        self._last_ts = ts
        return ts

    def ordered(self) -> list[SeriesSummary]:
        return sorted(self.series.values(), key=lambda s: (s.host or "", rank_key(s.rank), s.engine))

    def to_json(self, lines: dict) -> dict:
        return {
            "series": [s.to_json() for s in self.ordered()],
            "events": [e.to_json() for e in self.events],
            "epochs": [e.to_json() for e in self.epochs.all()],
            "lines": lines,
        }
