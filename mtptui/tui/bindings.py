"""Every key of every screen as a Textual binding with an id, so that config `[keys]` remaps it.

`[keys]` maps a binding id to one key or a comma-separated list: `pause = "z"`,
`seek_back = "left,h"`. The ids, default keys, help texts and screens are in `config/keys.py`'s
one table; each screen's BINDINGS are its rows (`bindings_for`), the help screen (?) lists them.
mtptui.config has already refused unknown ids, key names Textual does not know and clashes.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

from mtptui.config.keys import KEY_HINT, Key, bindable, screen_keys


def binding(k: Key) -> Binding:
    return Binding(k.keys, k.action, k.footer, show=k.shown, id=k.id, priority=k.priority)


def bindings_for(screen: str) -> list[BindingType]:
    """The Textual bindings of one screen of the key table (`main`, `fleet`, `log`, ...): its BINDINGS."""
    return [binding(k) for k in screen_keys(screen)]


def screen_bindings() -> list[BindingType]:
    """The dashboard's own."""
    return bindings_for("main")


PALETTE_BINDING = binding(screen_keys("app")[0])


def keymap_from(keys: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(keymap for App.set_keymap, problems) from the config's typed `[keys]`.

    The config's reader has refused key names Textual does not know, with their line; a Config
    made in code has not been read, so such a binding is left as it was and reported here."""
    keymap, problems = {}, []
    for bid, spec in keys.items():
        bad = [k for k in spec.split(",") if not bindable(k)]
        if bad:
            problems.append(f"[keys] {bid}: no such key {', '.join(map(repr, bad))} ({KEY_HINT})")
        else:
            keymap[bid] = spec
    return keymap, problems
