"""Alerts holding now for the shown host: one line each, errors first; hidden when all is well.

An alert names its ranks itself ("on all 8 ranks"), so a host-wide condition is one line. When
there are more alerts than lines (a short screen has two), the last line lists the rest.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from mtptui.core.alerts import ERROR, Alert

MAX_LINES = 3  # app.tcss may allow fewer (short screens)


class AlertsBar(Static):
    DEFAULT_CSS = """
    AlertsBar { height: auto; max-height: 3; padding: 0 1; display: none; text-wrap: nowrap;
                text-overflow: ellipsis; }
    AlertsBar.-active { display: block; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: tuple | None = None

    def lines(self) -> int:
        """As many lines as the stylesheet lets it have."""
        mh = self.styles.max_height
        return max(1, min(MAX_LINES, int(mh.value))) if mh is not None and mh.is_cells else MAX_LINES

    def show(self, alerts: list[Alert], since: dict[tuple, str]) -> None:
        lines = self.lines()
        key = (tuple((a.key, a.title) for a in alerts), lines)
        if key == self._last:
            return
        self._last = key
        self.set_class(bool(alerts), "-active")
        shown = alerts if len(alerts) <= lines else alerts[:lines - 1]
        rows: list[Content] = []
        for a in shown:
            error = a.severity == ERROR
            rows.append(Content.assemble(
                (" ALERT " if error else " WARN ", "bold $text on $error" if error else "bold $text on $warning-darken-1"),
                " ", (a.title, "bold"), (f" · since {since.get(a.key, '?')}", "$text-muted"),
                (f" · {a.detail}", "$text-muted")))
        rest = alerts[len(shown):]
        if rest:
            rows.append(Content.assemble((f" +{len(rest)} ", "bold $text on $warning-darken-1"), " ",
                                         ("; ".join(a.title for a in rest), "bold"),
                                         (" · e: the timeline", "$text-muted")))
        self.update(Content("\n").join(rows))
