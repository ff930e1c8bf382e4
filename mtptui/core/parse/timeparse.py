"""Timestamps of the log formats, turned into epoch seconds.

Naive times (SGLang's own prefix, journald's `short` modes, vLLM) are read as UTC: the log does
not say its zone, and a fixed choice keeps `summary` output the same on every machine.
Parsing is cached per distinct second, because a busy log repeats the same second many times.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timezone

MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}

# stamp text -> epoch seconds; read directly on the hot path (a dict lookup, not a call)
STAMPS: dict[str, float] = {}


STAMPS_KEPT = 4096  # stamps repeat while their second lasts: the last hour or so is all that helps


def _remember(key: str, value: float) -> float:
    if len(STAMPS) >= STAMPS_KEPT:  # cleared when full: a long log's memory stays flat
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


DAY, HALF_DAY = 86400, 43200


class LogDate:
    """The date a log has reached: the one place a reader of a log keeps it, for the stamps that
    do not say it all.

    - ``date``: the date of the last full stamp (`2026-03-09`), "" before one. A reader notes it
      (``note``) for each full stamp that reads as a time; one that no clock shows notes nothing.
    - ``year``: the year of year-less stamps (journald's `short`, syslog's, vLLM's): the date's,
      else this year (UTC).
    - a time-only stamp (`[04:40:55 TP0]`, old versions) is on the day of its envelope's time
      (the nearest such instant), else on the date's day; one more than half a day before the
      time-only stamp before it has passed midnight, and moves that day on.
    """

    __slots__ = ("date", "year", "_month_day", "_day_of", "_day", "_last")

    def __init__(self) -> None:
        self.date = ""
        self.year = datetime.now(timezone.utc).year
        self._month_day: dict[str, float | None] = {}  # 'Mar 09 16:03:25' -> epoch, in self.year
        self._day_of = ""  # the date whose midnight _day is (time-only stamps without an envelope)
        self._day = 0.0
        self._last: float | None = None  # the time-only stamp before, on that path

    def note(self, date: str) -> None:
        """Reads on as if the last full stamp had been of this date (`2026-03-09`); also for a
        reader that starts in the middle of a log. (Hot paths compare before they call.)"""
        if date != self.date:
            self.date = date
            year = int(date[:4])
            if year != self.year:
                self.year = year
                self._month_day.clear()

    def full(self, stamp: str, frac: str | None) -> float | None:
        """'2026-03-09 16:03:25' and its fraction's digits as epoch seconds, its date noted; None
        for a stamp that no clock shows."""
        ts = instant(stamp, frac, None)
        if ts is not None and stamp[:10] != self.date:
            self.note(stamp[:10])
        return ts

    def month_day(self, stamp: str, frac: str | None) -> float | None:
        """'Mar 09 16:03:25' (+ '.123456') in ``year``, as epoch seconds."""
        ts = self._month_day.get(stamp, False)
        if ts is False:
            ts = month_day_hms(self.year, MONTHS[stamp[:3]], int(stamp[4:6]), stamp[7:])
            if len(self._month_day) > 100_000:
                self._month_day.clear()
            self._month_day[stamp] = ts
        if ts is not None and frac:
            ts += float(frac)
        return ts

    def time_of_day(self, hms: str, frac: str | None, env_ts: float | None) -> float | None:
        """A time-only stamp ('16:03:25' and its fraction's digits) as epoch seconds: on the day
        of the envelope's time, else on the date's; None when neither is known."""
        t = seconds_of_day(hms)
        if t is None:
            return env_ts
        if frac:
            t += int(frac) / 10 ** len(frac)
        if env_ts is not None:
            ts = env_ts - env_ts % DAY + t
            if ts - env_ts > HALF_DAY:
                return ts - DAY
            return ts + DAY if env_ts - ts > HALF_DAY else ts
        if not self.date:
            return None
        if self._day_of != self.date:
            self._day_of = self.date
            self._day = ymd_hms(self.date + " 00:00:00") or 0.0
            self._last = None
        ts = self._day + t
        if self._last is not None and self._last - ts > HALF_DAY:
            self._day += DAY
            ts += DAY
        self._last = ts
        return ts


def seconds_of_day(hms: str) -> int | None:
    """'16:03:25' -> 57805; None for a time that no clock shows."""
    try:
        h, m, s = int(hms[0:2]), int(hms[3:5]), int(hms[6:8])
    except ValueError:
        return None
    if h < 24 and m < 60 and s < 62:
        return h * 3600 + m * 60 + s
    return None


def zone_offset(zone: str) -> int:
    """Seconds east of UTC: 'Z', '+0100', '-05:30'."""
    if zone == "Z":
        return 0
    minutes = int(zone[1:3]) * 60 + int(zone[-2:])
    return minutes * 60 if zone[0] == "+" else -minutes * 60



# A stamp of container runtimes and RFC 5424 syslog: any fraction up to nanoseconds, `Z` or an
# offset. Groups: the second, its fraction, the zone.
RFC3339 = r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:?\d\d)"
_RFC3339 = re.compile(RFC3339)


def rfc3339(s: str) -> float | None:
    """'2026-03-09T16:03:25.123456789Z' as epoch seconds; None if it is not such a stamp."""
    m = _RFC3339.fullmatch(s)
    return None if m is None else instant(*m.groups())


def instant(second: str, frac: str | None, zone: str | None) -> float | None:
    """'2026-03-09 16:03:25' (or with a 'T'), a fraction's digits and a zone, as epoch seconds."""
    ts = ymd_hms(second)
    if ts is None:
        return None
    if frac:
        ts += int(frac) / 10 ** len(frac)
    return ts - zone_offset(zone) if zone else ts
