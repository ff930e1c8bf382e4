"""How an action's end is told (issue 17): each result in its own words. A console whose lock
another console took mid-action (result lock_lost, exit 4, control/session.py) did not fail a
rollback: it stopped, and says so, and whose hands the host is in."""

from __future__ import annotations

import pytest

from mtptui.control.restart import (APPLIED, OK, RESULT_NOT_RUN, RESULT_ROLLBACK_FAILED, RESULT_ROLLED_BACK,
                                    ROLLBACK_FAILED, ROLLED_BACK, NOT_RUN, Outcome)
from mtptui.control.session import RESULT_LOCK_LOST
from mtptui.tui.running import STICKY_S, outcome_notice

LOST = ("lost the lock to ops@laptop pid 4242 (it took this console for gone): stopped at wait; the host is in "
        "that console's hands, look at it")


def test_a_lost_lock_is_not_called_a_failed_rollback():
    msg, sev, timeout = outcome_notice("gpu1", "mtp3", Outcome(RESULT_LOCK_LOST, ROLLBACK_FAILED, LOST))
    assert "ROLLBACK FAILED" not in msg and "rolled back" not in msg
    assert msg.startswith("gpu1: mtp3 stopped: another console took the lock") and LOST in msg
    assert sev == "error" and timeout == STICKY_S  # the host is mid-action in other hands: look at it


@pytest.mark.parametrize("result, code, words, severity", [
    (APPLIED, OK, "verified", "information"),
    (RESULT_ROLLED_BACK, ROLLED_BACK, "failed and was rolled back", "warning"),
    (RESULT_ROLLBACK_FAILED, ROLLBACK_FAILED, "ROLLBACK FAILED", "error"),
    (RESULT_NOT_RUN, NOT_RUN, "not run", "error"),
    (RESULT_LOCK_LOST, ROLLBACK_FAILED, "another console took the lock", "error"),
])
def test_each_result_in_its_own_words(result, code, words, severity):
    msg, sev, _ = outcome_notice("gpu1", "mtp3", Outcome(result, code, "verified: accept len 2.41" if code == OK
                                                          else "why"))
    assert words in msg and sev == severity
    others = {"ROLLBACK FAILED", "rolled back", "another console took the lock", "not run"} - {words}
    assert not any(o in msg for o in others if o not in words), msg


def test_an_unknown_result_is_told_by_its_name_not_by_its_exit_code():
    msg, sev, _ = outcome_notice("gpu1", "mtp3", Outcome("something_new", ROLLBACK_FAILED, "it happened"))
    assert "ROLLBACK FAILED" not in msg and "something_new" in msg and "exit 4" in msg and sev == "error"
