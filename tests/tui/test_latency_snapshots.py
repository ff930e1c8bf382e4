"""The main screen with the server latency line, at 80x24, 100x30 and 160x48: the committed DP8
sample and a fixed pair of /metrics scrapes (SGLang 0.5.12's names, the simulator's buckets), so
the shot is deterministic. Nothing is cut: the line holds whole parts only (test_latency_view.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import make_app, settle

from mtptui.core import latency
from mtptui.sim import metrics as sim_metrics
from mtptui.tui.latency_view import latency_line
from mtptui.tui.widgets.latency_bar import LatencyBar

DP8 = str(Path(__file__).resolve().parents[2] / "sample_logs" / "dp-attention-8.log")


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
