"""What the screen says agrees with the log: restarts open epochs on screen, and the rank panels'
numbers are `mtptui summary --json`'s for the same input."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest
from tui_helpers import SMALL_LOG, make_app, settle

from mtptui.commands import summary as summary_cmd
from mtptui.tui.viewmodel import fmt_value
from mtptui.tui.widgets.chart import MetricChart
from mtptui.tui.widgets.events import EventTimeline
from mtptui.tui.widgets.host_bar import HostBar
from mtptui.tui.widgets.rank_grid import RankGrid, RankPanel

SIZE = (160, 48)


def plain(widget) -> str:
    """The widget's text as drawn on screen (its content lines, without the border)."""
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


async def test_restart_in_the_log_opens_a_new_epoch_on_screen():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        screen = app.screen
        host = plain(screen.query_one(HostBar))
        assert "epoch 2/2" in host and "restart (systemd)" in host and "spec off" in host
        events = " ".join(plain(screen.query_one(EventTimeline)).split())  # as read, unwrapped
        assert "epoch 2 begins (restart (systemd)): spec off" in events
        chart = screen.query_one(MetricChart)
        assert [label for _, label in chart.data.epochs] == ["spec off"]
        assert "restart" in str(chart.border_subtitle)
        # Before the restart, the same screen shows the first epoch and its settings.
        epoch2 = app.dash.store.epochs["gpu1"][1].start
        while app.dash.timeline.playhead() >= epoch2:
            await pilot.press("left")
        host = plain(screen.query_one(HostBar))
        assert "epoch 1/2" in host and "spec NEXTN steps=3 topk=1 draft=4" in host
        titles = [str(p.border_title) for p in screen.query(RankPanel)]
        assert all("SPEC ON" in t for t in titles)


def summary_json(path: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert summary_cmd.main(["--json", path]) == 0
    return json.loads(out.getvalue())


@pytest.mark.parametrize("metric", ["accept_len", "accept_rate", "gen_throughput", "running_req", "queue_req"])
async def test_rank_panel_numbers_equal_summary_json(metric):
    doc = summary_json(SMALL_LOG)
    want = {s["rank"]: s["decode"][metric] for s in doc["series"]}
    app = make_app(window="all")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        screen = app.screen
        t0, t1 = app.dash.timeline.bounds()
        from mtptui.tui.viewmodel import panel_view, spec_for

        for s in app.dash.store.ranks("gpu1"):
            view = panel_view(s, t0, t1, spec=spec_for(app.dash.store, "gpu1", t1), th=app.dash.th)
            got = view.metrics[metric].stats
            exp = want[s.rank]
            assert got["n"] == exp["n"]
            exp = dict(exp, last=exp["last"])
            for key in ("mean", "min", "max", "last"):
                assert got[key] == pytest.approx(exp[key], abs=1e-9), (s.rank, key)
        # And as printed: the panel rows show summary's numbers at the panel's precision.
        if metric in ("accept_len", "accept_rate", "gen_throughput"):
            from mtptui.tui.viewmodel import METRICS

            for panel in screen.query(RankPanel):
                text = plain(panel)
                row = next(ln for ln in text.splitlines() if ln.startswith(METRICS[metric].label)).split()
                exp = want[panel.rank]
                assert row[-3:] == [fmt_value(metric, exp["min"]), fmt_value(metric, exp["mean"]),
                                    fmt_value(metric, exp["max"])]


async def test_table_mode_on_a_short_screen_shows_the_same_numbers():
    doc = summary_json(SMALL_LOG)
    want = {s["rank"]: s["decode"]["accept_len"] for s in doc["series"]}
    app = make_app(window="all")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        grid = app.screen.query_one(RankGrid)
        assert grid.table_mode
        text = plain(grid._table)
        for rank, exp in want.items():
            line = next(ln for ln in text.splitlines() if f" {rank} " in ln)
            assert f"{exp['mean']:.2f}" in line and f"{exp['min']:.2f}" in line
