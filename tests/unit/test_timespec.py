"""`--since`/`--until` words: the spans `live --since` hands to journalctl, read the same way by
`summary`, and the points journalctl takes."""

from __future__ import annotations

import calendar

import pytest

from mtptui.core.timespec import span_seconds, when
from mtptui.sources.journal import since_arg

NOW = calendar.timegm((2026, 3, 10, 8, 30, 0))  # 08:30 UTC


@pytest.mark.parametrize("text, seconds", [
    ("10min", 600), ("10 min", 600), ("2h", 7200), ("1h 30min", 5400), ("1h30min", 5400),
    ("90s", 90), ("1.5d", 129600), ("2 weeks", 1209600), ("500ms", 0.5), ("3m", 180), ("1M", 2629800)])
def test_spans(text, seconds):
    assert span_seconds(text) == pytest.approx(seconds)
    assert when(text, NOW) == pytest.approx(NOW - seconds), "a bare span counts back from now"
    assert since_arg(text) == f"-{text}", "live hands journalctl the same span, made relative"


@pytest.mark.parametrize("text", ["", "10", "min", "10 parsecs", "1h -", "today", "-10min"])
def test_not_spans(text):
    assert span_seconds(text) is None


@pytest.mark.parametrize("text, at", [
    ("-1h", NOW - 3600), ("+5min", NOW + 300), ("5min ago", NOW - 300), ("now", NOW),
    ("today", calendar.timegm((2026, 3, 10, 0, 0, 0))),
    ("yesterday", calendar.timegm((2026, 3, 9, 0, 0, 0))),
    ("16:00", calendar.timegm((2026, 3, 10, 16, 0, 0))),
    ("07:15:30", calendar.timegm((2026, 3, 10, 7, 15, 30))),
    ("2026-03-09 16:00", calendar.timegm((2026, 3, 9, 16, 0, 0))),
    ("2026-03-09T16:00:00Z", calendar.timegm((2026, 3, 9, 16, 0, 0))),
    ("2026-03-09T16:00:00+02:00", calendar.timegm((2026, 3, 9, 14, 0, 0))),
    ("@1773072000", 1773072000), ("1773072000.5", 1773072000.5)])
def test_points(text, at):
    assert when(text, NOW) == at


@pytest.mark.parametrize("text", ["", "yesterday-ish", "nan", "inf", "10 parsecs", "25:99", "2026-13-01"])
def test_junk_is_refused(text):
    with pytest.raises(ValueError):
        when(text, NOW)
