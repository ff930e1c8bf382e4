"""Every binding id of the dashboard with its default key, action and help: plain data, no Textual.

`mtptui.config` checks the ids of `[keys]` against ``BINDING_IDS`` without loading Textual;
`bindings.py` turns ``KEYS`` into Textual bindings. A new key is one line in ``KEYS`` and one
in ``HELP``.
"""

from __future__ import annotations

from mtptui.tui.windows import WINDOWS

# (id, default key(s), action, footer text, shown in the footer)
KEYS: list[tuple[str, str, str, str, bool]] = [
    ("quit", "q", "quit", "quit", True),
    ("pause", "space", "pause", "pause", True),
    ("seek_back", "left", "seek(-1)", "back", True),
    ("seek_forward", "right", "seek(1)", "fwd", True),
    ("faster", "plus,equals_sign", "speed(1)", "faster", False),
    ("slower", "minus,underscore", "speed(-1)", "slower", False),
    ("next_host", "tab", "host(1)", "host", False),
    ("prev_host", "shift+tab", "host(-1)", "prev host", False),
    ("metric", "m", "metric", "metric", True),
    ("window", "w", "window", "window", True),
    ("scope", "W", "scope", "epoch/window", False),
    ("filter", "slash", "filter", "filter", True),
    ("events", "e", "events", "events", True),
    ("log", "l", "log", "log", True),
    ("ranks", "r", "ranks", "ranks", False),
    ("theme", "t", "theme", "theme", False),
    ("help", "question_mark", "help", "help", True),
    # After help: on a narrow footer these are the ones cut off (help lists them all).
    ("spec_toggle", "s", "spec_toggle", "spec", True),
    ("spec_step_down", "left_square_bracket", "spec_step(-1)", "step -1", False),
    ("spec_step_up", "right_square_bracket", "spec_step(1)", "step +1", False),
    ("profiles", "p", "profiles", "profile", True),
    ("restart", "R", "restart", "restart", False),
    ("compare", "c", "compare", "compare", True),
    ("audit", "a", "audit", "audit", False),
    ("smoke", "x", "smoke", "smoke", False),
    ("bench", "b", "bench", "bench", False),
    ("escape", "escape", "escape", "back", False),
]
KEYS += [(f"focus_rank_{n}", str(n), f"focus_rank({n})", f"rank {n}", False) for n in range(1, 10)]

# The panes' own keys (when focused): log_up/down/page_up/page_down/home/end, events_up/... .
PANE_IDS = ["log_up", "log_down", "log_page_up", "log_page_down", "log_home", "log_end",
            "events_up", "events_down", "events_page_up", "events_page_down", "events_end", "help_close"]
BINDING_IDS = [k[0] for k in KEYS] + ["palette"] + PANE_IDS
# The keys that change a server: with --read-only (or in a replay) they do not exist at all.
ACTING_IDS = frozenset({"spec_toggle", "spec_step_down", "spec_step_up", "profiles", "restart", "bench"})
ACTING_ACTIONS = frozenset(action.split("(")[0] for bid, _, action, _, _ in KEYS if bid in ACTING_IDS)


def shown_keys(acting_off: bool) -> list[tuple[str, str, str, str, bool]]:
    """The keys that exist in this session."""
    return [k for k in KEYS if not (acting_off and k[0] in ACTING_IDS)]


# Shown on the help screen next to each id.
HELP: dict[str, str] = {
    "quit": "quit mtptui (a replay or a live stream simply stops; nothing on the servers changes)",
    "pause": "replay: pause/resume the replay · live: freeze the view (lines keep arriving)",
    "seek_back": "replay: seek back a tenth of the window · live: scrub back through the buffer",
    "seek_forward": "replay: seek forward · live: scrub forward (past the newest line: follow again)",
    "faster": "replay speed up (0.25x ... 1000x, max)",
    "slower": "replay speed down",
    "next_host": "next host tab",
    "prev_host": "previous host tab",
    "metric": "cycle the chart's metric: accept len, accept rate, gen throughput, running, queue, KV use",
    "window": "cycle the time window: " + ", ".join(
        label if seconds else f"{label} (the whole buffer)" for label, seconds in WINDOWS),
    "scope": "rank panels' min/mean/max and sparklines: this epoch's part of the window <-> the whole window",
    "filter": "filter the log pane (substring, case-insensitive; empty clears)",
    "events": "enlarge/restore the event timeline",
    "log": "enlarge/restore the log pane",
    "ranks": "enlarge/restore the ranks (every rank, as panels when they fit)",
    "theme": "cycle the colour theme (themes/*.toml)",
    "spec_toggle": "speculation off <-> the last profile on (mtp3 first): preview, confirm, restart, verify",
    "spec_step_down": "one draft step less (mtp3 -> mtp2), through the same preview and confirm",
    "spec_step_up": "one draft step more (mtp1 -> mtp2)",
    "profiles": "pick a speculation profile (built-ins, config [profiles.NAME]) and apply it",
    "restart": "restart the service as it is (preview and confirm first)",
    "compare": "this host's epochs side by side: settings, accept len, host gen tok/s and its change, per rank",
    "audit": "the audit log: every action taken, its phases, the ExecStart before and after",
    "smoke": "smoke test: ask this host's server the config's smoke_prompt and check the answer (changes nothing)",
    "bench": "A/B benchmark of off, mtp1, mtp3 at concurrency 1 and 8, then the host restored as found (b again stops it)",
    "help": "this help",
    "escape": "close the filter or the enlarged pane",
    "palette": "command palette: every action by name",
}
for n in range(1, 10):
    HELP[f"focus_rank_{n}"] = f"focus rank {n} of this host in the chart (again: all ranks)"
