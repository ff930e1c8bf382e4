"""The audit log: every action as JSON lines in the user's state directory.

An action writes a line when it begins (result "running") and one when it ends, both with the
same id: a console killed mid-action still leaves its start on record, and the next console to
find it over closes it as "interrupted" (control/session.py, `HostControl.interrupted`). `read_audit` gives one
entry per action, the last word on each. MTPTUI_AUDIT_LOG overrides the path (tests, shared logs).
"""

from __future__ import annotations

import json
import math
import os
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mtptui.errors import UserError
from mtptui.files import MIB, read_tail, size_text

ENV = "MTPTUI_AUDIT_LOG"
AUDIT_LIMIT = 64 * MIB  # of the audit log, the newest part read (issue 42: every read has a bound)


def audit_path() -> Path:
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    try:
        from platformdirs import user_state_dir
    except ImportError:  # a bare python3 on a GPU host
        base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
        return Path(base) / "mtptui" / "audit.jsonl"
    return Path(user_state_dir("mtptui", appauthor=False)) / "audit.jsonl"


def new_entry(**fields: Any) -> dict[str, Any]:
    return {"id": uuid.uuid4().hex[:12], "time": time.time(), "user": local_user(), **fields}


def local_user() -> str:
    import getpass
    import socket

    try:
        who = getpass.getuser()
    except (KeyError, OSError):
        who = str(os.getuid())
    return f"{who}@{socket.gethostname()}"


def append(entry: dict, path: Path | None = None) -> None:
    """One line, written with one write() on an O_APPEND file: lines of two consoles never mix."""
    p = path or audit_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


class AuditError(UserError):
    """The audit log cannot be read at all (a directory, no rights): one line saying so."""


class AuditEntries(list[dict[str, Any]]):
    """read_audit's answer: the entries, and how many lines were skipped as bad."""

    def __init__(self, entries: Iterable[dict[str, Any]] = (), bad: int = 0, older: bool = False) -> None:
        super().__init__(entries)
        self.bad = bad
        self.older = older  # the log is longer than AUDIT_LIMIT: its oldest lines were not read

    def bad_note(self) -> str | None:
        notes = [f"{self.bad} bad line{'s' if self.bad != 1 else ''} skipped"] if self.bad else []
        if self.older:
            notes.append(f"only its newest {size_text(AUDIT_LIMIT)} read")
        return "; ".join(notes) or None


def read_audit(path: Path | str | None = None) -> AuditEntries:
    """One entry per action, oldest first. A line that is not a JSON object, or has a field of the
    wrong kind (a time that is not a number, phases that are not a list of phases ...), is skipped
    and counted (`.bad`), never fatal to a reader. A log that does not exist is empty; one that
    cannot be read (a directory, no rights) raises AuditError."""
    p = Path(path) if path else audit_path()
    try:
        raw, older = read_tail(p, AUDIT_LIMIT)  # a log of years: its newest actions, in bounded memory
        text = raw.decode("utf-8", errors="replace")
    except FileNotFoundError:
        return AuditEntries()
    except IsADirectoryError:
        raise AuditError(f"{p}: is a directory, not an audit log (see {ENV})") from None
    except OSError as e:
        raise AuditError(f"{p}: cannot read the audit log: {e.strerror or e}") from None
    by_id: dict[str, dict] = {}
    bad = 0
    for n, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if not isinstance(entry, dict) or not _good(entry):
            bad += 1
            continue
        by_id[entry["id"] if entry.get("id") is not None else f"#{n}"] = entry
    return AuditEntries(sorted(by_id.values(), key=lambda entry: entry.get("time") or 0), bad, older)


_TEXT_FIELDS = ("id", "user", "host", "unit", "action", "profile", "result", "message", "where",
                "dropin_before", "dropin_after")


def _number(v: object) -> bool:
    try:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    except OverflowError:  # an integer of 400 digits is no float (issue 42)
        return False


def _good(e: dict) -> bool:
    """The fields the readers show are of their kind (absent is fine: an older line)."""
    if any(e.get(k) is not None and not isinstance(e[k], str) for k in _TEXT_FIELDS):
        return False
    code = e.get("exit_code")
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        return False
    for k in ("exec_start_before", "exec_start_after"):
        v = e.get(k)
        if v is not None and not (isinstance(v, list) and all(isinstance(a, str) for a in v)):
            return False
    phases = e.get("phases")
    return _good_time(e.get("time")) and (phases is None or (isinstance(phases, list) and all(map(_good_phase, phases))))


def _good_time(t: object) -> bool:
    """Absent, or a number of seconds that the local clock can show."""
    if t is None:
        return True
    if not _number(t):
        return False
    try:
        time.localtime(t)  # type: ignore[arg-type]
    except (OverflowError, OSError, ValueError):
        return False
    return True


def _good_phase(ph: object) -> bool:
    """A phase of an action: its name, and its state, detail and time where it has them."""
    if not isinstance(ph, dict) or not isinstance(ph.get("phase"), str):
        return False
    if any(ph.get(k) is not None and not isinstance(ph[k], str) for k in ("state", "detail")):
        return False
    return ph.get("elapsed_s") is None or _number(ph["elapsed_s"])


def same_target(e: dict, host: str, unit: str, where: str | None = None) -> bool:
    """Whether an entry is of this host and unit, on this machine: one log serves every job of an
    account, and two configs may give one host name to two machines. `where` (user@address:port,
    as the entry's `where`): an entry of another machine is not this one's; an entry without one
    (an older mtptui) is taken by its names."""
    if e.get("host") != host or e.get("unit") != unit:
        return False
    return where is None or not e.get("where") or e.get("where") == where


def running_entries(host: str, unit: str, path: Path | str | None = None, where: str | None = None) -> list[dict]:
    """The actions on this host and unit whose last word is still "running", oldest first."""
    return [e for e in read_audit(path) if same_target(e, host, unit, where) and e.get("result") == "running"]


def close_interrupted(entry: dict, *, why: str, phase: str | None = None, message: str = "",
                      found: dict | None = None, path: Path | None = None) -> dict:
    """Closes an action that was cut off (its console killed mid-action): the same id again,
    result "interrupted", with why it is known to be over and what was found on the host."""
    closed = {**entry, "result": "interrupted", "message": message or f"interrupted ({why})",
              "interrupted": {"why": why, "phase": phase, "closed_by": local_user(),
                              "closed_at": time.time(), **(found or {})}}
    append(closed, path)
    return closed


def last_verified(host: str, unit: str, path: Path | str | None = None,
                  where: str | None = None) -> tuple[dict, str | None, list[str]] | None:
    """(the entry, its drop-in, its ExecStart) of the newest action on this host and unit that
    verified the settings it left: the new ones when applied, the old ones when rolled back (or put
    back after an interrupt, with a restart). None when the log has none."""
    for e in reversed(read_audit(path)):
        if not same_target(e, host, unit, where):
            continue
        which = e.get("verified")
        if which is None:  # an entry of an older mtptui: its result tells
            which = {"applied": "after", "rolled_back": "before"}.get(str(e.get("result")))
        if which not in ("before", "after"):
            continue
        argv = e.get(f"exec_start_{which}")
        if isinstance(argv, list):
            return e, e.get(f"dropin_{which}"), argv
    return None
