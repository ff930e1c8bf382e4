"""Sparklines and the chart draw a metric on the range it can take (accept len 1 to steps + 1,
rates 0 to 1, throughput from 0), the same for every rank of a host; a stretch without data is
empty, not a low bar; the chart's axis never shows a value the metric cannot take."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_screen_truth import plain, seek_to
from tui_helpers import make_app, settle

from mtptui.tui.viewmodel import host_scales, metric_range, spark_cells
from mtptui.tui.widgets.chart import MetricChart, y_range
from mtptui.tui.widgets.rank_grid import BARS, RankPanel, spark_text

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
TOGGLE = str(SAMPLES / "mtp-toggle-restarts.log")
DP8 = str(SAMPLES / "dp-attention-8.log")
BAR = set(BARS)


def test_noise_stays_flat_and_a_change_of_meaning_moves_the_bar():
    steps3 = metric_range("accept_len", 2.9, accept_cap=4)
    assert steps3 == (1.0, 4.0)
    # 2.83 against 2.88: at most a step apart (a panel's own min-max drew them as ▁ and █).
    assert spark_text([2.83, 2.88], 2, steps3) == "▅▆"
    assert spark_text([2.70, 2.75, 2.79], 3, steps3) == "▅▅▅"
    # Nothing accepted (1.00) against a good draft: the floor against two thirds up.
    assert spark_text([1.0, 2.9], 2, steps3) == "▁▆"
    assert metric_range("accept_rate", 0.61) == (0.0, 1.0)
    assert spark_text([0.60, 0.62, 0.05], 3, (0.0, 1.0)) == "▅▅▁"
    # Throughput from 0: 1613 (spec off) against 2235 (MTP) is a step, not floor against ceiling.
    assert metric_range("gen_throughput", 2235.0) == (0.0, 2235.0)
    assert spark_text([1613.0, 2235.0], 2, (0.0, 2235.0)) == "▆█"


def test_a_stretch_without_data_is_empty_never_a_low_bar():
    # Lines every second, then 40 s of silence (a restart), then lines again; 60 one-second cells.
    ts = [float(t) for t in range(0, 10)] + [float(t) for t in range(50, 60)]
    vs = [2.0] * 10 + [3.0] * 10
    cells = spark_cells(ts, vs, 0.0, 60.0, 60, limit=10.0)
    assert cells[:10] == [2.0] * 10 and cells[50:] == [3.0] * 10
    assert cells[10:50] == [None] * 40
    text = spark_text(cells, 60, (1.0, 4.0))
    assert text == "▃" * 10 + " " * 40 + "▆" * 10
    # Cells shorter than the interval between lines hold the last value instead of blinking.
    assert spark_text(spark_cells([0.0, 2.0, 4.0], [2.0, 2.0, 2.0], 0.0, 6.0, 12, 10.0), 12, (1.0, 4.0)) == "▃" * 12
    # Before the first line nothing is known; no data at all is an empty line.
    assert spark_cells([5.0], [2.0], 0.0, 10.0, 10, 10.0) == [None] * 5 + [2.0] * 5
    assert spark_text([None] * 8, 8, (1.0, 4.0)) == " " * 8


def test_every_panel_of_a_host_shares_the_scale():
    from mtptui.tui.viewmodel import MetricView, PanelView

    def view(gen_max: float, queue_max: float) -> PanelView:
        metrics = {m: MetricView(m, None) for m in ("accept_len", "accept_rate", "running_req", "token_usage")}
        metrics["gen_throughput"] = MetricView("gen_throughput", {"max": gen_max})
        metrics["queue_req"] = MetricView("queue_req", {"max": queue_max})
        return PanelView(None, "", "on", True, False, 0, 1, None, 4, metrics, False)

    scales = host_scales([view(1000.0, 0.0), view(3000.0, 0.0)], accept_cap=4)
    assert scales["gen_throughput"] == (0.0, 3000.0)
    assert scales["accept_len"] == (1.0, 4.0) and scales["accept_rate"] == (0.0, 1.0)
    assert scales["queue_req"] == (0.0, 1.0)  # all zero: at the floor, not stretched over nothing
    # The same throughput draws the same bar on either panel.
    assert spark_text([1000.0], 1, scales["gen_throughput"]) == "▃"


async def test_dp8_panels_draw_on_one_scale():
    app = make_app(DP8, window="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        views = app.screen._views[1]
        assert len(views) == 8
        gen_max = max(v.metrics["gen_throughput"].stats["max"] for v in views)
        assert {v.scales["gen_throughput"] for v in views} == {(0.0, gen_max)}
        assert {v.scales["accept_len"] for v in views} == {(1.0, 4.0)}  # NEXTN 3 steps


async def test_the_loading_time_after_a_restart_draws_empty():
    """Epoch 2 of the toggle sample: 45 s of loading, then lines: the first part of each
    sparkline is blank, the rest bars."""
    app = make_app(TOGGLE, window="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        e = app.dash.store.epochs["gpu-h1"][1]
        await seek_to(pilot, app, e.end)
        (panel,) = app.screen.query(RankPanel)
        rows = plain(panel).splitlines()
        spark = rows[2]  # the accept len sparkline
        first_bar = next(i for i, ch in enumerate(spark) if ch in BAR)
        loading = (e.start, next(t for t in app.dash.store.ranks("gpu-h1")[0].decode.times() if t > e.start))
        share = (loading[1] - loading[0]) / (e.end - e.start)
        assert first_bar / len(spark.rstrip()) == pytest.approx(share, abs=0.03)
        assert set(spark[:first_bar]) == {" "}
        assert set(spark[first_bar:].rstrip()) <= BAR


def y_labels(chart: MetricChart) -> list[float]:
    """The numbers on the chart's y-axis, as drawn."""
    out = []
    for y in range(chart.size.height):
        m = re.match(r"\s*(-?\d+(?:\.\d+)?)\s*┤", chart.render_line(y).text)
        if m:
            out.append(float(m.group(1)))
    return out


@pytest.mark.parametrize("metric, presses, lo, tops", [
    # accept len: up to steps + 1 of the runs in the window (NEXTN 1 step at the end, 3 steps then)
    ("accept_len", 0, 1.0, (2.0, 4.0)), ("accept_rate", 1, 0.0, (1.0, 1.0)), ("gen_throughput", 2, 0.0, None)])
async def test_the_chart_axis_shows_only_possible_values(metric, presses, lo, tops):
    app = make_app(TOGGLE, window="1m")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        for _ in range(presses):
            await pilot.press("m")
        assert app.dash.metric == metric
        chart = app.screen.query_one(MetricChart)
        # The last minute of the log, then the minute of the restart before any MTP line (empty).
        for i, at in enumerate((None, app.dash.store.epochs["gpu-h1"][1].start + 30)):
            if at is not None:
                await seek_to(pilot, app, at)
            labels = y_labels(chart)
            assert labels and min(labels) == lo
            if tops is not None:
                assert max(labels) == tops[i]
            else:
                assert min(labels) >= 0


def test_the_axis_range_of_an_empty_window():
    # Once -0.10..1.10 for every metric.
    assert y_range("accept_len", [], None) == (1.0, 2.0)
    assert y_range("accept_len", [], 4) == (1.0, 4.0)
    assert y_range("accept_rate", [], None) == (0.0, 1.0)
    lo, hi = y_range("gen_throughput", [], None)
    assert lo == 0.0 and hi > 0
    # Values past the settings' ceiling (they changed in the window) are never cut off.
    assert y_range("accept_len", [([0.0], [2.96])], 2) == (1.0, 2.96)


def test_the_axis_labels_are_in_order_and_end_at_the_range():
    from mtptui.tui.widgets.chart import _yticks

    assert _yticks(1.0, 4.0, 14) == [1.0, 2.0, 3.0, 4.0]
    assert _yticks(1.0, 4.0, 5) == [1.0, 2.5, 4.0]
    assert _yticks(0.0, 1.0, 5) == [0.0, 0.5, 1.0]
    assert _yticks(0.0, 3412.0, 5) == [0.0, 2000.0, 3412.0]
    assert _yticks(1.0, 4.0, 1) == []  # a plot one row high: no scale rather than labels on top of each other
