"""A host's HTTP port, reachable from this machine: over SSH a local port forwarded through the
connection the console already holds (bound to 127.0.0.1 on a port the system picks, so nothing
is opened on the network); on this machine, or for the demo's child, the port itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

LOOPBACK = "127.0.0.1"


async def _nothing() -> None:
    return None


@dataclass
class Forward:
    port: int  # connect to host:port from here
    where: str  # what it reaches, for messages: "127.0.0.1:30000 on gpu1, through SSH"
    host: str = LOOPBACK
    close: Callable[[], Awaitable[None]] = _nothing
    alive: Callable[[], bool] = lambda: True  # False once the SSH connection under it is gone


def direct(host: str, port: int) -> Forward:
    """A server this machine reaches itself (no tunnel)."""
    return Forward(port=port, where=f"{host}:{port}", host=host)
