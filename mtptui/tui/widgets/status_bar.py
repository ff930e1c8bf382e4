"""The status bar: where the data comes from, how fast, what was lost, and the settings read."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from mtptui.tui.viewmodel import plural
from mtptui.tui.widgets.fit import Part, fit


@dataclass
class StatusData:
    source: str
    state: str  # LIVE, LIVE paused, REPLAY playing 1x, REPLAY ended, OPEN ...
    playhead: str  # clock text of the playhead
    lines_per_s: float | None
    read: int
    parsed: int  # batch + event lines
    unparsed: int
    dropped: int
    malformed: int
    backlog: int  # lines pushed but not parsed yet
    lag: str  # "last line 0.4s ago" (live) or "" (replay): how fresh the screen is
    settings: str  # speculation settings from server_args
    problems: str = ""  # a source's FAILED/RECONNECTING detail
    flash: str = ""  # the answer to the last key, for a few seconds
    read_only: bool = False  # --read-only: nothing here can change a server


def _n(v: int) -> str:
    return f"{v:,}"


class StatusBar(Static):
    """Two fixed lines (a fixed height: updating it never costs a layout pass):
    where the lines come from, what time is shown and how fresh it is, and how many lines; then
    the settings, problems and the last key's answer. On a narrow screen the source, the state
    and the freshness stay whole; the counts shorten, then the rate and the counts go."""

    DEFAULT_CSS = """
    StatusBar { height: 2; background: $panel; color: $text; padding: 0 1; text-wrap: nowrap;
                text-overflow: ellipsis; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: tuple | None = None

    def show(self, d: StatusData) -> None:
        width = self.content_size.width or max(10, self.app.size.width - 2)
        if (d, width) == self._last:
            return
        self._last = (d, width)
        rate = "– lines/s" if d.lines_per_s is None else f"{d.lines_per_s:,.0f} lines/s"
        lost = [(f"{_n(d.dropped)} dropped", "bold $error" if d.dropped else "")]
        if d.malformed:
            lost.append((f", {_n(d.malformed)} malformed", "$warning"))
        # Losses first after the line count: they are what must not go unseen.
        line1 = [Part.of(0, [(d.source, "bold")], [(d.source.split(" (")[0], "bold")]),
                 Part.of(0, [" │ ", (d.state, "bold $accent"), " at ", (d.playhead, "bold")]),
                 Part.of(0 if d.lag else 9, [" · ", d.lag] if d.lag else ""),
                 # lines lost are never left out (none lost may be, on a narrow screen)
                 Part.of(0 if d.dropped or d.malformed else 2,
                         [f" │ {plural(d.read, 'line')}: ", *lost, f", {_n(d.parsed)} parsed, {_n(d.unparsed)} unparsed"],
                         [f" │ {plural(d.read, 'line')}, ", *lost]),
                 Part.of(4, f" │ {rate}")]
        if d.backlog:
            line1.append(Part.of(3, [(f" │ backlog {_n(d.backlog)}", "$warning")]))
        line2: list = []
        if d.read_only:
            line2 += [(" READ-ONLY ", "bold $text on $warning-darken-2"), " "]
        if d.flash:
            line2 += [(f" {d.flash} ", "bold $text on $accent-darken-1"), " "]
        # A host that does not answer matters more than settings read before (and is cut last).
        if d.problems:
            line2 += [(d.problems, "bold $error"), " │ "]
        line2.append((d.settings, "$text"))
        self.update(Content.assemble(fit(line1, width), "\n", *line2), layout=False)
