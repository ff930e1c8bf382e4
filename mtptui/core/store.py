"""The dashboard's memory: per host x rank ring buffers, epochs between restarts, events.

A sink for ``Ingest``. Views read it on their own tick; nothing here knows about a screen.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from mtptui.core.records import DECODE, PREFILL, SPEC, BatchStats, Event, token_usage
from mtptui.core.epochs import Epoch, EpochTracker, rank_key, spec_label
from mtptui.core.series import Ring
from mtptui.core.stats import describe

__all__ = ["Store", "RankSeries", "Epoch", "spec_label", "ALL_HOSTS"]

DECODE_COLUMNS = ("accept_len", "accept_rate", "gen_throughput", "running_req", "queue_req",
                  "token_usage", "graph")
PREFILL_COLUMNS = ("input_throughput", "new_token", "cached_token")
ALL_HOSTS = object()  # for host_events: every host, as opposed to host None (logs without one)


@dataclass
class RankSeries:
    host: str | None
    rank: str
    engine: str
    capacity: int
    decode: Ring = field(init=False)
    prefill: Ring = field(init=False)
    decode_batches: int = 0
    prefill_batches: int = 0
    graph_off: int = 0
    last_batch_ts: float | None = None  # log time of the newest batch
    last_arrival: float | None = None  # wall time when it arrived
    spec_seen: bool = False  # some decode line carried accept len
    _last_spec_slot: int | None = None

    def __post_init__(self) -> None:
        self.decode = Ring(DECODE_COLUMNS, self.capacity)
        self.prefill = Ring(PREFILL_COLUMNS, self.capacity)

    def window(self, metric: str, t0: float | None = None, t1: float | None = None):
        ring = self.prefill if metric in PREFILL_COLUMNS else self.decode
        return ring.window(metric, t0, t1)

    def stats(self, metric: str, t0: float | None = None, t1: float | None = None) -> dict | None:
        return describe(self.window(metric, t0, t1)[1])


class Store:
    def __init__(self, capacity: int = 4096, max_events: int = 5000, clock=time.time) -> None:
        self.capacity = capacity
        self.clock = clock
        self.series: dict[tuple[str | None, str], RankSeries] = {}
        self.events: deque[Event] = deque(maxlen=max_events)
        # Exact sums kept as values come: the epoch strip reads every epoch's means each second.
        self._epochs = EpochTracker(tally=True)
        self.epochs: dict[str | None, list[Epoch]] = self._epochs.epochs
        self.spec: dict[str | None, dict] = self._epochs.spec  # host -> latest server_args settings
        self.last_ts: float | None = None  # newest log time seen anywhere
        self._named: dict[str, None] = {}  # hosts a source named before any of their lines came
        self.version = 0  # bumped on every change; views redraw only when it moved

    # -- sink interface ------------------------------------------------------------------------
    def add_batch(self, rec: BatchStats) -> None:
        ts = rec.ts if rec.ts is not None else (self.last_ts if self.last_ts is not None else self.clock())
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts
        key = (rec.host, rec.rank)
        s = self.series.get(key)
        if s is None:
            s = self.series[key] = RankSeries(rec.host, rec.rank, rec.engine, self.capacity)
        f = rec.fields
        self._epochs.add_batch(rec, ts)
        if rec.kind == DECODE:
            values = f
            if "token_usage" not in f and "full_token_usage" in f:
                values = {**f, "token_usage": token_usage(f)}
            g = f.get("graph")  # a bool, stored as 1.0 / 0.0
            slot = s.decode.append(ts, values)
            s.decode_batches += 1
            if g is False:
                s.graph_off += 1
            if "accept_len" in f or "accept_rate" in f:
                s.spec_seen = True
            s._last_spec_slot = None if ("accept_len" in f or "accept_rate" in f) else slot
        elif rec.kind == SPEC:
            # vLLM prints acceptance on its own line after the throughput line: fold it into
            # that sample if it is still waiting for one, else make a sample of its own.
            slot = s._last_spec_slot
            if slot is not None:
                for m in ("accept_len", "accept_rate"):
                    if m in f:
                        s.decode.set(slot, m, float(f[m]))
                s._last_spec_slot = None
            else:
                s.decode.append(ts, {m: f[m] for m in ("accept_len", "accept_rate") if m in f})
            s.spec_seen = True
        elif rec.kind == PREFILL:
            s.prefill.append(ts, f)
            s.prefill_batches += 1
        s.last_batch_ts = ts
        s.last_arrival = self.clock()
        self.version += 1

    def add_event(self, ev: Event) -> None:
        ts = ev.ts if ev.ts is not None else (self.last_ts if self.last_ts is not None else self.clock())
        if ev.ts is None:
            ev.ts = ts
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts
        self.events.append(ev)
        self._epochs.add_event(ev, ts)
        self.version += 1

    # -- queries for the views -----------------------------------------------------------------
    def name_host(self, host: str) -> None:
        """A host the session streams from, shown (by name, with no data yet) before its first line."""
        if host not in self._named:
            self._named[host] = None
            self.version += 1

    def hosts(self) -> list[str | None]:
        seen: dict[str | None, None] = dict(self._named)
        for h, _ in self.series:
            seen.setdefault(h, None)
        for h in self.epochs:
            seen.setdefault(h, None)
        return list(seen)

    def ranks(self, host: str | None) -> list[RankSeries]:
        return sorted((s for (h, _), s in self.series.items() if h == host), key=lambda s: rank_key(s.rank))

    def host_events(self, host=ALL_HOSTS, t0: float | None = None, t1: float | None = None) -> list[Event]:
        return [e for e in self.events if (host is ALL_HOSTS or e.host == host)
                and (t0 is None or (e.ts is not None and e.ts >= t0))
                and (t1 is None or (e.ts is not None and e.ts <= t1))]

    def current_epoch(self, host: str | None) -> Epoch | None:
        epochs = self.epochs.get(host)
        return epochs[-1] if epochs else None
