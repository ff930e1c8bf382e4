"""The benchmark's results screen on a fixed report (figures from a run on the simulator): a
table per concurrency with the deltas against off and their intervals and the best marked, the bars, where it was
saved; and its snapshot."""

from __future__ import annotations

from textual.widgets import DataTable
from tui_helpers import make_app, settle

from mtptui.tui.screens.results import ResultsScreen


def row(profile, c, tok, req_s, ttft, itl, accept=None, rate=None):
    # the requests' times scatter by about 1% around 64 tokens at the row's rate
    seconds = [round(64 / tok * (1 + 0.01 * ((i * 7) % 5 - 2)), 4) for i in range(8)]
    return {"profile": profile, "concurrency": c, "requests": 8, "output_tok_s": tok, "req_s": req_s,
            "ttft_p50_ms": ttft, "ttft_p99_ms": ttft * 1.6, "ttft_max_ms": ttft * 1.8, "itl_p50_ms": itl,
            "itl_p99_ms": itl * 1.4, "itl_max_ms": itl * 2.5, "errors": 0, "accept_len": accept, "accept_rate": rate,
            "per_request": {"tokens": [64] * 8, "seconds": seconds}}


REPORT = {"host": "simulator", "unit": "simulator", "started": "2026-11-30T13:56:57Z", "restored": True, "results": [
    row("off", 1, 66.8, 1.04, 5.0, 15.2), row("mtp1", 1, 96.8, 1.51, 5.0, 18.8, 1.79, 0.79),
    row("mtp3", 1, 102.7, 1.6, 6.0, 24.3, 2.49, 0.5),
    row("off", 8, 402.4, 6.29, 7.0, 15.9), row("mtp1", 8, 561.5, 8.77, 8.0, 20.1, 1.8, 0.8),
    row("mtp3", 8, 540.2, 8.44, 8.0, 26.6, 2.41, 0.47)]}


def results_app():
    app = make_app()

    async def run_before(pilot):
        await settle(pilot, pilot.app)
        pilot.app.push_screen(ResultsScreen(REPORT, "~/.local/share/mtptui/bench/simulator-20261130-135657.json"))
        await pilot.pause()

    return app, run_before


async def test_each_concurrency_has_its_table_with_the_best_marked():
    app, run_before = results_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await run_before(pilot)
        tables = list(app.screen.query(DataTable))
        rows = [[t.get_row_at(i) for i in range(t.row_count)] for t in tables]
        assert [[r[1] for r in t] for t in rows] == [["off", "mtp1", "mtp3"]] * 2
        assert [r[0] for r in rows[0]] == ["", "", "★"] and [r[0] for r in rows[1]] == ["", "★", ""]
        assert rows[1][1][3] == "+39.5%" and rows[0][0][13] == "-" and rows[0][2][13] == "2.49"
        assert rows[1][1][4].startswith("+") and " to +" in rows[1][1][4]  # its 95% interval
        verdicts = [str(v.render()) for v in app.screen.query(".verdict")]
        assert verdicts[0].startswith("★ mtp3 ahead of mtp1: +6.1%") and verdicts[1].startswith("★ mtp1 ahead of mtp3")
        await pilot.press("escape")
        assert not isinstance(app.screen, ResultsScreen)


def test_results_screen(snap_compare):
    app, run_before = results_app()
    assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)
