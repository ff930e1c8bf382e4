"""Every action of the dashboard: its binding id, default key, Textual action, footer word, help
text and name in the command palette. Plain data, no Textual: the one table of them.

`mtptui.config` checks the ids of `[keys]` against ``BINDING_IDS`` without loading Textual;
`bindings.py` turns ``KEYS`` into Textual bindings, the help screen (?) lists them, and the
command palette offers those with a palette name. A new key is one row in ``KEYS``.
"""

from __future__ import annotations

from typing import NamedTuple

from mtptui.config.windows import WINDOWS


class Key(NamedTuple):
    id: str  # the binding id, which config `[keys]` remaps
    keys: str  # the default key(s), comma-separated
    action: str  # the screen's action, as Textual runs it
    footer: str  # its word in the footer
    shown: bool  # whether the footer shows it
    help: str  # what the help screen says of it, and the palette of one it names
    palette: str = ""  # its name in the command palette; "" when it has none (or direct entries there)


_WINDOWS = ", ".join(label if seconds else f"{label} (the whole buffer)" for label, seconds in WINDOWS)

KEYS: list[Key] = [
    Key("quit", "q", "quit", "quit", True,
        "quit mtptui (a replay or a live stream simply stops; nothing on the servers changes)"),
    Key("pause", "space", "pause", "pause", True,
        "replay: pause/resume the replay · live: freeze the view (lines keep arriving)", "Pause / resume"),
    Key("seek_back", "left", "seek(-1)", "back", True,
        "replay: seek back a tenth of the window · live: scrub back through the buffer", "Seek back"),
    Key("seek_forward", "right", "seek(1)", "fwd", True,
        "replay: seek forward · live: scrub forward (past the newest line: follow again)", "Seek forward"),
    Key("faster", "plus,equals_sign", "speed(1)", "faster", False, "replay speed up (0.25x ... 1000x, max)",
        "Replay faster"),
    Key("slower", "minus,underscore", "speed(-1)", "slower", False, "replay speed down", "Replay slower"),
    Key("next_host", "tab", "host(1)", "host", False, "next host tab"),
    Key("prev_host", "shift+tab", "host(-1)", "prev host", False, "previous host tab"),
    Key("metric", "m", "metric", "metric", True,
        "cycle the chart's metric: accept len, accept rate, gen throughput, running, queue, KV use"),
    Key("window", "w", "window", "window", True, "cycle the time window: " + _WINDOWS),
    Key("scope", "W", "scope", "epoch/window", False,
        "rank panels' min/mean/max and sparklines: this epoch's part of the window <-> the whole window"),
    Key("filter", "slash", "filter", "filter", True, "filter the log pane (substring, case-insensitive; empty clears)",
        "Filter the log"),
    Key("events", "e", "events", "events", True, "enlarge/restore the event timeline", "Enlarge events"),
    Key("log", "l", "log", "log", True, "enlarge/restore the log pane", "Enlarge log"),
    Key("ranks", "r", "ranks", "ranks", False, "enlarge/restore the ranks (every rank, as panels when they fit)",
        "Enlarge ranks"),
    Key("theme", "t", "theme", "theme", False, "cycle the colour theme (themes/*.toml)", "Next theme"),
    Key("help", "question_mark", "help", "help", True, "this help: every key, and what each panel shows", "Help"),
    # After help: on a narrow footer these are the ones cut off (help lists them all).
    Key("spec_toggle", "s", "spec_toggle", "spec", True,
        "speculation off <-> the last profile on (mtp3 first): preview, confirm, restart, verify",
        "Speculation on/off"),
    Key("spec_step_down", "left_square_bracket", "spec_step(-1)", "step -1", False,
        "one draft step less (mtp3 -> mtp2), through the same preview and confirm", "One draft step less"),
    Key("spec_step_up", "right_square_bracket", "spec_step(1)", "step +1", False, "one draft step more (mtp1 -> mtp2)",
        "One draft step more"),
    Key("profiles", "p", "profiles", "profile", True,
        "pick a speculation profile (built-ins, config [profiles.NAME]) and apply it", "Apply a profile"),
    Key("restart", "R", "restart", "restart", False, "restart the service as it is (preview and confirm first)",
        "Restart the service"),
    Key("compare", "c", "compare", "compare", True,
        "this host's epochs side by side: settings, accept len, host gen tok/s and its change, per rank",
        "Compare epochs"),
    Key("audit", "a", "audit", "audit", False, "the audit log: every action taken, its phases, the ExecStart before "
        "and after", "Audit log"),
    Key("smoke", "x", "smoke", "smoke", False,
        "smoke test: ask this host's server the config's smoke_prompt and check the answer (changes nothing)",
        "Smoke test"),
    Key("bench", "b", "bench", "bench", False, "A/B benchmark of off, mtp1, mtp3 at concurrency 1 and 8, then the "
        "host restored as found (b again stops it)", "Benchmark profiles"),
    Key("escape", "escape", "escape", "back", False, "close the filter or the enlarged pane"),
]
KEYS += [Key(f"focus_rank_{n}", str(n), f"focus_rank({n})", f"rank {n}", False,
             f"focus rank {n} of this host in the chart (again: all ranks)") for n in range(1, 10)]
PALETTE_HELP = "command palette: every action by name"

# The panes' own keys (when focused): log_up/down/page_up/page_down/home/end, events_up/... .
PANE_IDS = ["log_up", "log_down", "log_page_up", "log_page_down", "log_home", "log_end",
            "events_up", "events_down", "events_page_up", "events_page_down", "events_end", "help_close"]
BINDING_IDS = [k.id for k in KEYS] + ["palette"] + PANE_IDS
# The keys that change a server: with --read-only (or in a replay) they do not exist at all.
ACTING_IDS = frozenset({"spec_toggle", "spec_step_down", "spec_step_up", "profiles", "restart", "bench"})
ACTING_ACTIONS = frozenset(k.action.split("(")[0] for k in KEYS if k.id in ACTING_IDS)


def shown_keys(acting_off: bool) -> list[Key]:
    """The keys that exist in this session."""
    return [k for k in KEYS if not (acting_off and k.id in ACTING_IDS)]
