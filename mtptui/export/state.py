"""What `mtptui export` keeps of the sources' lines: the last batch figures of each rank, counts,
each host's epochs and speculation settings, and each stream's state.

`ExportState` is the sources' Feed (lines are parsed as they come, one `Ingest` per host so each
host's lines are counted apart) and the parser's sink. Nothing is kept per line: memory stays
flat however long it runs. Of the epochs, only each host's current one is kept, and without
values (the metrics serve its start and settings, and last values, never an epoch's statistics);
those before it are counted as restarts. Beside the logs, each host's newest /metrics scrape
(export/scrape.py) is kept for the server's own counters. The HTTP thread reads it under `lock`
while the sources' loop writes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mtptui.core.epochs import EpochTracker
from mtptui.core.ingest import Ingest
from mtptui.core.latency import Scrape
from mtptui.core.records import DECODE, PREFILL, BatchStats, Event, token_usage
from mtptui.sources.base import Feed, SourceStatus

# A rank's figures are those of its last batch lines, as a server's own gauges are: any batch line
# sets the request counts and the pool usage; a decode line sets these, or drops the ones it lacks
# (vLLM's spec line, which follows its throughput line, sets the acceptance).
DECODE_ONLY = ("accept_len", "accept_rate", "gen_throughput", "per_position_accept_rate")
# what a spec line (vLLM's) sets: its acceptance, and its acceptance at each draft position
SPEC_FIELDS = ("accept_len", "accept_rate", "per_position_accept_rate")
# Event kinds counted, under the names the metrics use (a `failed` unit is a crash too).
EVENT_NAMES = {"ready": "ready", "oom": "oom", "nccl": "nccl", "crash": "crash", "failed": "crash", "error": "error",
               "retract": "retract", "watchdog": "watchdog"}


@dataclass
class RankState:
    values: dict[str, float | list[float]] = field(default_factory=dict)
    decode_batches: int = 0
    graph_off: int = 0  # decode batches that ran without CUDA graphs
    last_ts: float | None = None  # log time of the newest batch line
    last_arrival: float = 0.0  # wall time it arrived


@dataclass
class HostState:
    ingest: Ingest
    events: dict[str, int] = field(default_factory=lambda: dict.fromkeys(sorted(set(EVENT_NAMES.values())), 0))
    status: SourceStatus | None = None
    last_ts: float | None = None  # newest log time of a record (for records without a time)
    scrape: Scrape | None = None  # the server's newest /metrics, where it serves one


class ExportState:
    def __init__(self, hosts: list[str], *, inner: Feed | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.inner = inner  # told of status changes and drops too (the status lines on stderr)
        self.clock = clock
        self.lock = threading.Lock()
        self.epochs = EpochTracker()
        self.past_restarts: dict[str | None, int] = {}  # restarts of the epochs no longer kept
        self.ranks: dict[tuple[str | None, str], RankState] = {}
        self.hosts: dict[str | None, HostState] = {}
        for h in hosts:
            self._host(h)

    def _host(self, host: str | None) -> HostState:
        h = self.hosts.get(host)
        if h is None:
            h = self.hosts[host] = HostState(Ingest(self))
        return h

    # -- the Feed (called by the sources, on the loop) ----------------------------------------
    def lines(self, raw: list[str], host: str | None) -> None:
        with self.lock:
            self._host(host).ingest.feed_many(raw, host)

    def status(self, st: SourceStatus) -> None:
        with self.lock:
            self._host(st.host).status = st
        if self.inner is not None:
            self.inner.status(st)

    def dropped(self, n: int, reason: str, host: str | None) -> None:
        with self.lock:
            self._host(host).ingest.count_dropped(reason, n)
        if self.inner is not None:
            self.inner.dropped(n, reason, host)

    def server_scrape(self, host: str | None, scrape: Scrape | None) -> None:
        """The host's newest /metrics (export/scrape.py); None: none to serve any more."""
        with self.lock:
            self._host(host).scrape = scrape

    # -- the sink (called by Ingest, under the lock) ------------------------------------------
    def _time(self, host: HostState, ts: float | None) -> float:
        if ts is None:
            return host.last_ts if host.last_ts is not None else self.clock()
        if host.last_ts is None or ts > host.last_ts:
            host.last_ts = ts
        return ts

    def add_batch(self, rec: BatchStats) -> None:
        ts = self._time(self._host(rec.host), rec.ts)
        key = (rec.host, rec.rank)
        r = self.ranks.get(key)
        if r is None:
            r = self.ranks[key] = RankState()
        f, values = rec.fields, r.values
        usage = token_usage(f)
        if usage is not None:
            values["token_usage"] = usage
        for k in ("running_req", "queue_req"):
            if k in f:
                values[k] = f[k]
        if rec.kind == DECODE:
            for k in DECODE_ONLY:
                if k in f:
                    values[k] = f[k]
                else:
                    values.pop(k, None)
            r.decode_batches += 1
            if f.get("graph") is False:
                r.graph_off += 1
        elif rec.kind != PREFILL:  # vLLM's spec line: the acceptance of the line before
            for k in SPEC_FIELDS:
                if k in f:
                    values[k] = f[k]
        self.epochs.open(rec.host, ts).records += 1  # counted (a later server_args is a new process), not kept
        r.last_ts = ts
        r.last_arrival = self.clock()

    def add_event(self, ev: Event) -> None:
        h = self._host(ev.host)
        ts = self._time(h, ev.ts)
        name = EVENT_NAMES.get(ev.kind)
        if name is not None:
            h.events[name] += 1
        self.epochs.add_event(ev, ts)
        epochs = self.epochs.epochs.get(ev.host)
        if epochs and len(epochs) > 1:
            past = self.past_restarts.get(ev.host, 0)
            self.past_restarts[ev.host] = past + sum(e.reason != "first seen" for e in epochs[:-1])
            del epochs[:-1]

    # -- for the collector (under the lock) ---------------------------------------------------
    def restarts(self, host: str | None) -> int:
        """Epochs that began with a restart: systemd's `Started`, or a new server process."""
        return self.past_restarts.get(host, 0) + sum(e.reason != "first seen" for e in self.epochs.epochs.get(host, ()))
