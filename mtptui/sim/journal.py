"""journald as journalctl shows it: the envelopes (`-o short-iso`, `-o json`, `-o cat`) around
the server's lines, and systemd's own lines about the unit (systemd 252 wording, as on Debian 12).
Deterministic: every id comes from the seeded random.Random it is given.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass

from mtptui.sim.msg import event, other

ENVELOPES = ("short-iso", "json", "cat")
JOURNAL_DELAY = 0.0003  # journald receives a line a fraction of a millisecond after it is written


@dataclass
class Line:
    """One journal line of an offline log (scenario.py, vllm.py) and what it means."""

    text: str  # as written to the log, without the newline
    truth: dict  # msg.py's truth plus "ts", "host", "message" (the text inside the envelope)


def timespan(secs: float) -> str:
    """systemd's format_timespan at millisecond accuracy: `1h 2min 3.456s`, `12.345s`, `87ms`."""
    ms = round(secs * 1000)
    if ms < 1000:
        return f"{ms}ms"
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, frac = divmod(rest, 1000)
    parts = []
    if h:
        parts.append(f"{h}h")
    if m:
        parts.append(f"{m}min")
    if s or frac:
        parts.append(f"{s}.{frac:03d}s".replace(".000s", "s") if frac else f"{s}s")
    return " ".join(parts)


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


class Journal:
    """One host's journal, printed in one envelope."""

    def __init__(self, envelope: str, host: str, unit: str, description: str, rng: random.Random,
                 t_boot: float) -> None:
        if envelope not in ENVELOPES:
            raise ValueError(envelope)
        self.envelope = envelope
        self.host = host
        self.unit = unit
        self.description = description
        self.boot_id = _hex(rng, 32)
        self.machine_id = _hex(rng, 32)
        self.seqnum_id = _hex(rng, 32)
        self.seq = rng.randint(100_000, 900_000)
        self.t_boot = t_boot
        self.rng = rng
        self.invocation = _hex(rng, 32)
        self.stream_id = _hex(rng, 32)
        self.cmdline = "python3 -m mtptui.sim"

    def new_invocation(self, cmdline: str) -> None:
        self.invocation = _hex(self.rng, 32)
        self.stream_id = _hex(self.rng, 32)
        self.cmdline = cmdline

    # -- envelopes --------------------------------------------------------------------------
    def _iso(self, t: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + "+00:00"

    def _json(self, t: float, fields: list[tuple[str, str]]) -> str:
        self.seq += 1
        real = round(t * 1_000_000)
        mono = round((t - self.t_boot) * 1_000_000)
        cursor = (f"s={self.seqnum_id};i={self.seq:x};b={self.boot_id};m={mono:x};t={real:x};"
                  f"x={(real * 2654435761 ^ self.seq) & 0xFFFFFFFFFFFFFFFF:016x}")
        head = [("__CURSOR", cursor), ("__REALTIME_TIMESTAMP", str(real)),
                ("__MONOTONIC_TIMESTAMP", str(mono)), ("_BOOT_ID", self.boot_id)]
        # journalctl -o json spacing: `{ "KEY" : "value", ... }`
        return "{ " + ", ".join(f"{json.dumps(k)} : {json.dumps(v, ensure_ascii=False)}"
                                for k, v in head + fields) + " }"

    def server(self, t: float, text: str, pid: int, stream: str = "stderr", ident: str = "python3") -> str:
        """A line the service wrote to stdout/stderr (journald's stdout transport)."""
        if self.envelope == "cat":
            return text
        if self.envelope == "short-iso":
            return f"{self._iso(t)} {self.host} {ident}[{pid}]: {text}"
        return self._json(t, [
            ("_TRANSPORT", "stdout"), ("PRIORITY", "6"), ("SYSLOG_FACILITY", "3"), ("_UID", "0"),
            ("_GID", "0"), ("_MACHINE_ID", self.machine_id), ("_HOSTNAME", self.host),
            ("_STREAM_ID", self.stream_id), ("SYSLOG_IDENTIFIER", ident), ("_PID", str(pid)),
            ("_COMM", ident), ("_EXE", "/usr/bin/python3.11"), ("_CMDLINE", self.cmdline),
            ("_SYSTEMD_CGROUP", f"/system.slice/{self.unit}"), ("_SYSTEMD_UNIT", self.unit),
            ("_SYSTEMD_SLICE", "system.slice"), ("_SYSTEMD_INVOCATION_ID", self.invocation),
            ("MESSAGE", text)])

    def systemd(self, t: float, text: str, priority: int = 6) -> str:
        """A line PID 1 logged about the unit."""
        if self.envelope == "cat":
            return text
        if self.envelope == "short-iso":
            return f"{self._iso(t)} {self.host} systemd[1]: {text}"
        return self._json(t, [
            ("_TRANSPORT", "journal"), ("PRIORITY", str(priority)), ("SYSLOG_FACILITY", "3"),
            ("_UID", "0"), ("_GID", "0"), ("_MACHINE_ID", self.machine_id), ("_HOSTNAME", self.host),
            ("SYSLOG_IDENTIFIER", "systemd"), ("_PID", "1"), ("_COMM", "systemd"),
            ("_EXE", "/usr/lib/systemd/systemd"), ("_CMDLINE", "/sbin/init"),
            ("_SYSTEMD_CGROUP", "/init.scope"), ("_SYSTEMD_UNIT", "init.scope"),
            ("_SYSTEMD_SLICE", "-.slice"), ("CODE_FILE", "src/core/unit.c"), ("UNIT", self.unit),
            ("INVOCATION_ID", self.invocation), ("MESSAGE", text)])

    # -- systemd's lines about the unit -----------------------------------------------------
    def started(self) -> list[tuple[str, int, dict]]:
        return [(f"Started {self.unit} - {self.description}.", 6, event("started"))]

    def stopping(self) -> list[tuple[str, int, dict]]:
        return [(f"Stopping {self.unit} - {self.description}...", 6, event("stopping"))]

    def stopped_ok(self, cpu: float) -> list[tuple[str, int, dict]]:
        return [(f"{self.unit}: Deactivated successfully.", 6, other()),
                (f"Stopped {self.unit} - {self.description}.", 6, event("stopped")),
                (f"{self.unit}: Consumed {timespan(cpu)} CPU time.", 6, other())]

    def failed(self, cpu: float, status: int = 1) -> list[tuple[str, int, dict]]:
        return [(f"{self.unit}: Main process exited, code=exited, status={status}/FAILURE", 5, event("failed")),
                (f"{self.unit}: Failed with result 'exit-code'.", 4, event("failed")),
                (f"{self.unit}: Consumed {timespan(cpu)} CPU time.", 6, other())]

    def restart_scheduled(self, n: int) -> list[tuple[str, int, dict]]:
        return [(f"{self.unit}: Scheduled restart job, restart counter is at {n}.", 6, event("auto_restart")),
                (f"Stopped {self.unit} - {self.description}.", 6, event("stopped"))]
