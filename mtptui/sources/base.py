"""What every line source promises: raw lines and status changes, pushed to a Feed.

Sources run as asyncio tasks (inside a Textual worker, or plain asyncio for headless commands).
They never parse: they hand raw lines (journald json, short-iso, raw server output) to
``Feed.lines`` in batches, so a flood costs one call per batch, not one per line. A source that
must lose lines reports it with ``Feed.dropped`` rather than losing them silently.
"""

from __future__ import annotations

import abc
import math
import time
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol, TypeAlias

# Source states, in the order a healthy stream goes through them
CONNECTING: Final = "connecting"
STREAMING: Final = "streaming"
RECONNECTING: Final = "reconnecting"  # lost; will resume from the last cursor after a backoff
FAILED: Final = "failed"  # gave up or cannot work (auth refused, bad host key, no journal rights)
ENDED: Final = "ended"  # a finite source (a file, a process) reached its end
SourceState: TypeAlias = Literal["connecting", "streaming", "reconnecting", "failed", "ended"]


@dataclass(slots=True)
class SourceStatus:
    host: str | None
    state: SourceState
    detail: str = ""  # what happened, without the host's name (every view puts that in front)
    ts: float = field(default_factory=time.time)
    retry_at: float | None = None  # RECONNECTING: the wall time of the next attempt

    def describe(self, now: float, name: str) -> str:
        """`name (retry in 4s): connection refused (no sshd listening?)`, `name (not retrying):
        ...`: what failed and what comes next, the next step first (a narrow status line cuts
        the end). `name` is how the view calls the host."""
        if self.state == RECONNECTING and self.retry_at is not None:
            wait = math.ceil(self.retry_at - now)
            name += f" (retry in {wait}s)" if wait > 0 else " (retrying)"
        elif self.state == FAILED:
            name += " (not retrying)"
        return f"{name}: {self.detail}" if self.detail else name


class Feed(Protocol):
    def lines(self, raw: list[str], host: str | None) -> None:
        """Raw lines, in order. `host` (a config name) overrides the envelope's hostname."""

    def status(self, st: SourceStatus) -> None:
        """A state change of one host's stream."""

    def dropped(self, n: int, reason: str, host: str | None) -> None:
        """Lines the source knows it lost (a gap in a live stream, an overfull buffer)."""


class Source(abc.ABC):
    label: str = ""  # shown in the status bar: `ssh gpu1,gpu2`, `replay x.log`, `simulator`
    # the host its lines are for (a config name), None: the envelope's. Set by each source (a
    # wrapper's is its inner source's), so declared here without a value.
    host: str | None

    @abc.abstractmethod
    async def run(self, feed: Feed) -> None:
        """Streams until the input ends or the task is cancelled. Never raises for a host's
        trouble: that is reported with ``feed.status(... FAILED ...)``."""


class LineSplitter:
    """Bytes as they are read in, whole lines out (without their `\n`; a lone `\r`, a progress
    bar's redraw, stays inside its line). A line without its end waits for the next chunk, up to
    ``max_partial`` bytes: a longer one is passed on as it is (the parser drops it, counted)."""

    def __init__(self, max_partial: int = 1 << 20) -> None:
        self.max_partial = max_partial
        self.partial = b""

    def feed(self, chunk: bytes) -> list[str]:
        data = self.partial + chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            self.partial = data
            return self.flush() if len(data) > self.max_partial else []
        self.partial = data[cut + 1:]
        return data[:cut].decode("utf-8", "replace").split("\n")

    def flush(self) -> list[str]:
        """The unfinished line, if any (the input ended or moved on without its `\n`)."""
        rest, self.partial = self.partial, b""
        return [rest.decode("utf-8", "replace")] if rest else []

