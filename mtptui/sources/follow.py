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
import stat

from mtptui.sources.base import (CONNECTING, FAILED, RECONNECTING, STREAMING, Feed, LineSplitter, Source,
                                 SourceState, SourceStatus)

READ_SIZE = 1 << 16
CHUNK_LINES = 2000  # lines per push: one Feed call per chunk, never one per line


def check_followable(path: str) -> None:
    """Raises InputError, one line, for what `--file` cannot follow: something not a regular file
    (opening a FIFO blocks the loop until a writer comes, SIGTERM unheard) or a file that is no
    text log (binary, a journal file). A missing or unreadable file is waited for, as run() does."""
    from mtptui.sources.file import InputError, _check_head

    try:
        st = os.stat(path)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: not a regular file (a log file is followed as it grows)")
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return
    _check_head(path, head)


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
                        if not stat.S_ISREG(os.stat(self.path).st_mode):  # a FIFO would block the loop
                            report(FAILED, f"{self.path}: not a regular file")
                            return
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
