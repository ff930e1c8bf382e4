"""How an action's progress and outcome are told: phase and elapsed time, and the notification's
colour and stickiness by exit code."""

from __future__ import annotations

from mtptui.control.restart import (APPLIED, NOT_RUN, RESULT_NOT_RUN, RESULT_ROLLBACK_FAILED, RESULT_ROLLED_BACK,
                                    ROLLBACK_FAILED, ROLLED_BACK, OK, Outcome, PhaseEvent)
from mtptui.tui.running import STICKY_S, Running, outcome_notice


def test_the_line_says_what_which_phase_and_for_how_long():
    r = Running("gpu1", "restarting gpu1 → mtp3", started=100.0)
    r.on_phase(PhaseEvent("wait", "progress", "loading weights"))
    assert r.text(now=142.5) == "restarting gpu1 → mtp3 · wait for ready 0:42 (loading weights)"
    assert not r.failed
    r.on_phase(PhaseEvent("verify", "fail", "accept len absent"))
    r.on_phase(PhaseEvent("rollback", "start"))
    assert r.failed and r.text(now=100.0 + 3600 + 5) == "restarting gpu1 → mtp3 · ROLLING BACK 60:05"


def test_outcomes_green_warning_and_sticky_red():
    msg, sev, timeout = outcome_notice("gpu1", "mtp3", Outcome(APPLIED, OK, "verified: accept len 2.41 after 3 batches"))
    assert (msg, sev) == ("gpu1: mtp3 verified: accept len 2.41 after 3 batches", "information")
    msg, sev, _ = outcome_notice("gpu1", "mtp3", Outcome(RESULT_ROLLED_BACK, ROLLED_BACK, "no ready within 900 s"))
    assert sev == "warning" and "rolled back" in msg and msg.endswith("no ready within 900 s")
    msg, sev, timeout = outcome_notice("gpu1", "mtp3", Outcome(RESULT_ROLLBACK_FAILED, ROLLBACK_FAILED, "unit failed"))
    assert sev == "error" and timeout == STICKY_S and "ROLLBACK FAILED: unit failed" in msg
    msg, sev, timeout = outcome_notice("gpu1", "mtp3", Outcome(RESULT_NOT_RUN, NOT_RUN, "locked by ops@laptop since 12:01"))
    assert sev == "error" and timeout < STICKY_S and "locked by ops@laptop" in msg
