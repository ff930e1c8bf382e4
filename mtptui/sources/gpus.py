"""A host's GPUs, streamed from `nvidia-smi --query-gpu ... -lms 1000` (core/gpus.ARGV) over the
transport its journal already uses (the SSH journal source's SshTransport, or LocalRunner here),
each line stamped with the time it came and read by core/gpus.

A host without the tool, or whose driver does not answer, gets one note and the source ends: the
panel is off, never retried in a loop. A cut link is retried with backoff, as the journal is; over
SSH the connection is the journal source's, so this waits for it to connect again rather than
opening a second one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

from mtptui.core.gpus import ARGV, GpuSample, GpuStream
from mtptui.sources.backoff import Backoff
from mtptui.transport.errors import TransportError
from mtptui.transport.process import StreamedProcess


class GpuSink(Protocol):
    def gpu_samples(self, host: str, samples: list[GpuSample]) -> None: ...

    def gpu_note(self, host: str, text: str) -> None:
        """Once per state the user should know of: the panel off, the link lost."""


class _Streams(Protocol):
    async def stream(self, argv: list[str]) -> StreamedProcess: ...


_MISSING = ("not found", "no such file", "command not found")
_DRIVER = ("nvidia-smi has failed", "couldn't communicate with the nvidia driver", "no devices were found")


def off_reason(host: str, rc: int | None, stderr: str, stdout_head: str) -> str | None:
    """The one line that turns the panel off, from how the tool ended; None when trying again may
    help (the link dropped)."""
    low = (stderr + "\n" + stdout_head).lower()
    if rc == 127 or (rc is not None and rc != 0 and any(m in low for m in _MISSING)):
        return f"no nvidia-smi on {host}: GPU panel off"
    if any(m in low for m in _DRIVER):
        return f"nvidia-smi on {host} cannot reach the driver: GPU panel off"
    if rc not in (None, 0):
        tail = next((ln.strip() for ln in reversed(low.splitlines()) if ln.strip()), "")
        return f"nvidia-smi on {host} exited {rc}{': ' + tail if tail else ''}: GPU panel off"
    return None


class GpuSource:
    def __init__(self, host: str, transport: _Streams, *, backoff: Backoff | None = None,
                 argv: tuple[str, ...] = ARGV, clock: Callable[[], float] = time.time) -> None:
        self.host = host
        self.transport = transport
        self.backoff = backoff or Backoff(1.0, 30.0)
        self.argv = list(argv)
        self.clock = clock
        self.stream = GpuStream()
        self.off: str | None = None  # the note that ended it

    def _connected(self) -> bool:
        # SshTransport has `conn` (None while the journal source reconnects); LocalRunner has none
        return getattr(self.transport, "conn", True) is not None

    async def run(self, sink: GpuSink) -> None:
        lost = False
        while True:
            if not self._connected():
                await asyncio.sleep(self.backoff.next())
                continue
            try:
                got, reason = await self._once(sink)
            except TransportError as e:
                if e.permanent:
                    self.off = (f"no nvidia-smi on {self.host}: GPU panel off"
                                if "not found" in e.message else f"{self.host}: {e.message}: GPU panel off")
                    sink.gpu_note(self.host, self.off)
                    return
                got, reason = 0, None
            if reason is not None:
                self.off = reason
                sink.gpu_note(self.host, reason)
                return
            if got:
                self.backoff.reset()
                lost = False
            elif not lost:
                sink.gpu_note(self.host, f"GPU readings from {self.host} lost: retrying")
                lost = True
            await asyncio.sleep(self.backoff.next())

    async def _once(self, sink: GpuSink) -> tuple[int, str | None]:
        """One run of the tool, to its end: (samples read, the reason to stop for good or None)."""
        proc = await self.transport.stream(self.argv)
        got = 0
        head = b""
        try:
            while data := await proc.read(1 << 16):
                if len(head) < 512:
                    head += data[:512]
                samples = self.stream.feed(data, self.clock())
                if samples:
                    got += len(samples)
                    sink.gpu_samples(self.host, samples)
        except BaseException:
            # cancelled (the dashboard closing) or the link broke mid-read: the tool loops for
            # ever, so it is stopped, not waited for
            await proc.close()
            self.stream.reset()
            raise
        rc = await proc.wait()
        await proc.close()
        self.stream.reset()
        if got:
            return got, None
        return 0, off_reason(self.host, rc, proc.stderr_text, head.decode("utf-8", "replace"))
