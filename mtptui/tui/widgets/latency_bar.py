"""The host's server latency from /metrics in one line (tui/latency_view.py); hidden when the
session reaches no server."""

from __future__ import annotations

from textual.widgets import Static

from mtptui.tui.latency_view import latency_line


class LatencyBar(Static):
    DEFAULT_CSS = """
    LatencyBar { height: 1; padding: 0 1; display: none; text-wrap: nowrap; color: $text-muted; }
    LatencyBar.-active { display: block; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", markup=False, **kw)
        self._last: tuple | None = None

    def show(self, now: dict | None, note: str | None) -> None:
        width = max(0, (self.size.width or self.app.size.width) - 2)
        line = latency_line(now, note, width)
        key = (line, width)
        if key == self._last:
            return
        self._last = key
        self.set_class(line is not None, "-active")
        self.update(line or "")
