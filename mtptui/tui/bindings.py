"""Every key of the dashboard as a Textual binding with an id, so that config `[keys]` remaps it.

`[keys]` maps a binding id to one key or a comma-separated list: `pause = "p"`,
`seek_back = "left,h"`. The ids, default keys and help texts are in `config/keys.py`'s one table;
the help screen (?) lists them. mtptui.config has already refused unknown ids.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.keys import REPLACED_KEYS, Keys, key_to_character

from mtptui.config.keys import KEYS

_NAMED = {k.value for k in Keys}
_MODIFIERS = {"ctrl", "shift", "alt", "meta", "super", "hyper"}


def screen_bindings() -> list[Binding]:
    out = []
    for k in KEYS:
        # Host switching must win over Textual's focus-cycling tab.
        out.append(Binding(k.keys, k.action, k.footer, show=k.shown, id=k.id,
                           priority=k.id in ("next_host", "prev_host")))
    return out


PALETTE_BINDING = Binding("ctrl+p", "command_palette", "palette", show=False, id="palette", priority=True)


def bindable(key: str) -> bool:
    """Whether Textual knows the key name (`p`, `ctrl+x`, `left`, `question_mark`, `f5`)."""
    *mods, base = key.split("+")
    if any(m not in _MODIFIERS for m in mods):
        return False
    return (len(base) == 1 or base in _NAMED
            or key_to_character(REPLACED_KEYS.get(base, base)) is not None)


def keymap_from(keys: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(keymap for App.set_keymap, problems) from the config's typed `[keys]`.

    A binding whose keys Textual does not know is left as it was and reported: the config cannot
    tell a typo like `lefft` from a key name without Textual's key table."""
    keymap, problems = {}, []
    for bid, spec in keys.items():
        bad = [k for k in spec.split(",") if not bindable(k)]
        if bad:
            problems.append(f"[keys] {bid}: no such key {', '.join(map(repr, bad))} (see ? for the key names)")
        else:
            keymap[bid] = spec
    return keymap, problems
