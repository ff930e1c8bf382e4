"""Who holds a host's lock, and whether that owner is provably gone.

The lock (a directory under /run/lock, taken with an atomic mkdir: control/target.py) has an
`owner` JSON file: who (user@console), where (the console's host name, machine id, boot id and
pid namespace), the pid and its start time, the action and profile, the phase, since, and a
heartbeat that the owner writes again every HEARTBEAT_S while the action runs.

An owner is gone, and its lock taken at once without --break-lock, when:
- it ran on this console machine (same host name and machine id) and the machine has booted
  since, or (same boot, same pid namespace) its process is no longer running;
- it ran elsewhere and its heartbeat is older than STALE_BEATS heartbeats (judged by the host's
  own clock where the host can tell the owner file's age, so two consoles' clocks never matter).
An owner file of an older mtptui (only who, since, token) keeps the old rule: older than
`stale_after`, --break-lock may take it. Pure but for `Console.here` and `pid_alive`.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

HEARTBEAT_S = 10.0  # how often the owner writes its heartbeat while the action runs
STALE_BEATS = 3  # heartbeats missed before an owner elsewhere is taken for gone
VERSION = 2

PidAlive = Callable[[int, "int | None"], bool]  # (pid, its start time in clock ticks or None)


@dataclass(frozen=True)
class Console:
    """Where a console runs: enough to tell two consoles of the same user apart, and to check
    a pid of this machine."""

    host: str
    pid: int
    boot_id: str | None = None
    machine_id: str | None = None
    pid_ns: str | None = None
    pid_start: int | None = None

    @classmethod
    def here(cls) -> Console:
        return cls(host=socket.gethostname(), pid=os.getpid(),
                   boot_id=_read("/proc/sys/kernel/random/boot_id"),
                   machine_id=_read("/etc/machine-id") or _read("/var/lib/dbus/machine-id"),
                   pid_ns=_link("/proc/self/ns/pid"), pid_start=process_start(os.getpid()))

    def fields(self) -> dict:
        return {"host": self.host, "boot_id": self.boot_id, "machine_id": self.machine_id,
                "pid_ns": self.pid_ns, "pid": self.pid, "pid_start": self.pid_start}


@dataclass(frozen=True)
class Verdict:
    gone: bool  # provably gone: the lock is taken at once
    why: str  # "process not running", "console rebooted", "no heartbeat for 95 s", or how it lives
    breakable: bool  # --break-lock may take it
    legacy: bool = False  # an owner file of an older mtptui (who, since, token), or none at all


def owner_record(who: str, me: Console, *, now: float, token: str, since: float | None = None,
                 action: str | None = None, profile: str | None = None, phase: str = "lock",
                 audit_id: str | None = None) -> dict:
    """The owner file's content (a JSON object)."""
    return {"v": VERSION, "who": who, **me.fields(), "action": action, "profile": profile,
            "phase": phase, "since": now if since is None else since, "heartbeat": now,
            "token": token, "audit_id": audit_id}


def is_legacy(owner: dict | None) -> bool:
    return not owner or not isinstance(owner.get("heartbeat"), (int, float)) or not isinstance(owner.get("pid"), int)


def same_machine(owner: dict, me: Console) -> bool:
    if owner.get("host") != me.host:
        return False
    theirs = owner.get("machine_id")
    return not (theirs and me.machine_id and theirs != me.machine_id)


def verdict(owner: dict | None, me: Console, now: float, pid_alive: PidAlive, *, stale_after: float,
            heartbeat_age: float | None = None, beat_s: float = HEARTBEAT_S) -> Verdict:
    """Whether the lock's owner is provably gone. `heartbeat_age`: seconds since the owner file
    was written by the host's clock, when the host told; else `now` minus its heartbeat."""
    if is_legacy(owner):
        since = owner.get("since") if owner else None
        if not isinstance(since, (int, float)):
            return Verdict(False, "no owner file" if not owner else "no time in the owner file", True, True)
        age = now - since
        if age > stale_after:
            return Verdict(False, f"older than {stale_after:.0f} s", True, True)
        return Verdict(False, f"less than {stale_after:.0f} s old", False, True)
    assert owner is not None
    if same_machine(owner, me):
        theirs_boot = owner.get("boot_id")
        if theirs_boot and me.boot_id and theirs_boot != me.boot_id:
            return Verdict(True, "its console rebooted since", True)
        theirs_ns = owner.get("pid_ns")
        if not (theirs_ns and me.pid_ns and theirs_ns != me.pid_ns):
            start = owner.get("pid_start")
            if not pid_alive(owner["pid"], start if isinstance(start, int) else None):
                return Verdict(True, "process not running", True)
            return Verdict(False, "its process runs on this machine", True)
    age = now - owner["heartbeat"] if heartbeat_age is None else heartbeat_age
    if age > STALE_BEATS * beat_s:
        return Verdict(True, f"no heartbeat for {age:.0f} s", True)
    return Verdict(False, f"heartbeat {max(0.0, age):.0f} s ago", True)


def entry_gone(entry: dict, owner: dict | None, owner_verdict: Verdict | None, me: Console, now: float,
               pid_alive: PidAlive, *, grace_s: float = 120.0) -> str | None:
    """Why an audit entry still "running" is over though its end is not on record (its console
    was killed), or None while it may still run. `owner`: the lock's owner file on the host now
    (None: no lock), judged as `owner_verdict`. An action holds the lock from its first step to
    its last, so one that the lock no longer names is over, once past the few seconds before
    its lock is taken (`grace_s`)."""
    if owner is not None and owner.get("audit_id") == entry.get("id"):
        return owner_verdict.why if owner_verdict is not None and owner_verdict.gone else None
    c = entry.get("console")
    if isinstance(c, dict) and isinstance(c.get("pid"), int) and same_machine(c, me):
        if c.get("boot_id") and me.boot_id and c["boot_id"] != me.boot_id:
            return "its console rebooted since"
        if not (c.get("pid_ns") and me.pid_ns and c["pid_ns"] != me.pid_ns):
            start = c.get("pid_start")
            return None if pid_alive(c["pid"], start if isinstance(start, int) else None) else "process not running"
    if owner is not None and not owner.get("audit_id") and not (owner_verdict and owner_verdict.gone):
        return None  # an older console holds the lock: it may be this very action
    t = entry.get("time")
    if not isinstance(t, (int, float)) or now - t < grace_s:
        return None
    return "its lock is gone" if owner is None else "the lock is another action's now"


def pid_alive(pid: int, start: int | None = None) -> bool:
    """Whether `pid` runs on this machine (and is the process that started at `start`, in clock
    ticks since boot, where that was recorded: a pid used again is another process)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it runs
    except OSError:
        return True  # cannot tell: never take a live lock on a guess
    if start is None:
        return True
    now_start = process_start(pid)
    return now_start is None or now_start == start


def process_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    rest = text.rpartition(")")[2].split()
    try:
        return int(rest[19])
    except (IndexError, ValueError):
        return None


def clock(t: float | None, now: float | None = None) -> str:
    """A time to the second: 18:32:05 today, else 2026-11-30 18:32:05."""
    if not isinstance(t, (int, float)):
        return "?"
    lt = time.localtime(t)
    today = time.localtime(time.time() if now is None else now)
    fmt = "%H:%M:%S" if lt[:3] == today[:3] else "%Y-%m-%d %H:%M:%S"
    return time.strftime(fmt, lt)


def owner_name(owner: dict | None) -> str:
    """ops@laptop pid 4242, for a line."""
    if not owner:
        return "someone (no owner file)"
    who = str(owner.get("who") or "someone")
    pid = owner.get("pid")
    host = owner.get("host")
    if host and "@" in who and who.rsplit("@", 1)[1] != host:
        who += f" (on {host})"
    return f"{who} pid {pid}" if isinstance(pid, int) else who


def doing(owner: dict | None) -> str:
    """applying mtp3, at restart (empty when the owner file does not say)."""
    if not owner:
        return ""
    action, profile, phase = owner.get("action"), owner.get("profile"), owner.get("phase")
    what = ""
    if action:
        what = f"applying {profile}" if action == "apply" and profile else f"{action}"
    if phase:
        what += (", " if what else "") + f"at {phase}"
    return what


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _link(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None
