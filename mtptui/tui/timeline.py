"""Where on the log's time axis the screen is looking: the playhead and the window before it.

Time is log time (the stamps in the lines), never arrival time. Two modes:
- replay: the playhead is the ``ReplayClock``'s position (space pauses it, +/- change its speed,
  left/right seek it); at full speed it is the newest line read. Files opened (`mtptui open`,
  `replay --speed max`) are a replay at full speed that has ended, and their state says OPEN.
- live: the playhead follows the newest line, extrapolated by the wall time since it arrived
  (so silence shows as time passing). Space freezes it; left/right scrub back through the ring
  buffers while lines keep arriving; moving right past the newest line follows again. The state
  says LIVE only while the shown host's stream is up.
No Textual here: the screen asks ``playhead()`` once per tick.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from mtptui.core.store import Store
from mtptui.sources.base import STREAMING
from mtptui.sources.replay import MAX_SPEED, ReplayClock, speed_label
from mtptui.config.windows import WINDOWS

SEEK_FRACTION = 0.1  # a seek or scrub step is a tenth of the window


class Timeline:
    def __init__(self, store: Store, *, replay: ReplayClock | None = None,
                 wall: Callable[[], float] = time.time, last_arrival: Callable[[], float | None] = lambda: None,
                 link: Callable[[], str | None] = lambda: None, window_index: int = 1,
                 opened: bool = False) -> None:
        self.store = store
        self.replay = replay
        # the files were read at once (`mtptui open`), not played: OPEN where a replay says REPLAY
        self.opened = opened
        self.wall = wall
        self.last_arrival = last_arrival
        self.link = link  # live: the shown host's stream state (sources.base), None if unknown
        self.window_index = window_index
        self.pinned: float | None = None  # live: a frozen/scrubbed playhead; None follows
        self.live_paused = False
        self.back_key = "←"  # the seek-back key as shown (the app sets it from [keys])
        self._anchor: tuple[float, float] | None = None  # live: (the newest stamp, when it arrived)
        self._live_max: float | None = None  # live: the latest log time now said; it never goes back

    # -- reading ------------------------------------------------------------------------------
    @property
    def is_replay(self) -> bool:
        return self.replay is not None

    @property
    def window_label(self) -> str:
        return WINDOWS[self.window_index][0]

    @property
    def window_s(self) -> float | None:
        return WINDOWS[self.window_index][1]

    def newest(self) -> float | None:
        return self.store.last_ts

    def live_now(self) -> float | None:
        """The log time now: the newest stamp plus the wall time since that line arrived, never
        less than it said before. The arrival is taken when the newest stamp moves: lines that
        leave it where it is (a loading server's messages, which carry no time to the store;
        another host's late lines) do not set the clock back to it (issue 17: the epoch strip
        stood at 0m 00s through a load, and went 01 -> 00)."""
        last = self.store.last_ts
        if last is None:
            return None
        arrived = self.last_arrival()
        if arrived is None:
            return last
        if self._anchor is None or self._anchor[0] != last:
            self._anchor = (last, arrived)
        now = last + max(0.0, self.wall() - self._anchor[1])
        if self._live_max is not None and now < self._live_max:
            return self._live_max  # a stamp of whole seconds came in behind the clock
        self._live_max = now
        return now

    def playhead(self) -> float | None:
        newest = self.store.last_ts
        if newest is None:
            return None
        if self.replay is not None:
            pos = self.replay.position()
            if pos is None or pos == math.inf:
                return newest
            if self.replay.ended and pos > newest:
                return newest  # the replay has ended: stop at its last line
            return pos
        if self.pinned is not None:
            return self.pinned
        return self.live_now()

    def bounds(self) -> tuple[float | None, float | None]:
        """[t0, t1] of the window that ends at the playhead."""
        t1 = self.playhead()
        if t1 is None:
            return None, None
        w = self.window_s
        return (None if w is None else t1 - w), t1

    def oldest(self) -> float | None:
        firsts = [s.first_batch_ts for s in self.store.series.values() if s.first_batch_ts is not None]
        return min(firsts) if firsts else None

    def following(self) -> bool:
        if self.replay is not None:
            return self.replay.unlimited
        return self.pinned is None

    def state_label(self) -> str:
        if self.replay is not None:
            r = self.replay
            if r.ended and (r.unlimited or (self.playhead() or 0) >= (self.store.last_ts or 0)):
                return f"{'OPEN' if self.opened else 'REPLAY ended'}; {self.back_key} to seek"
            return f"{'OPEN' if self.opened else 'REPLAY'} {'paused' if r.paused else 'playing'} {speed_label(r.speed)}"
        # LIVE only while the stream is up: a host that does not answer is CONNECTING or
        # RECONNECTING, whatever its old lines on the screen say.
        link = self.link()
        word = "LIVE" if link in (None, STREAMING) else link.upper()
        if self.pinned is None:
            return word
        return f"{word} paused" if self.live_paused else f"{word} scrubbing"

    # -- control ------------------------------------------------------------------------------
    def step(self) -> float:
        w = self.window_s
        if w is None:
            o, n = self.oldest(), self.newest()
            w = (n - o) if (o is not None and n is not None and n > o) else 60.0
        return max(1.0, w * SEEK_FRACTION)

    def toggle_pause(self) -> str:
        if self.replay is not None:
            self.replay.toggle(at=self.store.last_ts)
            return "paused" if self.replay.paused else "playing"
        if self.pinned is None:
            self.pinned = self.live_now()
            self.live_paused = True
            return "paused"
        self.pinned = None
        self.live_paused = False
        return "following"

    def seek(self, direction: int) -> float | None:
        """One step back (-1) or forward (+1). Returns the new playhead."""
        delta = direction * self.step()
        lo = self.oldest()
        if self.replay is not None:
            return self.replay.seek(delta, at=self.store.last_ts, lo=lo)
        cur = self.playhead()
        if cur is None:
            return None
        target = cur + delta
        if lo is not None and target < lo:
            target = lo
        now = self.live_now()
        if direction > 0 and now is not None and target >= now:
            self.pinned = None  # scrubbed back to the present: follow again
            self.live_paused = False
            return now
        self.pinned = target
        return target

    def change_speed(self, direction: int) -> float | None:
        if self.replay is None:
            return None
        return self.replay.step_speed(direction, at=self.store.last_ts)

    def cycle_window(self, direction: int = 1) -> str:
        self.window_index = (self.window_index + direction) % len(WINDOWS)
        return self.window_label

    def set_window(self, label: str) -> None:
        for i, (lab, _) in enumerate(WINDOWS):
            if lab == label:
                self.window_index = i
                return
        raise ValueError(f"unknown window {label!r}")


__all__ = ["Timeline", "WINDOWS", "MAX_SPEED"]
