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


def open_app(*paths: str, window: str = "all", theme: str | None = None, config=None):
    """The dashboard of `mtptui open PATH...`: the files read at once, shown whole."""
    from mtptui.tui.opening import Opening

    paths = paths or (SMALL_LOG,)
    names = ", ".join(os.path.basename(p) for p in paths)
    return build_app([], config=config, title=f"open: {names}", window=window, theme=theme,
                     wall=lambda: FROZEN_WALL, opening=Opening(list(paths)))


def long_log(path: Path, per_rank: int = 5000, ranks: int = 2) -> str:
    """A log longer than the dashboard's ring buffers (4,096 samples a rank): two runs of a server
    (speculation off, then NEXTN; server_args from the committed sample), each `per_rank` decode
    lines per rank two a second, in journald's short format; the same bytes on every call."""
    import random
    import time

    sample = (Path(__file__).resolve().parents[2] / "sample_logs" / "mtp-toggle-restarts.log").read_text()
    server_args = [ln.split("] server_args=", 1)[1] for ln in sample.splitlines() if "] server_args=" in ln]
    rnd = random.Random(13)
    t = 1773072000  # 2026-03-09 16:00:00 UTC
    out = []

    def line(t: float, tag: str, msg: str) -> None:
        out.append(time.strftime("%b %d %H:%M:%S", time.gmtime(t)) + f" gpu-h1 {tag}: {msg}")

    for run, args in enumerate(server_args[:2]):
        line(t, "systemd[1]", "Started sglang-qwen.service - SGLang server.")
        line(t, "python3[100]", f"[{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(t))}] server_args={args}")
        t += 30
        for k in range(per_rank):
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t + k // 2))
            for r in range(ranks):
                spec = ""
                if run:
                    al = 1.5 + rnd.random() * 2.5
                    spec = f"accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, "
                line(t + k // 2, "python3[100]",
                     f"[{stamp} TP{r}] Decode batch, #running-req: {rnd.randrange(1, 64)}, #token: "
                     f"{rnd.randrange(100000)}, token usage: {rnd.random():.2f}, {spec}cuda graph: "
                     f"{rnd.random() > 0.01}, gen throughput (token/s): {rnd.random() * 3000:.2f}, "
                     f"#queue-req: {rnd.randrange(5)}")
        t += per_rank // 2 + 30
    path.write_text("\n".join(out) + "\n")
    return str(path)


async def until(pilot, cond, what: str, seconds: float = 60.0) -> None:
    """Lets the app run until cond() holds; fails naming `what` if it never does (the limit is
    generous: the machine may be loaded)."""
    for _ in range(int(seconds / 0.05)):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never: {what}")


def notes(app) -> list[tuple[str, str]]:
    """The notifications shown so far, expired ones too (tests/conftest.py keeps them): (message, severity)."""
    return list(getattr(app, "told", []))


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
