"""Epochs: the spans between restarts of a host's server, labelled with their speculation settings.

A host's epoch ends at a restart, seen as systemd's `Started UNIT`, or as a new `server_args=`
from a process that already logged batches or its own settings (a restart outside systemd, a
crash loop). Each epoch keeps running statistics per rank, so runs compare: did the retune help?
Used by the dashboard's store and by `summary`.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from operator import attrgetter
from typing import Any

from mtptui.core import figures
from mtptui.core.figures import Figures
from mtptui.core.loadmatch import Buckets, matched
from mtptui.core.parse import events
from mtptui.core.records import DECODE, SPEC, BatchStats, Event
from mtptui.core.valueset import Rows

EPOCH_METRICS = ("accept_len", "accept_rate", "gen_throughput")
# The rank of vLLM spec lines that come before any throughput line of their input: a reader that
# starts after other input (the next part of a file) cannot tell it; merging gives them the rank
# that the input before ended on.
UNRESOLVED = "\x00unresolved"
EPOCH_EVENTS = ("started", "spec_config")  # the events that may begin an epoch
# The events that tell where a run is: loading (none yet), serving (ready), or gone down.
LIFECYCLE_EVENTS = ("ready", "stopping", "stopped", "failed")
# The trouble that ends a run when nothing brings it back: its first one is why it crashed.
TROUBLE_EVENTS = ("crash", "oom", "nccl", "watchdog", "error")
TROUBLE_NAMES = {"crash": "process died", "oom": "OOM", "nccl": "NCCL", "watchdog": "watchdog timeout",
                 "error": "error"}
# How a run ended (Epoch.ending): these, with the first error of a crashed run.
MTPTUI, SYSTEMD, STOPPED, CRASHED, RUNNING, ENDED = (
    "restarted by mtptui", "restarted by systemd", "stopped", "crashed", "still running", "ended")
LOOP_WINDOW = 600.0  # a crashed run that starts within this of the one before it is in its crash loop
LOOP_RUNS = 3  # runs in a row that end in the same error: a crash loop
# Runs that are over are frozen this many at a time (EpochTracker.freeze): a crash loop's runs,
# 100 lines each, are described together, a few hundred in one pass of numpy
FREEZE_AT = 256
# A run's rows are kept as its series handed them over until this many (Epoch.take_rows), then
# folded into its ranks' Rows and its Buckets: a crash loop's run is never folded
TAKEN_ROWS = 1 << 14


@lru_cache(maxsize=4096)  # the ranks of 10,000 runs of a crash loop: a few tuples
def ranks_in_order(ranks: tuple[str, ...]) -> tuple[str, ...]:
    """Ranks in rank_key's order, as one tuple for all the runs that have them (kept by each)."""
    return tuple(sorted(ranks, key=rank_key))


def error_signature(kind: str, text: str) -> str:
    """An error as a crash loop repeats it: its numbers (pids, GPUs, sizes, addresses) left out."""
    return kind + ":" + re.sub(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?", "#", text)[:300]


@lru_cache(maxsize=4096)  # a few ranks, sorted in every epoch's document
def rank_key(rank: str) -> tuple:
    """Natural order: TP2 before TP10, DP1 TP1 before DP10 TP10."""
    return tuple((int(p) if p.isdigit() else p) for p in re.split(r"(\d+)", rank))


def rank_label(rank: str) -> str:
    """A rank as shown: its label, or `rank (TP=1)` for a server that logs without one."""
    return rank if rank else "rank (TP=1)"


def short_rank_labels(ranks: list[str]) -> dict[str, str]:
    """Shortest unambiguous names: `DP3 TP3 EP3` -> `DP3` when the DP token alone tells every
    rank apart (DP attention), else the full label."""
    if len(ranks) < 2:
        return {r: rank_label(r) for r in ranks}
    parts = [r.split() for r in ranks]
    n = min(len(p) for p in parts)
    for i in range(n):
        tokens = [p[i] for p in parts]
        if len(set(tokens)) == len(tokens):
            return dict(zip(ranks, tokens))
    return {r: rank_label(r) for r in ranks}


def algorithm_name(spec: dict) -> str:
    """SGLang rewrites NEXTN to EAGLE in server_args; a draft that is the target model itself is
    the checkpoint's own MTP head, which is what an operator calls MTP."""
    algo = str(spec.get("algorithm"))
    draft, model = spec.get("draft_model_path"), spec.get("model_path")
    if algo.upper() in ("EAGLE", "NEXTN") and draft and draft == model:
        return f"{algo} (MTP)"
    return algo


def spec_settings(spec: dict) -> str:
    """`EAGLE (MTP) steps=3 topk=1 draft=4` for settings with an algorithm, and how it adapts
    (adaptive_words)."""
    parts = [algorithm_name(spec)]
    for key, short in (("num_steps", "steps"), ("topk", "topk"), ("num_draft_tokens", "draft")):
        if spec.get(key) is not None:
            parts.append(f"{short}={spec[key]}")
    adapts = adaptive_words(spec)
    if adapts:
        parts.append(adapts)
    return " ".join(parts)


def adaptive_words(spec: dict) -> str | None:
    """How the settings adapt speculation inside the engine, or None where they do not say it:
    SGLang's `adaptive` (--speculative-adaptive), vLLM's per-batch-size `schedule`
    (`schedule=1-8:3,9-64:1,65+:0`), and `OFF` with why where the settings ask for it but the
    engine's documented fallback turns it off: SGLang runs static steps with DP attention or
    two-batch overlap (its adaptive_unsupported_reason, 0.5.11-0.5.23), vLLM drops the schedule
    with data parallel above 1 (VllmConfig._maybe_disable_dynamic_sd_for_data_parallel, 0.32)."""
    schedule = spec.get("schedule")
    if schedule:
        rows = [(a, b, k) for a, b, k in schedule]
        text = "schedule=" + ",".join(f"{a}-{b}:{k}" for a, b, k in rows)
        dp = spec.get("dp_size")
        return f"{text} (OFF: data parallel {dp})" if isinstance(dp, int) and dp > 1 else text
    if spec.get("adaptive") is True:
        off = [what for key, what in (("enable_dp_attention", "DP attention"),
                                      ("enable_two_batch_overlap", "two-batch overlap")) if spec.get(key) is True]
        return f"adaptive (OFF: {', '.join(off)})" if off else "adaptive"
    return None


def spec_label(spec: dict | None) -> str:
    """An epoch's label: its speculation settings, `spec off`, or `settings unknown`."""
    if not spec:
        return "settings unknown"
    if not spec.get("algorithm"):
        return "spec off"
    return spec_settings(spec)


@dataclass(slots=True)  # 10,000 runs of a crash loop each keep one
class Epoch:
    index: int
    host: str | None
    start: float
    end: float | None = None
    spec: dict = field(default_factory=dict)
    reason: str = "first seen"
    batches: int = 0  # decode batches
    records: int = 0  # every batch record (decode, prefill, vLLM spec)
    # rank -> every value of EPOCH_METRICS it logged in this epoch
    per_rank: dict[str, Rows] = field(default_factory=dict)
    # its decode lines by #running-req and by context, one Buckets per scale, for a comparison
    # at the same load and at the same context (loadmatch.py)
    matched: tuple[Buckets, ...] = field(default_factory=matched)
    # (time, kind) of its LIFECYCLE_EVENTS, in log order (the dashboard's store feeds them)
    lifecycle: list[tuple[float, str]] = field(default_factory=list)
    tally: bool = False  # its value sets keep exact sums as values come (ValueSet.tally): the dashboard
    # how it ended: its first trouble event (TROUBLE_EVENTS) and whether a ready came after it,
    # systemd's failure line, Scheduled restart job, a stop, mtptui's restart (with its profile)
    trouble: Event | None = None
    ready_after_trouble: bool = False
    # its first `crash` before any stop: a server or engine process died unasked, so the run crashed
    # whatever came after it (a stop, a ready of what was left)
    crash: Event | None = None
    failed: str | None = None
    auto_restart: bool = False
    stop: bool = False
    restart_requested: bool = False
    profile: str | None = None
    # Over for good: its figures, made once (freeze()), its rows and buckets let go
    figures: Figures | None = None
    # its label, once it is over: the one of the same settings (freeze()'s specs), made once
    kept_label: str | None = None
    # `summary`'s rows of it as its series handed them over (take_rows): (rank, the rows as
    # doubles, in the fields `taken_names`), not yet in its ranks' Rows and its Buckets (fold()).
    # A run of a crash loop stays so until its figures are made from them (freeze_runs).
    taken: list[tuple[str, bytes]] = field(default_factory=list)
    taken_names: tuple[str, ...] = ()
    taken_rows: int = 0

    def __reduce__(self) -> tuple:
        # a parallel reader sends its 5,000 runs over: the fields in one C call each way, where
        # a slotted dataclass's own state is a Python loop over 29 of them (0.04 s -> 0.02 s)
        return (Epoch, _epoch_fields(self))

    def take_rows(self, rank: str, rows: memoryview, names: tuple[str, ...]) -> None:
        """A rank's rows (summary's hand-over: rows of these fields, EPOCH_METRICS first), kept as
        they are until it is over or they are many (TAKEN_ROWS: then folded)."""
        if names != self.taken_names:
            self.fold()
            self.taken_names = names
        self.taken.append((rank, rows.tobytes()))
        self.taken_rows += len(rows) // len(names)
        if self.taken_rows >= TAKEN_ROWS:
            self.fold()

    def fold(self) -> None:
        """Hands the rows taken (take_rows) to its ranks' Rows and its Buckets: before they are
        read as those (to_json, a merge), and when they are many (a long run)."""
        if not self.taken:
            return
        names = self.taken_names
        carried = names[len(EPOCH_METRICS):]
        for rank, raw in self.taken:
            rows: array[float] = array("d")
            rows.frombytes(raw)
            self.rows(rank, carried).add_rows(rows, names)
            for b in self.matched:
                b.add_rows(rows, names)
        self.taken = []
        self.taken_rows = 0

    @property
    def ranks(self) -> list[str]:
        """Its ranks, in the order their rows came."""
        if not self.taken:
            return list(self.per_rank)
        return list(dict.fromkeys([*self.per_rank, *[rank for rank, _ in self.taken]]))

    def has_rank(self, rank: str) -> bool:
        return rank in self.per_rank or any(r == rank for r, _ in self.taken)

    @property
    def frozen(self) -> bool:
        return self.figures is not None

    def freeze(self, specs: dict[tuple, tuple[dict, str]] | None = None) -> None:
        """Keeps this epoch's figures and lets its rows, value sets and sums go (freeze_runs())."""
        freeze_runs([self], specs)

    def keep_spec(self, specs: dict[tuple, tuple[dict, str]]) -> None:
        """Its settings become the equal ones kept already (specs: their items -> the dict and its
        label), or are kept: a crash loop's 10,000 runs share one dict and one label."""
        try:
            key = tuple(self.spec.items())
            kept = specs.get(key)
        except TypeError:  # a setting that is a list: kept as it is
            return
        if kept is None:
            kept = specs[key] = (self.spec, self.label)
        self.spec, self.kept_label = kept

    @property
    def empty(self) -> bool:
        return self.records == 0 and not self.spec

    def absorb(self, other: Epoch) -> None:
        """Adds another epoch's statistics to this one (the same epoch, read in two parts)."""
        self.fold()
        other.fold()
        if self.trouble is None:
            self.trouble, self.ready_after_trouble = other.trouble, other.ready_after_trouble
        elif other.trouble is not None or any(k == "ready" for _, k in other.lifecycle):
            self.ready_after_trouble = self.ready_after_trouble or any(k == "ready" for _, k in other.lifecycle)
        if self.crash is None and not self.stop:
            self.crash = other.crash
        self.failed = self.failed or other.failed
        self.auto_restart = self.auto_restart or other.auto_restart
        self.stop = self.stop or other.stop
        self.restart_requested = self.restart_requested or other.restart_requested
        self.profile = self.profile or other.profile
        self.batches += other.batches
        self.records += other.records
        self.lifecycle += other.lifecycle
        for mine, theirs in zip(self.matched, other.matched):
            mine.merge(theirs)
        for rank, rows in other.per_rank.items():
            held = self.per_rank.get(rank)
            if held is None:
                self.per_rank[rank] = rows
            else:
                held.merge(rows)

    def rename_rank(self, old: str, new: str) -> None:
        """Moves one rank's statistics to another name, merging with what that name has, and
        keeping the place of the first of the two in the order ranks were seen."""
        self.fold()
        merged: dict[str, Rows] = {}
        for rank, rows in self.per_rank.items():
            if rank == old or rank == new:
                target = merged.get(new)
                if target is None:
                    merged[new] = target = Rows(EPOCH_METRICS, self.tally)
                target.merge(rows)
            else:
                merged[rank] = rows
        self.per_rank = merged

    @property
    def label(self) -> str:
        if self.kept_label is not None:
            return self.kept_label
        return spec_label(self.spec) if self.spec else "settings unknown"

    def rows(self, rank: str, carried: tuple[str, ...] = ()) -> Rows:
        """A rank's rows, made (with `carried`: Rows') if it has none yet."""
        rows = self.per_rank.get(rank)
        if rows is None:
            assert not self.frozen, "an epoch that is over takes no more values"
            rows = self.per_rank[rank] = Rows(EPOCH_METRICS, self.tally, carried)
        return rows

    def described(self, rank: str, percentiles: bool = True) -> dict[str, dict | None] | None:
        """A rank's statistics per metric (Rows.describe), running or over; None: no such rank."""
        if self.figures is not None:
            return self.figures.ranks_json(brief=False).get(rank)
        self.fold()
        rows = self.per_rank.get(rank)
        return rows.describe(percentiles) if rows is not None else None

    def stats(self, metric: str, rank: str) -> dict | None:
        described = self.described(rank)
        return described[metric] if described is not None else None

    def note_event(self, ev: Event) -> None:
        """What an event says about how this run ends."""
        kind = ev.kind
        if kind in TROUBLE_EVENTS:
            if self.trouble is None:
                self.trouble = ev  # the event itself: a traceback's text comes a few lines later
            if kind == "crash" and self.crash is None and not self.stop:
                self.crash = ev  # after a stop, a process ending is the stop's
        elif kind == "ready":
            if self.trouble is not None:
                self.ready_after_trouble = True
        elif kind == "failed":
            if self.failed is None:
                self.failed = ev.text
        elif kind == "auto_restart":
            self.auto_restart = True
        elif kind in ("stopping", "stopped"):
            self.stop = True
        elif kind == "restart_requested":
            self.restart_requested = True
            self.profile = ev.data.get("profile") or self.profile

    def ending(self, last: bool) -> dict:
        """How this run ended: `how` (MTPTUI, SYSTEMD, STOPPED, CRASHED, RUNNING or ENDED: a new
        run began with no end seen), `text` (one line), and for a crash its first `error` (kind,
        time, text) and whether systemd restarted it (`restarted_by`). last: no run came after it."""
        error: dict[str, Any] | None = None
        t = self.trouble
        if t is None or self.ready_after_trouble:
            t = self.crash  # what the server got over is not why it died later
        if t is not None:
            kind = t.kind
            if kind in ("error", "crash") and t.data.get("exception"):  # a traceback's: what its exception says
                hit = events.classify(t.data["exception"])
                if hit is not None and hit[0] in TROUBLE_EVENTS:
                    kind = hit[0]
            error = {"kind": kind, "ts": t.ts, "text": t.text}
        elif self.failed is not None:
            error = {"kind": "failed", "ts": None, "text": self.failed}
        crashed = (self.failed is not None or self.auto_restart or self.crash is not None
                   or (error is not None and not self.stop))
        out: dict = {}
        if self.restart_requested:
            out = {"how": MTPTUI, "profile": self.profile,
                   "text": MTPTUI + (f" (profile {self.profile})" if self.profile else "")}
        elif crashed and error is not None:
            name = TROUBLE_NAMES.get(error["kind"], "exited with failure")
            out = {"how": CRASHED, "error": error, "text": f"{CRASHED}: {name}: {error['text']}"}
            if self.auto_restart:
                out["restarted_by"] = "systemd"
                out["text"] = f"{CRASHED}, {SYSTEMD} (Restart=): {name}: {error['text']}"
        elif self.auto_restart:
            out = {"how": SYSTEMD, "text": f"{SYSTEMD} (Restart=)"}
        elif self.stop:
            out = {"how": STOPPED, "text": STOPPED}
        elif last:
            out = {"how": RUNNING, "text": RUNNING}
        else:
            out = {"how": ENDED, "text": "ended (a new run began, no stop seen)"}
        if len(out["text"]) > 300:
            out["text"] = out["text"][:297] + "..."
        return out

    @property
    def may_have_crashed(self) -> bool:
        """Whether ending() can say CRASHED: it saw trouble or systemd's failure line, and mtptui
        did not restart it. A cheap look, so that crash_loops() reads the ending of these runs
        alone, not of every run of a log that restarts thousands of times."""
        return (self.trouble is not None or self.failed is not None) and not self.restart_requested

    def to_json(self, brief: bool = False) -> dict:
        """As in `summary --json`; brief: each rank's statistics only n and mean (no sort)."""
        f = self.figures
        self.fold()
        if f is not None:
            ranks, buckets = f.ranks_json(brief), f.buckets_json()
        else:
            ranks = {rank: (self.per_rank[rank].brief() if brief else self.per_rank[rank].describe())
                     for rank in sorted(self.per_rank, key=rank_key)}
            buckets = {b.scale.json_key: b.to_json() for b in self.matched}
        return {"host": self.host, "index": self.index, "start": self.start, "end": self.end,
                "reason": self.reason, "label": self.label, "spec": self.spec, "ended": self.ending(self.end is None),
                "decode_batches": self.batches, "ranks": ranks, **buckets}


_epoch_fields = attrgetter(*(f.name for f in fields(Epoch)))  # Epoch(*its fields) is itself


def freeze_runs(runs: Sequence[Epoch], specs: dict[tuple, tuple[dict, str]] | None = None) -> None:
    """Keeps each run's figures (figures.Figures, made for all of them in one pass:
    figures.freeze) and lets its rows, value sets and sums go: a run that is over takes no more
    values, and a log of 10,000 runs must cost what one of 10 does. Its to_json() is the same as
    before. specs: as Epoch.keep_spec's."""
    runs = [e for e in runs if e.figures is None]
    if not runs:
        return

    # a run whose rows are all as its series handed them over (a crash loop's) is frozen from
    # them; any other from its ranks' Rows and its Buckets, the rows it took folded into them first
    taken: list[Epoch] = []
    rest: list[Epoch] = []
    for e in runs:
        whole = e.taken and not e.per_rank and not any(b.holds() for b in e.matched)
        (taken if whole else rest).append(e)
    for e in rest:
        e.fold()
    order = {id(e): ranks_in_order(tuple(e.ranks)) for e in runs}
    made = dict(zip(map(id, taken), figures.freeze_taken(
        [(order[id(e)], e.taken, e.taken_names) for e in taken], len(EPOCH_METRICS))))
    made.update(zip(map(id, rest), figures.freeze(
        [([e.per_rank[r] for r in order[id(e)]], e.matched) for e in rest])))
    for e in runs:
        if specs is not None:
            e.keep_spec(specs)
        stats, buckets = made[id(e)]
        e.figures = Figures(order[id(e)], EPOCH_METRICS, stats, buckets)
        e.per_rank = {}
        e.matched = ()
        e.taken = []


class EpochTracker:
    """A sink-like helper: feed it every batch and event (with their effective times)."""

    def __init__(self, tally: bool = False) -> None:
        self.tally = tally  # the epochs' value sets keep exact sums as they come (Epoch.tally)
        self.epochs: dict[str | None, list[Epoch]] = {}
        self.spec: dict[str | None, dict] = {}  # host -> latest server_args speculation settings
        # the settings of the runs that are over, each once, with their label (Epoch.keep_spec)
        self._specs: dict[tuple, tuple[dict, str]] = {}
        # runs that are over, frozen FREEZE_AT at a time (freeze()): their figures made in one pass
        self._over: list[Epoch] = []

    def add_batch(self, rec: BatchStats, ts: float) -> None:
        """Counts a record, and its values, into its host's epoch: the dashboard's way (its ring
        buffers forget; an epoch's statistics must not, so that the compare screen says what
        `summary` says). `summary` itself hands per-rank values over in bulk from its series."""
        epochs = self.epochs.get(rec.host)
        epoch = epochs[-1] if epochs else self._new_epoch(rec.host, ts, "first seen")
        epoch.records += 1
        kind = rec.kind
        if kind == DECODE or kind == SPEC:
            if kind == DECODE:
                epoch.batches += 1
            epoch.rows(rec.rank).add(rec.fields)
            for buckets in epoch.matched:
                buckets.add(rec.fields)

    def current(self, host: str | None) -> Epoch | None:
        epochs = self.epochs.get(host)
        return epochs[-1] if epochs else None

    def open(self, host: str | None, ts: float) -> Epoch:
        """The host's current epoch, or a first one from ts when it has none yet."""
        return self.current(host) or self._new_epoch(host, ts, "first seen")

    def add_event(self, ev: Event, ts: float) -> None:
        if ev.kind == "started":
            self._new_epoch(ev.host, ts, "restart (systemd)")
        elif ev.kind == "spec_config":
            epochs = self.epochs.get(ev.host)
            cur = epochs[-1] if epochs else None
            if cur is None or _begins_run(ev, cur):
                cur = self._new_epoch(ev.host, ts, "new server process")
            cur.spec = dict(ev.data)
            self.spec[ev.host] = dict(ev.data)
        elif ev.kind == "spec_witness":
            # the run under way, as the host says it was started: never a new epoch, and never
            # over what a settings line of the log said
            cur = self.open(ev.host, ts)
            if not cur.spec:
                cur.spec = dict(ev.data)
            if not self.spec.get(ev.host):
                self.spec[ev.host] = dict(ev.data)
        else:
            cur = self.current(ev.host)
            if cur is None:
                return
            if ev.kind in LIFECYCLE_EVENTS:
                cur.lifecycle.append((ts, ev.kind))
            cur.note_event(ev)

    def _new_epoch(self, host: str | None, ts: float, reason: str) -> Epoch:
        epochs = self.epochs.setdefault(host, [])
        if epochs:
            cur = epochs[-1]
            if cur.empty:
                # Nothing happened in it (e.g. `Started` right after the first line): reuse it.
                # What the process before did (its stop) is not this run's.
                cur.start, cur.reason = min(cur.start, ts), reason
                cur.lifecycle.clear()
                cur.trouble, cur.ready_after_trouble, cur.failed, cur.crash = None, False, None, None
                cur.auto_restart = cur.stop = cur.restart_requested = False
                cur.profile = None
                return cur
            cur.end = ts
            self._close(cur, len(epochs) == 1)
        e = Epoch(index=len(epochs), host=host, start=ts, reason=reason, tally=self.tally)
        epochs.append(e)
        return e

    def merge(self, later: EpochTracker, ranks_before: dict | None = None) -> None:
        """Appends what another tracker saw in the input that follows this one's, with the result
        a single tracker would have had (used to join the parts of a file read in parallel). Its
        UNRESOLVED ranks take the rank that `ranks_before` (host -> rank) says came before."""
        ranks_before = ranks_before or {}
        later.freeze()
        for host, eps in later.epochs.items():
            for e in eps:
                if UNRESOLVED in e.ranks:
                    e.rename_rank(UNRESOLVED, ranks_before.get(host, ""))
            mine = self.epochs.setdefault(host, [])
            for i, e in enumerate(eps):
                cur = mine[-1] if mine else None
                if i == 0 and cur is not None and e.reason == "first seen":
                    cur.absorb(e)  # no restart at the part boundary: the same epoch goes on
                    continue
                if i == 0 and cur is not None and cur.empty:
                    e.start = min(cur.start, e.start)
                    e.index = cur.index
                    mine[-1] = e
                    continue
                if cur is not None:
                    cur.end = e.start
                    self._close(cur, len(mine) == 1)
                e.index = len(mine)
                mine.append(e)
        self.spec.update(later.spec)

    def _close(self, e: Epoch, first: bool) -> None:
        """An epoch that a later one ended: frozen (Epoch.freeze), but for a host's first
        epoch (the one before it may be in the part of the file before, read apart, that goes
        on in it: merge()) and one whose vLLM spec lines wait for the rank before (UNRESOLVED):
        each is a single epoch of a part, held until the parts are joined."""
        if _frozen_when_over(e, first):
            e.keep_spec(self._specs)
            self._over.append(e)
            if len(self._over) >= FREEZE_AT:
                self.freeze()

    def freeze(self) -> None:
        """Freezes the runs that are over and wait for it (freeze_runs): before the runs are read
        or sent, and every FREEZE_AT of them. Until then each reads as a run that goes on."""
        freeze_runs(self._over)
        self._over = []

    def all(self) -> list[Epoch]:
        self.freeze()
        return [e for host in self.epochs for e in self.epochs[host]]

    def __getstate__(self) -> dict:
        self.freeze()  # a parallel reader's part sends its runs over as their figures
        return self.__dict__


def _begins_run(ev: Event, cur: Epoch) -> bool:
    """Whether this event ends the host's current run and begins another (EpochTracker.add_event,
    _new_epoch): systemd's start, or server_args, printed once per process: after batches, or
    after another server_args (a crash loop), it is a new process; right after `Started` it
    belongs to that run. An empty run is begun again instead."""
    return ev.kind in EPOCH_EVENTS and not cur.empty


def _frozen_when_over(e: Epoch, first: bool) -> bool:
    """Whether a run that another ended is frozen (EpochTracker._close): not a host's first, nor one
    whose vLLM spec lines wait for the rank before."""
    return not first and not e.has_rank(UNRESOLVED)


def crash_loops(epochs: Iterable[dict]) -> list[dict]:
    """Runs in a row of one host that crashed with the same error (error_signature), each
    starting within LOOP_WINDOW of the one before: one entry per loop of LOOP_RUNS or
    more, with its count, first and last epoch index, time span and error. epochs: as in
    `summary --json`, each with its `ended`."""
    loops: list[dict] = []
    run: list[dict] = []

    def close() -> None:
        if len(run) >= LOOP_RUNS:
            err = run[0]["ended"]["error"]
            loops.append({"host": run[0]["host"], "count": len(run), "first": run[0]["index"],
                          "last": run[-1]["index"], "since": run[0]["start"], "until": run[-1]["end"],
                          "error": err, "restarted_by": run[-1]["ended"].get("restarted_by"),
                          "text": f"crash loop: {len(run)} runs crashed with {TROUBLE_NAMES.get(err['kind'], 'failure')}: "
                                  f"{err['text']}"})
        run.clear()

    for e in epochs:
        ended = e.get("ended") or {}
        err = ended.get("error") if ended.get("how") == CRASHED else None
        if err is not None and run:
            prev = run[-1]
            same = (prev["host"] == e["host"]
                    and error_signature(err["kind"], err["text"]) == error_signature(
                        prev["ended"]["error"]["kind"], prev["ended"]["error"]["text"])
                    and e["start"] - prev["start"] <= LOOP_WINDOW)
            if not same:
                close()
        elif err is None:
            close()
        if err is not None:
            run.append(e)
    close()
    return loops
