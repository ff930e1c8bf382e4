"""A server's log file followed as it grows, like `tail -F`: for servers that log to a file.

It reads the file from its first line, then each line as it is appended. When another file takes
the path (logrotate's rename and create) the old one is read to its end first, then the new one
from its start; a file cut short in place (copytruncate) is read again from its start. A missing
or unreadable file is waited for, its state reported as the stream's (`connecting`, then
`reconnecting` once it had been open). Regular files never block, so reads run on the loop.
"""

from __future__ import annotations

import asyncio
import os

from mtptui.sources.base import (CONNECTING, FAILED, RECONNECTING, STREAMING, Feed, LineSplitter, Source,
                                 SourceState, SourceStatus)

READ_SIZE = 1 << 16
CHUNK_LINES = 2000  # lines per push: one Feed call per chunk, never one per line


class FollowFileSource(Source):
    def __init__(self, path: str, *, host: str, poll: float = 0.2) -> None:
        self.path = path
        self.host = host
        self.poll = poll
        self.label = f"file {path}"

    async def run(self, feed: Feed) -> None:
        f = None
        ident: tuple[int, int] | None = None
        lines = LineSplitter()
        pending: list[str] = []
        state: SourceState | None = None

        def report(new: SourceState, detail: str = "") -> None:
            nonlocal state
            if new != state:
                state = new
                feed.status(SourceStatus(self.host, new, detail))

        try:
            while True:
                if f is None:
                    try:
                        f = open(self.path, "rb")  # noqa: SIM115 (held across awaits)
                    except (FileNotFoundError, PermissionError) as e:
                        report(CONNECTING if ident is None else RECONNECTING,
                               f"waiting for {self.path}: {e.strerror or e}")
                        await asyncio.sleep(self.poll)
                        continue
                    except OSError as e:
                        report(FAILED, f"{self.path}: {e.strerror or e}")
                        return
                    opened = os.fstat(f.fileno())
                    ident = (opened.st_dev, opened.st_ino)
                    report(STREAMING, self.label)
                chunk = f.read(READ_SIZE)
                if chunk:
                    pending += lines.feed(chunk)
                    if len(pending) >= CHUNK_LINES:
                        feed.lines(pending, self.host)
                        pending = []
                    await asyncio.sleep(0)
                    continue
                # At the end of what is written: hand on what was read, then look for a rotation.
                if pending:
                    feed.lines(pending, self.host)
                    pending = []
                st: os.stat_result | None
                try:
                    st = os.stat(self.path)
                except OSError:
                    st = None  # renamed away, the new one not there yet: keep the old one
                if st is not None and (st.st_dev, st.st_ino) != ident:
                    rest = lines.flush()
                    if rest:
                        feed.lines(rest, self.host)
                    f.close()
                    f = None
                    continue
                if st is not None and st.st_size < f.tell():
                    f.seek(0)  # cut short in place: its new content starts at 0
                    lines.flush()
                    continue
                await asyncio.sleep(self.poll)
        finally:
            if f is not None:
                f.close()
