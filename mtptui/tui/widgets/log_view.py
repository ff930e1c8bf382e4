"""The log pane: full lines, wrapped (never cut off), batch lines coloured, filterable.

It renders only what fits, straight from the bounded ``LogBuffer``, on the screen's tick: a
flood of lines costs nothing here beyond the lines on screen (Textual #2187: no widget write
per line). Following shows the newest lines; scrolling up (or a pause) holds the view and counts
the lines that arrived since. End (or scrolling down past the newest) follows again.
Lines stamped after the playhead are not shown yet, so after a seek back the log agrees with
the charts.
"""

from __future__ import annotations

from rich.cells import chop_cells
from textual.content import Content
from textual.events import MouseScrollDown, MouseScrollUp
from textual.widget import Widget

from mtptui.printable import printable
from mtptui.tui.bindings import bindings_for
from mtptui.tui.logbuffer import (DECODE_LINE, DROPPED_LINE, EVENT_LINE, OTHER_LINE, PREFILL_LINE, HOST, KIND, SEQ, TEXT, TS, Entry,
                                  LogBuffer)
from mtptui.tui.viewmodel import plural

def fold(text: str, width: int) -> list[str]:
    """Rows of at most `width` cells, broken after a `, ` or a space when one is near the end
    of the row (a batch line then breaks between its fields), else mid-word."""
    if len(text) <= width and text.isascii():
        return [text]
    rows = []
    for piece in chop_cells(text, width) if not text.isascii() else [text]:
        while len(piece) > width:
            cut = piece.rfind(", ", width // 2, width - 1)
            if cut >= 0:
                cut += 2
            else:
                cut = piece.rfind(" ", width // 2, width)
                cut = width if cut < 0 else cut + 1
            rows.append(piece[:cut])
            piece = piece[cut:]
        rows.append(piece)
    return rows or [""]


STYLE = {DECODE_LINE: "$log-decode", PREFILL_LINE: "$log-prefill", EVENT_LINE: "bold $log-event",
         OTHER_LINE: "", DROPPED_LINE: "italic $error"}
SCAN_LIMIT = 50_000


class LogView(Widget, can_focus=True):
    ALLOW_MAXIMIZE = True
    DEFAULT_CSS = """
    LogView { border: round $frame; height: 1fr; padding: 0 1; }
    LogView:focus { border: round $accent; }
    """
    BINDINGS = bindings_for("log")

    def __init__(self, buffer: LogBuffer, **kw) -> None:
        super().__init__(**kw)
        self.buffer = buffer
        self.follow = True
        self.anchor_seq = 0  # seq of the bottom line while not following
        self.filter = ""
        self.playhead: float | None = None
        self.host: str | None = None
        self.only_host = False  # several hosts: show only the current one's lines
        self.pinned_time = False  # the playhead is behind the newest line (pause, seek, scrub)
        self._stamp: tuple | None = None
        self.new_lines = 0

    # -- what to show -------------------------------------------------------------------------
    def show(self, playhead: float | None, host: str | None, only_host: bool, pinned_time: bool) -> None:
        self.playhead, self.host, self.only_host, self.pinned_time = playhead, host, only_host, pinned_time
        stamp = (self.buffer.seq, playhead if pinned_time else None, host, only_host, self.follow,
                 self.anchor_seq, self.filter, self.size, self.is_maximized)
        if stamp != self._stamp:
            self._stamp = stamp
            self._update_title()
            self.refresh()

    def set_filter(self, text: str) -> None:
        self.filter = text.strip()
        self._stamp = None
        self.refresh()

    def _visible(self, e: Entry) -> bool:
        if self.only_host and e[HOST] != self.host and e[HOST] is not None:
            return False
        if self.pinned_time and self.playhead is not None and e[TS] is not None and e[TS] > self.playhead:
            return False
        if self.filter and self.filter.lower() not in e[TEXT].lower():
            return False
        return True

    def _eligible(self):
        """Entries that pass the filters, newest first, at or before the anchor."""
        n = 0
        for e in self.buffer.newest_first(self.host if self.only_host else None):
            n += 1
            if n > SCAN_LIMIT:
                return
            if not self.follow and e[SEQ] > self.anchor_seq:
                continue
            if self._visible(e):
                yield e

    def _update_title(self) -> None:
        if self.follow and not self.pinned_time:
            self.new_lines = 0
            state = "following (scroll up or space to hold)"
        else:
            newest = self.buffer.seq
            if self.follow:  # held by the playhead: count what is stamped after it
                hidden = 0
                for e in self.buffer.newest_first():
                    if e[TS] is None or self.playhead is None or e[TS] <= self.playhead:
                        break
                    hidden += 1
                self.new_lines = hidden
            else:
                self.new_lines = max(0, newest - self.anchor_seq)
            if self.follow and self.new_lines == 0:
                state = "following (scroll up or space to hold)"
            else:
                state = f"held · {plural(self.new_lines, 'new line')} (End follows)"
        filt = f" · filter “{self.filter}”" if self.filter else ""
        size = " · l or Esc shrinks" if self.is_maximized else ""
        self.border_title = f"log{size} · {state}{filt}"

    def render(self):
        width = max(10, self.size.width)
        height = max(1, self.size.height)
        rows: list[tuple[str, str]] = []  # newest first, each exactly one screen row
        for e in self._eligible():
            style = STYLE.get(e[KIND], "")
            # Folded by cells here rather than word-wrapped by Textual: then the newest line is
            # known to sit on the bottom row, and a long line is shown whole, like `less`.
            chunks = fold(printable(e[TEXT]), width)  # only the lines on screen: as the log had them, escaped
            for chunk in reversed(chunks):
                rows.append((chunk, style))
            if len(rows) >= height:
                break
        if not rows:
            if self.filter:
                return Content(f"no line matches “{self.filter}” (/ to change, empty to clear)").stylize("$text-muted")
            return Content("waiting for lines ...").stylize("$text-muted")
        rows = rows[:height]
        parts: list = []
        for chunk, style in reversed(rows):
            parts.append((chunk, style) if style else chunk)
            parts.append("\n")
        return Content.assemble(*parts[:-1])

    # -- scrolling ----------------------------------------------------------------------------
    def _hold(self) -> None:
        if self.follow:
            self.follow = False
            first = next(self._eligible(), None)
            self.anchor_seq = first[SEQ] if first is not None else self.buffer.seq

    def action_scroll_lines(self, n: int) -> None:
        if n < 0:
            self._hold()
            steps = -n
            it = self._eligible()
            next(it, None)  # the current bottom line
            target = None
            for _ in range(steps):
                e = next(it, None)
                if e is None:
                    break
                target = e
            if target is not None:
                self.anchor_seq = target[SEQ]
        elif not self.follow:
            # Forward: the n-th eligible line after the anchor, or follow past the newest.
            saved, self.anchor_seq = self.anchor_seq, self.buffer.seq
            after = [e[SEQ] for e in self._eligible() if e[SEQ] > saved]
            self.anchor_seq = saved
            if len(after) <= n:
                self.action_follow()
                return
            self.anchor_seq = after[-n - 1] if n < len(after) else after[0]
        self._stamp = None
        self.show(self.playhead, self.host, self.only_host, self.pinned_time)

    def action_follow(self) -> None:
        self.follow = True
        self.anchor_seq = 0
        self._stamp = None
        self.show(self.playhead, self.host, self.only_host, self.pinned_time)

    def action_oldest(self) -> None:
        self._hold()
        oldest = None
        for e in self._eligible():
            oldest = e
        if oldest is not None:
            self.anchor_seq = oldest[SEQ]
        self._stamp = None
        self.show(self.playhead, self.host, self.only_host, self.pinned_time)

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        event.stop()
        self.action_scroll_lines(-3)

    def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        event.stop()
        self.action_scroll_lines(3)
