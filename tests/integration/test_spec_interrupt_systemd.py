"""An interrupted `mtptui spec` always ends in a known state (issue 42), on a real systemd host.

mtptui runs as a user runs it (`python -m mtptui spec ...`, a child process) and gets real signals.
To land a signal in one phase every time, MTPTUI_TEST_HOLD=PHASE holds the action still in it
(after that phase's step reached the host, or as its wait or verify begins) until the signal.

- ctrl-c (and SIGTERM, SIGHUP) at write, restart, wait and verify, with a good and with a failing
  profile: exit 130, the unit active on its old settings (its drop-in byte for byte, systemd's
  ExecStart), verified, and the lock free.
- SIGKILL at each phase, the rollback's included: the next `spec HOST` says the true phase, the
  drop-in on the host matched whole against the action's before and after, the unit's state (a
  failed unit: exit 5, said), and how to recover; `spec HOST --recover` puts back the last verified
  settings and verifies them.
- a second ctrl-c without a terminal leaves the host where it stands, says so, exits 4, and the
  next `spec HOST` says it; on a terminal it asks, and "n" goes on putting the host back.

One unit serves the module (the simulator starts in about a second): each test begins with it on
mtp1, verified.
"""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import sys

import pytest
from hosts.helpers import unique_unit
from test_spec_systemd import audit_entries, exec_start, install_unit, spec, write_config

pytestmark = pytest.mark.systemd

BROKEN = ('[profiles.broken]\nalgorithm = "NEXTN"\nnum_steps = 2\ntopk = 1\nnum_draft_tokens = 3\n'
          'extra_args = ["--no-such-flag"]\n')


class Unit:
    def __init__(self, h, unit: str, cfg: str, audit) -> None:
        self.h, self.unit, self.cfg, self.audit = h, unit, cfg, audit
        self.name = f"gpu{h.index}"
        self.path = f"/etc/systemd/system/{unit}.service.d/50-mtptui-spec.conf"
        self.lock = f"/run/lock/mtptui-{unit}.service"

    def spec(self, *args: str) -> subprocess.CompletedProcess:
        return spec(self.cfg, self.name, *args, audit=self.audit)

    def started(self, *args: str, hold: str, stdin=subprocess.DEVNULL) -> subprocess.Popen:
        env = dict(os.environ, MTPTUI_AUDIT_LOG=str(self.audit), MTPTUI_TEST_HOLD=hold)
        return subprocess.Popen([sys.executable, "-m", "mtptui", "spec", "--config", self.cfg, self.name, *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, stdin=stdin)

    def dropin(self) -> str | None:
        r = self.h.ssh(["cat", self.path], check=False)
        return r.stdout if r.returncode == 0 else None

    def active(self) -> str:
        return self.h.ssh(["systemctl", "show", "--property=ActiveState", "--value", self.unit]).stdout.strip()

    def invocation(self) -> str:
        return self.h.ssh(["systemctl", "show", "--property=InvocationID", "--value", self.unit]).stdout.strip()

    def locked(self) -> bool:
        return self.h.ssh(["test", "-e", self.lock], check=False).returncode == 0

    def state(self) -> tuple[str | None, str, str]:
        return self.dropin(), exec_start(self.h, self.unit), self.active()


@pytest.fixture(scope="module")
def u(cluster, tmp_path_factory):
    h = cluster.hosts[1]
    unit = unique_unit("intr")
    install_unit(h, unit)
    d = tmp_path_factory.mktemp("interrupt")
    unit_ = Unit(h, unit, write_config(d, h, unit, profiles=BROKEN), d / "audit.jsonl")
    r = unit_.spec("mtp1", "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    unit_.mtp1 = unit_.state()
    return unit_


@pytest.fixture
def on_mtp1(u):
    """The unit on mtp1, verified, unlocked: as each test expects to find it."""
    if u.locked() or u.state() != u.mtp1:
        u.h.ssh(["rm", "-rf", u.lock])
        r = u.spec("mtp1", "--yes")
        assert r.returncode == 0, r.stdout + r.stderr
    assert u.state() == u.mtp1 and u.mtp1[2] == "active"
    return u


def held(proc: subprocess.Popen, phase: str) -> list[str]:
    """stderr read until the action holds at `phase` (the process is then left running there)."""
    seen = []
    assert proc.stderr is not None
    for line in proc.stderr:
        seen.append(line)
        if f"] {phase} progress: held here" in line:
            return seen
    out, err = proc.communicate(timeout=30)
    raise AssertionError(f"never held at {phase} (exit {proc.returncode}):\n" + "".join(seen) + out + err)


def finish(proc: subprocess.Popen, seen: list[str], timeout: float = 180) -> tuple[int, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, "".join(seen) + out + err


CTRL_C = [("mtp3", p, signal.SIGINT) for p in ("write", "restart", "wait", "verify")]
CTRL_C += [("broken", p, signal.SIGINT) for p in ("write", "restart", "wait")]  # it never reaches verify
CTRL_C += [("mtp3", "wait", signal.SIGTERM), ("broken", "restart", signal.SIGHUP)]


@pytest.mark.parametrize("profile,phase,sig", CTRL_C, ids=[f"{p}-{ph}-{s.name}" for p, ph, s in CTRL_C])
def test_interrupt_puts_the_host_back_verified(on_mtp1, profile, phase, sig):
    u = on_mtp1
    run_before = u.invocation()
    proc = u.started(profile, "--yes", hold=phase)
    seen = held(proc, phase)
    assert u.locked()
    proc.send_signal(sig)
    code, said = finish(proc, seen)

    assert code == 130, said
    name = {signal.SIGINT: "ctrl-c", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}[sig]
    assert f"stopping; putting {u.name} back as it was, verified" in said
    line = next(x for x in said.splitlines() if x.startswith(f"{u.name}: interrupted: "))
    assert line.startswith(f"{u.name}: interrupted: interrupted ({name}) at {phase}; put back as it was: "), said
    if phase == "write":  # no restart was issued: the drop-in back and reloaded, the run never replaced
        assert "not restarted: the drop-in back as it was, reloaded; the unit active on its old run" in line, said
        assert u.invocation() == run_before
    else:
        assert "verified" in line and "accept len" in line, said
    assert u.state() == u.mtp1, said  # its drop-in byte for byte, the ExecStart systemd loaded, active
    assert not u.locked()
    last = audit_entries(u.audit)[-1]
    assert (last["profile"], last["result"], last["exit_code"], last["restored"]) == (profile, "interrupted", 130, True)
    assert ("rollback", "ok") in [(p["phase"], p["state"]) for p in last["phases"]]
    # nothing is said of it the next time: the host is as it was, verified
    r = u.spec()
    assert r.returncode == 0 and "interrupted" not in r.stdout + r.stderr, r.stdout + r.stderr


KILLS = [("mtp3", p) for p in ("write", "restart", "wait", "verify")]
# broken at wait: its run failed; its flags are mtp2's, so only the whole drop-in tells it apart
KILLS += [("broken", p) for p in ("wait", "rollback_write", "rollback_restart", "rollback_wait", "rollback_verify")]


@pytest.mark.parametrize("profile,phase", KILLS, ids=[f"{p}-{ph}" for p, ph in KILLS])
def test_killed_console_is_reported_truly_and_recovered(on_mtp1, profile, phase):
    u = on_mtp1
    proc = u.started(profile, "--yes", hold=phase)
    seen = held(proc, phase)
    proc.kill()  # SIGKILL: no finally, no unlock, no audit end
    finish(proc, seen)
    dropin, _, _ = u.state()
    assert u.locked()

    r = u.spec()
    out = r.stdout + r.stderr
    said = [x for x in r.stdout.splitlines() if "was interrupted" in x]
    assert len(said) == 1, out
    m = re.match(rf"{u.name}: {profile} by \S+ at \d\d:\d\d:\d\d was interrupted at (\S+) \(process not running\); "
                 r"the unit now runs (.+?), (\w+)( \(a daemon-reload is pending\))?; its lock is left on the host: "
                 rf"the next action takes it; to recover: `mtptui spec {u.name} --recover` puts back mtp1's drop-in",
                 said[0])
    assert m, said[0]
    assert m.group(1) == phase, said[0]  # the phase it was in, the rollback's too
    mine = "mtp1's drop-in: as before that action (its drop-in put back)"
    theirs = f"{profile}'s drop-in: the drop-in that action wrote"
    assert m.group(2) == (mine if dropin == u.mtp1[0] else theirs), said[0]
    assert m.group(2) == (mine if phase.startswith("rollback_") else theirs), said[0]  # the rollback wrote it first
    assert "mtp2" not in said[0]
    active = u.active()
    assert m.group(3) == active
    if active == "failed":  # a failed unit is never shown with exit 0
        assert r.returncode == 5 and f"{u.unit}.service is failed: its server is not running" in r.stderr, out
    else:
        assert r.returncode == 0, out
    closed = audit_entries(u.audit)[-1]
    assert closed["result"] == "interrupted" and closed["interrupted"]["phase"] == phase

    r = u.spec("--recover", "--yes")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert f"{u.name}: recovering the settings verified by " in r.stdout and ": mtp1's drop-in" in r.stdout, out
    assert "taking the lock of " in r.stderr and "(gone: process not running)" in r.stderr, out
    assert f"{u.name}: applied: verified" in r.stdout, out
    assert u.state() == u.mtp1 and not u.locked()
    last = audit_entries(u.audit)[-1]
    assert (last["action"], last["result"], last["verified"]) == ("restore", "applied", "after")
    r = u.spec()
    assert r.returncode == 0 and "interrupted" not in r.stdout and "not verified" not in r.stdout, r.stdout + r.stderr


def test_second_interrupt_without_a_terminal_leaves_the_host_and_says_so(on_mtp1):
    u = on_mtp1
    proc = u.started("broken", "--yes", hold="rollback_wait")
    seen = held(proc, "rollback_wait")
    assert proc.stderr is not None
    proc.send_signal(signal.SIGTERM)  # in the rollback already: it goes on putting the host back
    for line in proc.stderr:  # (a second signal sent before the first is taken is merged with it)
        seen.append(line)
        if f"SIGTERM: stopping; putting {u.name} back as it was" in line:
            break
    proc.send_signal(signal.SIGTERM)
    code, said = finish(proc, seen)
    assert code == 4, said
    assert re.search(rf"SIGTERM: stopping at once; leaving {u.name} · {u.unit}.service at rollback_wait, being put back: "
                     r"its drop-in back as it was, the unit restarted and not verified; its lock freed; "
                     rf"`mtptui spec {u.name} --recover` puts back the last verified settings", said), said
    assert not u.locked()
    last = audit_entries(u.audit)[-1]
    assert last["result"] == "interrupted" and last["restored"] is False, last

    r = u.spec()  # said each time until an action verifies the unit
    assert re.match(rf"{u.name}: the last action, broken by \S+ at \d\d:\d\d:\d\d, ended interrupted at rollback_wait, "
                    r"not verified; the unit now runs mtp1's drop-in: as before that action \(its drop-in put back\), ",
                    r.stdout), r.stdout + r.stderr
    assert f"to recover: `mtptui spec {u.name} --recover`" in r.stdout
    r = u.spec("--recover", "--yes")
    assert r.returncode == 0 and u.state() == u.mtp1, r.stdout + r.stderr


def test_second_ctrl_c_on_a_terminal_asks(on_mtp1):
    """In a rollback held at its wait: ctrl-c goes on putting the host back; a second asks, "n"
    goes on; the next asks again, "y" leaves it where it stands."""
    u = on_mtp1
    master, slave = pty.openpty()
    try:
        proc = u.started("broken", "--yes", hold="rollback_wait", stdin=slave)
        seen = held(proc, "rollback_wait")
        assert proc.stderr is not None
        proc.send_signal(signal.SIGINT)
        for line in proc.stderr:
            seen.append(line)
            if f"stopping; putting {u.name} back as it was" in line:
                break

        def asked() -> str:
            text = ""
            while not text.endswith("leave it so? [y/N] "):  # the question ends without a newline
                c = proc.stderr.read(1)
                assert c, "".join(seen) + text
                text += c
            seen.append(text)
            return text

        proc.send_signal(signal.SIGINT)
        assert f"stopping at once would leave {u.name} · {u.unit}.service at rollback_wait, being put back" in asked()
        os.write(master, b"n\n")
        for line in proc.stderr:
            seen.append(line)
            if "going on putting it back" in line:
                break
        assert proc.poll() is None, "".join(seen)
        proc.send_signal(signal.SIGINT)
        asked()
        os.write(master, b"y\n")
        code, said = finish(proc, seen)
    finally:
        os.close(master)
        os.close(slave)
    assert code == 4, said
    assert "asked: stopping at once; leaving" in said, said
    assert not u.locked()
    assert audit_entries(u.audit)[-1]["interrupted"]["phase"] == "rollback_wait"
