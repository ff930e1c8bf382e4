"""The server's latency from a container host: the simulator as a systemd unit with
--enable-metrics, its /metrics read over the SSH tunnel the dashboard holds (tui/metrics_poll.py),
on the main screen; s turns speculation off, and the compare screen says the new run's ITL against
the spec-on run's."""

from __future__ import annotations

import pytest
from test_control_dashboard import dashboard_on
from test_spec_systemd import SIM

from mtptui.core import latency
from mtptui.tui import metrics_poll
from mtptui.tui.widgets.latency_bar import LatencyBar

pytestmark = pytest.mark.systemd

SPEC = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4"]
WITH_METRICS = [*SIM, "--enable-metrics", *SPEC]


async def test_latency_over_ssh_and_the_itl_change_on_compare(cluster, tmp_path, monkeypatch):
    from mtptui.tui.screens.compare import CompareScreen
    from mtptui.tui.screens.confirm import ConfirmScreen

    monkeypatch.setattr(metrics_poll, "POLL_S", 1.0)
    h = cluster.hosts[1]
    async with dashboard_on(h, "latency", tmp_path, monkeypatch, sim=WITH_METRICS) as (pilot, app, until, _, name, unit):
        dash = app.dash

        def epoch_itl(k):
            epochs = dash.store.epochs.get(name, [])
            lat = dash.latency.get(name)
            if len(epochs) <= k or lat is None:
                return None
            w = lat.epochs.get(epochs[k].start)
            return w and w["itl"] and w["itl"]["n"] > 200 and w["itl"]["p50"]

        await until(lambda: epoch_itl(0), "the spec-on run's latency over the tunnel")
        await pilot.pause(0.3)
        now = dash.latency_now(name)
        text = str(app.screen.query_one(LatencyBar).render())
        assert text.startswith("latency 1m  ITL p50 ") and "TTFT p50 " in text
        assert now["ttft"]["n"] > 0  # E2E comes as requests finish: long ones may not have yet
        await pilot.press("s")
        await until(lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        await pilot.press("y")
        await until(lambda: not dash.running, "the action's end", limit=1200)
        await until(lambda: epoch_itl(1), "the spec-off run's latency")
        on, off = epoch_itl(0), epoch_itl(1)
        assert off > on
        await pilot.press("c")
        assert isinstance(app.screen, CompareScreen)
        await pilot.press("down")
        await pilot.pause(0.3)
        detail = str(app.screen.query_one("#ranks").render())
        assert f"ITL p50 {latency.ms(off)} (+" in detail and "vs prev #1" in detail, detail
