"""The advisor screen (A): every rule of core/advisor.py's table for the shown host, those that hold
first, each with the evidence it stands on (numbers, and the window they are over) and the key or
command that tries it; then the rules that do not hold, with what would make them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from mtptui.core.advisor import RULES, Limits
from mtptui.tui.bindings import bindings_for
from mtptui.tui.viewmodel import clock_text, host_label
from mtptui.tui.widgets.advice import try_text

REFRESH_S = 1.0


def advisor_lines(advice: list, keymap: dict, can_act: bool, lim: Limits | None = None) -> list[Content]:
    lim = lim or Limits()
    out: list[Content] = []
    holding = {a.rule for a in advice}
    if not advice:
        out.append(Content.styled(f"nothing to try: no rule has held over the last {lim.hold_s / 60:.0f}m", "bold"))
    for a in advice:
        since = f" · since {clock_text(a.since)}" if a.since is not None else ""
        out += [Content.assemble((" TRY ", "bold $text on $primary"), " ", (a.title, "bold")),
                Content.assemble("  ", (a.evidence, ""), (since, "$text-muted")),
                Content.assemble("  ", (try_text(a, keymap, can_act), "bold $accent")), Content("")]
    rest = [r for r in RULES if r.name not in holding]
    if rest:
        out += [*([] if advice else [Content("")]), Content.styled("not holding:", "$text-muted")]
        out += [Content.assemble(("  " + r.name.replace("_", " "), "bold"), (f": {r.what}", "$text-muted"))
                for r in rest]
    out += [Content(""), Content.styled(
        f"a rule holds only when true in each {lim.hold_s / lim.parts:.0f}s of {lim.hold_s / 60:.0f}m · Esc closes",
        "$text-muted")]
    return out


class AdvisorScreen(ModalScreen):
    DEFAULT_CSS = """
    AdvisorScreen { align: center middle; }
    AdvisorScreen > VerticalScroll { width: 100%; height: auto; max-height: 100%; border: thick $accent;
                                     background: $surface; padding: 0 1; }
    AdvisorScreen Static { width: 100%; }
    """
    BINDINGS = bindings_for("advisor")

    def __init__(self, dash) -> None:
        super().__init__()
        self.dash = dash
        self.host = dash.host
        self._shown: tuple | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = f"advisor · {host_label(self.host)}"
            yield Static(id="advice")

    def on_mount(self) -> None:
        self.refresh_advice()
        self.set_interval(REFRESH_S, self.refresh_advice)

    def refresh_advice(self) -> None:
        advice = self.dash.advice.get(self.host, [])
        keymap = getattr(self.app, "keymap_used", {}) or {}
        key = (tuple(advice), self.dash.can_act)
        if key == self._shown:
            return
        self._shown = key
        self.query_one("#advice", Static).update(Content("\n").join(advisor_lines(advice, keymap, self.dash.can_act)))
