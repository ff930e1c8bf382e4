"""The help screen (?): what each part of the screen shows, and every key with its binding id."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from mtptui.tui.bindings import _KEYS, HELP

PANELS = """\
What you are looking at
  host line      the host (in its accent colour), its epoch (the run since the last restart) and
                 the speculation settings read from the server's server_args line.
  rank panels    one per scheduler rank (TP0, DP1 TP1, ...). The badge says SPEC ON when decode
                 lines carry accept len, SPEC OFF when they do not (red if server_args asked for
                 speculation: a silent fallback), GRAPH OFF when decode ran without CUDA graphs,
                 STALE when the rank logged no batch for a while. Numbers: last value, then the
                 min, mean and max over the window; sparklines show the window's samples.
                 accept len = tokens gained per decode step (1.00: no draft token accepted).
                 accept rate = accepted drafts as logged by this SGLang version.
                 gen tok/s = this rank's generation throughput, drafts included.
  chart          one metric (m cycles it) for every rank over the window (w cycles it), in log
                 time. Vertical lines: restarts (magenta, labelled with the new settings) and
                 events (ready green, OOM/crash red, connection gaps yellow).
  events         restarts, ready, OOM, crashes, gaps, settings and alerts, oldest first.
  log            the lines themselves, whole, coloured (decode, prefill, events); / filters.
  status bar     the source, its state and the time shown, lines per second, how many lines
                 were parsed, not understood (ordinary log text) or lost, and the settings.
Times are the logs' own stamps, never arrival times; a replay keeps the gaps, scaled by speed.
"""


class HelpScreen(ModalScreen):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 96; max-width: 100%; height: 90%; border: thick $accent;
                                  background: $surface; padding: 0 1; }
    """
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close", id="help_close")]

    def compose(self) -> ComposeResult:
        keymap = getattr(self.app, "keymap_used", {}) or {}
        rows: list = [(PANELS, ""), ("\nKeys  (remap in config [keys]: id = \"key\")\n", "bold")]
        for bid, key, _action, _desc, _show in _KEYS:
            shown = keymap.get(bid, key)
            rows += [(f"  {shown:<22}", "bold $accent"), (f"{bid:<16}", "$text-muted"), HELP.get(bid, ""), "\n"]
        rows += [(f"  {keymap.get('palette', 'ctrl+p'):<22}", "bold $accent"), (f"{'palette':<16}", "$text-muted"),
                 HELP["palette"], "\n", ("\nEsc, q or ? closes this help.", "$text-muted")]
        with VerticalScroll():
            yield Static(Content.assemble(*rows))
