"""`--give-up-after S`: a host whose stream has not been up for S seconds is given up on.

A journal source retries for ever (a host that reboots comes back); a script wants an answer
instead: the wrapped source is stopped once its host has gone S seconds without a stream (from
the start, or since the stream was lost), and reported FAILED with the last reason. A host that
fails for good earlier (a refused login) is given up on at once. The commands then exit non-zero.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from mtptui.sources.base import FAILED, STREAMING, Feed, Source, SourceStatus


class GiveUpFeed:
    """Passes everything on, and tells the source when its stream comes up or goes down."""

    def __init__(self, inner: Feed, owner: GiveUpSource) -> None:
        self.inner = inner
        self.owner = owner

    def lines(self, raw: list[str], host: str | None) -> None:
        self.inner.lines(raw, host)

    def status(self, st: SourceStatus) -> None:
        self.owner._saw(st)
        self.inner.status(st)

    def dropped(self, n: int, reason: str, host: str | None) -> None:
        self.inner.dropped(n, reason, host)


class GiveUpSource(Source):
    def __init__(self, inner: Source, after: float, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.inner = inner
        self.after = after
        self.clock = clock
        self.label = inner.label
        self.gave_up: str | None = None  # why, once given up on
        self._down_since: float | None = None
        self._last: SourceStatus | None = None
        self._changed = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        # host, cursor, received ... of the wrapped source, for whoever shows them
        return getattr(self.inner, name)

    def _saw(self, st: SourceStatus) -> None:
        self._last = st
        if st.state == STREAMING:
            self._down_since = None
        elif self._down_since is None:
            self._down_since = self.clock()
        self._changed.set()

    async def run(self, feed: Feed) -> None:
        self._down_since = self.clock()
        task = asyncio.ensure_future(self.inner.run(GiveUpFeed(feed, self)))
        try:
            while not task.done():
                self._changed.clear()
                wait = None if self._down_since is None else self._down_since + self.after - self.clock()
                if wait is not None and wait <= 0:
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                    reason = self._last.detail if self._last is not None and self._last.detail else "no stream"
                    self.gave_up = f"{reason}; gave up after {self.after:g}s without a stream"
                    feed.status(SourceStatus(self.host, FAILED, self.gave_up))
                    return
                changed = asyncio.ensure_future(self._changed.wait())
                await asyncio.wait({task, changed}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
                changed.cancel()
            task.result()  # a source that raised is a bug: let it show
            if self._last is not None and self._last.state == FAILED:
                self.gave_up = self._last.detail  # failed for good: nothing to wait for
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
