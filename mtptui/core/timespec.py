"""Times as an operator types them after `--since` and `--until`, in journalctl's words.

`live --since 10min` hands the words to journalctl on the host; `summary --since 10min` reads
them here. Both take the same spans (systemd.time(7): `10min`, `2h`, `1h 30min`, `1.5d`), and
summary also takes the points journalctl takes: `now`, `today`, `yesterday`, `-1h`, `@EPOCH`,
`2026-03-09 16:00`, `16:00`. A summary reads zone-less stamps in a log as UTC, so zone-less
times and days here are UTC too (journalctl on a host reads them in the host's zone).
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone

# systemd.time(7)'s units (`m` is minutes and `M` months, as there)
_UNITS = {name: seconds for names, seconds in (
    (("us", "usec", "µs"), 1e-6), (("ms", "msec"), 1e-3),
    (("s", "sec", "second", "seconds"), 1.0), (("m", "min", "minute", "minutes"), 60.0),
    (("h", "hr", "hour", "hours"), 3600.0), (("d", "day", "days"), 86400.0),
    (("w", "week", "weeks"), 604800.0), (("M", "month", "months"), 2629800.0),
    (("y", "year", "years"), 31557600.0)) for name in names}
_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Zµ]+)")
_CLOCK = re.compile(r"\d{1,2}:\d\d(:\d\d(\.\d+)?)?")
_DAYS = {"today": 0, "yesterday": -1, "tomorrow": 1}


def span_seconds(text: str) -> float | None:
    """`10min`, `2 h`, `1h 30min` -> seconds; None when the text is not a span."""
    s = text.strip()
    total, pos = 0.0, 0
    while pos < len(s):
        m = _PART.match(s, pos)
        if m is None or m.group(2) not in _UNITS:
            return None
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return total if s else None


def when(text: str, now: float) -> float:
    """Epoch seconds for a `--since`/`--until` value, relative to `now`. Raises ValueError."""
    s = text.strip()
    low = s.lower()
    if low == "now":
        return now
    if low in _DAYS:
        day = datetime.fromtimestamp(now, timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
        return (day + timedelta(days=_DAYS[low])).timestamp()
    if low.endswith(" ago"):
        span = span_seconds(s[:-4])
        if span is not None:
            return now - span
    if s[:1] in "+-" and (span := span_seconds(s[1:])) is not None:
        return now + span if s[0] == "+" else now - span
    span = span_seconds(s)
    if span is not None:
        return now - span  # a bare span counts back from now, as `live --since 10min` does
    try:
        v = float(s[1:] if s.startswith("@") else s)
    except ValueError:
        pass
    else:
        if math.isfinite(v):
            return v
        raise ValueError(text)
    if _CLOCK.fullmatch(s):
        s = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%d ") + s
    try:
        dt = datetime.fromisoformat(s[:-1] + "+00:00" if s.endswith(("Z", "z")) else s)
    except ValueError:
        raise ValueError(text) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


__all__ = ["span_seconds", "when"]
