"""Replay of saved logs, paced by the logs' own timestamps, with pause, speed and seek.

A ``ReplayClock`` maps wall time to log time: ``position()`` is the log time the replay has
reached, moving at ``speed`` log-seconds per wall-second from an anchor. One clock is shared by
every ``ReplaySource`` of a session (one per file), so several hosts' logs replay in step and a
gap in the logs stays a gap, scaled by the speed.

A source reads its file and hands the lines on, as fast as the reader takes them (back-pressure:
``Feed.wait_room``); it never parses them, so it cannot tell their times. The feed that parses
them (tui/feed.py) holds each line until the clock has reached its time, then releases it to the
store: lines are parsed once, and paced after. At full speed (``speed`` is ``math.inf``) nothing
waits; the dashboard then follows the newest line. Seeking only moves the clock: lines already
released stay in the store (the view clips at the clock), and a forward seek releases up to the
new position at once. Once every source has ended and no line is held, the clock stops at the
newest line: a seek back starts from the end, not from wherever wall time would have carried it.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Callable

from mtptui.sources.base import ENDED, FAILED, STREAMING, Feed, Source, SourceStatus
from mtptui.sources.file import InputError, open_lines

MAX_SPEED = math.inf
# The steps of +/-: the ones an operator reaches for, then full speed.
SPEEDS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 100.0, 300.0, 1000.0, MAX_SPEED)
CHUNK = 2000  # lines per push: one Feed call per chunk, never one per line


def speed_label(speed: float) -> str:
    if speed == MAX_SPEED:
        return "max"
    return f"{speed:g}x"


def parse_speed(s: str) -> float:
    """`--speed` values: a positive number (`2`, `0.5`, `10x`) or `max`."""
    t = s.strip().lower()
    if t in ("max", "inf", "full"):
        return MAX_SPEED
    t = t.removesuffix("x")
    v = float(t)  # ValueError for junk: argparse turns it into a usage error
    if not v > 0 or math.isinf(v) or math.isnan(v):
        raise ValueError(s)
    return v


class ReplayClock:
    """Log time as a function of wall time: anchor + (wall - anchor_wall) x speed."""

    def __init__(self, speed: float = 1.0, *, paused: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.speed = speed
        self.paused = paused
        self._clock = clock
        self._anchor_log: float | None = None
        self._anchor_wall = clock()
        self.released: float | None = None  # newest log time let through to the store
        self.open_sources = 0
        self.sources_seen = 0
        self.held = 0  # lines read and parsed, waiting for the clock to reach them
        self._changed = asyncio.Event() if _has_loop() else None

    # -- reading ------------------------------------------------------------------------------
    @property
    def started(self) -> bool:
        return self._anchor_log is not None

    @property
    def ended(self) -> bool:
        """Every source has read its input to the end, and every line of it is let through."""
        return self.sources_seen > 0 and self.open_sources == 0 and self.held == 0

    @property
    def unlimited(self) -> bool:
        """True when lines flow without timing (full speed, playing)."""
        return self.speed == MAX_SPEED and not self.paused

    def position(self) -> float | None:
        """The log time reached; inf while playing at full speed; None before the first line.
        After the end: never past the newest line."""
        if self._anchor_log is None:
            return None
        if self.paused:
            pos = self._anchor_log
        elif self.speed == MAX_SPEED:
            return math.inf
        else:
            pos = self._anchor_log + (self._clock() - self._anchor_wall) * self.speed
        end = self.released
        if end is not None and pos > end and self.ended:
            return end
        return pos

    # -- control ------------------------------------------------------------------------------
    def _reanchor(self, log_ts: float | None) -> None:
        self._anchor_log = log_ts
        self._anchor_wall = self._clock()
        self._notify()

    def _here(self, fallback: float | None = None) -> float | None:
        pos = self.position()
        if pos is None or pos == math.inf:
            # At full speed the clock is wherever the data is.
            return fallback if fallback is not None else self.released
        return pos

    def start_at(self, log_ts: float) -> None:
        if self._anchor_log is None:
            self._reanchor(log_ts)

    def pause(self, at: float | None = None) -> None:
        if not self.paused:
            here = self._here(at)
            self.paused = True
            self._reanchor(here)

    def resume(self) -> None:
        if self.paused:
            self.paused = False
            self._reanchor(self._anchor_log)

    def toggle(self, at: float | None = None) -> None:
        self.resume() if self.paused else self.pause(at)

    def set_speed(self, speed: float, at: float | None = None) -> None:
        here = self._here(at)
        self.speed = speed
        self._reanchor(here)

    def step_speed(self, direction: int, at: float | None = None) -> float:
        """One step along SPEEDS (+1 faster, -1 slower); returns the new speed."""
        cur = self.speed
        idx = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - cur) if cur != MAX_SPEED
                  else (0 if SPEEDS[i] == MAX_SPEED else 1))
        idx = max(0, min(len(SPEEDS) - 1, idx + direction))
        self.set_speed(SPEEDS[idx], at)
        return self.speed

    def seek(self, delta: float, at: float | None = None, lo: float | None = None) -> float | None:
        """Moves the position by `delta` log seconds (not before `lo`). At full speed a seek also
        pauses: a position that runs to infinity at once could not be looked at."""
        here = self._here(at)
        if here is None:
            return None
        target = here + delta
        if lo is not None and target < lo:
            target = lo
        if self.speed == MAX_SPEED:
            self.paused = True
        self._reanchor(target)
        return target

    # -- for the feed that paces the lines -----------------------------------------------------
    def note_released(self, ts: float) -> None:
        if self.released is None or ts > self.released:
            self.released = ts

    async def wait_until(self, ts: float) -> None:
        """Returns once position() >= ts."""
        if self._changed is None:
            self._changed = asyncio.Event()
        while True:
            pos = self.position()
            if pos is not None and pos >= ts:
                return
            self._changed.clear()
            if pos is None or self.paused:
                await self._changed.wait()
                continue
            # Sleep until the line is due, but wake early if the user changes speed or seeks.
            delay = min((ts - pos) / self.speed, 0.5)
            try:
                await asyncio.wait_for(self._changed.wait(), timeout=max(delay, 0.001))
            except asyncio.TimeoutError:
                pass

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()


def _has_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class ReplaySource(Source):
    """One saved log (plain, .gz, or '-' for stdin), released as the shared clock reaches its lines."""

    def __init__(self, path: str, clock: ReplayClock, host: str | None = None) -> None:
        self.path = path
        self.clock = clock
        self.host = host
        self.label = f"replay {os.path.basename(path) if path != '-' else 'stdin'}"
        self.size = _size(path)
        self.lines_read = 0
        self.done = False

    async def run(self, feed: Feed) -> None:
        clock = self.clock
        clock.open_sources += 1
        clock.sources_seen += 1
        feed.status(SourceStatus(self.host, STREAMING, self.label))
        # A feed that paces (the dashboard's) is told whose lines these are: each file is paced on
        # its own, so one file's later lines never hold back another's earlier ones.
        paced = getattr(feed, "paced", None)
        wait_room = getattr(feed, "wait_room", None)
        batch: list[str] = []

        async def flush() -> None:
            if batch:
                if paced is not None:
                    paced(self, list(batch), self.host)
                else:
                    feed.lines(list(batch), self.host)
                self.lines_read += len(batch)
                batch.clear()
            if wait_room is not None:
                await wait_room()
            else:
                await asyncio.sleep(0)

        try:
            for raw in open_lines(self.path):
                batch.append(raw)
                if len(batch) >= CHUNK:
                    await flush()
            await flush()
        except InputError as e:
            feed.status(SourceStatus(self.host, FAILED, str(e)))
            return
        finally:
            self.done = True
            clock.open_sources -= 1
            clock._notify()
        feed.status(SourceStatus(self.host, ENDED, f"{self.label}: {self.lines_read} lines"))


def _size(path: str) -> int | None:
    try:
        return os.path.getsize(path) if path != "-" else None
    except OSError:
        return None
