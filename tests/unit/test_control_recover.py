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


def test_one_log_for_two_machines_of_one_host_name_keeps_them_apart(tmp_path, monkeypatch, capsys):
    # one audit log serves every job of an account, and two configs may call two machines gpu1:
    # --recover, the cut-off actions and the listing tell them apart by the machine (issue 42)
    from mtptui.commands import audit as audit_command

    log = tmp_path / "audit.jsonl"
    d2 = dropin(MTP2, "mtp2")
    audit.append(entry(profile="mtp2", result="applied", where="ops@10.0.0.1", exec_start_after=MTP2, dropin_after=d2,
                       verified="after"), log)
    audit.append(entry(profile="off", result="applied", where="ci@10.0.0.2", exec_start_after=BASE, dropin_after=None,
                       verified="after"), log)
    audit.append(entry(profile="mtp3", result="running", where="ci@10.0.0.2"), log)
    assert audit.last_verified("gpu1", "s.service", log, where="ops@10.0.0.1")[0]["profile"] == "mtp2"
    assert audit.last_verified("gpu1", "s.service", log, where="ci@10.0.0.2")[0]["profile"] == "off"
    assert audit.running_entries("gpu1", "s.service", log, where="ops@10.0.0.1") == []
    assert [e["profile"] for e in audit.running_entries("gpu1", "s.service", log, where="ci@10.0.0.2")] == ["mtp3"]
    # an entry of an older mtptui (no `where`) is taken by its names
    audit.append({k: v for k, v in entry(profile="mtp1", result="applied", exec_start_after=MTP2, dropin_after=d2,
                                         verified="after").items()}, log)
    assert audit.last_verified("gpu1", "s.service", log, where="ops@10.0.0.1")[0]["profile"] == "mtp1"

    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(log))
    assert audit_command.main([]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert "  gpu1 (ops@10.0.0.1)  s.service  mtp2  applied" in listed[0], listed
    assert "  gpu1 (ci@10.0.0.2)  s.service  off  applied" in listed[1], listed
