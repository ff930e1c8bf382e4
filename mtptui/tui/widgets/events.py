"""The event timeline: restarts, ready, OOM, crashes, gaps and alerts, oldest first, full text."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.events import MouseScrollDown, MouseScrollUp
from textual.widget import Widget

from mtptui.printable import printable
from mtptui.tui.bindings import bindings_for
from mtptui.tui.viewmodel import clock_text

KIND_STYLE = {
    "started": "bold $primary", "spec_config": "$primary", "ready": "bold $success",
    "stopping": "$text-muted", "stopped": "$text-muted", "failed": "bold $error",
    "auto_restart": "bold $warning", "crash": "bold $error", "oom": "bold $error", "nccl": "bold $error",
    "error": "bold $error",
    "watchdog": "bold $error", "retract": "$warning", "gap": "bold $warning",
    "restart_requested": "$accent", "epoch": "bold $accent", "alert": "bold $warning",
    "alert_error": "bold $error", "cleared": "$text-muted", "spec_steps": "$primary",
}
KIND_LABEL = {"spec_config": "settings", "auto_restart": "restart", "epoch": "EPOCH",
              "restart_requested": "restart?", "alert_error": "ALERT", "alert": "WARN", "spec_steps": "steps"}


MAX_SHOWN = 150


@dataclass(frozen=True)
class TimelineEntry:
    ts: float
    kind: str
    text: str
    count: int = 1  # a run of the same kind, folded into one line
    first: float | None = None  # the run's first time
    fold: str = ""  # what a run must share to fold, when the kind alone is too broad (an alert's own kind)


def coalesce(entries: list[TimelineEntry]) -> list[TimelineEntry]:
    """Folds runs of one kind (retractions every second, a flapping error) into one line with
    a count, so the events that matter stay in view. Alerts fold only with the same alert:
    a queue warning never hides an accept rate one."""
    out: list[TimelineEntry] = []
    for e in entries:
        prev = out[-1] if out else None
        if (prev is not None and (prev.kind, prev.fold) == (e.kind, e.fold)
                and e.kind not in ("epoch", "spec_config", "started")):
            out[-1] = TimelineEntry(e.ts, e.kind, e.text, prev.count + 1,
                                    prev.first if prev.first is not None else prev.ts, e.fold)
        else:
            out.append(e)
    return out


class EventTimeline(Widget, can_focus=True):
    """Renders the newest entries that fit (oldest first, newest on the bottom row) straight
    from its list: no scroll container, so a new event never costs a layout pass. Scrolling
    (up/down, page keys, wheel) moves an offset back through the entries; End follows again."""

    ALLOW_MAXIMIZE = True
    DEFAULT_CSS = """
    EventTimeline { border: round $frame; height: 1fr; padding: 0 1; }
    EventTimeline:focus { border: round $accent; }
    """
    BINDINGS = bindings_for("events")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.entries: list[TimelineEntry] = []
        self.back = 0  # entries hidden below the bottom row (0: following)
        self._last: tuple | None = None
        self._title = "events"

    def show(self, entries: list[TimelineEntry], title: str) -> None:
        entries = coalesce(entries)[-MAX_SHOWN:]
        key = (tuple(entries[-1:]), len(entries), title, self.back)
        if key == self._last:
            return
        self._last = key
        self.entries = entries
        self._title = title
        self._set_title()
        self.refresh()

    def _set_title(self) -> None:
        held = f" · {self.back} newer below (End follows)" if self.back else ""
        self.border_title = self._title + held

    def _line(self, e: TimelineEntry) -> list:
        style = KIND_STYLE.get(e.kind, "")
        parts: list = [(clock_text(e.ts) + " ", "$text-muted"), (f"{KIND_LABEL.get(e.kind, e.kind):<9}", style), " "]
        if e.count > 1:
            parts.append((f"×{e.count} since {clock_text(e.first)}, last: ", "bold"))
        parts.append(printable(e.text))  # as a log or a host wrote it
        return parts

    def render(self):
        if not self.entries:
            return Content("no events yet: restarts, ready, OOM, crashes, alerts appear here").stylize("$text-muted")
        width = max(10, self.size.width)
        height = max(1, self.size.height)
        rows: list[Content] = []  # screen rows, newest entry's last row first
        end = len(self.entries) - self.back
        for e in reversed(self.entries[:max(0, end)]):
            lines = Content.assemble(*self._line(e)).wrap(width)
            if not rows and len(lines) > height:
                rows = list(reversed(lines[:height]))  # a pane too short for the newest: its start
                break
            rows.extend(reversed(lines))
            if len(rows) >= height:
                break
        # Wrapped here, exactly: the newest entry is always on the bottom row.
        return Content("\n").join(reversed(rows[:height]))

    def action_scroll_entries(self, n: int) -> None:
        self.back = max(0, min(len(self.entries) - 1, self.back + n))
        self._last = None
        self._set_title()
        self.refresh()

    def action_follow(self) -> None:
        self.back = 0
        self._set_title()
        self.refresh()

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        event.stop()
        self.action_scroll_entries(2)

    def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        event.stop()
        self.action_scroll_entries(-2)
