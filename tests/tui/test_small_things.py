"""Smaller things of issue 17: a notification is drawn above the status bar and the keys, not
over them; the palette offers no replay speed in live mode; one of a thing is singular."""

from __future__ import annotations

import re

import pytest

from textual.widgets._toast import Toast
from tui_helpers import make_app, screen_text, settle

from mtptui.core.compare import EpochRow
from mtptui.prove.smoke import PASS, SmokeResult
from mtptui.tui.launch import build_app
from mtptui.tui.palette import DashboardCommands

SIZE = (120, 36)


@pytest.mark.parametrize("size", [(80, 24), SIZE, (160, 48)])
async def test_a_notification_leaves_the_status_bar_and_the_keys_readable(size):
    app = make_app()
    async with app.run_test(size=size, notifications=True) as pilot:
        await settle(pilot, app)
        app.notify("gpu1: mtp3 verified: accept len 2.41 after 3 batches")
        await pilot.pause(0.3)
        (toast,) = app.screen.query(Toast)
        bars = app.screen.query_one("#bars")
        assert toast.region.bottom <= bars.region.y, (toast.region, bars.region)


def palette_names(app) -> list[str]:
    return [name for name, _, _ in DashboardCommands(app.screen)._commands()]


async def test_the_palette_offers_replay_speed_in_a_replay_only():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert "Replay faster" in palette_names(app) and "Replay slower" in palette_names(app)
    live = build_app([], title="live", window="5m", wall=lambda: 1_800_000_000.0)
    async with live.run_test(size=SIZE) as pilot:
        await pilot.pause()
        names = palette_names(live)
        assert "Pause / resume" in names and not any(n.startswith("Replay") for n in names), names


async def test_help_lists_the_replay_speed_in_a_replay_only():
    from mtptui.config.keys import BY_ID, REPLAY_ONLY

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("question_mark")
        text = str(app.screen.query_one("Static").render())
        assert all(BY_ID[k].help in text for k in REPLAY_ONLY), text
    live = build_app([], title="live", window="5m", wall=lambda: 1_800_000_000.0)
    async with live.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        text = str(live.screen.query_one("Static").render())
        assert BY_ID["pause"].help in text
        assert not [k for k in REPLAY_ONLY if f"{k} " in text or BY_ID[k].help in text], text


async def test_one_line_is_one_line_in_the_status_bar():
    live = build_app([], title="live", window="5m", wall=lambda: 1_800_000_000.0)
    async with live.run_test(size=(160, 48)) as pilot:
        live.dash.feed.lines(["2027-01-15T08:00:00+00:00 gpu1 python3[7]: hello"], "gpu1")
        live.dash.feed.drain()
        live.screen.redraw_now()
        await pilot.pause()
        text = "\n".join(screen_text(live))
        assert re.search(r"│ 1 line\b", text) and "1 lines" not in text, text


def test_one_decode_line_in_the_strip():
    from mtptui.tui.viewmodel import RunState, StripView
    from mtptui.tui.widgets.epoch_strip import strip_parts, strip_text

    from mtptui.core.epochs import Epoch

    e = Epoch(index=2, host="gpu1", start=1000.0, reason="restart (systemd)")
    row = EpochRow(host="gpu1", index=2, start=1000.0, end=None, label="spec off", reason="restart (systemd)",
                   decode_batches=40, spec_off=False, accept_len=2.4, accept_rate=0.5, gen_per_rank={"TP0": 900.0},
                   gen_mean=900.0, gen_per_dp={"": 900.0}, gen_total=900.0, min_batches=40, vs_previous=None,
                   vs_baseline=None, short_before=(1, 1))
    v = StripView(RunState(e, 3, 3, True, 1001.0, None), row, None, None, 60.0, False)
    text = strip_text(strip_parts(v), 0).plain
    assert "epoch 2 too short to compare (1 decode line)" in text, text


def test_one_token_in_the_smoke_line():
    line = SmokeResult("gpu1", PASS, "answered", latency_s=0.12, completion_tokens=1).line()
    assert "1 token)" in line and "1 tokens" not in line
    assert "2 tokens" in SmokeResult("gpu1", PASS, "answered", latency_s=0.12, completion_tokens=2).line()


def test_plural():
    from mtptui.tui.viewmodel import plural

    assert [plural(n, "line") for n in (0, 1, 2, 1234)] == ["0 lines", "1 line", "2 lines", "1,234 lines"]


async def test_a_notification_over_a_modal_screen_leaves_the_status_bar_readable(tmp_path, monkeypatch):
    """The audit box is no taller than its rows at 160x48: the status bar shows below it, and a
    notification raised there stands above it too."""
    from test_audit_screen import open_audit, write_log

    write_log(tmp_path / "audit.jsonl", [])
    app = make_app()
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await open_audit(pilot, monkeypatch, tmp_path / "audit.jsonl")
        app.notify("gpu1: mtp3 verified: accept len 2.41 after 3 batches")
        await pilot.pause(0.3)
        (toast,) = app.screen.query(Toast)
        bars = app.screen_stack[0].query_one("#bars")
        assert toast.region.bottom <= bars.region.y, (toast.region, bars.region)
