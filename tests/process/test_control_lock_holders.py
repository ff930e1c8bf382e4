"""The host lock on this machine, through LocalRunner (its commands are child processes): a dead console, a live owner, heartbeats, a retried take.

The process tier: these start child processes (tests/unit starts none)."""

from __future__ import annotations
import asyncio
import json
import os
import subprocess
import sys
import time
import pytest
from mtptui.control import audit
from mtptui.control.errors import LockedError
from mtptui.control.lock import (Console, owner_record,
                                 pid_alive, process_start)
from mtptui.control.target import SystemdTarget, UnitState
from mtptui.transport.local import LocalRunner


def target(tmp_path, **kw) -> SystemdTarget:
    t = SystemdTarget(LocalRunner(), "x", host="gpu1")
    t.lock_dir = str(tmp_path / "mtptui-x.service")
    for k, v in kw.items():
        setattr(t, k, v)
    return t


def put_owner(t: SystemdTarget, o: dict) -> None:
    os.makedirs(t.lock_dir, exist_ok=True)
    with open(f"{t.lock_dir}/owner", "w") as f:
        json.dump(o, f)


def read_owner(t: SystemdTarget) -> dict:
    with open(f"{t.lock_dir}/owner") as f:
        return json.load(f)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_pid_alive_on_this_machine():
    assert pid_alive(os.getpid(), process_start(os.getpid()))
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert not pid_alive(p.pid)
    assert not pid_alive(os.getpid(), (process_start(os.getpid()) or 0) + 1)  # a pid used again


def test_a_dead_consoles_lock_is_taken_at_once_and_said(tmp_path):
    async def go():
        t = target(tmp_path)
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        who = f"ops@{t.console.host}"
        put_owner(t, owner_record(who, Console(**{**t.console.fields(), "pid": dead.pid, "pid_start": None}),
                                  now=time.time() - 100, token="old", action="apply", profile="mtp3"))
        notes = []
        t.on_note = notes.append
        t.lock_info = {"action": "apply", "profile": "mtp1", "audit_id": "new1"}
        await t.lock("ops@laptop", stale_after=1800)
        o = read_owner(t)
        assert o["pid"] == os.getpid() and o["profile"] == "mtp1" and o["audit_id"] == "new1" and o["phase"] == "lock"
        assert notes == [f"gpu1: taking the lock of {who} pid {dead.pid} (gone: process not running)"]
        assert t.took_over[0]["token"] == "old"
        assert not [p for p in os.listdir(tmp_path) if ".gone-" in p]  # the old one renamed aside, then removed
        assert await t.holds_lock()
        await t.unlock()
        assert not os.path.exists(t.lock_dir)

    asyncio.run(go())


def test_a_live_owner_elsewhere_is_refused_by_name_and_taken_once_its_heartbeat_is_old(tmp_path):
    async def go():
        t = target(tmp_path)
        other = owner_record("ops@laptop", Console(host="laptop2", pid=4242, boot_id="b", machine_id="m-9"),
                             now=time.time() - 65, token="other", action="apply", profile="mtp3")
        other["phase"] = "restart"
        put_owner(t, other)
        with pytest.raises(LockedError) as e:
            await t.lock("ops@laptop", stale_after=1800)
        msg = str(e.value)
        since = time.strftime("%H:%M:%S", time.localtime(other["since"]))
        assert msg.startswith(f"gpu1: x.service is locked by ops@laptop (on laptop2) pid 4242 since {since}, "
                              "applying mtp3, at restart (heartbeat ")
        assert msg.endswith("wait for it to finish, or --break-lock if you know it is gone")
        assert read_owner(t)["token"] == "other"  # untouched
        # its heartbeat is judged by the file's age on the host: make it old
        old = time.time() - 120
        os.utime(f"{t.lock_dir}/owner", (old, old))
        notes = []
        t.on_note = notes.append
        await t.lock("ops@laptop", stale_after=1800)
        assert notes and "(gone: no heartbeat for 12" in notes[0]
        assert read_owner(t)["token"] != "other"

    asyncio.run(go())


def test_break_lock_takes_a_live_owner_and_old_files_keep_the_old_rule(tmp_path):
    async def go():
        t = target(tmp_path)
        put_owner(t, owner_record("ops@desk", Console(host="desk", pid=1), now=time.time(), token="o"))
        notes = []
        t.on_note = notes.append
        await t.lock("me@here", stale_after=1800, break_lock=True)
        assert "breaking the lock of ops@desk pid 1" in notes[0] and "(--break-lock)" in notes[0]
        await t.unlock()
        put_owner(t, {"who": "ops@gone", "since": time.time() - 60})
        with pytest.raises(LockedError, match="wait for it to finish .--break-lock takes it once older than 1800 s"):
            await t.lock("me@here", stale_after=1800)
        with pytest.raises(LockedError, match="not stale, not broken"):
            await t.lock("me@here", stale_after=1800, break_lock=True)
        put_owner(t, {"who": "ops@gone", "since": time.time() - 7200})
        with pytest.raises(LockedError, match="older than 1800 s: --break-lock takes it"):
            await t.lock("me@here", stale_after=1800)
        await t.lock("me@here", stale_after=1800, break_lock=True)
        assert read_owner(t)["who"] == "me@here"

    asyncio.run(go())


def test_heartbeat_refreshes_the_owner_and_finds_a_lock_taken(tmp_path):
    async def go():
        t = target(tmp_path)
        assert await t.heartbeat("write") is None  # not locked: nothing written
        assert not os.path.exists(t.lock_dir)
        await t.lock("me@here", stale_after=1800)
        first = read_owner(t)
        await asyncio.sleep(0.01)
        assert await t.heartbeat("restart") is None
        o = read_owner(t)
        assert o["phase"] == "restart" and o["heartbeat"] > first["heartbeat"] and o["since"] == first["since"]
        assert not os.path.exists(f"{t.lock_dir}/.owner.tmp")
        put_owner(t, {**o, "token": "someone else's"})  # another console took it for gone
        assert (await t.heartbeat("wait"))["token"] == "someone else's"
        await t.unlock()  # leaves the other console's lock alone
        assert read_owner(t)["token"] == "someone else's"

    asyncio.run(go())


def test_a_retried_lock_after_a_lost_reply_is_ours(tmp_path):
    async def go():
        t = target(tmp_path)
        await t.lock("me@here", stale_after=1800)
        await t.lock("me@here", stale_after=1800)  # the first reply lost: the retry finds its own token
        assert read_owner(t)["who"] == "me@here"

    asyncio.run(go())


def test_interrupted_action_is_reported_with_the_unit_now_and_closed(tmp_path, monkeypatch):
    from mtptui.control.session import HostControl

    log = tmp_path / "audit.jsonl"
    monkeypatch.setenv(audit.ENV, str(log))
    t = target(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = Console(**{**t.console.fields(), "pid": dead.pid, "pid_start": None})
    e = audit.new_entry(host="gpu1", unit="x.service", action="apply", profile="mtp3", result="running",
                        phases=[], console=gone.fields())
    audit.append(e)
    audit.append(audit.new_entry(host="gpu2", unit="x.service", action="apply", result="running"))
    put_owner(t, {**owner_record(e["user"], gone, now=e["time"], token="old", action="apply", profile="mtp3",
                                 audit_id=e["id"]), "phase": "restart"})
    argv = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--speculative-algorithm", "NEXTN",
            "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]

    async def read():
        return UnitState(argv=argv, source="x", dropin=None, agrees=True, active="active")

    t.read = read
    hc = HostControl(t, host="gpu1")

    async def go():
        line = await hc.interrupted()
        clock = time.strftime("%H:%M:%S", time.localtime(e["time"]))
        assert line == (f"gpu1: mtp3 by {e['user']} at {clock} was interrupted at restart (process not running); "
                        "the unit now runs mtp3 (ExecStart), active; its lock is left on the host: the next action takes it; "
                        "to recover: `mtptui spec gpu1 PROFILE` (the audit log has no verified settings of x.service)")
        closed = [x for x in audit.read_audit(log) if x["id"] == e["id"]][0]
        assert closed["result"] == "interrupted" and closed["interrupted"]["phase"] == "restart"
        assert closed["interrupted"]["runs"] == "mtp3" and closed["time"] == e["time"]
        assert [x["result"] for x in audit.read_audit(log) if x["host"] == "gpu2"] == ["running"]
        # said once: the entry is closed; the lock left is still said until taken
        again = await hc.interrupted()
        assert again.startswith(f"gpu1: mtp3 by {e['user']} pid {dead.pid} since {clock} was interrupted at restart "
                                "(gone: process not running)") and "the next action takes it; to recover" in again
        os.remove(f"{t.lock_dir}/owner")
        os.rmdir(t.lock_dir)
        # the lock gone, the action is still said, as ended unverified, until one verifies the unit
        assert await hc.interrupted() == (
            f"gpu1: the last action, mtp3 by {e['user']} at {clock}, ended interrupted at restart, not verified; "
            "the unit now runs mtp3 (ExecStart), active; "
            "to recover: `mtptui spec gpu1 PROFILE` (the audit log has no verified settings of x.service)")
        audit.append({**e, "id": "later", "time": time.time(), "result": "applied", "verified": "after",
                      "exec_start_after": argv, "dropin_after": None})
        assert await hc.interrupted() is None

    asyncio.run(go())


def test_heartbeat_writes_each_new_phase_and_stops_an_action_whose_lock_was_taken(tmp_path, monkeypatch):
    from mtptui.control import session
    from mtptui.control.restart import PhaseEvent

    monkeypatch.setattr("mtptui.control.lock.HEARTBEAT_S", 0.05)
    t = target(tmp_path)
    told = []
    beat = session._Heartbeat(t, told.append)

    async def action():
        await t.lock("me@here", stale_after=1800)
        beat.on_phase(PhaseEvent("restart", "start"))
        for _ in range(100):
            await asyncio.sleep(0.01)
            if read_owner(t)["phase"] == "restart":
                break
        put_owner(t, {**read_owner(t), "token": "taken"})  # another console took it for gone
        await asyncio.sleep(5)  # the beat cancels this
        return "ran to its end"

    async def go():
        beat.start()
        try:
            try:
                return await action()
            finally:
                beat.acting = False
        except asyncio.CancelledError:
            assert beat.lost is not None
            beat.uncancel()
            await asyncio.sleep(0)  # this task goes on uncancelled
            return "stopped"
        finally:
            await beat.stop()

    t0 = time.monotonic()
    assert asyncio.run(go()) == "stopped"
    assert time.monotonic() - t0 < 4
    assert beat.lost["token"] == "taken" and [e.phase for e in told] == ["restart"]
