"""The restart state machine: lock, write, reload, restart, wait for ready, verify; on any failure
roll back (restore, reload, restart, wait, verify the old state); unlock; audit.

(The types are settled first; the machine follows.)"""

from __future__ import annotations

from dataclasses import dataclass, field

# Exit codes, shared by `mtptui spec` and the dashboard's messages.
OK, NOT_RUN, BAD_ARGS, ROLLED_BACK, ROLLBACK_FAILED = 0, 1, 2, 3, 4
APPLIED, RESULT_ROLLED_BACK, RESULT_ROLLBACK_FAILED, RESULT_NOT_RUN = "applied", "rolled_back", "rollback_failed", "not_run"


@dataclass
class PhaseEvent:
    phase: str  # lock, write, reload, restart, wait, verify, rollback, rollback_wait, rollback_verify, unlock
    state: str  # "start", "progress", "ok", "fail"
    detail: str = ""
    elapsed_s: float = 0.0  # since the action began

    def to_json(self) -> dict:
        return {"phase": self.phase, "state": self.state, "detail": self.detail,
                "elapsed_s": round(self.elapsed_s, 3)}


@dataclass
class Outcome:
    result: str  # APPLIED, RESULT_ROLLED_BACK, RESULT_ROLLBACK_FAILED, RESULT_NOT_RUN
    exit_code: int
    message: str  # one line: "verified: accept len 2.41 after 3 batches", or why it failed
    phases: list[PhaseEvent] = field(default_factory=list)
