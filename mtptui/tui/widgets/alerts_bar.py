"""Alerts holding now for the shown host: one line each, errors first; hidden when all is well."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from mtptui.core.alerts import ERROR, Alert

MAX_SHOWN = 3


class AlertsBar(Static):
    DEFAULT_CSS = """
    AlertsBar { height: auto; max-height: 4; padding: 0 1; display: none; text-wrap: nowrap;
                text-overflow: ellipsis; }
    AlertsBar.-active { display: block; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: tuple | None = None

    def show(self, alerts: list[Alert], since: dict[tuple, str]) -> None:
        key = tuple((a.key, a.title) for a in alerts)
        if key == self._last:
            return
        self._last = key
        self.set_class(bool(alerts), "-active")
        parts: list = []
        for a in alerts[:MAX_SHOWN]:
            style = "bold $text on $error" if a.severity == ERROR else "bold $text on $warning-darken-1"
            parts += [(" ALERT " if a.severity == ERROR else " WARN ", style), " ", (a.title, "bold"),
                      (f"  since {since.get(a.key, '?')} · {a.detail}", "$text-muted"), "\n"]
        if len(alerts) > MAX_SHOWN:
            parts.append((f"+{len(alerts) - MAX_SHOWN} more alerts: e shows the timeline", "$text-muted"))
        elif parts:
            parts.pop()
        self.update(Content.assemble(*parts))
