"""`mtptui summary`: whole-input statistics per host and rank, as a table or as JSON.

Unlike the dashboard's store, this counts every value (see valueset.py) so percentiles are
exact over the whole input, in memory that stops growing; its events wait on disk (eventlog.py).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from mtptui.core.compare import Comparison, EpochRow, compared
from mtptui.core.epochs import EPOCH_EVENTS, EPOCH_METRICS, UNRESOLVED, Epoch, EpochTracker, crash_loops, rank_key
from mtptui.core.eventlog import EventLog
from mtptui.core.jsontext import dumps
from mtptui.core.loadmatch import MATCH_FIELDS
from mtptui.core.recorded import Recorded
from mtptui.core.records import DECODE, PREFILL, SGLANG, SPEC, BatchStats, Event
from mtptui.core.services import service_totals
from mtptui.core.valueset import Rows

DECODE_METRICS = ("accept_len", "accept_rate", "gen_throughput", "running_req", "queue_req")
# what a decode row carries besides its metrics: the fields the epoch's buckets read (loadmatch.py)
DECODE_CARRIED = tuple(f for f in MATCH_FIELDS if f not in DECODE_METRICS)
PREFILL_METRICS = ("input_throughput",)
# An epoch's rows of a rank carry the rest of a decode row: they take the series' rows as they are
# (Rows.add_rows), a run's statistics then described from them when it is over (Epoch.freeze)
EPOCH_CARRIED = tuple(f for f in DECODE_METRICS + DECODE_CARRIED if f not in EPOCH_METRICS)
# an epoch's rows of a rank hold what a series' decode row holds, in its order (Rows.add_rows copies them whole)
assert EPOCH_METRICS + EPOCH_CARRIED == DECODE_METRICS + DECODE_CARRIED, "an epoch's rows are a series' decode rows"


@dataclass
class SeriesSummary:
    host: str | None
    rank: str
    engine: str
    decode_batches: int = 0
    # decode batches that said they ran with and without CUDA graphs: a line without the field
    # (vLLM's, old SGLang's) is neither, so a log that never says shows no graph state at all
    graph_off: int = 0
    graph_on: int = 0
    prefill_batches: int = 0
    spec_records: int = 0  # vLLM spec lines (their values join the decode rows)
    # first and last log time; the sentinels keep the per-line test to two comparisons
    first_ts: float = math.inf
    last_ts: float = -math.inf
    decode: Rows = field(default_factory=lambda: Rows(DECODE_METRICS, carried=DECODE_CARRIED))
    prefill: Rows = field(default_factory=lambda: Rows(PREFILL_METRICS))
    # The epoch now running on this host: buffered rows and counts go to it when folded, so the
    # per-line path feeds one buffer, not two (folds happen before every epoch change).
    epoch: Epoch | None = None
    # While every value of the series belongs to its epoch (no restart since it began), the
    # epoch's copy is made once, by hand_over(), instead of counting each value twice.
    epoch_whole: bool = True
    # the counts and decode rows already handed to an epoch: a hand-over gives what grew since
    _records_folded: int = 0
    _batches_folded: int = 0
    _at: int = 0  # the decode row buffer's length when the epoch last had its rows

    @property
    def first(self) -> float | None:
        return None if self.first_ts == math.inf else self.first_ts

    @property
    def last(self) -> float | None:
        return None if self.last_ts == -math.inf else self.last_ts

    @property
    def records(self) -> int:
        return self.decode_batches + self.prefill_batches + self.spec_records

    def add(self, rec: BatchStats) -> None:
        f = rec.fields
        kind = rec.kind
        if kind == DECODE or kind == SPEC:
            if kind == DECODE:
                self.decode_batches += 1
                graph = f.get("graph")
                if graph is False:
                    self.graph_off += 1
                elif graph is True:
                    self.graph_on += 1
            else:
                self.spec_records += 1
            d = self.decode
            buf = d.buf
            buf.extend(map(f.get, d.names, d.nans))
            if len(buf) >= d.limit:
                self.fold()
        elif kind == PREFILL:
            self.prefill_batches += 1
            self.prefill.add(f)
        ts = rec.ts
        if ts is not None:
            if ts < self.first_ts:
                self.first_ts = ts
            if ts > self.last_ts:
                self.last_ts = ts

    def lane_rows(self, kind: str) -> tuple:
        """(row buffer, the length at which it must be folded, the fold) of one kind of batch,
        for the compiled lane, which appends rows as add() does."""
        if kind == DECODE:
            return self.decode.buf, self.decode.limit, self.fold
        return self.prefill.buf, self.prefill.limit, self.prefill.fold

    def lane_add(self, kind: str, n: int, graph_off: int, graph_on: int, first: float, last: float) -> None:
        """Counts n batches of one kind whose rows the lane appended, as add() counts them."""
        if kind == DECODE:
            self.decode_batches += n
            self.graph_off += graph_off
            self.graph_on += graph_on
        else:
            self.prefill_batches += n
        if first < self.first_ts:
            self.first_ts = first
        if last > self.last_ts:
            self.last_ts = last

    def _hand_over_rows(self) -> None:
        """Gives the epoch the decode rows added since it last had some (the end of the row
        buffer, from _at), and the counts. The series' own value sets take the rows later, when
        the buffer is full or the figures are read (fold()): a restart every few lines then
        costs a copy of those lines, not a pass of every value set."""
        d = self.decode
        buf = d.buf
        at = self._at
        if len(buf) == at and self.records == self._records_folded:
            return  # nothing since (the second of a restart's two lines: `Started`, then its settings)
        # the buffer is folded by fold() alone while rows come (Summary.fold() folds the rest)
        assert len(buf) >= at, "decode rows were folded before their epoch had them"
        self._at = len(buf)
        epoch = self.epoch
        if epoch is None:
            return
        if len(buf) > at:
            if self.epoch_whole:  # its ranks' rows: a copy of the series' value sets (hand_over()); its buckets take these
                rows = buf if at == 0 else buf[at:]
                for buckets in epoch.matched:
                    buckets.add_rows(rows, d.names)
            else:  # the rows whole, for its ranks and its buckets (which pair a line's load with its throughput)
                epoch.take_rows(self.rank, memoryview(buf)[at:], d.names)
        records, batches = self.records, self.decode_batches
        epoch.records += records - self._records_folded
        epoch.batches += batches - self._batches_folded
        self._records_folded, self._batches_folded = records, batches

    def fold(self) -> None:
        """Hands what was added since the last fold to the epoch and to the value sets."""
        self._hand_over_rows()
        self.decode.fold()
        self._at = 0

    def hand_over(self) -> None:
        """Hands the epoch what it has not had yet (before the epoch changes, and before results
        are read or sent): the rows since the last hand-over, or, while every value of the
        series is the epoch's, a copy of them all, made once."""
        self._hand_over_rows()
        if self.epoch_whole and self.epoch is not None:
            self.epoch.rows(self.rank).add_copy(self.decode)  # which folds the series' rows
            self._at = 0
            self.epoch_whole = False

    def merge(self, later: SeriesSummary) -> None:
        """Adds what the same series logged later (the next part of a file read in parallel)."""
        self.fold()
        later.fold()
        # what the later part counted went to its own epochs, which are merged with the epochs
        self._records_folded += later.records
        self._batches_folded += later.decode_batches
        self.decode_batches += later.decode_batches
        self.graph_off += later.graph_off
        self.graph_on += later.graph_on
        self.prefill_batches += later.prefill_batches
        self.spec_records += later.spec_records
        self.decode.merge(later.decode)
        self.prefill.merge(later.prefill)
        self.first_ts = min(self.first_ts, later.first_ts)
        self.last_ts = max(self.last_ts, later.last_ts)

    def to_json(self) -> dict:
        dec = {"batches": self.decode_batches, "graph_off": self.graph_off, "graph_on": self.graph_on, **self.decode.describe()}
        pre = {"batches": self.prefill_batches, **self.prefill.describe()}
        return {"host": self.host, "rank": self.rank, "engine": self.engine, "decode": dec,
                "prefill": pre, "first": self.first, "last": self.last}


class Summary:
    """A sink for records, with an optional time range [since, until]."""

    def __init__(self, since: float | None = None, until: float | None = None,
                 events: EventLog | None = None) -> None:
        self.since = since
        self.until = until
        self._ranged = since is not None or until is not None
        self.series: dict[tuple, SeriesSummary] = {}
        self._host_series: dict[str | None, list[SeriesSummary]] = {}
        self.events = events if events is not None else EventLog()
        self.epochs = EpochTracker()
        self._last_ts = 0.0  # for records without a time of their own
        # The compiled lane writing into these series (compiled.lane_for), or None: the counts
        # and the last time of what it read wait in it until something here needs them.
        self.lane = None
        self.recorded = Recorded()  # the record's own entries: its scrapes and GPU samples

    def _in_range(self, ts: float | None) -> bool:
        if self.since is None and self.until is None:
            return True
        if ts is None:
            return False
        if self.since is not None and ts < self.since:
            return False
        return self.until is None or ts <= self.until

    def add_batch(self, rec: BatchStats) -> None:
        if self._ranged and not self._in_range(rec.ts):
            return
        if self.lane is not None:
            self.lane.sync_time()  # this record comes after what the lane read
        s = self.series.get((rec.host, rec.rank, rec.engine))
        if s is None:
            s = self._new_series(rec.host, rec.rank, rec.engine, rec.ts)
        s.add(rec)
        if rec.ts is not None:
            self._last_ts = rec.ts

    def _new_series(self, host: str | None, rank: str, engine: str, ts: float | None) -> SeriesSummary:
        s = SeriesSummary(host, rank, engine)
        s.epoch = self.epochs.open(host, self._time(ts))
        self.series[(host, rank, engine)] = s
        self._host_series.setdefault(host, []).append(s)
        return s

    # The compiled lane's way in (core/compiled.py): it writes SGLang batch lines' values into
    # the rows of the series itself, and hands over the counts and the last time in bulk.
    def lane_columns(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """The fields of a decode row and of a prefill row, or None when the summary keeps a
        time range (the lane does not filter)."""
        return None if self._ranged else (DECODE_METRICS + DECODE_CARRIED, PREFILL_METRICS)

    def lane_series(self, ts: float, host: str | None, rank: str) -> SeriesSummary:
        """The series of SGLang's batch lines of this host and rank, made (at a line of time ts)
        as add_batch makes it."""
        s = self.series.get((host, rank, SGLANG))
        return s if s is not None else self._new_series(host, rank, SGLANG, ts)

    def __getstate__(self) -> dict:
        # sent from a parallel reader: with all that the lane read, not the lane itself
        self.fold()
        return {**self.__dict__, "lane": None}

    def lane_time(self, ts: float) -> None:
        """The time of the last line the lane read (the time of later records without one)."""
        self._last_ts = ts

    def add_event(self, ev: Event) -> None:
        if not self._in_range(ev.ts):
            return
        if self.lane is not None:
            if ev.kind in EPOCH_EVENTS:
                self.lane.flush()  # the epoch before it gets all that the lane read before it
            else:
                self.lane.sync_time()
        self.events.append(ev)
        ts = self._time(ev.ts)
        if ev.kind in EPOCH_EVENTS:
            series = self._host_series.get(ev.host, ())
            for s in series:
                s.hand_over()  # what came before the event belongs to the epoch before it
            self.epochs.add_event(ev, ts)
            current = self.epochs.current(ev.host)
            for s in series:
                s.epoch = current
        else:
            self.epochs.add_event(ev, ts)  # how the run ends (Epoch.note_event)

    def add_recorded(self, key: str, host: str | None, payload: object) -> None:
        self.recorded.add(key, host, payload)

    def merge(self, later: Summary, ranks_before: dict | None = None) -> None:
        """Adds the summary of the input that came after this one's (the next part of a file read
        in parallel, or the next file); `later` is used up. Its UNRESOLVED records take the rank
        that `ranks_before` (host -> rank) says the input before ended on."""
        ranks_before = ranks_before or {}
        self.fold()
        later.fold()
        # the unresolved spec lines come first in their input, so their values are added first
        for key in [k for k in later.series if k[1] == UNRESOLVED]:
            host, _, engine = key
            self._add_series((host, ranks_before.get(host, ""), engine), later.series.pop(key))
        for key, s in later.series.items():
            self._add_series(key, s)
        self.events.extend(later.events)
        self.recorded.merge(later.recorded)
        self.epochs.merge(later.epochs, ranks_before)
        for s in self.series.values():
            s.epoch = self.epochs.current(s.host)  # later's epoch may have joined one of these

    def _add_series(self, key: tuple, s: SeriesSummary) -> None:
        mine = self.series.get(key)
        if mine is not None:
            mine.merge(s)
            return
        s.host, s.rank, s.engine = key
        self.series[key] = s
        self._host_series.setdefault(s.host, []).append(s)

    def fold(self) -> None:
        """Folds every series' buffered rows (before reading the results, or sending them)."""
        if self.lane is not None:
            self.lane.flush()
        for s in self.series.values():
            s.hand_over()
            s.fold()  # the rows in the series' own value sets too: what reads them reads those

    def seal(self) -> None:
        """fold(), and puts every value set in the order its statistics need: a reader of a
        file's part does this on its own core, before the parts are joined."""
        self.fold()
        # the input is read: the lane goes, and with it the cycle (it holds this sink), so that
        # reference counting frees a summary of 10,000 runs, not the cycle collector at exit
        self.lane = None
        for s in self.series.values():
            s.decode.seal()
            s.prefill.seal()
        for e in self.epochs.all():  # which freezes the runs that are over (EpochTracker.freeze)
            e.fold()  # the runs that go on: their rows in their value sets, on this core
            for rows in e.per_rank.values():
                rows.seal()

    def _share_descriptions(self) -> None:
        """An epoch that holds all of a series' values (a log without restarts) has the same
        statistics for it: computed once, not twice (they sort every value of a metric)."""
        for s in self.series.values():
            for e in self.epochs.epochs.get(s.host, ()):
                rows = e.per_rank.get(s.rank)  # a run that is over has none: it is described already
                if rows is not None:
                    s.decode.share_descriptions(rows)

    def _time(self, ts: float | None) -> float:
        """The record's time, or for one without, the last time seen (epochs need some time)."""
        if ts is None:
            return self._last_ts
        self._last_ts = ts
        return ts

    def ordered(self) -> list[SeriesSummary]:
        return sorted(self.series.values(), key=lambda s: (s.host or "", rank_key(s.rank), s.engine))

    def document(self, lines: dict, replicas: dict[str, str] | None = None) -> dict:
        """to_json() with the events left in their EventLog (iterate it for their dicts, or its
        json_texts() for their JSON): a week of journal has millions; and the epochs in an EpochDocs,
        made one at a time as they are read. replicas: host -> its compose service or workload
        (LineCounts.replicas), whose throughput `services` sums (core/services.py)."""
        self.fold()
        self._share_descriptions()  # first: describing puts values in order, and the check compares orders
        epochs = self.epochs.all()
        return {
            "series": [s.to_json() for s in self.ordered()],
            "events": self.events,
            "epochs": EpochDocs(epochs),
            "crash_loops": crash_loops({"host": e.host, "index": e.index, "start": e.start, "end": e.end,
                                        "ended": e.ending(e.end is None)} if e.may_have_crashed else _NO_CRASH
                                       for e in epochs),
            "services": service_totals(replicas or {}, self.epochs.epochs),
            "lines": lines,
        }

    def to_json(self, lines: dict, replicas: dict[str, str] | None = None) -> dict:
        """The `summary --json` document."""
        doc = self.document(lines, replicas=replicas)
        doc["events"] = list(doc["events"])
        doc["epochs"] = list(doc["epochs"])
        return doc


class EpochDocs:
    """The epochs of `summary --json` (Epoch.to_json() with compare.compared's figures), made one
    at a time each time they are read: 10,000 runs are written, compared and shown without
    10,000 documents in memory at once. Iterate it for the dicts, or json_texts() for their JSON,
    as an EventLog is read. Each pass that goes through keeps each host's last epoch (brief) and
    its row (last_rows()): what the advice is judged from, without comparing every run again."""

    def __init__(self, epochs: list[Epoch]) -> None:
        self._epochs = epochs
        self._last: dict[str | None, tuple[dict, EpochRow]] | None = None

    def __iter__(self) -> Iterator[dict]:
        return (compared(doc, row) for doc, row in self._pass(brief=False))

    def __len__(self) -> int:
        return len(self._epochs)

    def hosts(self) -> Counter[str | None]:
        """host -> its runs."""
        return Counter(e.host for e in self._epochs)

    def rows(self) -> Iterator[tuple[dict, EpochRow]]:
        """Each epoch, brief (Epoch.to_json(brief=True): each rank's n and mean, what the
        comparison reads), with its row, compared (_pass)."""
        return self._pass(brief=True)

    def _pass(self, brief: bool) -> Iterator[tuple[dict, EpochRow]]:
        """Each epoch (Epoch.to_json) with its row, compared with the epochs before it
        (compare.Comparison). A pass that goes through keeps each host's last epoch, brief (what
        the advice reads), and its row."""
        comparison = Comparison()
        last: dict[str | None, tuple[Epoch, EpochRow]] = {}
        for e in self._epochs:
            doc = e.to_json(brief=brief)
            row = comparison.row(doc)
            last[e.host] = (e, row)
            yield doc, row
        self._last = {host: (e.to_json(brief=True), row) for host, (e, row) in last.items()}

    def last_rows(self) -> dict[str | None, tuple[dict, EpochRow]]:
        """host -> its last epoch (brief) and its row, compared with every epoch before it: from
        the last pass that went through, else from one of its own."""
        if self._last is None:
            for _ in self._pass(brief=True):
                pass
        assert self._last is not None
        return self._last

    def json_texts(self) -> Iterator[bytes]:
        """Each epoch compared (compare.compared), as JSON (orjson), in order."""
        return (dumps(compared(doc, row)) for doc, row in self._pass(brief=False))


_NO_CRASH: dict = {}  # what crash_loops() reads of a run that cannot have crashed: no ending
