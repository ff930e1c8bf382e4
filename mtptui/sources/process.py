"""Lines from a child process (the demo's simulator): its stdout and stderr, merged.

The output is read in chunks and pushed a chunk at a time, so a chatty child costs one Feed call
per read, not one per line. The child is terminated when the source is cancelled (the dashboard
quits), and killed if it ignores that.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Sequence

from mtptui.sources.base import CONNECTING, ENDED, FAILED, STREAMING, Feed, Source, SourceStatus
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

    async def run(self, feed: Feed) -> None:
        feed.status(SourceStatus(self.host, CONNECTING, self.label))
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
        partial = b""
        try:
            while True:
                chunk = await proc.stdout.read(READ_SIZE)
                if not chunk:
                    break
                data = partial + chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    partial = data
                    if len(partial) > MAX_PARTIAL:
                        feed.lines([partial.decode("utf-8", "replace")], self.host)
                        partial = b""
                    continue
                partial = data[cut + 1:]
                text = data[:cut].decode("utf-8", "replace")
                feed.lines(text.split("\n"), self.host)
            if partial:
                feed.lines([partial.decode("utf-8", "replace")], self.host)
            self.returncode = await proc.wait()
        except asyncio.CancelledError:
            await _stop(proc)
            raise
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
