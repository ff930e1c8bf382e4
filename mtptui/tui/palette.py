"""Command palette (ctrl+p): every dashboard action by name, from the key table (config/keys.py:
its rows with a palette name, and their help text), plus direct choices (a metric, a window, a
theme, a host) that would take several key presses."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from mtptui.config.keys import BY_ID, shown_keys
from mtptui.tui.screens.help import key_text
from mtptui.tui.viewmodel import METRICS, host_label
from mtptui.config.windows import WINDOWS



class DashboardCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        from mtptui.tui.screens.main import MainScreen

        screen = next((s for s in self.app.screen_stack if isinstance(s, MainScreen)), None)
        if screen is None:
            return []
        dash = screen.dash
        # the actions of the key table that have a palette name, as their keys run them
        # (the replay's speed only where there is a replay: a live stream runs at its own pace)
        cmds: list[tuple[str, str, Callable[[], object]]] = [
            (k.palette, k.help, partial(self.app.run_action, k.action, screen))
            for k in shown_keys(not dash.can_act, dash.timeline.is_replay) if k.palette]

        def set_metric(m: str) -> None:
            dash.set_metric(m)
            screen.redraw_now()

        def set_window(label: str) -> None:
            dash.timeline.set_window(label)
            screen.redraw_now()

        def set_theme(name: str) -> None:
            self.app.theme = name

        def set_host(h) -> None:
            dash.select_host(h)
            screen.redraw_now()

        for m, info in METRICS.items():
            cmds.append((f"Chart: {info.label}", info.title, partial(set_metric, m)))
        for label, _ in WINDOWS:
            cmds.append((f"Window: {label}", "the time span of the panels and the chart", partial(set_window, label)))
        for name in getattr(self.app, "mtp_themes", []):
            cmds.append((f"Theme: {name}", "switch the colour theme", partial(set_theme, name)))
        for h in dash.hosts():
            cmds.append((f"Host: {host_label(h)}", "show this host", partial(set_host, h)))
        keymap = getattr(self.app, "keymap_used", {}) or {}
        for i, s in enumerate(dash.store.ranks(dash.host)[:9], start=1):
            key = BY_ID[f"focus_rank_{i}"]
            cmds.append((f"Focus rank {s.rank or '(TP=1)'}",
                         f"chart this rank only (key {key_text(keymap.get(key.id, key.keys))})",
                         partial(screen.action_focus_rank, i)))
        return cmds

    async def discover(self) -> Hits:
        for name, help_, cb in self._commands():
            yield DiscoveryHit(name, cb, help=help_)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_, cb in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), cb, help=help_)
