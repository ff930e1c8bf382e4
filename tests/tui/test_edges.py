"""The edges of a session: the end of a replay, a live host that cannot be reached."""

from __future__ import annotations

import asyncio

import pytest
from tui_helpers import make_app, settle

from mtptui.config import parse_config
from mtptui.tui.widgets.status_bar import StatusBar

SIZE = (120, 36)


def status_text(app) -> str:
    return str(app.screen.query_one(StatusBar).render())


@pytest.mark.parametrize("keys, key_shown", [("", "←"), ('[keys]\nseek_back = "h"\n', "h")])
async def test_after_the_end_left_seeks_back_from_the_end_at_once(keys, key_shown):
    # small.log spans four minutes: at 1000x it ends in a quarter of a second
    app = make_app(speed=1000.0, window="1m", config=parse_config(keys) if keys else None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        tl = app.dash.timeline
        end = tl.newest()
        await asyncio.sleep(0.5)  # wall time goes on: at 1000x, 500 log seconds past the end
        await pilot.press(*["minus"] * 7)  # down to 1x, to look at the end closely
        assert app.dash.replay.speed == 1.0
        assert tl.playhead() == end
        assert f"REPLAY ended; {key_shown} to seek" in status_text(app)
        await pilot.press("h" if keys else "left")
        # at 1x the replay plays on from there: a fraction of a second, not the 6 s step
        assert tl.playhead() == pytest.approx(end - tl.step(), abs=1.0), "one step back from the end"
        assert "REPLAY playing 1x" in status_text(app)


def refusing_host():
    import socket

    from mtptui.config import resolve_hosts
    from mtptui.config import Config
    from mtptui.sources.ssh import SshJournalSource

    with socket.socket() as s:  # a loopback port nobody listens on: refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (host,) = resolve_hosts([f"127.0.0.1:{port}"], Config(), unit="sglang")
    return SshJournalSource(host)


async def wait_until(pilot, what, timeout: float = 30.0) -> None:
    waited = 0.0
    while not what():
        assert waited < timeout, "never happened"
        await pilot.pause(0.05)
        waited += 0.05


async def test_a_host_that_refuses_is_named_and_its_trouble_said_once_and_live_is_not_shown():
    from mtptui.tui.launch import build_app
    from mtptui.tui.widgets.host_bar import HostBar

    source = refusing_host()
    name = source.host
    app = build_app([source], title=f"live: {name}")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.dash.feed.state_of(name) == "reconnecting")
        app.screen.redraw_now()
        await pilot.pause()
        assert f"host {name}" in str(app.screen.query_one(HostBar).render())
        status = status_text(app)
        first, second = status.split("\n")
        assert "RECONNECTING at --:--:--" in first and "LIVE" not in first
        assert second.startswith(f"{name} (retry in ") or second.startswith(f"{name} (retrying)"), second
        assert "connection refused" in second and second.count(name) == 1


async def test_give_up_after_closes_the_dashboard_with_exit_1():
    from mtptui.sources.giveup import GiveUpSource
    from mtptui.tui.launch import build_app

    source = GiveUpSource(refusing_host(), 1.0)
    app = build_app([source])
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: not app.is_running)
    assert app.return_code == 1 and "gave up after 1s" in source.gave_up


async def test_at_80x24_the_end_hint_and_lines_lost_both_stay(tmp_path):
    from tui_helpers import SMALL_LOG

    log = tmp_path / "a-lossy-replay.log"  # a name long enough that not all fits in 80
    text = open(SMALL_LOG).read().splitlines(keepends=True)
    log.write_text("".join(text[:100]) + "bad\x00line\n" + "".join(text[100:]))
    app = make_app(str(log))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        assert app.dash.feed.counts.dropped == 1
        first = status_text(app).split("\n")[0]
        assert "REPLAY ended; ← to seek at 16:04:05" in first and "1 dropped" in first, first
