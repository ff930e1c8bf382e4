"""The profile picker (p): the built-in profiles and the config's `[profiles.NAME]`, each with
its flags in short; the one the unit runs now is marked. Dismissed with the Profile, or None."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from mtptui.control.profiles import Profile, matches
from mtptui.core.epochs import spec_settings
from mtptui.tui.bindings import bindings_for

SETTINGS = ("algorithm", "num_steps", "topk", "num_draft_tokens", "adaptive", "schedule")


def profile_summary(p: Profile) -> str:
    """`NEXTN steps=3 topk=1 draft=4 adaptive · draft model X · env A=1 · 2 more args`."""
    if not p.on:
        return "speculation off: no speculative flags"
    parts = [spec_settings({k: getattr(p, k) for k in SETTINGS})]
    if p.draft_model_path:
        parts.append(f"draft model {p.draft_model_path}")
    if p.env:
        parts.append("env " + " ".join(f"{k}={v}" for k, v in p.env))
    if p.extra_args:
        parts.append(" ".join(p.extra_args))
    return " · ".join(parts)


class ProfilePicker(ModalScreen["Profile | None"]):
    DEFAULT_CSS = """
    ProfilePicker { align: center middle; }
    ProfilePicker > Vertical { width: 100; max-width: 100%; height: auto; max-height: 90%;
                               border: thick $accent; background: $surface; padding: 0 1; }
    ProfilePicker OptionList { height: auto; max-height: 20; }
    ProfilePicker #hint { color: $text-muted; }
    """
    BINDINGS = bindings_for("picker")

    def __init__(self, host: str, profiles: list[Profile], current: dict) -> None:
        super().__init__()
        self.host = host
        self.profiles = {p.name: p for p in profiles}
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        now_at = 0
        for i, p in enumerate(self.profiles.values()):
            now = matches(p, self.current)
            now_at = i if now else now_at
            options.append(Option(Content.assemble((f"{p.name:<12}", "bold"), profile_summary(p),
                                                   ("  ← runs now", "bold $accent") if now else ""), id=p.name))
        with Vertical() as box:
            box.border_title = f"{self.host}: apply a speculation profile"
            picker = OptionList(*options)
            picker.highlighted = now_at  # one step from the settings of now is one key away
            yield picker
            yield Static("Enter picks (a preview comes first) · Esc closes · add your own as [profiles.NAME] "
                         "in the config", id="hint")

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        if event.option_id is not None:  # every option is made with its profile's name as id
            self.dismiss(self.profiles[event.option_id])

    def action_cancel(self) -> None:
        self.dismiss(None)
