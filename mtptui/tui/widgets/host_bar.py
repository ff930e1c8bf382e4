"""The host line: which host (in its accent colour), its tags, and its layout (TP, DP, model).
The run's settings and figures are on the epoch strip under it (epoch_strip.py)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class HostBar(Static):
    DEFAULT_CSS = """
    HostBar { height: auto; max-height: 2; padding: 0 1; background: $boost; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: tuple | None = None
        self._border: tuple | None = None
        self._lines = 0

    def show(self, host: str, accent: str | None, tags: list[str], layout: str) -> None:
        key = (host, accent, tuple(tags), layout)
        if key == self._last:
            return
        self._last = key
        border = ("thick", accent) if accent else None
        if border != self._border:
            self._border = border
            self.styles.border_left = border  # a change of width: Textual lays out again
        host_style = f"bold {accent}" if accent else "bold $primary"
        parts: list = [("host ", "$text-muted"), (host, host_style)]
        for t in tags:
            parts += [" ", (f" {t} ", f"bold $text on {accent}" if accent else "reverse")]
        parts += ["  ", (layout, "$text-muted")]
        content = Content.assemble(*parts)
        # A layout pass (tens of ms on a full screen, in the frame of the key that switched
        # hosts) only when the text goes from one line to two or back.
        width = self.content_size.width
        lines = 1 if width and content.cell_length <= width else 2
        self.update(content, layout=lines != self._lines)
        self._lines = lines
