"""One line the simulator prints, and what it means (its *truth*).

`who` decides the prefix: None for a raw line (a tqdm bar, a traceback's body, torch's NCCL text),
"" for the main process (`[time] `), else the scheduler's rank tokens (`[time TP0] `).
The truth says what a reader of the log should get from the line:
  {"expect": "batch", "kind": "decode"|"prefill"|"spec", "rank": ..., "fields": {...}, "tol": {...}}
  {"expect": "event", "event": kind, "data": {...}}        (kinds as in DESIGN.md)
  {"expect": "other"}
The writer adds "ts", "host" and "text" when it prints the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Msg:
    t: float
    who: str | None
    text: str
    truth: dict = field(default_factory=lambda: {"expect": "other"})
    stream: str = "stderr"  # uvicorn's access log goes to stdout, everything else to stderr


def other() -> dict:
    return {"expect": "other"}


def event(kind: str, data: dict | None = None) -> dict:
    return {"expect": "event", "event": kind, "data": data or {}}


def batch(kind: str, rank: str, fields: dict, tol: dict) -> dict:
    return {"expect": "batch", "kind": kind, "rank": rank, "fields": fields, "tol": tol}
