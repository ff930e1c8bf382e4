"""The host lock after a crash: whether an owner is provably gone (pure), and the lock taken,
refused, kept alive and closed against a real directory on this machine (LocalRunner)."""

from __future__ import annotations


import pytest

from mtptui.control.lock import (HEARTBEAT_S, STALE_BEATS, Console, entry_gone, owner_name, owner_record,
                                 verdict)

NOW = 1_800_000_000.0
ME = Console(host="laptop", pid=100, boot_id="boot-a", machine_id="m-1", pid_ns="pid:[1]", pid_start=5)


def owner(**kw) -> dict:
    o = owner_record("ops@laptop", Console(host="laptop", pid=4242, boot_id="boot-a", machine_id="m-1",
                                           pid_ns="pid:[1]", pid_start=77),
                     now=NOW - 60, token="t", action="apply", profile="mtp3", audit_id="a1")
    o.update(heartbeat=NOW - 2, phase="restart")
    o.update(kw)
    return o


def alive(*pids):
    return lambda pid, start: pid in pids


def judge(o, **kw):
    kw.setdefault("stale_after", 1800)
    return verdict(o, ME, NOW, kw.pop("pid_alive", alive()), **kw)


# --- the verdict --------------------------------------------------------------------------------

def test_same_console_dead_pid_is_gone_at_once_alive_is_not():
    v = judge(owner())
    assert v.gone and v.why == "process not running" and not v.legacy
    v = judge(owner(), pid_alive=alive(4242))
    assert not v.gone and "runs on this machine" in v.why and v.breakable


def test_the_pid_start_time_goes_to_the_checker():
    seen = []
    judge(owner(), pid_alive=lambda pid, start: seen.append((pid, start)) or True)
    assert seen == [(4242, 77)]


def test_same_host_other_boot_is_gone_even_with_the_pid_running():
    v = judge(owner(boot_id="boot-b"), pid_alive=alive(4242))
    assert v.gone and "rebooted" in v.why


@pytest.mark.parametrize("change", [{"machine_id": "m-2"}, {"host": "desk"}, {"pid_ns": "pid:[9]"}])
def test_elsewhere_the_heartbeat_decides(change):
    # another machine (or one of the same name, or another pid namespace): its pid means nothing here
    fresh = judge(owner(**change), pid_alive=alive())
    assert not fresh.gone and fresh.why == "heartbeat 2 s ago"
    old = judge(owner(heartbeat=NOW - STALE_BEATS * HEARTBEAT_S - 1, **change), pid_alive=alive(4242))
    assert old.gone and old.why == f"no heartbeat for {STALE_BEATS * HEARTBEAT_S + 1:.0f} s"


def test_the_hosts_own_clock_wins_over_the_consoles():
    far = owner(host="desk", heartbeat=NOW - 3600)  # a console whose clock is an hour behind
    assert not judge(far, heartbeat_age=4.0).gone
    assert judge(owner(host="desk"), heartbeat_age=120.0).gone


def test_old_owner_files_keep_the_stale_after_rule():
    v = judge({"who": "ops@gone", "since": NOW - 7200, "token": "x"}, pid_alive=alive())
    assert v.legacy and not v.gone and v.breakable
    v = judge({"who": "ops@gone", "since": NOW - 60}, pid_alive=alive())
    assert v.legacy and not v.gone and not v.breakable
    v = judge(None)
    assert v.legacy and not v.gone and v.breakable and v.why == "no owner file"


def test_owner_names_tell_two_consoles_of_one_user_apart():
    assert owner_name(owner()) == "ops@laptop pid 4242"
    assert owner_name(owner(host="laptop2")) == "ops@laptop (on laptop2) pid 4242"
    assert owner_name({"who": "ops@gone"}) == "ops@gone"


# --- audit entries left running -----------------------------------------------------------------

def entry(**kw) -> dict:
    e = {"id": "a1", "time": NOW - 600, "host": "gpu1", "unit": "x.service", "result": "running",
         "console": {"host": "laptop", "pid": 4242, "boot_id": "boot-a", "machine_id": "m-1", "pid_ns": "pid:[1]"}}
    e.update(kw)
    return e


def test_entry_named_by_the_lock_follows_the_locks_verdict():
    o = owner()
    assert entry_gone(entry(), o, judge(o), ME, NOW, alive()) == "process not running"
    live = judge(o, pid_alive=alive(4242))
    assert entry_gone(entry(), o, live, ME, NOW, alive(4242)) is None


def test_entry_of_this_machine_is_judged_by_its_pid():
    assert entry_gone(entry(), None, None, ME, NOW, alive()) == "process not running"
    assert entry_gone(entry(), None, None, ME, NOW, alive(4242)) is None  # may be just before its lock
    rebooted = entry(console={**entry()["console"], "boot_id": "boot-0"})
    assert entry_gone(rebooted, None, None, ME, NOW, alive(4242)) == "its console rebooted since"


def test_entry_from_elsewhere_is_over_once_no_lock_names_it():
    e = entry(console={"host": "desk", "pid": 1})
    assert entry_gone(e, None, None, ME, NOW, alive()) == "its lock is gone"
    assert entry_gone(e, None, None, ME, e["time"] + 5, alive()) is None  # the seconds before its lock
    other = owner(audit_id="b2", host="desk")
    assert entry_gone(e, other, judge(other), ME, NOW, alive()) == "the lock is another action's now"
    legacy = {"who": "ops@old", "since": NOW - 10}
    assert entry_gone(e, legacy, judge(legacy), ME, NOW, alive()) is None  # it may be this very action


# --- the process checks -------------------------------------------------------------------------



# --- against a real lock directory ------------------------------------------------------------

















# --- the interrupted action, reported and closed ----------------------------------------------



# --- the heartbeat around an action -----------------------------------------------------------

