"""The dashboard's Feed: sources push raw lines here; a pump parses them in time-boxed slices.

Pushing is an append (sources may push from any task on the event loop, in chunks). The pump
parses at most ``slice_s`` of work at a time and then yields, so a burst of 100,000 lines never
blocks a keypress for more than a slice. The screen reads the store on its own tick.

A replay's lines come paced (``paced``): parsed here like any others (once), then held, each file
on its own, until the replay clock reaches their time, and only then handed to the store; a line
without a time (a traceback's) goes with the line before it. At full speed nothing waits: they go
in as live lines do, through the compiled lane, the log pane taking them raw.

Nothing is lost silently: when the backlog grows past ``max_pending`` (a live stream faster than
this machine can parse) the oldest pending chunks are dropped and counted as dropped lines.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

from mtptui.core.ingest import END_TS, FIRST_TS, Ingest
from mtptui.core.parse import Parsed
from mtptui.core.records import Event
from mtptui.core.store import Store
from mtptui.sources.base import RECONNECTING, SourceStatus
from mtptui.sources.replay import ReplayClock
from mtptui.tui.logbuffer import LogBuffer

SLICE_LINES = 512  # lines parsed between two looks at the clock (a slice is over at slice_s)


class DashboardFeed:
    def __init__(self, store: Store, *, log: LogBuffer | None = None, max_pending: int = 400_000,
                 room: int = 20_000, slice_s: float = 0.004,
                 wall: Callable[[], float] = time.time) -> None:
        self.store = store
        self.log = log if log is not None else LogBuffer()
        # The store alone: so the compiled lane reads the lines that come as they are (a flood);
        # the log pane takes them raw, read only when shown.
        self.ingest = Ingest(store)
        self.wall = wall
        self.max_pending = max_pending
        self.room = room  # a waiting source pushes more once the backlog is below this
        self.slice_s = slice_s
        # (host, chunk, whose pace: a replay source, or None for lines taken as they come)
        self._pending: deque[tuple[str | None, list[str], object]] = deque()
        # a replay source -> its lines parsed and waiting for the clock: (log time or None, line)
        self._held: dict[object, deque[tuple[float | None, Parsed]]] = {}
        self.clock: ReplayClock | None = None  # paces the replay sources' lines
        self._pos = 0  # lines of the first pending chunk already parsed
        self.pending = 0
        self.statuses: dict[str | None, SourceStatus] = {}
        self.status_log: list[SourceStatus] = []
        self.last_arrival: float | None = None  # wall time of the newest line pushed
        self._streamed: set[str | None] = set()  # hosts that pushed lines
        self._wake: asyncio.Event | None = None
        self._room: asyncio.Event | None = None
        self._hold_until = 0.0

    # -- the Feed protocol (called by sources) ------------------------------------------------
    def lines(self, raw: list[str], host: str | None) -> None:
        self._push(raw, host, None)

    def paced(self, source: object, raw: list[str], host: str | None) -> None:
        """A replay source's lines: released to the store as the replay clock reaches them."""
        self._push(raw, host, source)

    def _push(self, raw: list[str], host: str | None, pace: object) -> None:
        if not raw:
            return
        self._pending.append((host, raw, pace))
        self._streamed.add(host)
        self.pending += len(raw)
        self.last_arrival = self.wall()
        while self.pending > self.max_pending and len(self._pending) > 1:
            h, old, _ = self._pending.popleft()
            lost = len(old) - self._pos
            self._pos = 0
            self.pending -= lost
            self.ingest.count_dropped("dashboard backlog full (parsing fell behind)", lost)
        if self._wake is not None:
            self._wake.set()

    def status(self, st: SourceStatus) -> None:
        prev = self.statuses.get(st.host)
        self.statuses[st.host] = st
        self.status_log.append(st)
        del self.status_log[:-200]
        if st.host is not None:
            self.store.name_host(st.host)  # the screen names a host that never answered, too
        # One gap per outage (a source reports RECONNECTING again on every retry), and only
        # where data stopped: a host that never sent a line has no gap, it has no data.
        if (st.state == RECONNECTING and (prev is None or prev.state != RECONNECTING)
                and st.host in self._streamed):
            # Marked where the data stopped, so the gap shows on the time axis.
            self.store.add_event(Event(kind="gap", ts=self.store.last_ts, host=st.host,
                                       text=f"stream lost, reconnecting: {st.detail}".rstrip(": ")))

    def dropped(self, n: int, reason: str, host: str | None) -> None:
        if n > 0:
            self.ingest.count_dropped(reason, n)

    # -- parsing ------------------------------------------------------------------------------
    def pump(self, budget_s: float | None = None) -> int:
        """Parses pending lines for about `budget_s` seconds, and releases the held lines that
        are due; returns how many lines it parsed or released."""
        budget = self.slice_s if budget_s is None else budget_s
        deadline = time.perf_counter() + budget
        parse = self.ingest.parser.parse
        done = moved = self._release()
        while self._pending:
            host, chunk, pace = self._pending[0]
            if pace is not None and self.clock is not None and self.clock.held >= self.room:
                break  # parsed far enough ahead of the clock
            i = self._pos
            n = len(chunk)
            while i < n:
                stop = min(n, i + SLICE_LINES)
                clock = self.clock
                if pace is None or clock is None or (clock.unlimited and not self._held.get(pace)):
                    # As they come (live; a replay at full speed): the compiled lane, in bulk.
                    part = chunk[i:stop] if i or stop < n else chunk
                    self.ingest.feed_many(part, host)
                    self.log.add_raw(part, host)
                    if pace is not None and clock is not None and self.store.last_ts is not None:
                        clock.note_released(self.store.last_ts)
                else:
                    self._hold(pace, [parse(chunk[k], host) for k in range(i, stop)])
                done += stop - i
                i = stop
                if time.perf_counter() >= deadline:
                    break
            if i >= n:
                self._pending.popleft()
                self._pos = 0
            else:
                self._pos = i
            if time.perf_counter() >= deadline:
                break
        self.pending -= done - moved
        done += self._release()
        if self._room is not None and self._load() <= self.room // 2:
            self._room.set()
        return done

    def _hold(self, pace: object, parsed: list[Parsed]) -> None:
        q = self._held.get(pace)
        if q is None:
            q = self._held[pace] = deque()
        clock = self.clock
        assert clock is not None  # lines are held only for a clock to release them
        for p in parsed:
            rec = p.record
            ts = rec.ts if rec is not None and rec.ts is not None else (p.line.ts if p.line is not None else None)
            if ts is not None and not FIRST_TS <= ts < END_TS:
                ts = None  # goes with the line before it; Ingest drops it, counted (year 10000 held all after it)
            if ts is not None:
                clock.start_at(ts)  # the first line anchors the clock
            q.append((ts, p))
        clock.held += len(parsed)

    def _release(self) -> int:
        """Hands the held lines that the clock has reached to the store; returns how many."""
        clock = self.clock
        if clock is None or not clock.held:
            return 0
        pos = clock.position()
        take = self.ingest.take
        add_line = self.log.add_line
        n = 0
        newest = None
        for q in self._held.values():
            while q:
                ts, p = q[0]
                if ts is not None:
                    if pos is None or ts > pos:
                        break
                    newest = ts if newest is None or ts > newest else newest
                q.popleft()
                take(p)
                add_line(p)
                n += 1
        clock.held -= n
        if newest is not None:
            clock.note_released(newest)
        return n

    def _next_due(self) -> float | None:
        """The earliest log time a held line waits for."""
        heads = [q[0][0] for q in self._held.values() if q and q[0][0] is not None]
        return min(heads) if heads else None

    def _load(self) -> int:
        return self.pending + (self.clock.held if self.clock is not None else 0)

    def drain(self) -> int:
        """Parses everything pending, and releases what is due (tests, headless use)."""
        total = 0
        while True:
            n = self.pump(1.0)
            total += n
            if not n:
                return total

    def hold(self, seconds: float) -> None:
        """Pauses parsing for a moment: a key was pressed, and its frame comes first. Lines wait
        in the backlog meanwhile (nothing is lost; the pump catches up after)."""
        self._hold_until = max(self._hold_until, time.monotonic() + seconds)

    def release(self) -> None:
        """The key's frame is on screen: parsing may go on."""
        self._hold_until = 0.0

    def holding(self) -> bool:
        return time.monotonic() < self._hold_until

    async def run_pump(self) -> None:
        """Runs for the session: parse a slice, yield to the UI, repeat while lines wait."""
        wake = self._wake = asyncio.Event()
        idle = False
        while True:
            if idle or not (self._pending or self._held_due()):
                await self._idle(wake)
            wait = self._hold_until - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            idle = self.pump() == 0
            await asyncio.sleep(0)

    def _held_due(self) -> bool:
        clock = self.clock
        return clock is not None and clock.held > 0

    async def _idle(self, wake: asyncio.Event) -> None:
        """Until lines come, or the clock reaches a held line (a seek or a change of speed too)."""
        wake.clear()
        due = self._next_due()
        if due is None or self.clock is None:
            await wake.wait()
            return
        waits = [asyncio.ensure_future(wake.wait()), asyncio.ensure_future(self.clock.wait_until(due))]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    async def wait_room(self) -> None:
        """Back-pressure for sources that can wait (a file replay): returns once the backlog is small."""
        if self._load() < self.room:
            await asyncio.sleep(0)
            return
        if self._room is None:
            self._room = asyncio.Event()
        self._room.clear()
        await self._room.wait()

    def state_of(self, host: str | None) -> str | None:
        """The stream state of a host (STREAMING, RECONNECTING ...); None before its source spoke."""
        st = self.statuses.get(host)
        return None if st is None else st.state

    @property
    def counts(self):
        return self.ingest.counts
