"""The preview before anything changes on a server: the plan (host, unit, the exact commands, the
flag diff, the downtime to expect), Cancel or Apply. Focus starts on Cancel, so a stray Enter
changes nothing; a host tagged prod also needs its name typed: there the focus starts in the box
for the name (Enter on a wrong or empty name changes nothing), and text typed while the focus is
elsewhere in the modal goes into the box, so no letter is dropped and an `n` in a host's name never
cancels (Esc does). Dismissed with True to go on."""

from __future__ import annotations

from typing import Protocol

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from mtptui.tui.bindings import bindings_for

DIFF_HEADER = "server arguments"  # preview_lines' heading of the flag diff
DIFF_STYLES = {"-": "$text-error", "+": "$text-success"}


class Preview(Protocol):
    """What is confirmed: a Plan (control/plan.py), or a benchmark's plans (prove/bench.py's Bench)."""

    @property
    def host(self) -> str: ...

    @property
    def prod(self) -> bool:
        """The host is tagged prod: its name must be typed to confirm."""
        ...

    def title(self) -> str: ...

    def preview_lines(self) -> list[str]: ...


def preview_content(plan: Preview) -> Content:
    """The plan's preview, its flag diff coloured: removed red, added green."""
    parts: list = []
    in_diff = False
    for line in plan.preview_lines():
        style = ""
        if line.startswith(DIFF_HEADER):
            in_diff, style = True, "bold"
        elif not line.startswith(" "):
            in_diff = False
            style = {"commands": "bold", "warning": "bold $text-warning"}.get(line.split(":", 1)[0], "")
        elif in_diff:
            style = DIFF_STYLES.get(line.lstrip()[:1], "")
        parts += [(line, style), "\n"]
    return Content.assemble(*parts[:-1])


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 110; max-width: 100%; height: auto; max-height: 100%;
                               border: thick $warning; background: $surface; padding: 0 1; }
    ConfirmScreen #preview { height: auto; max-height: 24; }
    ConfirmScreen.-prod > Vertical { border: thick $error; }
    ConfirmScreen #typed { margin: 1 0 0 0; }
    ConfirmScreen #buttons { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmScreen Button { margin-left: 2; }
    ConfirmScreen #hint { color: $text-muted; }
    """
    BINDINGS = bindings_for("confirm")
    AUTO_FOCUS = "#cancel"

    def __init__(self, plan: Preview) -> None:
        super().__init__()
        self.plan = plan
        if plan.prod:
            self.AUTO_FOCUS = "#typed"  # type: ignore[misc]  # Textual reads it per screen; its stubs call it a ClassVar

    def compose(self) -> ComposeResult:
        plan = self.plan
        self.set_class(plan.prod, "-prod")
        with Vertical() as box:
            box.border_title = plan.title()
            box.border_subtitle = ("prod: type the host's name" if plan.prod else
                                   getattr(plan, "subtitle", "nothing has changed yet"))
            with VerticalScroll(id="preview"):
                yield Static(preview_content(plan))
            if plan.prod:
                yield Input(placeholder=f"type {plan.host} to confirm (this host is tagged prod)", id="typed",
                            select_on_focus=False)  # a letter typed elsewhere must not be selected over
            with Horizontal(id="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button(getattr(plan, "go", ("Apply",))[0], id="apply", variant="error" if plan.prod else "warning",
                             disabled=plan.prod)
            yield Static(self._hint(), id="hint")

    def on_resize(self, event: events.Resize) -> None:
        """The preview scrolls within what the buttons and the hint leave of the screen: a long
        preview (a benchmark's, a tune's) at 80x24 must never push them off it."""
        below = 2 + 4 + 1 + (4 if self.plan.prod else 0)  # the border, the buttons, the hint, the box
        self.query_one("#preview").styles.max_height = max(3, min(24, event.size.height - below))

    def _hint(self) -> str:
        if self.plan.prod:
            return f"type {self.plan.host} in the box, then Enter or Apply · Esc cancels"
        go, does = getattr(self.plan, "go", ("Apply", "applies"))
        return f"y or {go} {does} · n or Esc cancels"

    @property
    def name_typed(self) -> bool:
        return not self.plan.prod or self.query_one("#typed", Input).value == self.plan.host

    def on_key(self, event: events.Key) -> None:
        """A prod host's modal: a printable key outside the box goes into the box (before the y
        and n bindings, which are checked only after the key has bubbled up to here)."""
        if not self.plan.prod or not event.is_printable or not event.character:
            return
        box = self.query_one("#typed", Input)
        if self.focused is box:
            return
        event.stop()
        event.prevent_default()
        box.focus()
        box.insert_text_at_cursor(event.character)

    @on(Input.Changed, "#typed")
    def _typed(self) -> None:
        self.query_one("#apply", Button).disabled = not self.name_typed

    @on(Input.Submitted, "#typed")
    def _typed_enter(self) -> None:
        self.action_confirm()

    @on(Button.Pressed, "#apply")
    def action_confirm(self) -> None:
        if self.name_typed:
            self.dismiss(True)
        else:
            self.query_one("#hint", Static).update(f"type {self.plan.host} exactly to apply (prod host)")

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)
