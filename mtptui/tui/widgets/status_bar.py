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
    flash: str = ""  # the answer to the last key, for a few seconds


def _n(v: int) -> str:
    return f"{v:,}"


class StatusBar(Static):
    """Two fixed lines (a fixed height: updating it never costs a layout pass):
    where the lines come from and how many, then the settings, problems and the last key's answer."""

    DEFAULT_CSS = """
    StatusBar { height: 2; background: $panel; color: $text; padding: 0 1; text-wrap: nowrap;
                text-overflow: ellipsis; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: StatusData | None = None

    def show(self, d: StatusData) -> None:
        if d == self._last:
            return
        self._last = d
        rate = "– lines/s" if d.lines_per_s is None else f"{d.lines_per_s:,.0f} lines/s"
        # Losses first after the line count: on a narrow screen the end of the line is cut.
        parts: list = [
            (d.source, "bold"), " │ ", (d.state, "bold $accent"), " at ", (d.playhead, "bold"),
            f" │ {_n(d.read)} lines: ", (f"{_n(d.dropped)} dropped", "bold $error" if d.dropped else ""),
        ]
        if d.malformed:
            parts.append((f", {_n(d.malformed)} malformed", "$warning"))
        parts += [f", {_n(d.parsed)} parsed, {_n(d.unparsed)} unparsed │ ", rate]
        if d.backlog:
            parts.append((f" │ backlog {_n(d.backlog)}", "$warning"))
        if d.lag:
            parts.append(f" │ {d.lag}")
        parts.append("\n")
        if d.flash:
            parts += [(f" {d.flash} ", "bold $text on $accent-darken-1"), " "]
        # A host that does not answer matters more than settings read before (and is cut last).
        if d.problems:
            parts += [(d.problems, "bold $error"), " │ "]
        parts.append((d.settings, "$text"))
        self.update(Content.assemble(*parts), layout=False)
