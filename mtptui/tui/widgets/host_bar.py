"""The host line: which host (in its accent colour), its tags, and its layout (TP, DP, model).
The run's settings and figures are on the epoch strip under it (epoch_strip.py).

On a narrow screen the host stays whole: the layout loses its model names first, then its tags go."""

from __future__ import annotations

from textual.css.types import EdgeType
from textual.widgets import Static

from mtptui.tui.widgets.fit import Part, fit


class HostBar(Static):
    DEFAULT_CSS = """
    HostBar { height: auto; max-height: 2; padding: 0 1; background: $boost; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: tuple | None = None
        self._border: tuple[EdgeType, str] | None = None
        self._lines = 0

    def lines(self) -> int:
        """As many lines as the stylesheet lets it have (one on short screens)."""
        mh = self.styles.max_height
        return max(1, int(mh.value)) if mh is not None and mh.is_cells else 2

    def show(self, host: str, accent: str | None, tags: list[str], layout: str) -> None:
        width = self.content_size.width or max(10, self.app.size.width - 2)
        key = (host, accent, tuple(tags), layout, width, self.lines())
        if key == self._last:
            return
        self._last = key
        border: tuple[EdgeType, str] | None = ("thick", accent) if accent else None
        if border != self._border:
            self._border = border
            self.styles.border_left = border  # a change of width: Textual lays out again
        host_style = f"bold {accent}" if accent else "bold $primary"
        tag_style = f"bold $text on {accent}" if accent else "reverse"
        pieces = layout.split(" · ")  # TP, DP, then the model names: the longest, shortened first
        layouts = [["  ", (" · ".join(pieces[:n]), "$text-muted")] for n in range(len(pieces), 0, -1)]
        parts = [Part.of(0, [("host ", "$text-muted"), (host, host_style)]),
                 *(Part.of(2, [" ", (f" {t} ", tag_style)]) for t in tags),
                 Part.of(1, *layouts) if layout else Part.of(1, "")]
        # Two lines where the stylesheet allows them: the text wraps between its parts.
        content = fit(parts, width if self.lines() == 1 else 2 * width - 8)
        # A layout pass (tens of ms on a full screen, in the frame of the key that switched
        # hosts) only when the text goes from one line to two or back.
        lines = 1 if content.cell_length <= width else 2
        self.update(content, layout=lines != self._lines)
        self._lines = lines
