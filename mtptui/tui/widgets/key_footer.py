"""The footer of keys, fitted to its width: Textual's Footer with only the keys that fit whole
(in the key table's order, the commonest first), and the palette's key always on the right; a
narrow screen leaves out the last ones rather than cutting one mid-word (help lists them all)."""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

KEY_PAD = 3  # a key's padding either side, and its description's after it
PALETTE_PAD = 5  # the palette key's too, with its border and the padding on its right


def key_width(w: FooterKey) -> int:
    return cell_len(w.key_display) + cell_len(w.description) + KEY_PAD


class KeyFooter(Footer):
    _width = 0  # the width its keys were fitted to
    def compose(self) -> ComposeResult:
        widgets: list[Widget] = list(super().compose())
        palette = [w for w in widgets if w.has_class("-command-palette")]
        self._width = self.app.size.width
        room = max(0, self._width - sum(key_width(w) + PALETTE_PAD - KEY_PAD for w in palette
                                                   if isinstance(w, FooterKey)))
        for w in widgets:
            if w in palette:
                continue
            need = key_width(w) if isinstance(w, FooterKey) else 0
            if need > room:
                break  # the rest would be cut: leave them out, in order
            room -= need
            yield w
        yield from palette

    def on_resize(self) -> None:
        if self._width != self.app.size.width:
            self._width = self.app.size.width
            self.call_after_refresh(self.recompose)
