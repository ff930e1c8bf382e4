"""The host line: which host (in its accent colour), its tags, its epoch and settings.

On a narrow screen the host and its settings stay whole: the layout (TP, DP, model) goes first,
then the epoch's reason, then the epoch."""

from __future__ import annotations

from textual.widgets import Static

from mtptui.tui.widgets.fit import Part, fit


class HostBar(Static):
    DEFAULT_CSS = """
    HostBar { height: auto; max-height: 2; padding: 0 1; background: $boost; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: tuple | None = None
        self._border: tuple | None = None
        self._lines = 0

    def lines(self) -> int:
        """As many lines as the stylesheet lets it have (one on short screens)."""
        mh = self.styles.max_height
        return max(1, int(mh.value)) if mh is not None and mh.is_cells else 2

    def show(self, host: str, accent: str | None, tags: list[str], epoch_text: str, spec: str,
             layout: str) -> None:
        width = self.content_size.width or max(10, self.app.size.width - 2)
        key = (host, accent, tuple(tags), epoch_text, spec, layout, width, self.lines())
        if key == self._last:
            return
        self._last = key
        border = ("thick", accent) if accent else None
        if border != self._border:
            self._border = border
            self.styles.border_left = border  # a change of width: Textual lays out again
        host_style = f"bold {accent}" if accent else "bold $primary"
        tag_style = f"bold $text on {accent}" if accent else "reverse"
        epoch_short = epoch_text.split(", ")[0]
        parts = [Part.of(0, [("host ", "$text-muted"), (host, host_style)]),
                 *(Part.of(3, [" ", (f" {t} ", tag_style)]) for t in tags),
                 Part.of(1, ["  ", (spec, "bold")]),
                 Part.of(2, ["  ", (epoch_text, "$accent")], ["  ", (epoch_short, "$accent")]),
                 Part.of(4, ["  ", (layout, "$text-muted")])]
        # Two lines where the stylesheet allows them: the text wraps between its parts.
        content = fit(parts, width if self.lines() == 1 else 2 * width - 8)
        # A layout pass (tens of ms on a full screen, in the frame of the key that switched
        # hosts) only when the text goes from one line to two or back.
        lines = 1 if content.cell_length <= width else 2
        self.update(content, layout=lines != self._lines)
        self._lines = lines
