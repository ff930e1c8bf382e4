"""The dashboard's entry point for every command: `mtptui live/local/replay/demo` build their
sources and call ``run_dashboard``."""

from __future__ import annotations

import os
import sys

from mtptui.config import Config
from mtptui.sources.base import Source


def run_dashboard(sources: list[Source], *, config: Config, read_only: bool = False,
                  title: str = "", window: str | None = None, theme: str | None = None,
                  controls: dict | None = None, opening=None) -> int:
    """Opens the dashboard on `sources` until the user quits. Returns the exit code (0 on quit).

    `config`: the typed config (hosts with accent colours and tags, thresholds, keys, theme,
    profiles, control settings), as every command loads it. `opening`: files to read at once
    (tui/opening.py) instead of sources, for `open`. `read_only` hides actions that change a server.
    `window` (a label of config/windows.py) and `theme` are the starting choices. `controls`:
    host -> HostControl, what the keys s [ ] p R act on; by default one for each source that can act
    (SSH, the local journal, the demo's child: control.session.host_controls). None at all (a
    replay) leaves those keys out, as `read_only` does.
    """
    if not sys.stdout.isatty() and not os.environ.get("MTPTUI_ALLOW_NO_TTY"):
        print("mtptui: the dashboard needs a terminal (for a headless view use `mtptui summary`)",
              file=sys.stderr)
        return 1
    if controls is None:
        from mtptui.control.session import host_controls

        controls = host_controls(sources, config)
    app = build_app(sources, config=config, read_only=read_only, title=title, window=window, theme=theme,
                    controls=controls, opening=opening)
    result = app.run()
    for line in app.dash.quitting.said:  # how the actions a quit stopped ended, kept past the screen
        print(f"mtptui: {line}", file=sys.stderr)
    return int(result or 0) if isinstance(result, int) else (app.return_code or 0)


def build_app(sources: list[Source], *, config: Config | None = None, read_only: bool = False,
              title: str = "", tick_hz: float = 10.0, theme: str | None = None, window: str | None = None,
              wall=None, start_sources: bool = True, controls: dict | None = None, opening=None):
    """The app without running it: tests and the benchmark drive it with Textual's Pilot.
    `config` None: the defaults, as from an empty config file."""
    import time

    from mtptui.tui.app import MtpApp
    from mtptui.tui.controller import Dashboard

    dash = Dashboard(sources, config=config, read_only=read_only, title=title, wall=wall or time.time,
                     controls=controls, opening=opening)
    if window:
        dash.timeline.set_window(window)
    return MtpApp(dash, tick_hz=tick_hz, theme=theme, start_sources=start_sources)
