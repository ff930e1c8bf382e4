"""Commands on this machine as asyncio subprocesses: the transport of `mtptui local`."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal

from mtptui.transport.aio import wait_for
from mtptui.transport.errors import TransportError
from mtptui.transport.process import CompletedCommand, StreamedProcess, die_with_parent
from mtptui.transport.tunnel import Forward, direct

# Stream buffer of the pipe reader: a 10 MB journal line is read in pieces of this size.
READ_LIMIT = 1 << 20


class LocalProcess(StreamedProcess):
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        super().__init__()
        self.proc = proc
        self._stderr_task = asyncio.ensure_future(self._pump_stderr())

    async def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self._add_stderr(line)

    async def read(self, n: int = 1 << 16) -> bytes:
        assert self.proc.stdout is not None
        return await self.proc.stdout.read(n)

    async def wait(self) -> int | None:
        rc = await self.proc.wait()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        return rc if rc >= 0 else None

    async def close(self) -> None:
        if self.proc.returncode is None:
            # Its own session (start_new_session): a `sudo` in front relays our TERM to journalctl,
            # which it would not do for a signal from its own process group.
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 3.0)
            except asyncio.TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                await self.proc.wait()
        self._stderr_task.cancel()


async def start(argv: list[str]) -> LocalProcess:
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, limit=READ_LIMIT,
            preexec_fn=die_with_parent)
    except FileNotFoundError:
        raise TransportError(f"{argv[0]}: command not found on this machine", permanent=True) from None
    except PermissionError:
        raise TransportError(f"{argv[0]}: permission denied", permanent=True) from None
    except OSError as e:
        raise TransportError(f"cannot run {shlex.join(argv)}: {e.strerror or e}", permanent=True) from None
    return LocalProcess(proc)


class LocalRunner:
    """Short commands and streams on this machine: the runner of `mtptui spec --local` and of the
    dashboard's `mtptui local`, with the same shape as SshTransport's run and stream."""

    where = "this machine"

    async def connect(self) -> None:
        """Nothing to connect: here for the shape SshTransport has."""

    async def close(self) -> None:
        """Nothing to close."""

    async def run(self, argv: list[str], *, input: str | None = None,
                  timeout: float | None = 60.0) -> CompletedCommand:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise TransportError(f"{argv[0]}: command not found on this machine", permanent=True) from None
        except OSError as e:
            raise TransportError(f"cannot run {shlex.join(argv)}: {e.strerror or e}", permanent=True) from None
        try:
            out, err = await wait_for(proc.communicate(input.encode() if input is not None else None), timeout)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise TransportError(f"{shlex.join(argv)} took over {timeout:g}s", permanent=False) from None
        return CompletedCommand(proc.returncode, out.decode("utf-8", "replace"),
                                err.decode("utf-8", "replace"))

    async def stream(self, argv: list[str]) -> LocalProcess:
        return await start(argv)

    async def forward(self, host: str, port: int) -> Forward:
        """The server is on this machine: its port as it is."""
        return direct(host, port)
