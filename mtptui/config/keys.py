"""Every key binding of every screen: its binding id, default key, Textual action, footer word,
help text, name in the command palette and the screen it is on. Plain data, no Textual: the one
table of them (``TABLE``, grouped by screen; ``KEYS`` is the dashboard's part).

`mtptui.config` checks `[keys]` against it without loading Textual (``BINDING_IDS``, ``bindable``,
``conflicts``); `tui/bindings.py` turns each screen's rows into its Textual bindings; the help
screen (?) lists them, and the command palette offers those with a palette name. A new key is one
row here; `tests/tui/test_keys.py` finds every binding of `mtptui.tui` and holds it to its row.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
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
    screen: str = "main"  # where it is bound: one of SCREENS
    priority: bool = False  # checked before the focused widget's keys (and Textual's own)


# Where the keys are bound: the screen (or the widget, or the whole app), in words and by class.
SCREENS: dict[str, tuple[str, str]] = {
    "main": ("the dashboard", "tui/screens/main.py: MainScreen"),
    "app": ("every screen of the dashboard", "tui/app.py: MtpApp"),
    "log": ("the dashboard's log pane", "tui/widgets/log_view.py: LogView"),
    "events": ("the dashboard's event timeline", "tui/widgets/events.py: EventTimeline"),
    "help": ("the help screen", "tui/screens/help.py: HelpScreen"),
    "compare": ("the compare screen", "tui/screens/compare.py: CompareScreen"),
    "confirm": ("an action's preview", "tui/screens/confirm.py: ConfirmScreen"),
    "results": ("the benchmark's results", "tui/screens/results.py: ResultsScreen"),
    "picker": ("the profile picker", "tui/screens/profiles.py: ProfilePicker"),
    "audit": ("the audit log", "tui/screens/audit.py: AuditScreen"),
    "advisor": ("the advisor", "tui/screens/advisor.py: AdvisorScreen"),
    "fleet": ("mtptui fleet", "tui/screens/fleet.py: FleetScreen"),
    "fleet_table": ("mtptui fleet's table", "tui/widgets/fleet_table.py: FleetTable"),
}
# The screens whose keys are live at the same time: two ids of one of these groups on one key clash.
# (The app's keys work on every screen of the dashboard; a pane's while it has the focus.)
LIVE_TOGETHER: tuple[tuple[str, ...], ...] = (
    ("main", "app", "log"), ("main", "app", "events"),
    *((s, "app") for s in ("help", "compare", "confirm", "results", "picker", "audit", "advisor")),
    ("fleet", "fleet_table"),
)

_WINDOWS = ", ".join(label if seconds else f"{label} (the whole buffer)" for label, seconds in WINDOWS)

KEYS: list[Key] = [
    Key("quit", "q", "quit", "quit", True,
        "quit mtptui (a replay or a live stream simply stops; an action under way is stopped and its host put back "
        "as it was, verified, first; again asks to leave it as it stands)"),
    Key("pause", "space", "pause", "pause", True,
        "replay: pause/resume the replay · live: freeze the view (lines keep arriving)", "Pause / resume"),
    Key("seek_back", "left", "seek(-1)", "back", True,
        "replay: seek back a tenth of the window · live: scrub back through the buffer", "Seek back"),
    Key("seek_forward", "right", "seek(1)", "fwd", True,
        "replay: seek forward · live: scrub forward (past the newest line: follow again)", "Seek forward"),
    Key("faster", "plus,equals_sign", "speed(1)", "faster", False, "replay speed up (0.25x ... 1000x, max)",
        "Replay faster"),
    Key("slower", "minus,underscore", "speed(-1)", "slower", False, "replay speed down", "Replay slower"),
    # Host switching must win over Textual's focus-cycling tab.
    Key("next_host", "tab", "host(1)", "host", False, "next host tab", priority=True),
    Key("prev_host", "shift+tab", "host(-1)", "prev host", False, "previous host tab", priority=True),
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
    Key("try_next", "A", "advisor", "advise", False,
        "the advisor: what the data says to try next, each with its evidence and the key that tries it",
        "Advisor"),
    Key("smoke", "x", "smoke", "smoke", False,
        "smoke test: ask this host's server the config's smoke_prompt and check the answer (changes nothing)",
        "Smoke test"),
    Key("bench", "b", "bench", "bench", False, "A/B benchmark of off, mtp1, mtp3 at concurrency 1 and 8, then the "
        "host restored as found (b again stops it)", "Benchmark profiles"),
    Key("tune", "T", "tune", "tune", False, "tune: the best speculation settings at the concurrency the log shows, "
        "in rounds of halving, within minutes (T again stops it); then keep the winner, or the host restored as found",
        "Tune speculation"),
    Key("escape", "escape", "escape", "back", False, "close the filter or the enlarged pane"),
]
KEYS += [Key(f"focus_rank_{n}", str(n), f"focus_rank({n})", f"rank {n}", False,
             f"focus rank {n} of this host in the chart (again: all ranks)") for n in range(1, 10)]

# The other screens' and widgets' keys, grouped by screen.
OTHER_KEYS: list[Key] = [
    Key("palette", "ctrl+p", "command_palette", "palette", False, "command palette: every action by name",
        screen="app", priority=True),
    # the log pane
    Key("log_up", "up,k", "scroll_lines(-1)", "line up", False, "log pane: one line up (older)", screen="log"),
    Key("log_down", "down,j", "scroll_lines(1)", "line down", False, "log pane: one line down (newer)", screen="log"),
    Key("log_page_up", "pageup", "scroll_lines(-20)", "page up", False, "log pane: a page up", screen="log"),
    Key("log_page_down", "pagedown", "scroll_lines(20)", "page down", False, "log pane: a page down", screen="log"),
    Key("log_home", "home", "oldest", "oldest", False, "log pane: the oldest line held", screen="log"),
    Key("log_end", "end", "follow", "follow", False, "log pane: the newest line, and follow again", screen="log"),
    # the event timeline
    Key("events_up", "up,k", "scroll_entries(1)", "older", False, "events: one entry older", screen="events"),
    Key("events_down", "down,j", "scroll_entries(-1)", "newer", False, "events: one entry newer", screen="events"),
    Key("events_page_up", "pageup", "scroll_entries(10)", "older page", False, "events: ten entries older",
        screen="events"),
    Key("events_page_down", "pagedown", "scroll_entries(-10)", "newer page", False, "events: ten entries newer",
        screen="events"),
    Key("events_end", "end", "follow", "follow", False, "events: the newest, and follow again", screen="events"),
    # the dashboard's other screens
    Key("help_close", "escape,q,question_mark", "dismiss", "close", True, "close this help", screen="help"),
    Key("compare_close", "escape,q,c", "dismiss", "close", True, "close the comparison", screen="compare"),
    Key("confirm_apply", "y", "confirm", "apply", True,
        "apply the action shown (a prod host: once its name is typed)", screen="confirm"),
    Key("confirm_cancel", "n,escape", "cancel", "cancel", True, "cancel: nothing is changed", screen="confirm"),
    Key("results_close", "escape,q", "dismiss", "close", True, "close the benchmark's results", screen="results"),
    Key("picker_cancel", "escape", "cancel", "cancel", True, "close the picker without applying a profile",
        screen="picker"),
    Key("audit_close", "escape,q,a", "dismiss", "close", True, "close the audit log", screen="audit"),
    Key("try_next_close", "escape,A", "dismiss", "close", True, "close the advisor", screen="advisor"),
    # mtptui fleet
    Key("fleet_quit", "q", "app.quit", "quit", True, "quit mtptui fleet", screen="fleet"),
    Key("fleet_ranks", "space", "toggle", "ranks", True, "show/hide the ranks of the host under the cursor",
        screen="fleet"),
    Key("fleet_all_ranks", "e", "toggle_all", "all ranks", True, "show/hide every host's ranks", screen="fleet"),
    Key("fleet_sort", "s", "sort_next", "sort", True, "sort by the next column (or click a header)", screen="fleet"),
    Key("fleet_reverse", "S", "sort_reverse", "reverse", True, "reverse the sort", screen="fleet"),
    Key("fleet_filter", "slash", "ask('filter')", "filter", True,
        "filter the rows: host, source, settings or flag (Enter keeps it, Escape clears)", screen="fleet"),
    Key("fleet_find", "f", "ask('find')", "find", True, "find a host: host, settings or flag (Enter jumps to it)",
        screen="fleet"),
    Key("fleet_find_next", "n", "find_next", "next", True, "the next host that the find matches", screen="fleet"),
    Key("fleet_flagged", "exclamation_mark", "flagged", "flagged only", True, "flagged hosts only <-> every host",
        screen="fleet"),
    Key("fleet_refresh", "r", "refresh", "refresh", True, "ask Prometheus again now (else every --interval)",
        screen="fleet"),
    Key("fleet_clear", "escape", "clear", "clear", False, "close the filter or find box; clear the filter",
        screen="fleet"),
    Key("fleet_up", "up", "move(-1)", "up", False, "the cursor one row up", screen="fleet_table"),
    Key("fleet_down", "down", "move(1)", "down", False, "the cursor one row down", screen="fleet_table"),
    Key("fleet_page_up", "pageup", "page(-1)", "page up", False, "the cursor a page up", screen="fleet_table"),
    Key("fleet_page_down", "pagedown", "page(1)", "page down", False, "the cursor a page down", screen="fleet_table"),
    Key("fleet_home", "home", "edge(0)", "first", False, "the cursor on the first row", screen="fleet_table"),
    Key("fleet_end", "end", "edge(1)", "last", False, "the cursor on the last row", screen="fleet_table"),
    Key("fleet_open", "enter", "select", "open", False,
        "open the host's live dashboard over SSH (its q comes back here; a click on the cursor's row too)",
        screen="fleet_table"),
]

TABLE: list[Key] = KEYS + OTHER_KEYS
BY_ID: dict[str, Key] = {k.id: k for k in TABLE}
PALETTE_HELP = BY_ID["palette"].help
# Every id but the dashboard's own and the palette's (docs/generate.py lists them with the palette).
PANE_IDS = [k.id for k in OTHER_KEYS if k.id != "palette"]
BINDING_IDS = [k.id for k in TABLE]
# The keys that change a server: with --read-only (or in a replay) they do not exist at all.
ACTING_IDS = frozenset({"spec_toggle", "spec_step_down", "spec_step_up", "profiles", "restart", "bench", "tune"})
ACTING_ACTIONS = frozenset(k.action.split("(")[0] for k in KEYS if k.id in ACTING_IDS)


# The keys that only a replay has: a live stream runs at its own pace, so live mode offers none of them.
REPLAY_ONLY = frozenset({"faster", "slower"})


def shown_keys(acting_off: bool, replay: bool = True) -> list[Key]:
    """The dashboard's keys that exist in this session (a live one: without the replay's own)."""
    return [k for k in KEYS if not (acting_off and k.id in ACTING_IDS) and (replay or k.id not in REPLAY_ONLY)]


def screen_keys(screen: str) -> list[Key]:
    """The rows of one screen (a key of SCREENS), in the table's order."""
    return [k for k in TABLE if k.screen == screen]


# --- key names, as Textual reads them (textual/keys.py; tests/tui/test_keys.py holds these to it) --

MODIFIERS = ("ctrl", "shift", "alt", "meta", "super", "hyper")
# Textual's names of keys that are no character.
NAMED_KEYS = frozenset({"up", "down", "left", "right", "home", "end", "pageup", "pagedown", "insert", "delete",
                        "backspace", "tab", "enter", "return", "escape", "space",
                        *(f"f{n}" for n in range(1, 25))})
# Textual's short names of some characters (`slash` for SOLIDUS), and the Unicode names that its
# underscores cannot give back (`less_than_sign` is LESS-THAN SIGN).
_SHORT = {"solidus": "slash", "reverse_solidus": "backslash", "commercial_at": "at", "hyphen_minus": "minus",
          "plus_sign": "plus", "low_line": "underscore"}
_LONG = {short: long for long, short in _SHORT.items()}
_UNICODE = {"hyphen_minus": "HYPHEN-MINUS", "less_than_sign": "LESS-THAN SIGN",
            "greater_than_sign": "GREATER-THAN SIGN"}
KEY_HINT = "a character, or a name: left, pageup, f5, space, question_mark ...; with ctrl+, shift+ or alt+"


def key_name(key: str) -> str:
    """A key as Textual binds it: one character by its name (`/` is `slash`, `?` is `question_mark`)."""
    if len(key) != 1 or key.isalnum():
        return key
    try:
        name = unicodedata.name(key).lower().replace("-", "_").replace(" ", "_")
    except ValueError:
        name = "tab" if key == "\t" else key
    return _SHORT.get(name, name)


def bindable(key: str) -> bool:
    """Whether Textual knows the key name (`p`, `ctrl+x`, `left`, `question_mark`, `f5`)."""
    *mods, base = key.split("+")
    if any(m not in MODIFIERS for m in mods):
        return False
    if len(base) == 1 or base in NAMED_KEYS:
        return True
    name = _LONG.get(base, base)
    try:
        unicodedata.lookup(_UNICODE.get(name, name.replace("_", " ").upper()))
    except KeyError:
        return False
    return True


def key_list(spec: str) -> list[str]:
    """`left, h` -> ["left", "h"]; `/` -> ["slash"]: the keys of a binding as Textual binds them."""
    return [key_name(k.strip()) for k in spec.split(",") if k.strip()]


class Clash(NamedTuple):
    key: str  # the key both have, as Textual names it
    first: str  # the ids, in the table's order
    second: str


def where(bid: str) -> str:
    """Where an id's keys work, in words: `the dashboard`, `mtptui fleet`, ..."""
    return SCREENS[BY_ID[bid].screen][0]


def conflicts(remap: Mapping[str, str], table: Iterable[Key] = TABLE) -> list[Clash]:
    """The keys that two ids live at the same time (LIVE_TOGETHER) would share once `remap` (id ->
    key(s), as `[keys]` holds it) is applied over the table's defaults: each clash once, in the
    table's order. Ids that `remap` does not know are ignored (the reader reports them)."""
    rows = list(table)
    bound = {k.id: set(key_list(remap.get(k.id, k.keys))) for k in rows}
    seen: dict[Clash, None] = {}
    for group in LIVE_TOGETHER:
        ids = [k.id for k in rows if k.screen in group]
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                for key in sorted(bound[a] & bound[b]):
                    seen.setdefault(Clash(key, *sorted((a, b), key=[k.id for k in rows].index)))
    return list(seen)
