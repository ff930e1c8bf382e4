"""The demo's pipeline for real: the simulator as a child process, its lines on screen, and the
numbers on screen equal to `mtptui summary --json` of what it printed (recorded with --record)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest

from mtptui.commands import demo, summary as summary_cmd
from mtptui.tui.launch import build_app
from mtptui.tui.viewmodel import panel_view, spec_for
from mtptui.tui.widgets.status_bar import StatusBar

FAST = ["--sim-startup-seconds", "1", "--decode-log-interval", "8"]


async def test_demo_shows_the_simulator_and_agrees_with_summary(tmp_path):
    record = tmp_path / "demo.jsonl"
    args = demo.build_parser().parse_args(["--record", str(record)])
    source, writer = demo.demo_source(args, FAST)
    app = build_app([source], title="demo", window="all", wall=lambda: 1_800_000_000.0)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            dash = app.dash
            for _ in range(300):  # up to 30 s on a loaded machine; usually 3-4 s
                await pilot.pause(0.1)
                ranks = dash.store.ranks("simulator")
                if len(ranks) == 8 and all(s.decode_batches >= 3 for s in ranks):
                    break
            else:
                pytest.fail("the simulator's decode lines did not arrive")
            status = str(app.screen.query_one(StatusBar).render())
            assert "simulator (mtptui sim, not a real SGLang)" in status
            # Stop the child, let every line it printed reach the store, then compare.
            app.workers.cancel_group(app, "sources")
            await pilot.pause(0.5)
            dash.feed.drain()
            t0, t1 = None, dash.store.last_ts
            views = {s.rank: panel_view(s, t0, t1, spec=spec_for(dash.store, "simulator", t1), th=dash.th)
                     for s in dash.store.ranks("simulator")}
            assert all(v.spec == "on" for v in views.values())
    finally:
        source.kill_now()
        writer.close()
    out = io.StringIO()
    with redirect_stdout(out):
        assert summary_cmd.main(["--json", str(record)]) == 0
    doc = json.loads(out.getvalue())
    want = {s["rank"]: s["decode"] for s in doc["series"] if s["host"] == "simulator"}
    assert set(want) == set(views)
    for rank, v in views.items():
        for m in ("accept_len", "accept_rate", "gen_throughput"):
            got, exp = v.metrics[m].stats, want[rank][m]
            assert got["n"] == exp["n"], (rank, m)
            for k in ("mean", "min", "max"):
                assert got[k] == pytest.approx(exp[k], abs=1e-9), (rank, m, k)
