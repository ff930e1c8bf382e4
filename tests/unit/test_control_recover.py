"""What `spec HOST --recover` puts back (control/audit.last_verified) and how the unit now is said
after a cut-off action (control/session: the drop-in matched whole, named by its header)."""

from __future__ import annotations

from mtptui.control import audit, systemd
from mtptui.control.session import _runs_now, dropin_name
from mtptui.control.target import UnitState

BASE = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
MTP2 = BASE + ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "2", "--speculative-eagle-topk", "1",
               "--speculative-num-draft-tokens", "3"]
BROKEN = MTP2 + ["--no-such-flag"]


def dropin(argv: list[str], profile: str) -> str:
    return systemd.render_dropin(argv, {}, profile=profile, written_by="ops@laptop")


def entry(**kw) -> dict:
    return audit.new_entry(host="gpu1", unit="s.service", action="apply", **kw)


def test_the_last_verified_settings_are_the_newest_action_that_verified_them(tmp_path):
    log = tmp_path / "audit.jsonl"
    d2, db = dropin(MTP2, "mtp2"), dropin(BROKEN, "broken")
    for e in (
        entry(profile="mtp2", result="applied", exec_start_after=MTP2, dropin_after=d2, verified="after"),
        # rolled back: the old settings were verified again
        entry(profile="broken", result="rolled_back", exec_start_before=MTP2, dropin_before=d2,
              exec_start_after=BROKEN, dropin_after=db),
        entry(profile="broken", result="interrupted", exec_start_before=MTP2, dropin_before=d2,
              exec_start_after=BROKEN, dropin_after=db),  # killed: verified nothing
        {**entry(result="applied", exec_start_after=BASE, dropin_after=None), "host": "gpu2"},  # another host
        {**entry(result="done", exec_start_before=BASE, dropin_before=None), "action": "bench"},  # no "verified"
    ):
        audit.append(e, log)
    found = audit.last_verified("gpu1", "s.service", log)
    assert found is not None
    e, d, argv = found
    assert (e["profile"], e["result"], d, argv) == ("broken", "rolled_back", d2, MTP2)
    assert audit.last_verified("gpu1", "other.service", log) is None

    # an interrupt put back with a restart verified the old settings; one before any restart did not
    audit.append(entry(profile="off", result="interrupted", restored=True, verified="before",
                       exec_start_before=BASE, dropin_before=None, exec_start_after=MTP2, dropin_after=d2), log)
    audit.append(entry(profile="mtp3", result="interrupted", restored=True,
                       exec_start_before=MTP2, dropin_before=d2, exec_start_after=MTP2, dropin_after=d2), log)
    e, d, argv = audit.last_verified("gpu1", "s.service", log)
    assert (e["profile"], d, argv) == ("off", None, BASE)


def test_the_unit_now_is_named_by_its_whole_drop_in():
    d2, db = dropin(MTP2, "mtp2"), dropin(BROKEN, "broken")
    cut = {"dropin_before": d2, "dropin_after": db}

    def now(d: str | None, argv: list[str]) -> str:
        return _runs_now(UnitState(argv=argv, source="x", dropin=d, agrees=True, active="failed"), cut)

    # the speculative flags of broken are mtp2's: only the whole drop-in tells them apart
    assert now(db, BROKEN) == "broken's drop-in: the drop-in that action wrote"
    assert now(d2, MTP2) == "mtp2's drop-in: as before that action (its drop-in put back)"
    assert now(None, BASE) == "its own ExecStart (speculation off): changed since that action"
    assert now(dropin(MTP2, "mine"), MTP2) == "mine's drop-in: changed since that action"
    assert _runs_now(UnitState(argv=MTP2, source="x", dropin=d2, agrees=True, active="active"),
                     {"dropin_before": d2, "dropin_after": d2}) == "mtp2's drop-in: unchanged by that action"
    # an entry of an older mtptui has no drop-ins: the flags tell what runs
    assert _runs_now(UnitState(argv=MTP2, source="x", dropin=d2, agrees=True, active="active"), {}) == "mtp2 (ExecStart)"
    assert dropin_name("[Service]\nExecStart=\nExecStart=/bin/x\n", BASE) == "a drop-in of mtptui"
