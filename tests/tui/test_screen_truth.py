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
from mtptui.tui.widgets.epoch_strip import EpochStrip
from mtptui.tui.widgets.events import EventTimeline
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
        strip = plain(screen.query_one(EpochStrip))
        assert "epoch 2/2" in strip and "restart (systemd)" in strip and "spec off" in strip
        events = " ".join(plain(screen.query_one(EventTimeline)).split())  # as read, unwrapped
        assert "epoch 2 begins (restart (systemd)): spec off" in events
        chart = screen.query_one(MetricChart)
        assert [label for _, label in chart.data.epochs] == ["spec off"]
        assert "restart" in str(chart.border_subtitle)
        # Before the restart, the same screen shows the first epoch and its settings.
        epoch2 = app.dash.store.epochs["gpu1"][1].start
        while app.dash.timeline.playhead() >= epoch2:
            await pilot.press("left")
        strip = plain(screen.query_one(EpochStrip))
        assert "epoch 1/2" in strip and "NEXTN steps=3 topk=1 draft=4" in strip
        titles = [str(p.border_title) for p in screen.query(RankPanel)]
        assert all("SPEC ON" in t for t in titles)


def summary_json(path: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert summary_cmd.main(["--json", path]) == 0
    return json.loads(out.getvalue())


def panel_stats(app, metric: str) -> dict[str, dict | None]:
    """rank -> the panel's statistics of `metric`, as the screen computed them."""
    return {s.rank: v.metrics[metric].stats for s, v in zip(app.dash.store.ranks("gpu1"), app.screen._views[1])}


def assert_same(got: dict | None, exp: dict | None, where) -> None:
    assert (got is None) == (exp is None), where
    if exp is not None:
        assert got["n"] == exp["n"], where
        for key in ("mean", "min", "max", "last"):
            assert got[key] == pytest.approx(exp[key], abs=1e-9), (where, key)


def panel_rows(screen, metric: str) -> dict[str, list[str]]:
    """rank -> the min, mean and max a panel prints for the metric."""
    from mtptui.tui.viewmodel import METRICS

    out = {}
    for panel in screen.query(RankPanel):
        row = next(ln for ln in plain(panel).splitlines() if ln.startswith(METRICS[metric].label)).split()
        out[panel.rank] = row[-3:]
    return out


@pytest.mark.parametrize("metric", ["accept_len", "accept_rate", "gen_throughput"])
async def test_rank_panels_cover_the_epoch_and_equal_its_summary(metric):
    """By default a panel covers the epoch at the playhead: summary's numbers for that epoch,
    for the spec-off run after the restart as much as for the spec-on run before it."""
    doc = summary_json(SMALL_LOG)
    app = make_app(window="all")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        last = doc["epochs"][-1]
        for rank, got in panel_stats(app, metric).items():
            assert_same(got, last["ranks"][rank][metric], rank)
        # Back to the end of the first epoch: its numbers, not the two runs mixed.
        first = doc["epochs"][0]
        await seek_to(pilot, app, epoch_last_line(app, 0))
        for rank, got in panel_stats(app, metric).items():
            assert_same(got, first["ranks"][rank][metric], rank)
        for rank, row in panel_rows(app.screen, metric).items():
            exp = first["ranks"][rank][metric]
            assert row == [fmt_value(metric, exp["min"]), fmt_value(metric, exp["mean"]), fmt_value(metric, exp["max"])]


def epoch_last_line(app, index: int) -> float:
    """The log time of the last decode line of the host's epoch `index`."""
    e = app.dash.store.epochs["gpu1"][index]
    return max(t for s in app.dash.store.ranks("gpu1") for t in s.decode.times() if e.start <= t < e.end)


async def seek_to(pilot, app, ts: float) -> None:
    """Moves the replay's playhead to log time ts (paused), as ← and → do, and redraws."""
    clock = app.dash.replay
    clock.seek(ts - app.dash.timeline.playhead(), at=app.dash.store.last_ts)
    assert app.dash.timeline.playhead() == pytest.approx(ts)
    app.screen.redraw_now()
    await pilot.pause()


@pytest.mark.parametrize("metric", ["accept_len", "accept_rate", "gen_throughput", "running_req", "queue_req"])
async def test_W_widens_the_panels_to_the_window_equal_to_summary_json(metric):
    doc = summary_json(SMALL_LOG)
    want = {s["rank"]: s["decode"][metric] for s in doc["series"]}
    app = make_app(window="all")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("W")
        assert not app.dash.epoch_scope
        for rank, got in panel_stats(app, metric).items():
            assert_same(got, want[rank], rank)
        # And as printed: the panel rows show summary's numbers at the panel's precision.
        if metric in ("accept_len", "accept_rate", "gen_throughput"):
            for rank, row in panel_rows(app.screen, metric).items():
                exp = want[rank]
                assert row == [fmt_value(metric, exp["min"]), fmt_value(metric, exp["mean"]),
                               fmt_value(metric, exp["max"])]
        assert all(plain(p).startswith("window all") for p in app.screen.query(RankPanel))
        await pilot.press("W")
        assert all(plain(p).startswith("epoch 2") for p in app.screen.query(RankPanel))


async def test_table_mode_on_a_short_screen_shows_the_same_numbers():
    doc = summary_json(SMALL_LOG)
    want = {s["rank"]: s["decode"]["accept_len"] for s in doc["series"]}
    app = make_app(window="all")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        await pilot.press("W")  # the whole window: both runs, as the series of summary
        grid = app.screen.query_one(RankGrid)
        assert grid.table_mode
        text = plain(grid._table)
        for rank, exp in want.items():
            line = next(ln for ln in text.splitlines() if f" {rank} " in ln)
            assert f"{exp['mean']:.2f}" in line and f"{exp['min']:.2f}" in line


# -- an opened file (mtptui open): read at once, more lines than the ring buffers hold ----------
async def test_opened_file_panels_equal_summary_json_over_the_whole_file(tmp_path):
    from tui_helpers import long_log, open_app

    from mtptui.tui.widgets.status_bar import StatusBar

    path = long_log(tmp_path / "long.log")
    doc = summary_json(path)
    app = open_app(path, window="all")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        store = app.dash.store
        assert all(len(s.decode) == s.decode.capacity < s.decode_batches for s in store.ranks("gpu-h1"))
        # At the end, by default: the last epoch (the spec-on run), every line of it.
        last = doc["epochs"][-1]
        for metric in ("accept_len", "accept_rate", "gen_throughput"):
            for rank, got in panel_stats(app, metric).items():
                assert_same(got, last["ranks"][rank][metric], (rank, metric))
            for rank, row in panel_rows(app.screen, metric).items():
                exp = last["ranks"][rank][metric]
                assert row == [fmt_value(metric, exp[k]) for k in ("min", "mean", "max")]
        # W: the whole file, across the restart, as summary's series.
        await pilot.press("W")
        want = {s["rank"]: s["decode"] for s in doc["series"]}
        for metric in ("accept_len", "accept_rate", "gen_throughput", "running_req", "queue_req"):
            for rank, got in panel_stats(app, metric).items():
                assert_same(got, want[rank][metric], (rank, metric))
        notes = {p.rank: str(p.border_subtitle) for p in app.screen.query(RankPanel)}
        for rank, note in notes.items():
            exp = want[rank]
            assert f"no graphs {exp['graph_off']}/{exp['batches']} batches" in note
        # The epoch strip and the status bar: summary's epochs and line counts.
        strip = " ".join(plain(app.screen.query_one(EpochStrip)).split())
        assert "epoch 2/2" in strip and f"accept len {last['host_totals']['accept_len']:.2f}" in strip
        lines = doc["lines"]
        status = plain(app.screen.query_one(StatusBar))
        assert f"{lines['read']:,} lines" in status
