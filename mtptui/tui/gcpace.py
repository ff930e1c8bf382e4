"""The dashboard's garbage collection, paced between frames.

Textual's strips (each caches itself) and plotext's figures are built in reference cycles, so a
flood of lines, redrawn several times a second, leaves thousands of objects a second that only
the cycle collector frees, at a few microseconds each. Left to its thresholds the collector runs
whenever they fill, often in the middle of a frame, and now and then frees a whole second's
worth at once: a pause of 50-90 ms, the long tail of keypress-to-screen. So the app collects
after a drawn frame instead: the young generations a few times a second (5-15 ms each), the
whole heap every second right after a key's frame or when no key came in lately, and every 1.5 s
at the latest (its cost grows with the garbage that waited in it: 30-40 ms after 1.5 s of a flood,
35-50 after 3 s, 400 after 15).
The automatic thresholds stay, set high, as a safety net.
"""

from __future__ import annotations

import gc
import time
from typing import Protocol, runtime_checkable

YOUNG_EVERY_S = 0.3  # frames come 10 a second: every third (more often promotes more to the old)
FULL_EVERY_S = 1.0  # this often: right after a key's frame, or when no key came in for QUIET_S ...
QUIET_S = 0.3
FULL_AT_LATEST_S = 1.5  # ... and at the latest this often, whatever the keys
THRESHOLDS = (50_000, 50, 1000)


class GcPacer:
    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        self._young_at = self._full_at = clock()
        self._input_at = 0.0
        self.young = self.full = 0  # collections done (tests and benchmarks read them)

    def start(self) -> None:
        """Everything built so far (Textual, the widgets, modules) lives as long as the app:
        out of the collector's view, then the high thresholds."""
        gc.collect()
        gc.freeze()
        gc.set_threshold(*THRESHOLDS)

    def input(self) -> None:
        self._input_at = self.clock()

    def after_frame(self) -> None:
        """After a frame the tick drew."""
        now = self.clock()
        since = now - self._full_at
        self._collect(now, (since >= FULL_EVERY_S and now - self._input_at >= QUIET_S)
                      or since >= FULL_AT_LATEST_S)

    def after_key_frame(self) -> None:
        """After the frame that showed a key: the moment least likely to delay the next one
        (the user reads what the key did), so the whole heap goes then when it is due."""
        now = self.clock()
        self._collect(now, now - self._full_at >= FULL_EVERY_S)

    def _collect(self, now: float, full: bool) -> None:
        if full:
            gc.collect()
            self._full_at = self._young_at = now
            self.full += 1
        elif now - self._young_at >= YOUNG_EVERY_S:
            gc.collect(1)
            self._young_at = now
            self.young += 1


@runtime_checkable
class Paced(Protocol):
    """An app that paces its collector (MtpApp, FleetApp): its screens tell the pacer of frames."""

    gc_pacer: GcPacer
