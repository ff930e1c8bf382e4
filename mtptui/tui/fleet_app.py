"""The fleet view's Textual app: the fleet screen under mtptui's themes and the config's keymap
(`[keys]`, as the dashboard takes it). Enter on a host ends the app with the host to open (its
`mtptui live` HOST argument) (`mtptui fleet` then runs the live dashboard and comes back)."""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.app import App

from mtptui.printable import printable
from mtptui.config import Config, ConfigError
from mtptui.fleet.query import Host
from mtptui.fleet.table import ViewState
from mtptui.fleet.target import live_host, live_spec
from mtptui.tui.bindings import keymap_from
from mtptui.tui.gcpace import GcPacer
from mtptui.tui.screens.fleet import FleetScreen
from mtptui.tui.themes import install_themes


class FleetApp(App):
    TITLE = "mtptui fleet"

    def __init__(self, load: Callable[[], list[Host]], *, config: Config, state: ViewState | None = None,
                 interval: float = 5.0, title: str = "", hosts: list[Host] | None = None,
                 theme: str | None = None, overrides: dict | None = None) -> None:
        super().__init__()
        self.animation_level = "none"
        # Collections between frames, as the dashboard's (gcpace): left to its thresholds, the
        # collector went through a refresh's 50,000 objects in the middle of a key (100 ms and more).
        self.gc_pacer = GcPacer()
        self.config = config
        self.overrides = overrides or {}  # `mtptui live`'s --unit, --sudo, --identity
        self.theme_problems = install_themes(self, theme or config.theme)[1]
        # The config's [keys], as the dashboard applies them (its ids of other screens do nothing here).
        self.keymap_used, problems = keymap_from(config.keys)
        self.theme_problems += problems
        if self.keymap_used:
            self.set_keymap(self.keymap_used)
        self.fleet = FleetScreen(load, state=state or ViewState(), interval=interval, title=title,
                                 open_host=self.open_host, hosts=hosts)

    def get_default_screen(self) -> FleetScreen:
        return self.fleet

    def on_mount(self) -> None:
        self.gc_pacer.start()
        for p in self.theme_problems:
            self.notify(printable(p), severity="warning", timeout=8, markup=False)  # it quotes the config

    async def on_event(self, event: events.Event) -> None:
        key = isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp))
        if key:
            self.gc_pacer.input()
        await super().on_event(event)
        if key:
            self.call_after_refresh(self.gc_pacer.after_key_frame)

    def open_host(self, host: Host) -> str | None:
        """Ends the app with the HOST argument of `mtptui live` for the host, or says why it cannot."""
        try:
            live_host(host, self.config, **self.overrides)  # the same checks as `mtptui live` makes
        except ConfigError as e:
            return f"cannot open {host.host}: {e}"
        self.exit(live_spec(host, self.config))
        return None
