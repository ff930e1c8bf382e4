"""The time windows that the panels and the chart can show: the one list of them, for the key
that cycles them, the palette, the help and the command lines' --window."""

from __future__ import annotations

# (label, seconds); None is the whole buffer
WINDOWS: tuple[tuple[str, float | None], ...] = (
    ("1m", 60.0), ("5m", 300.0), ("15m", 900.0), ("1h", 3600.0), ("all", None))
WINDOW_LABELS = tuple(label for label, _ in WINDOWS)
