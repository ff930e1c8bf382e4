"""x and b on the simulator run as a real child (sim_child.py): x asks the server and tells the
answer, in a read-only session too (where b and T do not exist); b previews the benchmark, runs
it after y with its progress in the action bar, opens the results screen, and leaves the child as
it found it; b again stops it, and the child is still restored."""

from __future__ import annotations

import re

import pytest
from sim_child import HOST, MTP, OFF, SIZE, acting, child
from textual.widgets import DataTable
from tui_helpers import FROZEN_WALL, notes, until

from mtptui.config import Config
from mtptui.control.audit import read_audit
from mtptui.control.child import ChildTarget
from mtptui.control.session import HostControl
from mtptui.tui import prove
from mtptui.tui.launch import build_app
from mtptui.tui.screens.confirm import ConfirmScreen
from mtptui.tui.screens.results import ResultsScreen
from mtptui.tui.widgets.action_bar import ActionBar


@pytest.fixture
def short_bench(monkeypatch, tmp_path):
    monkeypatch.setattr(prove, "BENCH_PROFILES", ("off", "mtp2"))
    monkeypatch.setattr(prove, "BENCH_CONCURRENCY", (1, 2))
    monkeypatch.setattr(prove, "BENCH_REQUESTS", 3)
    monkeypatch.setattr(prove, "BENCH_MAX_TOKENS", 16)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def ready(app) -> bool:
    """The server's ready line is in (batch lines of its warm-up come before it, and until it the
    server answers 503, as SGLang does)."""
    return any(ev.kind == "ready" for ev in app.dash.store.events)


async def test_x_tells_the_smoke_test_and_so_it_does_read_only(audit):
    async with acting(MTP[1]) as (pilot, app, source):
        await until(pilot, lambda: ready(app), "the ready line")
        await pilot.press("x")
        await until(pilot, lambda: any(m.startswith("smoke test") for m, _ in notes(app)), "the smoke test's answer")
        m, sev = next((m, s) for m, s in notes(app) if m.startswith("smoke test"))
        assert re.fullmatch(r"smoke test gpu1: pass \(\d+ ms, 1 token\): answered '345'", m) and sev == "information", m

    source = child(OFF)
    app = build_app([source], config=Config(), read_only=True, window="all", wall=lambda: FROZEN_WALL,
                    controls={HOST: HostControl(ChildTarget(source), host=HOST)})
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: ready(app), "the ready line")
            await pilot.press("b")  # read-only: the benchmark does not exist, nor the tune
            await pilot.press("T")
            await pilot.press("x")
            await until(pilot, lambda: any(m.startswith("smoke test") for m, _ in notes(app)), "the answer")
            assert any(m.startswith("smoke test gpu1: pass") for m, _ in notes(app))
            assert not isinstance(app.screen, ConfirmScreen) and not audit.exists()
    finally:
        source.kill_now()


async def test_b_previews_runs_shows_the_results_and_restores_the_child(short_bench, audit, tmp_path):
    async with acting(MTP[1]) as (pilot, app, source):
        before = list(source.argv)
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        text = "\n".join(app.screen.plan.preview_lines())
        assert "benchmark: off, mtp2; concurrency 1, 2; 3 requests of 16 tokens each" in text
        assert "── off ──" in text and "── mtp2 ──" in text and source.argv == before
        await pilot.press("y")
        bar = app.screen.query_one(ActionBar)
        await until(pilot, lambda: "ACTING" in str(bar.render()) and "benchmark gpu1" in str(bar.render()),
                    "the benchmark in the action bar")
        # pushed is not yet composed: its tables mount on a later turn of the loop
        await until(pilot, lambda: isinstance(app.screen, ResultsScreen) and len(app.screen.query(DataTable)) == 2,
                    "the results screen with its two tables", seconds=120)
        tables = list(app.screen.query(DataTable))
        profiles = [tables[0].get_row_at(i)[1] for i in range(tables[0].row_count)]
        assert profiles == ["off", "mtp2"] and tables[0].get_row_at(1)[3].endswith("%")
        assert source.argv == before and app.dash.running == {}
        assert list((tmp_path / "data" / "mtptui" / "bench").glob("gpu1-*.json"))
        await pilot.press("escape")
    entries = read_audit(audit)
    assert [(e["action"], e["result"]) for e in entries if e["action"] == "bench"] == [("bench", "done")]
    assert entries[-1]["action"] == "restore" and entries[-1]["result"] == "applied"


async def test_b_again_stops_the_benchmark_and_the_child_is_restored(short_bench, monkeypatch, audit):
    monkeypatch.setattr(prove, "BENCH_PROFILES", ("mtp2", "mtp1"))  # the child runs off: the first measured changes it
    monkeypatch.setattr(prove, "BENCH_REQUESTS", 200)
    async with acting(OFF) as (pilot, app, source):
        before = list(source.argv)
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        await pilot.press("y")
        running = lambda: app.dash.running.get(HOST)  # noqa: E731
        await until(pilot, lambda: running() and running().phase == "measure" and running().detail.startswith("mtp2 c=1"),
                    "mtp2 measured")
        assert re.search(r"benchmark gpu1 · measure \d:\d\d \(mtp2 c=1 \[[#.]{20}\] \d+/200\)", running().text())
        await pilot.press("b")
        await until(pilot, lambda: not app.dash.running, "the benchmark's end", seconds=120)
        assert any("stopping the benchmark" in m for m, _ in notes(app))
        assert any(m.startswith("gpu1: benchmark interrupted") and "restored" in m for m, _ in notes(app))
        assert source.argv == before and not isinstance(app.screen, ResultsScreen)
    bench = [e for e in read_audit(audit) if e["action"] == "bench"]
    assert bench[0]["result"] == "interrupted" and bench[0]["restored"] is True
