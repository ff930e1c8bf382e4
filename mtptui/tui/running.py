"""An action under way on a host, as the dashboard shows it (which phase, for how long), and how
its outcome is told. No Textual: the screen reads these on its tick."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mtptui.control.restart import (APPLIED, INTERRUPTED, OK, RESULT_INTERRUPTED, RESULT_NOT_RUN, RESULT_ROLLBACK_FAILED,
                                    RESULT_ROLLED_BACK, Outcome, PhaseEvent)
from mtptui.control.session import RESULT_LOCK_LOST
from mtptui.printable import printable

KNOWN = (APPLIED, RESULT_ROLLED_BACK, RESULT_ROLLBACK_FAILED, RESULT_LOCK_LOST, RESULT_NOT_RUN)

PHASES = {"plan": "reading the unit", "confirm": "waiting for your answer", "lock": "lock",
          "write": "write the drop-in", "reload": "daemon-reload", "restart": "restart",
          "wait": "wait for ready", "verify": "verify", "rollback": "ROLLING BACK",
          "rollback_wait": "rollback: wait for ready", "rollback_verify": "rollback: verify", "unlock": "unlock"}
STICKY_S = 24 * 3600.0  # a failed rollback stays on screen until dismissed


@dataclass
class Running:
    host: str | None
    what: str  # "restarting gpu1 → mtp3"
    phase: str = "plan"
    detail: str = ""
    failed: bool = False  # some phase failed: what follows is the rollback
    started: float = field(default_factory=time.monotonic)
    cancel: Callable[[], None] | None = None  # stops it, when it can be stopped (a benchmark)
    # Once under way, what quitting does to it (tui/quitting.py): stop and put the host back as it
    # was, verified (its why: "q", "ctrl-c"); leave the host where it stands at once; and what that leaves.
    stop: Callable[[str], object] | None = None
    leave: Callable[[], object] | None = None
    leaving: Callable[[], str] | None = None
    stopping: str | None = None  # why a quit stopped it

    @property
    def under_way(self) -> bool:
        """Confirmed and running on the host (not still being planned or asked about)."""
        return self.phase not in ("plan", "confirm")

    def on_phase(self, ev: PhaseEvent) -> None:
        self.phase, self.detail = ev.phase, printable(ev.detail)  # may quote a journal line
        self.failed = self.failed or ev.state == "fail"

    def begin(self, what: str) -> None:
        """The confirmed action starts: the clock restarts with it."""
        self.what, self.phase, self.detail, self.started = what, "lock", "", time.monotonic()

    def text(self, now: float | None = None) -> str:
        """`restarting gpu1 → mtp3 · wait for ready 0:42 (loading weights)`."""
        s = int((time.monotonic() if now is None else now) - self.started)
        out = f"{self.what} · {PHASES.get(self.phase, self.phase)} {s // 60}:{s % 60:02d}"
        return f"{out} ({self.detail})" if self.detail else out


def outcome_notice(host: str | None, target: str, outcome: Outcome) -> tuple[str, str, float | None]:
    """(message, severity, timeout) of the notification that tells how an action ended, by its
    result: green when verified, a warning when rolled back, red and sticky when the rollback
    failed or when another console took the lock mid-action (this one stopped; the host is in
    the other's hands), red when it did not run. Exit 4 alone does not say which."""
    who = f"{host or 'this host'}: {target}"
    result = outcome.result
    if result == APPLIED or (result not in KNOWN and outcome.exit_code == OK):
        return f"{who} {outcome.message}", "information", 12.0
    if result == RESULT_ROLLED_BACK:
        return f"{who} failed and was rolled back (the old state is verified): {outcome.message}", "warning", 30.0
    if result == RESULT_ROLLBACK_FAILED:
        return (f"{who} ROLLBACK FAILED: {outcome.message}. mtptui stopped touching the host; "
                "look at it now (the audit log, a, has every step)", "error", STICKY_S)
    if result == RESULT_LOCK_LOST:
        return (f"{who} stopped: another console took the lock: {outcome.message}. This console did not roll "
                "back; the audit log (a) has its steps", "error", STICKY_S)
    if result == RESULT_INTERRUPTED and outcome.exit_code == INTERRUPTED:
        return f"{who} stopped: {outcome.message}", "warning", 30.0
    if result == RESULT_NOT_RUN:
        return f"{who} not run: {outcome.message}", "error", 15.0
    return f"{who} ended {result} (exit {outcome.exit_code}): {outcome.message}", "error", STICKY_S
