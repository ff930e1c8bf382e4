"""The server's latency on the main screen, from the demo's simulator's /metrics read through the
dashboard's own endpoint (tui/metrics_poll.py), recorded beside its lines, and the one line a
server without metrics gets instead of empty panels."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout

import pytest
from tui_helpers import make_app, open_app, settle, until

from mtptui.commands import demo, summary as summary_cmd
from mtptui.config import Config
from mtptui.control.session import host_controls
from mtptui.core import latency
from mtptui.sources.record import METRICS_MARK
from mtptui.tui import metrics_poll
from mtptui.tui.launch import build_app
from mtptui.tui.widgets.latency_bar import LatencyBar

FAST = ["--sim-startup-seconds", "1", "--decode-log-interval", "8"]


async def _until(pilot, cond, tries=400):
    for _ in range(tries):  # up to 40 s on a loaded machine
        await pilot.pause(0.1)
        if cond():
            return
    pytest.fail("never came")


async def test_the_demo_shows_its_servers_latency_and_records_it(tmp_path, monkeypatch):
    monkeypatch.setattr(metrics_poll, "POLL_S", 0.5)
    record = tmp_path / "demo.jsonl"
    args = demo.build_parser().parse_args(["--record", str(record)])
    source, writer = demo.demo_source(args, FAST)
    controls = host_controls([source], Config())
    app = build_app([source], title="demo", window="all", controls=controls)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            dash = app.dash

            def shown():
                now = dash.latency_now("simulator")
                return now and now["itl"] and now["itl"]["n"] > 0 and now["ttft"]

            await _until(pilot, shown)
            # no scrape after this one: the bar's next redraw shows the figures read below
            app.workers.cancel_group(app, "metrics")
            await pilot.pause(0.5)
            bar = app.screen.query_one(LatencyBar)
            text = str(bar.render())
            assert bar.display and text.startswith("latency 1m  ITL p50 ")
            now = dash.latency_now("simulator")
            assert latency.ms(now["itl"]["p50"]) in text and len(text) <= 98
            cur = dash.store.current_epoch("simulator")
            assert cur is not None and dash.latency["simulator"].epochs.get(cur.start)
            live = {start: latency.brief(w) for start, w in dash.latency["simulator"].epochs.items()}
            live_now = dash.latency_now("simulator")
    finally:
        source.kill_now()
        writer.close()
    scrapes = [json.loads(line) for line in record.read_text().splitlines() if METRICS_MARK in line]
    assert scrapes and all(latency.from_json(json.loads(e["MTPTUI_METRICS"])) for e in scrapes)
    # summary --json of the record: each epoch's latency as the dashboard had it
    out = io.StringIO()
    with redirect_stdout(out):
        assert summary_cmd.main(["--json", str(record)]) == 0
    doc = json.loads(out.getvalue())
    starts = {e["index"]: e["start"] for e in doc["epochs"] if e["host"] == "simulator"}
    got = {starts[x["epoch"]]: {k: v for k, v in x.items() if k not in ("host", "epoch")} for x in doc["latency"]}
    assert got == live and any(v["itl"] for v in got.values())
    # `open` of the record: the same figures, on the main screen and per epoch
    opened = open_app(str(record))
    async with opened.run_test(size=(100, 30)) as pilot:
        d = opened.dash
        await until(pilot, lambda: d.opening.done and d.recorded.get("simulator"), "the record read")
        await pilot.pause(0.3)
        assert {k: latency.brief(w) for k, w in d.latency["simulator"].epochs.items()} == live
        assert d.latency_now("simulator") == live_now
        assert latency.ms(live_now["itl"]["p50"]) in str(opened.screen.query_one(LatencyBar).render())
    # a replay of it (at full speed, to its end): the same
    replay = make_app(str(record))
    async with replay.run_test(size=(100, 30)) as pilot:
        d = replay.dash
        await settle(pilot, replay)
        await until(pilot, lambda: d.recorded.get("simulator"), "the record's scrapes")
        assert {k: latency.brief(w) for k, w in d.latency["simulator"].epochs.items()} == live
        assert d.latency_now("simulator") == live_now


async def test_a_server_without_metrics_says_so_once(monkeypatch):
    monkeypatch.setattr(metrics_poll, "POLL_S", 0.5)
    monkeypatch.setattr(demo, "sim_argv", lambda a, port, extra=None: [
        x for x in _argv(a, port, extra) if x != "--enable-metrics"])
    args = demo.build_parser().parse_args([])
    source, _ = demo.demo_source(args, FAST)
    controls = host_controls([source], Config())
    app = build_app([source], title="demo", window="all", controls=controls)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            dash = app.dash
            await _until(pilot, lambda: "simulator" in dash.latency_note)
            await pilot.pause(0.3)
            assert "--enable-metrics" in str(app.screen.query_one(LatencyBar).render())
            assert "simulator" not in dash.latency
    finally:
        source.kill_now()


_argv = demo.sim_argv


async def test_s_shows_the_itl_change_on_the_compare_screen(audit, monkeypatch):
    """s, y: the simulator restarted without speculation; once the new run's latency is read, the
    compare screen says its ITL against the spec-on epoch before it (speculation lowers ITL here)."""
    from mtptui.tui.screens.compare import CompareScreen
    from mtptui.tui.screens.confirm import ConfirmScreen

    monkeypatch.setattr(metrics_poll, "POLL_S", 0.5)
    source, _ = demo.demo_source(demo.build_parser().parse_args(["--load", "light"]), FAST)
    app = build_app([source], title="demo", window="all", controls=host_controls([source], Config()))
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            dash = app.dash

            def epoch_itl(k):
                epochs = dash.store.epochs.get("simulator", [])
                lat = dash.latency.get("simulator")
                if len(epochs) <= k or lat is None:
                    return None
                w = lat.epochs.get(epochs[k].start)
                return w and w["itl"] and w["itl"]["n"] > 200 and w["itl"]["p50"]

            await until(pilot, lambda: epoch_itl(0), "the spec-on run's latency", seconds=60)
            await pilot.press("s")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
            await pilot.press("y")
            await until(pilot, lambda: not dash.running, "the action's end", seconds=120)
            await until(pilot, lambda: epoch_itl(1), "the spec-off run's latency", seconds=60)
            on, off = epoch_itl(0), epoch_itl(1)
            assert off > on  # the spec-off run's ITL is higher: what speculation bought
            await pilot.press("c")
            compare = app.screen
            assert isinstance(compare, CompareScreen)
            await pilot.press("down")
            await pilot.pause(0.3)
            detail = str(compare.query_one("#ranks").render())
            # scrapes go on coming: the epoch's p50 as read above, or as it is now that it is drawn
            shown = re.search(r"ITL p50 (\S+) \(\+\d+% vs prev #1\)", detail)
            assert shown is not None, detail
            assert shown.group(1) in {latency.ms(off), latency.ms(epoch_itl(1))}, detail
    finally:
        source.kill_now()
