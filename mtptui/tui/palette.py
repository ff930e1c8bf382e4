"""Command palette (ctrl+p): every dashboard action by name, plus direct choices (a metric, a
window, a theme, a host) that would take several key presses."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from mtptui.tui.viewmodel import METRICS, host_label
from mtptui.tui.windows import WINDOWS


class DashboardCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        from mtptui.tui.screens.main import MainScreen

        screen = next((s for s in self.app.screen_stack if isinstance(s, MainScreen)), None)
        if screen is None:
            return []
        dash = screen.dash
        cmds: list[tuple[str, str, Callable[[], object]]] = [
            ("Pause / resume", "replay: pause the replay · live: freeze the view", screen.action_pause),
            ("Seek back", "a tenth of the window back", partial(screen.action_seek, -1)),
            ("Seek forward", "a tenth of the window forward", partial(screen.action_seek, 1)),
            ("Replay faster", "next speed step", partial(screen.action_speed, 1)),
            ("Replay slower", "previous speed step", partial(screen.action_speed, -1)),
            ("Filter the log", "show only lines with a word", screen.action_filter),
            ("Enlarge events", "the event timeline on the whole screen", screen.action_events),
            ("Enlarge log", "the log pane on the whole screen", screen.action_log),
            ("Enlarge ranks", "every rank on the whole screen (r)", screen.action_ranks),
            ("Next theme", "cycle the colour theme", screen.action_theme),
            ("Compare epochs", "this host's runs between restarts side by side (c)", screen.action_compare),
            ("Audit log", "every action mtptui took, its phases and the ExecStart (a)", screen.action_audit),
            ("Smoke test", "ask this host's server a fixed question and check the answer (x)", screen.action_smoke),
            ("Help", "keys and what each panel shows", screen.action_help),
        ]
        if dash.can_act:
            cmds += [
                ("Speculation on/off", "restart this host with speculation toggled (s)", screen.action_spec_toggle),
                ("One draft step less", "restart with one speculative step less ([)", partial(screen.action_spec_step, -1)),
                ("One draft step more", "restart with one speculative step more (])", partial(screen.action_spec_step, 1)),
                ("Apply a profile", "pick a speculation profile for this host (p)", screen.action_profiles),
                ("Restart the service", "restart this host's service as it is (R)", screen.action_restart),
                ("Benchmark profiles", "A/B of off, mtp1, mtp3, then the host restored as found (b)", screen.action_bench),
            ]

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
        for i, s in enumerate(dash.store.ranks(dash.host)[:9], start=1):
            cmds.append((f"Focus rank {s.rank or '(TP=1)'}", f"chart this rank only (key {i})",
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
