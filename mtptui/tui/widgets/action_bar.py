"""Actions under way (a restart with new settings): one line each, the phase and the time it has
taken, where the operator looks; hidden when nothing runs."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from mtptui.tui.running import Running


class ActionBar(Static):
    DEFAULT_CSS = """
    ActionBar { height: auto; max-height: 3; padding: 0 1; display: none; text-wrap: nowrap;
                text-overflow: ellipsis; background: $accent 30%; }
    ActionBar.-active { display: block; }
    ActionBar.-failing { background: $error 40%; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: tuple | None = None

    def show(self, running: list[Running]) -> None:
        lines = tuple((r.failed, r.text()) for r in running)
        if lines == self._last:
            return  # the elapsed time is in seconds: one update a second
        self._last = lines
        self.set_class(bool(lines), "-active")
        self.set_class(any(f for f, _ in lines), "-failing")
        parts: list = []
        for failed, text in lines:
            parts += [(" ACTING ", "bold $text on $error" if failed else "bold $text on $accent"), " ",
                      (text, "bold"), "\n"]
        self.update(Content.assemble(*parts[:-1]))
