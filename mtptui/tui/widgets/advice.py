"""The advisor's line on the main screen: what the data says to try, while something holds; hidden
otherwise. One line (the advisor screen, A, has each piece of advice whole with its evidence)."""

from __future__ import annotations

from collections.abc import Mapping

from textual.content import Content
from textual.widgets import Static

from mtptui.config.keys import BY_ID
from mtptui.core.advisor import Advice


def key_of(key_id: str, keymap: Mapping[str, str]) -> str:
    """The key a binding id is on in this session (the config's [keys] may remap it), as printed."""
    from mtptui.tui.screens.help import key_text

    return key_text(keymap.get(key_id, BY_ID[key_id].keys)).split(" ")[0]


def try_text(a: Advice, keymap: Mapping[str, str], can_act: bool = True) -> str:
    """`[` tries eagle6; `s` tries speculation off; or the command, where no key tries it (or the
    session cannot act: a replay, --read-only)."""
    if a.key is None:
        return a.tries
    key = key_of(a.key, keymap)
    if a.key.startswith("focus_rank_"):
        return f"`{key}` shows {a.tries}"
    if not can_act:
        return f"try {a.tries} (`{key}` where mtptui may restart the server)"
    return f"`{key}` tries {a.tries}"


class AdviceBar(Static):
    DEFAULT_CSS = """
    AdviceBar { height: 1; padding: 0 1; display: none; text-wrap: nowrap; text-overflow: ellipsis; }
    AdviceBar.-active { display: block; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: tuple | None = None

    def show(self, advice: list[Advice], keymap: Mapping[str, str], can_act: bool) -> None:
        key = (tuple((a.rule, a.title, a.key, a.tries) for a in advice), can_act)
        if key == self._last:
            return
        self._last = key
        self.set_class(bool(advice), "-active")
        if not advice:
            self.update("")
            return
        a = advice[0]
        more = f" · +{len(advice) - 1} more" if len(advice) > 1 else ""
        tries = try_text(a, keymap, can_act)
        # A key first, a command (long) after what it is for: a narrow screen cuts the line's end.
        first, then = ((tries, "bold"), (a.title, "")) if a.key else ((a.title, "bold"), (tries, ""))
        self.update(Content.assemble((" TRY ", "bold $text on $primary"), " ", first, " · ", then,
                                     (f"{more} · {key_of('try_next', keymap)}: the evidence", "$text-muted")))
