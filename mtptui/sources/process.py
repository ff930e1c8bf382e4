"""Lines from a child process (the demo's simulator): its stdout and stderr, merged.

The output is read in chunks and pushed a chunk at a time, so a chatty child costs one Feed call
per read, not one per line. The child is terminated when the source is cancelled (the dashboard
quits), and killed if it ignores that.

`restart(argv)` stops the child and starts it again with a new argv: the demo's stand-in for a
systemd restart. Around it the source logs lines in systemd's words (`Stopping`, `Stopped`,
`Started`, `Main process exited`), so the dashboard and the control path read the child's
lifecycle as they read a unit's. Taps (`tap()`) get every line too, for the control path's watch.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable, Sequence

from mtptui.sources.base import (CONNECTING, ENDED, FAILED, STREAMING, Feed, LineSplitter, Source,
                                 SourceStatus)
from mtptui.transport.process import die_with_parent

READ_SIZE = 1 << 16
MAX_PARTIAL = 1 << 20  # a "line" longer than this is passed on as it is (the parser drops it)


class ProcessSource(Source):
    def __init__(self, argv: Sequence[str], *, host: str | None = None, label: str = "",
                 env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        self.argv = list(argv)
        self.host = host
        self.label = label or f"process {os.path.basename(self.argv[0])}"
        self.env = env
        self.cwd = cwd
        self.returncode: int | None = None
        self.pid: int | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._next: tuple[list[str], dict[str, str] | None] | None = None  # a restart asked for
        self._taps: list[asyncio.Queue[list[str]]] = []
        self.starts = 0
        self._feed: Feed | None = None
        # Set by the control path: a child that exited waits to be started again (a rollback
        # after a start that failed) instead of ending the source.
        self.restartable = False
        self._wake: asyncio.Event | None = None
        self.started_at: float | None = None  # when the child now running was started (wall clock)
        # Set by the control path: sees every batch of lines as it comes (the child's start clock).
        self.watch: Callable[[list[str]], None] | None = None

    def tap(self) -> asyncio.Queue[list[str]]:
        """A queue that gets every later batch of lines (a list of str), until untapped."""
        q: asyncio.Queue[list[str]] = asyncio.Queue()
        self._taps.append(q)
        return q

    def untap(self, q: asyncio.Queue[list[str]]) -> None:
        if q in self._taps:
            self._taps.remove(q)

    async def restart(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        """Stops the child (SIGTERM, then SIGKILL) and starts `argv` in its place."""
        if self._proc is None:
            # not started yet: it starts with the new argv, and says so as a restart would
            self.argv = list(argv)
            if env is not None:
                self.env = env
            self.starts = max(self.starts, 1)
            return
        self._next = (list(argv), env)
        if self._feed is not None:
            self._push(self._feed, [f"Stopping {self.label}..."])
        if self.running:
            await _stop(self._proc)
        if self._wake is not None:
            self._wake.set()

    @property
    def running(self) -> bool:
        """The child was started and has not been reaped."""
        return self._proc is not None and self._proc.returncode is None

    def kill_now(self) -> None:
        """Last resort at exit, outside any event loop: SIGKILL the child's process group."""
        if self.running and self.pid is not None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _push(self, feed: Feed, lines: list[str]) -> None:
        if self.watch is not None:
            self.watch(lines)
        feed.lines(lines, self.host)
        for q in self._taps:
            q.put_nowait(lines)

    async def run(self, feed: Feed) -> None:
        self._feed = feed
        while True:
            await self._run_once(feed)
            if self._next is None and self.restartable:
                self._wake = asyncio.Event()
                await self._wake.wait()
                self._wake = None
            if self._next is None:
                return
            self.argv, env = self._next
            self._next = None
            if env is not None:
                self.env = env

    async def _run_once(self, feed: Feed) -> None:
        name = self.label
        if self.starts:
            self._push(feed, [f"Started {name}."])
        self.starts += 1
        self._proc = None
        feed.status(SourceStatus(self.host, CONNECTING, self.label))
        self.started_at = time.time()
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, env=self.env, cwd=self.cwd,
                start_new_session=True,  # its own process group: a terminal ^C is ours to handle
                preexec_fn=die_with_parent)
        except OSError as e:
            feed.status(SourceStatus(self.host, FAILED, f"cannot start {self.argv[0]}: {e.strerror or e}"))
            return
        self.pid = proc.pid
        self._proc = proc
        feed.status(SourceStatus(self.host, STREAMING, self.label))
        assert proc.stdout is not None
        lines = LineSplitter(MAX_PARTIAL)
        try:
            while True:
                chunk = await proc.stdout.read(READ_SIZE)
                if not chunk:
                    break
                whole = lines.feed(chunk)
                if whole:
                    self._push(feed, whole)
            rest = lines.flush()
            if rest:
                self._push(feed, rest)
            self.returncode = await proc.wait()
        except asyncio.CancelledError:
            await _stop(proc)
            raise
        if self._next is not None:
            self._push(feed, [f"Stopped {name}."])
            return
        if self.returncode not in (0, None):
            self._push(feed, [f"Main process exited, code=exited, status={self.returncode}"])
        if self.returncode == 0:
            feed.status(SourceStatus(self.host, ENDED, f"{self.label} exited"))
        else:
            feed.status(SourceStatus(self.host, FAILED, f"{self.label} exited with status {self.returncode}"))


async def _stop(proc: asyncio.subprocess.Process, grace: float = 3.0) -> None:
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        await asyncio.wait_for(proc.wait(), grace)
    except asyncio.TimeoutError:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        await proc.wait()
