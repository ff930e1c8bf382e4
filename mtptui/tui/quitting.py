"""What leaving the dashboard means while it changes a host (issue 42), as `mtptui spec` does on
ctrl-c (commands/interrupts.py): the first q, ctrl-c, SIGTERM or SIGHUP stops each action under
way (an apply or restart from the keys, the benchmark, the tune) and puts its host back as it was,
verified, and the dashboard leaves once every host is back, having said how each ended. The second
asks whether to leave the hosts as they stand (a key; a signal leaves at once: no one may be at the
terminal, as without one for spec); "y", or a third, leaves them where they stand. Nothing under
way: it leaves at once. No Textual: the app wires its keys and signals here."""

from __future__ import annotations

from collections.abc import Callable

from mtptui.tui.running import Running

QUIT, STOPPING, ASK, LEAVE = "quit", "stopping", "ask", "leave"
# The dashboard's exit codes after such a quit, spec's: every host put back as it was, verified (130);
# a host left as it stood, or whose put-back failed (4).
PUT_BACK, LEFT = 130, 4


class Quitting:
    def __init__(self, running: dict[str | None, Running]) -> None:
        self.running = running  # the dashboard's: host -> the action under way there
        self.count = 0  # the interrupts taken since the first
        self.left = False  # the hosts were left where they stood
        self.said: list[str] = []  # how each stopped action ended: printed again once the screen is gone
        self.failed = False  # one of them was not put back
        self.on_done: Callable[[], None] | None = None  # the dashboard leaves (called once all are back)

    @property
    def active(self) -> bool:
        """A quit is under way: the dashboard leaves once the hosts are back."""
        return self.count > 0

    def acting(self) -> list[Running]:
        """The actions that changed or may change a host (past their preview and confirm)."""
        return [r for r in self.running.values() if r.under_way and r.stop is not None]

    def request(self, why: str, *, can_ask: bool) -> str:
        """An interrupt (`why`: q, ctrl-c, SIGTERM): what the dashboard does now. QUIT: leave,
        nothing is under way; STOPPING: each action was asked to put its host back (leave when
        `done`); ASK: ask whether to leave the hosts as they stand (then `answered`); LEAVE:
        they were left as they stand, leave now."""
        if self.left:
            return LEAVE
        acting = self.acting()
        if self.count == 0:
            if not acting:
                return QUIT
            self.count = 1
            for r in acting:
                r.stopping = why
                assert r.stop is not None
                r.stop(why)
            return STOPPING
        if not self.running:
            return QUIT  # all back already: the dashboard is leaving
        self.count += 1
        if self.count == 2 and can_ask:
            return ASK
        return self.leave()

    def answered(self, leave_now: bool) -> str:
        if leave_now:
            return self.leave()
        self.count = 1  # the next interrupt asks again
        return STOPPING

    def leave(self) -> str:
        self.said.append(f"left as it stands: {self.leaving()}")
        self.left = self.failed = True
        for r in list(self.running.values()):
            if r.leave is not None:
                r.leave()
        return LEAVE

    def leaving(self) -> str:
        """What leaving now leaves, in words, host by host."""
        return "; ".join(r.leaving() if r.leaving is not None else r.text() for r in self.running.values())

    def ended(self, line: str, put_back: bool) -> None:
        """How a stopped action ended (said on the screen, and again after it)."""
        self.said.append(line)
        self.failed = self.failed or not put_back

    def ended_action(self, host: str | None) -> None:
        """An action's flow ended (whatever its end): the dashboard leaves if it was the last one."""
        self.running.pop(host, None)
        if self.done and self.on_done is not None:
            self.on_done()

    @property
    def done(self) -> bool:
        """Quitting, and no action is under way any more: the dashboard leaves now."""
        return self.active and not self.running

    @property
    def code(self) -> int:
        return LEFT if self.failed else PUT_BACK
