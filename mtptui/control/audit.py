"""The audit log: every action as JSON lines in the user's state directory.

An action writes a line when it begins (result "running") and one when it ends, both with the
same id: a console killed mid-action still leaves its start on record. `read_audit` gives one
entry per action, the last word on each. MTPTUI_AUDIT_LOG overrides the path (tests, shared logs).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

ENV = "MTPTUI_AUDIT_LOG"


def audit_path() -> Path:
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    try:
        from platformdirs import user_state_dir
    except ImportError:  # a bare python3 on a GPU host
        base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
        return Path(base) / "mtptui" / "audit.jsonl"
    return Path(user_state_dir("mtptui", appauthor=False)) / "audit.jsonl"


def new_entry(**fields) -> dict:
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


def read_audit(path: Path | str | None = None) -> list[dict]:
    """One entry per action, oldest first; lines that are not JSON objects are skipped."""
    p = Path(path) if path else audit_path()
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    by_id: dict[str, dict] = {}
    for line in text.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict):
            by_id[str(e.get("id", len(by_id)))] = e
    return sorted(by_id.values(), key=lambda e: e.get("time") or 0)
