"""The event timeline: restarts, ready, OOM, crashes, gaps and alerts, oldest first, full text."""

from __future__ import annotations

from dataclasses import dataclass

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from mtptui.tui.viewmodel import clock_text

KIND_STYLE = {
    "started": "bold $primary", "spec_config": "$primary", "ready": "bold $success",
    "stopping": "$text-muted", "stopped": "$text-muted", "failed": "bold $error",
    "auto_restart": "bold $warning", "oom": "bold $error", "nccl": "bold $error", "error": "bold $error",
    "watchdog": "bold $error", "retract": "$warning", "gap": "bold $warning",
    "restart_requested": "$accent", "epoch": "bold $accent", "alert": "bold $warning",
    "alert_error": "bold $error", "cleared": "$text-muted",
}
KIND_LABEL = {"spec_config": "settings", "auto_restart": "restart", "epoch": "EPOCH",
              "restart_requested": "restart?", "alert_error": "ALERT", "alert": "ALERT"}


@dataclass(frozen=True)
class TimelineEntry:
    ts: float
    kind: str
    text: str


class EventTimeline(VerticalScroll):
    ALLOW_MAXIMIZE = True
    DEFAULT_CSS = """
    EventTimeline { border: round $panel-lighten-2; height: 1fr; }
    EventTimeline > Static { width: 1fr; }
    """

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._body = Static("", markup=False)
        self._last: tuple | None = None

    def compose(self):
        yield self._body

    def on_mount(self) -> None:
        # Newest at the bottom, kept in view until the user scrolls up.
        self.anchor()

    def show(self, entries: list[TimelineEntry], title: str) -> None:
        key = (tuple(entries[-1:]), len(entries), title)
        if key == self._last:
            return
        self._last = key
        self.border_title = title
        if not entries:
            self._body.update(Content("no events yet: restarts, ready, OOM, crashes, alerts appear here",
                                      ).stylize("$text-muted"))
            return
        parts: list = []
        for e in entries:
            style = KIND_STYLE.get(e.kind, "")
            parts += [(clock_text(e.ts) + " ", "$text-muted"),
                      (f"{KIND_LABEL.get(e.kind, e.kind):<9}", style), " ", e.text, "\n"]
        self._body.update(Content.assemble(*parts[:-1]))
