"""The shape the local and the SSH transport share: a short command's answer, a running command
whose output is streamed, and the transport itself (Runner, Transport)."""

from __future__ import annotations

import abc
import signal
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from mtptui.transport.tunnel import Forward

# Kept for the error message when the command ends: journalctl and sudo say why in a line or two.
STDERR_TAIL_LINES = 20


@dataclass
class CompletedCommand:
    """A short command run to its end (systemctl, cat): the transports' common answer."""

    returncode: int | None  # None: ended by a signal or the connection was lost
    stdout: str
    stderr: str


class StreamedProcess(abc.ABC):
    """Standard output as raw bytes (never decoded here: a line can be 10 MB, a message binary)."""

    def __init__(self) -> None:
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        # Called with each stderr line as it comes (and this process), for errors that do not
        # end the command by themselves.
        self.on_stderr: Callable[[str, StreamedProcess], None] | None = None

    @abc.abstractmethod
    async def read(self, n: int = 1 << 16) -> bytes:
        """Up to n bytes of standard output; b'' at its end. May raise TransportError."""

    @abc.abstractmethod
    async def wait(self) -> int | None:
        """The exit status, or None when it ended by a signal or the connection was lost."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Stops the command (and, for SSH, the remote one with it). Safe to call twice."""

    def _add_stderr(self, data: bytes | str) -> None:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        for line in text.splitlines():
            if line.strip():
                self._stderr.append(line.strip())
                if self.on_stderr is not None:
                    self.on_stderr(line.strip(), self)

    @property
    def stderr_text(self) -> str:
        return "\n".join(self._stderr)


class Runner(Protocol):
    """Runs a short command to its end. Raises TransportError when the host cannot be asked."""

    async def run(self, argv: list[str], *, input: str | None = None,
                  timeout: float | None = 60.0) -> CompletedCommand: ...


class Transport(Runner, Protocol):
    """A way to one host: SshTransport (transport/ssh.py), LocalRunner (transport/local.py), and
    the demo's child (control/child.py). What a control target and a version query hold."""

    @property
    def where(self) -> str:
        """`user@host:port`, `this machine`: for messages."""
        ...

    async def connect(self) -> None: ...

    async def close(self) -> None: ...

    async def stream(self, argv: list[str]) -> StreamedProcess:
        """Starts argv; it stops when the returned process is closed."""
        ...

    async def forward(self, host: str, port: int) -> Forward:
        """host:port as the host sees it, reachable from this machine."""
        ...


def die_with_parent() -> None:
    """preexec_fn for a child that must not outlive mtptui (the simulator of the demo, a local
    journalctl -f): when mtptui dies without cleaning up (its terminal closed, SIGKILL), the
    kernel sends the child SIGTERM. Such children run in their own session, so a closed terminal's
    SIGHUP never reaches them otherwise. Linux only; elsewhere nothing happens."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass
