"""The demo agrees with itself (issue 46 item 6): in `mtptui demo` (DeepSeek-V3, DP 8 with DP
attention, MTP 3 steps, steady background load), `b` and `T` rank speculation against off in
the direction the compare screen shows for the same load. T sends its own requests one per DP
group on top of the load the log shows (not that load again), says so in its preview with what
round 1 costs in restarts and time from the child's last start.

Not timed: the figures are the simulator's (sim/behaviour.py, "Speculation under load"). At
the demo's ~25 requests a DP group its model puts mtp3 ahead of off by 36% in the decode lines,
and for b's own requests (a Monte Carlo of the model over its 16 prompts, time to first token
included) by 25% at concurrency 1 and 15% at 8, behind it less than once in a thousand; T's
round 1 (8 requests, one wave) has off ahead of mtp3 about one time in seven, but of every
speculative candidate only where all of their slowest requests fall behind at once."""

from __future__ import annotations

import re

import pytest
from tui_helpers import until

from mtptui.commands import demo
from mtptui.config import Config
from mtptui.control.session import host_controls
from mtptui.tui import prove
from mtptui.tui.launch import build_app
from mtptui.tui.screens.compare import CompareScreen
from mtptui.tui.screens.confirm import ConfirmScreen
from mtptui.tui.screens.results import ResultsScreen

pytestmark = pytest.mark.alone  # measured throughputs compared: run alone (Makefile)

FAST = ["--sim-startup-seconds", "1", "--decode-log-interval", "8"]
HOST = "simulator"


@pytest.fixture
def short_tune(monkeypatch, tmp_path):
    # off and mtp3 with mtp3's neighbourhood, one round (the budget is spent after it): the rounds'
    # rules are test_tune_key.py's; here only the direction and the load count
    monkeypatch.setattr(prove, "TUNE_PROFILES", ("off", "mtp3"))
    monkeypatch.setattr(prove, "TUNE_BUDGET_S", 6.0)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def change(rows: list[dict], profile: str, concurrency: int) -> float:
    """A profile's change against off at one concurrency, as the results screen shows it."""
    return next(r["change_pct"] for r in rows if r["profile"] == profile and r["concurrency"] == concurrency)


def spec_vs_off(app) -> tuple[float, list[float]]:
    """The compare screen's direction: the host total of the mtp3 run after the bench's off run
    (the restored one: the bench ran mtp3, which ran already, then off and mtp1) against it, and
    the same in each #running-req bucket both ran in (the same load)."""
    screen = app.screen
    assert isinstance(screen, CompareScreen)
    rows = screen.rows
    off = max(i for i, r in enumerate(rows) if r.spec_off)
    after = next(r for r in rows[off + 1:] if r.label.startswith("EAGLE (MTP) steps=3"))
    assert after.vs_baseline is not None and after.vs_baseline.index == rows[off].index
    return after.vs_baseline.change, [b.vs_baseline for b in after.by_load if b.vs_baseline is not None]


async def test_b_and_t_in_the_demo_agree_with_the_compare_screen(short_tune, audit):
    source, _ = demo.demo_source(demo.build_parser().parse_args([]), FAST)
    app = build_app([source], title="demo", window="all", wall=lambda: 1_800_000_000.0,
                    controls=host_controls([source], Config()))
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            dash = app.dash

            def ranks_decoding(n: int) -> bool:
                ranks = dash.store.ranks(HOST)
                return len(ranks) == 8 and all(s.decode_batches >= n for s in ranks)

            await until(pilot, lambda: ranks_decoding(3), "the demo's eight DP groups decoding")

            # b as a newcomer presses it: off, mtp1, mtp3 at concurrency 1 and 8
            await pilot.press("b")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the benchmark's preview")
            await pilot.press("y")
            await until(pilot, lambda: isinstance(app.screen, ResultsScreen), "the benchmark's results", seconds=300)
            bench = app.screen.report["results"]
            assert {r["concurrency"] for r in bench} == set(prove.BENCH_CONCURRENCY)
            assert all(not r["errors"] for r in bench)
            b = {c: change(bench, "mtp3", c) for c in prove.BENCH_CONCURRENCY}
            await until(pilot, lambda: not dash.running, "the benchmark's restore", seconds=120)
            await pilot.press("escape")

            # the compare screen over the same runs: mtp3 restored after the bench's off run, at
            # the same load (the background's ~25 a DP group; the bench added one at most)
            await until(pilot, lambda: ranks_decoding(40), "the restored run's lines", seconds=120)
            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, CompareScreen), "the compare screen")

            def compared() -> bool:
                app.screen.refresh_rows()
                rows = app.screen.rows
                off = [i for i, r in enumerate(rows) if r.spec_off]
                return bool(off) and any(r.vs_baseline is not None and r.label.startswith("EAGLE (MTP) steps=3")
                                         for r in rows[off[-1] + 1:])

            await until(pilot, compared, "the mtp3 run compared with the off run", seconds=120)
            total, same_load = spec_vs_off(app)
            assert total > 0 and same_load and all(x > 0 for x in same_load), (total, same_load)
            print(f"b: mtp3 against off {b} %; c: {total:+.1%} in all, {same_load} at the same load")
            assert all(x > 0 for x in b.values()), (b, total, same_load)  # b agrees with c
            await pilot.press("escape")

            # T: its own requests one per DP group on top of the load the log shows, said so
            await pilot.press("T")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the tune's preview")
            t = app.screen.plan
            lines = t.preview_lines()
            m = re.match(r"tune: \d+ candidates at concurrency 8 \(one per DP group, on top of the (\d+) running that "
                         r"its log shows: 8 DP groups, about (\d+) each, the median #running-req of \d+ decode lines "
                         r"in its log's last 60 s\)", lines[0])
            assert m and t.concurrencies == [8], lines[0]
            running, each = int(m[1]), int(m[2])
            assert running > 8 * 10 and abs(running / 8 - each) <= 1
            changed = sum(bool(c) for _, c in t.changes())
            assert re.match(rf"restarts: round 1 restarts the server {changed} times whatever the budget, about "
                            r"[\d.]+ s at the median of its last \d+ starts \([\d.]+ s, Started → ready\)",
                            lines[1]), lines[1]
            await pilot.press("y")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and isinstance(app.screen.plan, prove.KeepWinner),
                        "the tune's question", seconds=400)
            tuned = app.screen.plan.t.tr
            measured = {r["profile"]: r["output_tok_s"] for r in tuned.results if r["round"] == 1}
            assert len(measured) > 2 and all(not r["errors"] for r in tuned.results), tuned.results
            spec = max(v for k, v in measured.items() if k != "off")
            print(f"T at {lines[0][:120]}...: round 1 {measured}, winner {tuned.winner}")
            assert tuned.winner != "off" and spec > measured["off"], measured  # T agrees with c
            await pilot.press("n")
            await until(pilot, lambda: not dash.running, "the tune's restore", seconds=120)
            assert tuned.restored
    finally:
        source.kill_now()
