"""Timestamps of the log formats, turned into epoch seconds.

Naive times (SGLang's own prefix, journald's `short` modes, vLLM) are read as UTC: the log does
not say its zone, and a fixed choice keeps `summary` output the same on every machine.
Parsing is cached per distinct second, because a busy log repeats the same second many times.
"""

from __future__ import annotations

import calendar
from datetime import datetime

MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}

# stamp text -> epoch seconds; read directly on the hot path (a dict lookup, not a call)
STAMPS: dict[str, float] = {}


def _remember(key: str, value: float) -> float:
    if len(STAMPS) > 100_000:  # a replay of a long log would otherwise grow it without bound
        STAMPS.clear()
    STAMPS[key] = value
    return value


def ymd_hms(s: str) -> float | None:
    """'2026-03-09 16:03:25' (or with a 'T') as UTC epoch seconds."""
    v = STAMPS.get(s)
    if v is not None:
        return v
    try:
        t = (int(s[0:4]), int(s[5:7]), int(s[8:10]), int(s[11:13]), int(s[14:16]), int(s[17:19]))
        v = float(calendar.timegm(t))
    except ValueError:
        return None
    if not (1 <= t[1] <= 12 and 1 <= t[2] <= 31 and t[3] < 24 and t[4] < 60 and t[5] < 62):
        return None
    return _remember(s, v)


def month_day_hms(year: int, month: int, day: int, hms: str) -> float | None:
    """Year-less stamps (journald short, vLLM) with the year supplied by the caller."""
    key = f"{year}-{month:02d}-{day:02d} {hms}"
    return ymd_hms(key)


def iso_with_zone(s: str) -> float | None:
    """journald short-iso(-precise): 2026-03-09T16:03:25+0000 or 2026-03-09T16:03:25.123456+00:00."""
    try:
        return datetime.fromisoformat(s).timestamp()
    except ValueError:
        pass
    # Python 3.10 does not take '+0000'; give it '+00:00'.
    if len(s) > 5 and s[-5] in "+-" and s[-4:].isdigit():
        try:
            return datetime.fromisoformat(s[:-2] + ":" + s[-2:]).timestamp()
        except ValueError:
            return None
    return None
