"""The help screen (?): what each part of the screen shows, and every key of the dashboard with its
binding id, from the key table (config/keys.py), as this session's keymap binds them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from mtptui.config.keys import BY_ID, Key, screen_keys, shown_keys
from mtptui.tui.bindings import bindings_for

PANELS: list[tuple[str, str]] = [
    ("host line", "the host (in its accent colour), the speculation settings read from the server's "
                  "server_args line, and its epoch: the run since the last restart."),
    ("rank panels", "one per scheduler rank (TP0, DP1 TP1, ...). SPEC ON when decode lines carry accept "
                    "len, SPEC OFF when they do not (red if server_args asked for speculation: a silent "
                    "fallback), GRAPH OFF when decode ran without CUDA graphs, STALE when the rank logged "
                    "no batch for a while. Numbers: the newest line's value, then the min, mean and max over "
                    "the epoch at the playhead (its part of the window; W: the whole window), as the "
                    "panels' title says; sparklines show the same samples. On short screens: one row per rank, "
                    "the ranks that do not fit counted at the bottom (r shows them all). A badge that "
                    "is not green, with ⚠ and a word, is an alert holding on that rank."),
    ("accept len", "tokens gained per decode step, the bonus token included: 1.00 means no draft token is "
                   "accepted; the most is steps+1."),
    ("accept rate", "accepted drafts as this SGLang version logs it (the formula changed in 0.5.4, 0.5.8 "
                    "and 0.5.12)."),
    ("gen tok/s", "this rank's generation throughput, accepted drafts included."),
    ("chart", "one metric (m cycles it) for every rank over the window (w cycles it), in log time. "
              "Vertical lines: restarts (magenta, labelled with the new settings) and events (ready "
              "green, OOM and crashes red, connection gaps yellow). 1-9 shows one rank only."),
    ("events", "restarts, ready, OOM, crashes, gaps, settings and alerts; repeats are folded (x12)."),
    ("log", "the lines themselves, whole and coloured (decode, prefill, events); / filters them."),
    ("status bar", "the source, its state and the time shown, lines per second, how many lines were "
                   "parsed, not understood (ordinary log text) or lost, and the settings."),
    ("time", "always the logs' own stamps, never arrival times; a replay keeps the gaps, scaled by its speed."),
]


PANES = {"log": "The log pane", "events": "The event timeline"}  # the panes with keys of their own (the table's screens)

_KEY_NAMES = {"plus": "+", "equals_sign": "=", "minus": "-", "underscore": "_", "slash": "/",
              "question_mark": "?", "left": "←", "right": "→", "up": "↑", "down": "↓", "escape": "esc",
              "left_square_bracket": "[", "right_square_bracket": "]"}


def key_text(keys: str) -> str:
    """`plus,equals_sign` -> `+ =`: keys as they are printed on a keyboard."""
    return " ".join(_KEY_NAMES.get(k.strip(), k.strip()) for k in keys.split(","))


class HelpScreen(ModalScreen):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 112; max-width: 100%; height: 90%; border: thick $accent;
                                  background: $surface; padding: 0 1; }
    """
    BINDINGS = bindings_for("help")

    def __init__(self, acting_off: str | None = None, replay: bool = True) -> None:
        super().__init__()
        self.acting_off = acting_off  # why the acting keys are left out, or None: they are listed
        self.replay = replay  # a live session: the replay's own keys are not listed

    def compose(self) -> ComposeResult:
        keymap = getattr(self.app, "keymap_used", {}) or {}

        keys = [*shown_keys(self.acting_off is not None, self.replay), BY_ID["palette"]]
        panes = {pane: screen_keys(pane) for pane in PANES}
        width = max(len(k.id) for k in [*keys, *(k for ks in panes.values() for k in ks)]) + 2

        def row(k: Key) -> list:
            return [(f"  {key_text(keymap.get(k.id, k.keys)):<12}", "bold $accent"), (f"{k.id:<{width}}", "$text-muted"),
                    k.help, "\n"]

        rows: list = [("What you are looking at\n", "bold")]
        for name, text in PANELS:
            rows += [(f"{name}: ", "bold $accent"), text, "\n"]
        rows.append(("\nKeys  (remap in config [keys]: id = \"key\")", "bold"))
        if self.acting_off:
            rows.append((f"\n  {self.acting_off}", "bold $text-warning"))
        rows.append("\n")
        for k in keys:
            rows += row(k)
        for pane, pane_keys in panes.items():
            rows.append((f"\n{PANES[pane]}, while it has the focus\n", "bold"))
            for k in pane_keys:
                rows += row(k)
        close = BY_ID["help_close"]
        rows.append((f"\n{key_text(keymap.get(close.id, close.keys))}: {close.help} ({close.id}).", "$text-muted"))
        with VerticalScroll():
            yield Static(Content.assemble(*rows))
