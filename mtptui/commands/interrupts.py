"""What a signal means while a command changes a host (`spec`, `bench`, `tune`).

The first ctrl-c, SIGTERM or SIGHUP stops the change and puts the host back as it was, verified
(the command's `stop`). The second says what stopping at once would leave (`leaving`) and, on a
terminal after a ctrl-c, asks whether to leave it so ("y", or a third signal, leaves it; anything
else goes on putting it back); without a terminal (a script, systemd's SIGTERM, a hangup) it says
so and leaves it at once (`leave`). A terminal that hung up takes what is printed nowhere, and a
write there never stops the put-back.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from types import TracebackType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
NAMES = {signal.SIGINT: "ctrl-c", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


def say(text: str, end: str = "\n") -> None:
    """One line on stderr, or nowhere when it cannot be written (the terminal hung up)."""
    try:
        sys.stderr.write(text + end)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class Interrupts:
    """`with Interrupts(...):` around the part of a command that changes the host."""

    def __init__(self, command: str, *, stop: Callable[[str], None], leaving: Callable[[], str],
                 leave: Callable[[], None]) -> None:
        self.command = command
        self.stop = stop  # the first signal: stop and put the host back (its name: "ctrl-c")
        self.leaving = leaving  # what stopping at once leaves, in words
        self.leave = leave  # stop at once
        self.count = 0
        self.left = False  # the operator (or a second signal without a terminal) left the host so
        self._asking = False
        self._loop: asyncio.AbstractEventLoop | None = None

    def __enter__(self) -> Interrupts:
        self._loop = asyncio.get_running_loop()
        for sig in SIGNALS:
            self._loop.add_signal_handler(sig, self._on, sig)
        return self

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        assert self._loop is not None
        self._stop_asking()
        for sig in SIGNALS:
            self._loop.remove_signal_handler(sig)

    def _on(self, sig: signal.Signals) -> None:
        self.count += 1
        why = NAMES.get(sig, sig.name)
        if self.count == 1:
            self.stop(why)
            return
        if sig == signal.SIGINT and not self._asking and self.count == 2 and _terminal():
            say(f"\nmtptui {self.command}: stopping at once would leave {self.leaving()}")
            say("leave it so? [y/N] ", end="")
            self._asking = True
            assert self._loop is not None
            self._loop.add_reader(sys.stdin.fileno(), self._answer)
            return
        self._leave(why)

    def _answer(self) -> None:
        try:
            line = sys.stdin.readline()
        except (OSError, ValueError):
            line = ""
        self._stop_asking()
        if line.strip().lower() in ("y", "yes"):
            self._leave("asked")
        else:
            self.count = 1  # the next ctrl-c asks again
            say(f"mtptui {self.command}: going on putting it back")

    def _stop_asking(self) -> None:
        if self._asking and self._loop is not None:
            self._loop.remove_reader(sys.stdin.fileno())
        self._asking = False

    def _leave(self, why: str) -> None:
        self._stop_asking()
        if self.left:
            return
        self.left = True
        say(f"\nmtptui {self.command}: {why}: stopping at once; leaving {self.leaving()}")
        self.leave()


def _terminal() -> bool:
    try:
        return sys.stdin.isatty()
    except (OSError, ValueError):
        return False
