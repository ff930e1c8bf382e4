"""The main screen with the server latency line, at 80x24, 100x30 and 160x48: the committed DP8
sample and a fixed pair of /metrics scrapes (SGLang 0.5.12's names, the simulator's buckets), so
the shot is deterministic. Nothing is cut: the line holds whole parts only (test_latency_view.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import make_app, settle, until

from mtptui.core import latency
from mtptui.sim import metrics as sim_metrics
from mtptui.tui.latency_view import latency_line
from mtptui.tui.widgets.latency_bar import LatencyBar

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
DP8 = str(SAMPLES / "dp-attention-8.log")
TOGGLE = str(SAMPLES / "mtp-toggle-restarts.log")  # off, NEXTN 3 steps, 1 step, across restarts


def _text(obs: dict) -> str:
    from prometheus_client import CollectorRegistry, Histogram, generate_latest

    reg = CollectorRegistry()
    for fig, name in sim_metrics.latency_names((0, 5, 12)).items():
        h = Histogram(name, "h", ["model_name"], buckets=sim_metrics._BUCKETS[fig], registry=reg)
        for x, n in obs.get(fig, ()):
            for _ in range(n):
                h.labels("m").observe(x)
    return generate_latest(reg).decode()


OBS = {"ttft": [(0.05, 40), (0.3, 9), (1.5, 1)], "itl": [(0.009, 900), (0.013, 90), (0.05, 10)],
       "e2e": [(3.0, 30), (7.0, 19), (30.0, 1)], "queue": [(0.0, 45), (0.3, 5)]}


async def _with_latency(pilot):
    await settle(pilot, pilot.app)
    dash = pilot.app.dash
    cur = dash.store.current_epoch(dash.host)
    t = cur.start if cur is not None else 0.0
    dash.note_scrape(dash.host, latency.parse(_text({}), t + 1.0))
    dash.note_scrape(dash.host, latency.parse(_text(OBS), t + 6.0))
    pilot.app.screen.redraw_now()
    await pilot.pause()
    await pilot.pause()


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)], ids=["160x48", "100x30", "80x24"])
def test_main_screen_with_latency(snap_compare, size):
    assert snap_compare(make_app(DP8, window="all"), terminal_size=size, run_before=_with_latency)


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)], ids=["160x48", "100x30", "80x24"])
async def test_the_latency_line_is_whole_at_every_size(size):
    app = make_app(DP8, window="all")
    async with app.run_test(size=size) as pilot:
        await _with_latency(pilot)
        bar = app.screen.query_one(LatencyBar)
        text = str(bar.render()).rstrip()
        assert bar.display and bar.region.height == 1
        assert text == latency_line(app.dash.latency_now(app.dash.host), None, size[0] - 2)
        assert "ITL p50 " in text and "TTFT p50 " in text


# each epoch of the toggle sample its own server run: ITL lower with speculation, TTFT a little higher
PER_EPOCH = [{"ttft": [(0.05, 45), (0.15, 5)], "itl": [(0.019, 950), (0.03, 50)]},
             {"ttft": [(0.05, 40), (0.15, 10)], "itl": [(0.009, 900), (0.013, 90), (0.05, 10)]},
             {"ttft": [(0.05, 42), (0.15, 8)], "itl": [(0.013, 950), (0.02, 50)]}]


def _bar_shown(app) -> bool:
    app.screen.redraw_now()
    return bool(app.screen.query_one(LatencyBar).display)


async def _compare_with_latency(pilot):
    await settle(pilot, pilot.app)
    dash = pilot.app.dash
    for epoch, obs in zip(dash.store.epochs[dash.host], PER_EPOCH):
        dash.note_scrape(dash.host, latency.parse(_text(obs), epoch.start + 1.0))  # not yet the epoch's
    lat = dash.latency[dash.host]
    for epoch, obs in zip(dash.store.epochs[dash.host], PER_EPOCH):
        lat.epochs[epoch.start] = latency.window(None, latency.parse(_text(obs), epoch.start + 1.0))
    # the latency bar up under the compare screen before it opens: on a busy machine the next
    # redraw could come after the snapshot
    await until(pilot, lambda: _bar_shown(pilot.app), "the latency bar")
    await pilot.press("c", "down")
    await pilot.pause()


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)], ids=["160x48", "100x30", "80x24"])
def test_compare_screen_with_latency(snap_compare, size):
    """The picked epoch's ITL and TTFT p50/p99 against the epoch before and the spec-off one."""
    assert snap_compare(make_app(TOGGLE, window="all"), terminal_size=size, run_before=_compare_with_latency)
