"""Helpers for the TUI tests: an app on a replayed log with a frozen wall clock, and a way to wait
until everything is read and drawn (so snapshots are deterministic)."""

from __future__ import annotations

import os
from pathlib import Path

from mtptui.sources.replay import MAX_SPEED, ReplayClock, ReplaySource
from mtptui.tui.launch import build_app

DATA = Path(__file__).parent / "data"
SMALL_LOG = str(DATA / "small.log")
FROZEN_WALL = 1_800_000_000.0


def make_app(*paths: str, speed: float = MAX_SPEED, window: str = "all", theme: str | None = None,
             config=None, paused: bool = False, read_only: bool = False, controls: dict | None = None):
    clock = ReplayClock(speed, paused=paused)
    sources = [ReplaySource(p, clock) for p in (paths or (SMALL_LOG,))]
    names = ", ".join(os.path.basename(p) for p in (paths or (SMALL_LOG,)))
    return build_app(sources, config=config, title=f"replay: {names}", window=window, theme=theme,
                     wall=lambda: FROZEN_WALL, read_only=read_only, controls=controls)


async def until(pilot, cond, what: str, seconds: float = 60.0) -> None:
    """Lets the app run until cond() holds; fails naming `what` if it never does (the limit is
    generous: the machine may be loaded)."""
    for _ in range(int(seconds / 0.05)):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never: {what}")


def notes(app) -> list[tuple[str, str]]:
    """The notifications shown so far: (message, severity)."""
    return [(n.message, n.severity) for n in app._notifications]


async def settle(pilot, app, timeout: float = 10.0) -> None:
    """Waits until every replay source ended and every line is parsed, then redraws."""
    dash = app.dash
    waited = 0.0
    while waited < timeout:
        if dash.replay is not None and dash.replay.ended and dash.feed.pending == 0:
            break
        await pilot.pause(0.02)
        waited += 0.02
    else:
        raise AssertionError("the replay did not finish")
    app.screen.redraw_now()
    await pilot.pause()
    app.screen.redraw_now()
    await pilot.pause()


def screen_text(app) -> list[str]:
    """The screen as a user reads it: one string per row, every widget composed (the compositor's
    own strips; Textual has no public call for the whole screen's text)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]
