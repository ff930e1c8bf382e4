"""A host's GPUs, streamed from `nvidia-smi --query-gpu ... -lms 1000` (core/gpus.ARGV) over the
transport its journal already uses (the SSH journal source's SshTransport, or LocalRunner here),
each line stamped with the time it came and read by core/gpus. Where the host has no nvidia-smi,
AMD's `amd-smi monitor` (looping itself), then `rocm-smi` (run again each second), in that order.

A host without any of them, or whose driver does not answer, gets one note and the source ends:
the panel is off, never retried in a loop. A cut link is retried with backoff, as the journal is; over
SSH the connection is the journal source's, so this waits for it to connect again rather than
opening a second one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from mtptui.core.gpus import AMD_SMI_ARGV, ARGV, INTERVAL_MS, ROCM_SMI_ARGV, AmdStream, GpuSample, GpuStream
from mtptui.sources.backoff import Backoff
from mtptui.transport.errors import TransportError
from mtptui.transport.process import StreamedProcess


class GpuSink(Protocol):
    def gpu_samples(self, host: str, samples: list[GpuSample]) -> None: ...

    def gpu_note(self, host: str, text: str) -> None:
        """Once per state the user should know of: the panel off, the link lost."""


class _Streams(Protocol):
    async def stream(self, argv: list[str]) -> StreamedProcess: ...


@dataclass(frozen=True)
class Tool:
    name: str
    argv: tuple[str, ...]
    stream: Callable[[], GpuStream] = GpuStream
    every: float | None = None  # a tool without a loop of its own: run again this long after each run


TOOLS = (Tool("nvidia-smi", ARGV), Tool("amd-smi", AMD_SMI_ARGV, AmdStream),
         Tool("rocm-smi", ROCM_SMI_ARGV, AmdStream, every=INTERVAL_MS / 1000))

_MISSING = ("not found", "no such file", "command not found",
            "invalid choice")  # argparse's, from an amd-smi older than `monitor` (ROCm 6.0): try the next
_DRIVER = ("nvidia-smi has failed", "couldn't communicate with the nvidia driver", "no devices were found")


def missing(rc: int | None, stderr: str, stdout_head: str) -> bool:
    """Whether the tool is not on the host (the shell's or env's 127, or its words), or lacks what
    is asked of it."""
    low = (stderr + "\n" + stdout_head).lower()
    return rc == 127 or (rc is not None and rc != 0 and any(m in low for m in _MISSING))


def off_reason(host: str, rc: int | None, stderr: str, stdout_head: str, tool: str = "nvidia-smi") -> str | None:
    """The one line that turns the panel off, from how the tool ended; None when trying again may
    help (the link dropped)."""
    low = (stderr + "\n" + stdout_head).lower()
    if missing(rc, stderr, stdout_head):
        return f"no {tool} on {host}: GPU panel off"
    if any(m in low for m in _DRIVER):
        return f"{tool} on {host} cannot reach the driver: GPU panel off"
    if rc not in (None, 0):
        tail = next((ln.strip() for ln in reversed(low.splitlines()) if ln.strip()), "")
        return f"{tool} on {host} exited {rc}{': ' + tail if tail else ''}: GPU panel off"
    return None


def _names(tools: tuple[Tool, ...]) -> str:
    names = [t.name for t in tools]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


class GpuSource:
    def __init__(self, host: str, transport: _Streams, *, backoff: Backoff | None = None,
                 argv: tuple[str, ...] | None = None, tools: tuple[Tool, ...] = TOOLS,
                 clock: Callable[[], float] = time.time) -> None:
        """`argv`: one nvidia-smi command instead of the tools (the demo's stand-in)."""
        self.host = host
        self.transport = transport
        self.backoff = backoff or Backoff(1.0, 30.0)
        self.tools = (Tool("nvidia-smi", argv),) if argv is not None else tools
        self.tool = self.tools[0]
        self.clock = clock
        self.stream = self.tool.stream()
        self.off: str | None = None  # the note that ended it

    @property
    def argv(self) -> list[str]:
        return list(self.tool.argv)

    def _next_tool(self) -> bool:
        """The tool is not on the host: the next one, False where none is left."""
        i = self.tools.index(self.tool) + 1
        if i >= len(self.tools):
            return False
        self.tool = self.tools[i]
        self.stream = self.tool.stream()
        return True

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
                    if "not found" in e.message:
                        if self._next_tool():
                            continue
                        self.off = f"no {_names(self.tools)} on {self.host}: GPU panel off"
                    else:
                        self.off = f"{self.host}: {e.message}: GPU panel off"
                    sink.gpu_note(self.host, self.off)
                    return
                got, reason = 0, None
            if reason == "missing":
                if self._next_tool():
                    continue
                reason = f"no {_names(self.tools)} on {self.host}: GPU panel off"
            if reason is not None:
                self.off = reason
                sink.gpu_note(self.host, reason)
                return
            if got:
                self.backoff.reset()
                lost = False
                if self.tool.every is not None:
                    await asyncio.sleep(self.tool.every)  # a tool run once a second, not a lost link
                    continue
            elif not lost:
                sink.gpu_note(self.host, f"GPU readings from {self.host} lost: retrying")
                lost = True
            await asyncio.sleep(self.backoff.next())

    async def _once(self, sink: GpuSink) -> tuple[int, str | None]:
        """One run of the tool, to its end: (samples read, the reason to stop for good, "missing"
        where the tool is not on the host, or None)."""
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
        out = head.decode("utf-8", "replace")
        if missing(rc, proc.stderr_text, out):
            return 0, "missing"
        return 0, off_reason(self.host, rc, proc.stderr_text, out, self.tool.name)
