"""Open, don't replay: a whole saved log read into a dashboard's store at once, at summary's pace.

The file is read as `summary` reads it (sources/parallel.py: the compiled lane, one process per part
of a big plain file), each part into a store of its own, and the parts' stores are merged in
order: the result is the store a replay to the end would have left (the rings hold the newest
samples, the epochs and value sets everything), and its figures are `summary`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mtptui.core.eventlog import EventLog
from mtptui.core.ingest import LineCounts
from mtptui.sources.parallel import Progress, Stopped, read_inputs
from mtptui.core.store import Store

__all__ = ["Opened", "open_store", "Progress", "Stopped"]


@dataclass
class Opened:
    store: Store
    counts: LineCounts


def open_store(paths: list[str], *, capacity: int = 4096, max_events: int = 5000,
               jobs: int | None = None, progress: Progress | None = None,
               clock: Callable[[], float] | None = None) -> Opened:
    """Raises InputError (one line) for an input that cannot be read; Stopped when
    progress.stop() was called during the read."""

    def make(events: EventLog | None = None) -> Store:
        return Store(capacity=capacity, max_events=max_events)

    # every part of a big file in a process of its own: this one starts the screen meanwhile
    store, counts = read_inputs(paths, make, jobs, progress, read_here=False)
    if clock is not None:
        store.clock = clock
    store.fold()
    return Opened(store, counts)
