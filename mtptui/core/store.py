"""The dashboard's memory: per host x rank ring buffers, epochs between restarts, events.

A sink for ``Ingest``. Views read it on their own tick; nothing here knows about a screen.

Besides the rings (the newest samples, timed), each rank keeps what covers everything it logged,
in memory that does not grow: its exact statistics (value sets, as `summary` counts them) and an
overview (means over spans of time, for a chart of the whole span). The compiled lane writes the
rows of SGLang's batch lines into a rank's buffer (``lane_columns``); ``settle()`` hands them on in
bulk, so a file is read into the store at summary's pace (sources/opener.py reads one in parts).
"""

from __future__ import annotations

import math
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any

from mtptui.core.adaptive import drafts_per_step
from mtptui.core.records import DECODE, SGLANG, SPEC, TIME, BatchStats, Event
from mtptui.core.epochs import EPOCH_EVENTS, UNRESOLVED, Epoch, EpochTracker, rank_key, spec_label
from mtptui.core.loadmatch import MATCH_FIELDS
from mtptui.core.series import Overview, Ring
from mtptui.core.stats import describe
from mtptui.core.summary import DECODE_METRICS
from mtptui.core.valueset import Rows

if TYPE_CHECKING:
    from mtptui.core._compiled import Lane

__all__ = ["Store", "RankSeries", "Epoch", "spec_label"]

DECODE_COLUMNS = ("accept_len", "accept_rate", "gen_throughput", "running_req", "queue_req",
                  "token_usage", "graph")
PREFILL_COLUMNS = ("input_throughput", "new_token", "cached_token")
# The rows the compiled lane writes: the time, the ring's columns, the pool a hybrid model's lines
# give instead of token usage, and what the epochs' buckets read besides.
CARRIED = ("full_token_usage", *(f for f in MATCH_FIELDS if f not in DECODE_COLUMNS))
LANE_DECODE = (TIME, *DECODE_COLUMNS, *CARRIED)
LANE_PREFILL = (TIME, *PREFILL_COLUMNS)
LANE_FOLD = 4096  # rows a buffer holds before they are handed on
WHOLE_METRICS = (*DECODE_METRICS, "token_usage")  # summary's series statistics, and the KV use


def _row(fields: dict[str, Any], columns: tuple[str, ...]) -> Iterator[float]:
    """A line's values of these columns, NaN where it lacked one: one for every column, however
    many (a tuple of NaNs as the default ran out once a ninth column came, and shortened the row)."""
    return map(fields.get, columns, repeat(math.nan))


@dataclass(eq=False)
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
    first_batch_ts: float | None = None  # ... and of the oldest, long gone from the rings maybe
    last_arrival: float | None = None  # wall time when it arrived
    spec_seen: bool = False  # some decode line carried accept len
    _last_spec_slot: int | None = None
    # every decode value it logged, counted (summary's series statistics), and the whole span
    whole: Rows = field(init=False)
    overview: Overview = field(init=False)
    # the compiled lane's rows (LANE_DECODE, LANE_PREFILL), and what it counted, until fold()
    lane_decode: array[float] = field(init=False)
    lane_prefill: array[float] = field(init=False)
    _lane_counts: list[int] = field(init=False)  # decode batches, prefill batches, graph off
    epoch: Epoch | None = None  # the host's current epoch: folded decode rows count there
    # (log time, K) of each vLLM SpecDecoding line that says its drafts per step (core/adaptive.py),
    # and of each switch of SGLang's adaptive controller (the steps it uses from then on)
    steps: deque[tuple[float, float]] = field(init=False)
    switches: deque[tuple[float, float]] = field(init=False)
    newest: Callable[[float], None] | None = None  # the store's note of the newest log time, for what the lane read

    def __post_init__(self) -> None:
        self.decode = Ring(DECODE_COLUMNS, self.capacity)
        self.prefill = Ring(PREFILL_COLUMNS, self.capacity)
        self.whole = Rows(WHOLE_METRICS, tally=True)  # exact sums kept as values come: panels read them often
        self.overview = Overview(DECODE_COLUMNS)
        self.lane_decode, self.lane_prefill = array("d"), array("d")
        self._lane_counts = [0, 0, 0]
        self.steps = deque(maxlen=self.capacity)
        self.switches = deque(maxlen=self.capacity)

    def window(self, metric: str, t0: float | None = None, t1: float | None = None) -> tuple[list[float], list[float]]:
        ring = self.prefill if metric in PREFILL_COLUMNS else self.decode
        return ring.window(metric, t0, t1)

    def stats(self, metric: str, t0: float | None = None, t1: float | None = None) -> dict[str, Any] | None:
        return describe(self.window(metric, t0, t1)[1])

    def add_row(self, rec: BatchStats, ts: float) -> bool:
        """A decode or prefill record from the Python path, buffered as the lane buffers its rows
        (so both come out in log order); True when the buffer is due to be folded."""
        f = rec.fields
        if rec.kind == DECODE:
            buf = self.lane_decode
            buf.append(ts)
            buf.extend(_row(f, DECODE_COLUMNS[:-1]))
            g = f.get("graph")  # a bool, stored as 1.0 / 0.0
            buf.append(math.nan if g is None else float(g))
            buf.extend(_row(f, CARRIED))
            self._lane_counts[0] += 1
            if g is False:
                self._lane_counts[2] += 1
            return len(buf) >= LANE_FOLD * len(LANE_DECODE)
        buf = self.lane_prefill
        buf.append(ts)
        buf.extend(_row(f, PREFILL_COLUMNS))
        self._lane_counts[1] += 1
        return len(buf) >= LANE_FOLD * len(LANE_PREFILL)

    def lane_rows(self, kind: str) -> tuple[array[float], int, Callable[[], int]]:
        """(row buffer, the length at which to fold, the fold) for the compiled lane."""
        if kind == DECODE:
            return self.lane_decode, LANE_FOLD * len(LANE_DECODE), self.fold
        return self.lane_prefill, LANE_FOLD * len(LANE_PREFILL), self.fold

    def lane_add(self, kind: str, n: int, graph_off: int, graph_on: int, first: float, last: float) -> None:
        c = self._lane_counts
        if kind == DECODE:
            c[0] += n
            c[2] += graph_off
        else:
            c[1] += n
        if self.last_batch_ts is None or last > self.last_batch_ts:
            self.last_batch_ts = last
        if self.first_batch_ts is None or first < self.first_batch_ts:
            self.first_batch_ts = first
        if self.newest is not None:
            self.newest(last)

    def fold(self) -> int:
        """Hands the buffered rows on in columns: to the rings, the whole-span statistics and
        overview, and (the decode rows) to the current epoch, with the counts. Returns the rows
        folded."""
        if not (self.lane_decode or self.lane_prefill or any(self._lane_counts)):
            return 0
        epoch = self.epoch
        n_dec, n_pre, off = self._lane_counts
        self._lane_counts = [0, 0, 0]
        self.decode_batches += n_dec
        self.prefill_batches += n_pre
        self.graph_off += off
        folded = 0
        buf = self.lane_prefill
        if buf:
            k = len(LANE_PREFILL)
            self.prefill.extend(buf[0::k], {c: buf[i::k] for i, c in enumerate(LANE_PREFILL) if i})
            folded += len(buf) // k
            del buf[:]
        buf = self.lane_decode
        if buf:
            k = len(LANE_DECODE)
            cols = {c: buf[i::k] for i, c in enumerate(LANE_DECODE)}
            times = cols.pop(TIME)
            full = cols["full_token_usage"]
            if any(v == v for v in full):  # a hybrid model's pool stands in
                usage = cols["token_usage"]
                for i, v in enumerate(usage):
                    if v != v:
                        usage[i] = full[i]
            self.decode.extend(times, cols)
            self.overview.add(times, cols)
            self.whole.add_columns(cols)
            if epoch is not None:
                epoch.rows(self.rank).add_columns(cols)
                for buckets in epoch.matched:  # by load and by context (loadmatch.py)
                    buckets.add_columns(*(cols[name] for name in buckets.scale.row))
            if not self.spec_seen and (any(v == v for v in cols["accept_len"])
                                       or any(v == v for v in cols["accept_rate"])):
                self.spec_seen = True
            last = len(times) - 1
            self._last_spec_slot = (None if cols["accept_len"][last] == cols["accept_len"][last]
                                    or cols["accept_rate"][last] == cols["accept_rate"][last]
                                    else self.decode.last_slot())
            folded += len(times)
            del buf[:]
        if epoch is not None:
            epoch.records += n_dec + n_pre
            epoch.batches += n_dec
        return folded

    def merge(self, later: RankSeries) -> None:
        """Adds what the same rank logged later (the next part of a file read in parallel); both folded."""
        for mine, theirs in ((self.decode, later.decode), (self.prefill, later.prefill)):
            times, cols = theirs.raw_windows(theirs.columns)
            mine.extend(times, cols)
        self.whole.merge(later.whole)
        self.overview.merge(later.overview)
        self.decode_batches += later.decode_batches
        self.prefill_batches += later.prefill_batches
        self.graph_off += later.graph_off
        self.spec_seen = self.spec_seen or later.spec_seen
        self.steps.extend(later.steps)
        self.switches.extend(later.switches)
        if later.last_batch_ts is not None:
            self.last_batch_ts = later.last_batch_ts
        if self.first_batch_ts is None:
            self.first_batch_ts = later.first_batch_ts
        self._last_spec_slot = None



class Store:
    def __init__(self, capacity: int = 4096, max_events: int = 5000, clock: Callable[[], float] = time.time) -> None:
        self.capacity = capacity
        self.clock = clock
        self._by_key: dict[tuple[str | None, str], RankSeries] = {}
        self.events: deque[Event] = deque(maxlen=max_events)
        # Exact sums kept as values come: the epoch strip reads every epoch's means each second.
        self._epochs = EpochTracker(tally=True)
        self.spec: dict[str | None, dict] = self._epochs.spec  # host -> latest server_args settings
        self.last_ts: float | None = None  # newest log time seen anywhere
        self._named: dict[str, None] = {}  # hosts a source named before any of their lines came
        self.version = 0  # bumped on every change; views redraw only when it moved
        self._host_series: dict[str | None, list[RankSeries]] = {}
        self._dirty: dict[RankSeries, None] = {}  # ranks with buffered rows, until fold()
        self.lane: Lane | None = None  # the compiled lane writing into the ranks' buffers, when one does
        self._lane_read = 0  # its count of batch lines at the last settle()

    # Readers see every row read so far: buffered rows are folded first.
    @property
    def series(self) -> dict[tuple[str | None, str], RankSeries]:
        if self._dirty or (self.lane is not None and self.lane.batches != self._lane_read):
            self.fold()
        return self._by_key

    @property
    def epochs(self) -> dict[str | None, list[Epoch]]:
        if self._dirty or (self.lane is not None and self.lane.batches != self._lane_read):
            self.fold()
        return self._epochs.epochs

    # -- sink interface ------------------------------------------------------------------------
    def _series(self, host: str | None, rank: str, engine: str, ts: float) -> RankSeries:
        s = self._by_key.get((host, rank))
        if s is None:
            s = self._by_key[(host, rank)] = RankSeries(host, rank, engine, self.capacity)
            s.epoch = self._epochs.open(host, ts)
            s.newest = self.lane_time
            self._host_series.setdefault(host, []).append(s)
        return s

    def add_batch(self, rec: BatchStats) -> None:
        if self.lane is not None:
            self.lane.flush()  # this record comes after what the lane read
        ts = rec.ts if rec.ts is not None else (self.last_ts if self.last_ts is not None else self.clock())
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts
        s = self._series(rec.host, rec.rank, rec.engine, ts)
        if rec.kind == SPEC:
            # vLLM prints acceptance on its own line after the throughput line: fold it into
            # that sample if it is still waiting for one, else make a sample of its own.
            f = rec.fields
            self._fold(s)
            slot = s._last_spec_slot
            if slot is not None:
                for m in ("accept_len", "accept_rate"):
                    if m in f:
                        s.decode.set(slot, m, float(f[m]))
                s._last_spec_slot = None
            else:
                s.decode.append(ts, {m: f[m] for m in ("accept_len", "accept_rate") if m in f})
            s.whole.add(f)
            s.spec_seen = True
            k = drafts_per_step(f)
            if k is not None:
                s.steps.append((ts, k))
            self._epochs.add_batch(rec, ts)
        elif s.add_row(rec, ts):
            self._fold(s)
        else:
            self._dirty[s] = None
        if s.last_batch_ts is None or ts > s.last_batch_ts:
            s.last_batch_ts = ts
        if s.first_batch_ts is None or ts < s.first_batch_ts:
            s.first_batch_ts = ts
        s.last_arrival = self.clock()
        self.version += 1

    def add_event(self, ev: Event) -> None:
        if self.lane is not None:
            self.lane.flush()
        ts = ev.ts if ev.ts is not None else (self.last_ts if self.last_ts is not None else self.clock())
        if ev.ts is None:
            ev.ts = ts
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts
        self.events.append(ev)
        if ev.kind == "spec_steps" and "steps" in ev.data:
            # its rank's (SGLang logs it on TP rank 0); a line without one: every rank of the host's
            ranks = [self._series(ev.host, ev.rank, SGLANG, ts)] if ev.rank else self._host_series.get(ev.host, [])
            for s in ranks:
                s.switches.append((ts, float(ev.data["steps"])))
        if ev.kind in EPOCH_EVENTS:
            series = self._host_series.get(ev.host, ())
            for s in series:
                self._fold(s)  # what came before the event belongs to the epoch before it
            self._epochs.add_event(ev, ts)
            current = self._epochs.current(ev.host)
            for s in series:
                s.epoch = current
        else:
            self._epochs.add_event(ev, ts)
        self.version += 1

    def _fold(self, s: RankSeries) -> None:
        s.fold()
        self._dirty.pop(s, None)

    def fold(self) -> None:
        """Hands every buffered row on (the views read the rings, epochs and statistics): on
        each tick of the screen, and at the end of a read."""
        todo: Iterable[RankSeries] = list(self._dirty)
        lane = self.lane
        if lane is not None:
            read = lane.batches
            if read != self._lane_read:  # the lane fills buffers without a word: every rank then
                self._lane_read = read
                lane.flush()
                todo = self._by_key.values()
        for s in todo:
            s.fold()
        self._dirty.clear()

    def seal(self) -> None:
        """fold(), and puts the value sets in the order their statistics need: a reader of a
        file's part does this on its own core, before the parts are joined."""
        self.fold()
        for s in self._by_key.values():
            s.whole.seal()
        for e in self._epochs.all():
            for rows in e.per_rank.values():
                rows.seal()

    # The compiled lane's way in (core/compiled.py): it writes SGLang's batch lines straight into
    # a rank's row buffer, and hands over the counts and the last time in bulk.
    def lane_columns(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return LANE_DECODE, LANE_PREFILL

    def lane_series(self, ts: float, host: str | None, rank: str) -> RankSeries:
        s = self._series(host, rank, SGLANG, ts)
        self._dirty[s] = None
        return s

    def lane_time(self, ts: float) -> None:
        if self.last_ts is None or ts > self.last_ts:
            self.last_ts = ts
        self.version += 1

    def __getstate__(self) -> dict:
        # sent from a parallel reader: with all the lane read, not the lane itself
        self.fold()
        for s in self._by_key.values():
            s.newest = None
        return {**self.__dict__, "lane": None, "clock": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for s in self._by_key.values():
            s.newest = self.lane_time

    def merge(self, later: Store, ranks_before: dict | None = None) -> None:
        """Adds the store of the input that came after this one's (the next part of a file read in
        parallel); `later` is used up. Its UNRESOLVED ranks (vLLM spec lines before any throughput
        line of its part) take the rank that `ranks_before` (host -> rank) says came before."""
        ranks_before = ranks_before or {}
        self.fold()
        later.fold()
        for (host, rank), s in later.series.items():
            if rank == UNRESOLVED:
                rank = s.rank = ranks_before.get(host, "")
            mine = self._by_key.get((host, rank))
            if mine is None:
                s.newest = self.lane_time
                self._by_key[(host, rank)] = s
                self._host_series.setdefault(host, []).append(s)
            else:
                mine.merge(s)
        self.events.extend(later.events)
        self._epochs.merge(later._epochs, ranks_before)
        for s in self._by_key.values():
            s.epoch = self._epochs.current(s.host)
        for host in later._named:
            self._named.setdefault(host, None)
        if later.last_ts is not None and (self.last_ts is None or later.last_ts > self.last_ts):
            self.last_ts = later.last_ts
        self.version += 1

    # -- queries for the views -----------------------------------------------------------------
    def name_host(self, host: str) -> None:
        """A host the session streams from, shown (by name, with no data yet) before its first line."""
        if host not in self._named:
            self._named[host] = None
            self.version += 1

    def hosts(self) -> list[str | None]:
        seen: dict[str | None, None] = {}
        seen.update(self._named)
        for h, _ in self._by_key:
            seen.setdefault(h, None)
        for h in self._epochs.epochs:
            seen.setdefault(h, None)
        return list(seen)

    def ranks(self, host: str | None) -> list[RankSeries]:
        if self._dirty or (self.lane is not None and self.lane.batches != self._lane_read):
            self.fold()
        return sorted((s for (h, _), s in self._by_key.items() if h == host), key=lambda s: rank_key(s.rank))

    def current_epoch(self, host: str | None) -> Epoch | None:
        epochs = self.epochs.get(host)
        return epochs[-1] if epochs else None
