"""Locked out after a crash (issue 17), on real systemd hosts: a console SIGKILLed mid-restart
leaves its lock and an audit entry `running`; the next `mtptui spec` says what was cut off and
what the unit runs now, closes the entry as interrupted and takes the lock at once (its owner's
process is provably gone), without --break-lock and without waiting lock_stale_after. A lock
of a console elsewhere is judged by its heartbeat: fresh, refused by name; old, taken."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest
from hosts.helpers import unique_unit
from test_spec_systemd import audit_entries, exec_start, install_unit, spec, spec_started, write_config

from mtptui.control.lock import Console, owner_record

pytestmark = pytest.mark.systemd


def lock_dir(unit: str) -> str:
    return f"/run/lock/mtptui-{unit}.service"


def killed_mid_restart(cfg: str, name: str, audit) -> list[str]:
    """`mtptui spec NAME mtp3 --yes`, SIGKILLed once the restart is issued and the wait began."""
    first = spec_started(cfg, name, "mtp3", "--yes", audit=audit)
    seen = []
    try:
        for line in first.stderr:
            seen.append(line)
            if "wait start" in line:
                break
        time.sleep(1.0)  # its heartbeat writes the phase it is at into the lock's owner file
        first.kill()  # SIGKILL: no finally, no unlock, no audit end
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
    assert any("wait start" in x for x in seen), "".join(seen)
    return seen


def test_killed_mid_restart_the_next_action_reports_it_and_takes_the_lock(cluster, tmp_path, audit):
    h = cluster.hosts[0]
    unit = unique_unit("crash")
    install_unit(h, unit)
    cfg = write_config(tmp_path, h, unit)
    name = f"gpu{h.index}"
    seen = killed_mid_restart(cfg, name, audit)
    owner = json.loads(h.ssh(["cat", f"{lock_dir(unit)}/owner"]).stdout)  # the lock stays
    assert owner["profile"] == "mtp3" and owner["phase"] in ("restart", "wait"), owner
    assert [e["result"] for e in audit_entries(audit)] == ["running"]

    t0 = time.time()
    r = spec(cfg, name, "mtp1", "--yes", audit=audit)
    out = r.stdout + r.stderr
    assert r.returncode == 0, "".join(seen) + out
    assert time.time() - t0 < 120  # no lock_stale_after to wait out
    said = [x for x in r.stdout.splitlines() if "was interrupted" in x]
    assert len(said) == 1, out
    assert re.match(rf"{name}: mtp3 by \S+ at \d\d:\d\d:\d\d was interrupted at (restart|wait) \(process not running\); "
                    r"the unit now runs mtp3's drop-in: the drop-in that action wrote, (active|activating)", said[0]), said[0]
    assert f"taking the lock of {owner['who']} pid {owner['pid']} (gone: process not running)" in r.stderr
    assert "--break-lock" not in out
    assert "--speculative-num-steps 1" in exec_start(h, unit)
    assert h.ssh(["test", "-e", lock_dir(unit)], check=False).returncode != 0  # unlocked at the end

    entries = audit_entries(audit)
    assert [(e["profile"], e["result"]) for e in entries] == [("mtp3", "interrupted"), ("mtp1", "applied")]
    cut = entries[0]["interrupted"]
    assert cut["why"] == "process not running" and cut["phase"] in ("restart", "wait") and cut["runs"] == "mtp3"
    assert entries[1]["took_lock_of"]["owner"]["pid"] == owner["pid"]


def test_killed_console_is_reported_by_spec_show_once(cluster, tmp_path, audit):
    h = cluster.hosts[2]
    unit = unique_unit("crash")
    install_unit(h, unit)
    cfg = write_config(tmp_path, h, unit)
    name = f"gpu{h.index}"
    killed_mid_restart(cfg, name, audit)
    r = spec(cfg, name, "--json", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    info = json.loads(r.stdout)["hosts"][0]
    assert "was interrupted" in info["interrupted"] and "its lock is left on the host" in info["interrupted"]
    assert info["interrupted"] in r.stderr
    assert [e["result"] for e in audit_entries(audit)] == ["interrupted"]
    assert h.ssh(["test", "-e", lock_dir(unit)], check=False).returncode == 0  # showing changes nothing there
    # the entry is closed: only the lock left is said now, until an action takes it
    r = spec(cfg, name, audit=audit)
    assert r.returncode == 0 and "(gone: process not running)" in r.stdout and "its lock is left" in r.stdout
    assert len(audit_entries(audit)) == 1


def test_lock_of_a_console_elsewhere_is_judged_by_its_heartbeat(cluster, tmp_path, audit):
    h = cluster.hosts[1]
    unit = unique_unit("crash")
    install_unit(h, unit)
    cfg = write_config(tmp_path, h, unit)
    name = f"gpu{h.index}"
    since = time.time() - 300
    other = owner_record("ops@laptop2", Console(host="laptop2", pid=4242, boot_id="b-other", machine_id="m-other"),
                         now=since, token="other", action="apply", profile="mtp3")

    def put(heartbeat_age: float) -> None:
        text = json.dumps({**other, "phase": "restart", "heartbeat": time.time() - heartbeat_age})
        h.ssh(["mkdir", "-p", lock_dir(unit)])
        subprocess.run(h.ssh_argv(f"cat > {lock_dir(unit)}/owner"), input=text, text=True, check=True)
        h.ssh(["touch", "-d", f"@{int(time.time() - heartbeat_age)}", f"{lock_dir(unit)}/owner"])

    put(2)
    r = spec(cfg, name, "mtp1", "--yes", audit=audit)
    assert r.returncode == 1, r.stdout + r.stderr
    clock = time.strftime("%H:%M:%S", time.localtime(since))
    assert (f"{name}: {unit}.service is locked by ops@laptop2 pid 4242 since {clock}, applying mtp3, at restart "
            "(heartbeat ") in r.stderr
    assert "wait for it to finish, or --break-lock if you know it is gone" in r.stderr
    assert "Traceback" not in r.stderr and "was interrupted" not in r.stdout
    assert [e["result"] for e in audit_entries(audit)] == ["not_run"]
    assert json.loads(h.ssh(["cat", f"{lock_dir(unit)}/owner"]).stdout)["token"] == "other"

    put(120)  # no heartbeat for two minutes: that console is gone
    r = spec(cfg, name, "mtp1", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"taking the lock of ops@laptop2 pid 4242 \(gone: no heartbeat for 1[12]\d s\)", r.stderr), r.stderr
    assert f"{name}: mtp3 by ops@laptop2 pid 4242 since {clock} was interrupted at restart" in r.stdout
    assert "--speculative-num-steps 1" in exec_start(h, unit)
    assert h.ssh(["test", "-e", lock_dir(unit)], check=False).returncode != 0
