"""The status bar: where the data comes from, how fast, what was lost, and the settings read."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static


@dataclass
class StatusData:
    source: str
    state: str  # LIVE, LIVE paused, REPLAY playing 1x, REPLAY ended ...
    playhead: str  # clock text of the playhead
    lines_per_s: float | None
    read: int
    parsed: int  # batch + event lines
    unparsed: int
    dropped: int
    malformed: int
    backlog: int  # lines pushed but not parsed yet
    lag: str  # "last line 0.4s ago" (live) or "" (replay)
    settings: str  # speculation settings from server_args
    problems: str = ""  # a source's FAILED/RECONNECTING detail


def _n(v: int) -> str:
    return f"{v:,}"


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: auto; max-height: 3; background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: StatusData | None = None

    def show(self, d: StatusData) -> None:
        if d == self._last:
            return
        self._last = d
        rate = "– lines/s" if d.lines_per_s is None else f"{d.lines_per_s:,.0f} lines/s"
        parts: list = [
            (d.source, "bold"), " │ ", (d.state, "bold $accent"), " at ", (d.playhead, "bold"), " │ ", rate,
            f" │ {_n(d.read)} read: {_n(d.parsed)} parsed, {_n(d.unparsed)} unparsed, ",
            (f"{_n(d.dropped)} dropped", "bold $error" if d.dropped else ""),
        ]
        if d.malformed:
            parts.append((f", {_n(d.malformed)} malformed", "$warning"))
        if d.backlog:
            parts.append((f" │ backlog {_n(d.backlog)}", "$warning"))
        if d.lag:
            parts.append(f" │ {d.lag}")
        parts += [" │ ", (d.settings, "$text")]
        if d.problems:
            parts += [" │ ", (d.problems, "bold $error")]
        content = Content.assemble(*parts)
        # A relayout only when the bar may change its height (it wraps on narrow screens).
        width = max(1, self.size.width - 2)
        old = getattr(self, "_rows", None)
        rows = len(content.plain) // width
        self._rows = rows
        self.update(content, layout=rows != old)
