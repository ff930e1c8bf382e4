"""The benchmark's results screen on a fixed report (figures from a run on the simulator): a
table per concurrency with the deltas against off and their intervals and the best marked, the
per-request acceptance where the server reported it, the bars, where it was saved; and its
snapshot. The tune's: a table per round, what each dropped, the winner and the counts; opened
before the end (the host not yet restored), then told the end; and its snapshot."""

from __future__ import annotations

from textual.widgets import DataTable
from textual.widgets import Static
from tui_helpers import make_app, settle

from mtptui.prove.results import ACCEPTANCE
from mtptui.tui.screens.results import Bars, ResultsScreen


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


def accepted(r, p10, p50, p90):
    return {**r, ACCEPTANCE: {"requests": 8, "p10": p10, "p50": p50, "p90": p90,
                              "by_category": {"code": {"requests": 4, "p10": p90 - 0.2, "p50": p90, "p90": p90 + 0.1},
                                              "chat": {"requests": 4, "p10": p10, "p50": p10 + 0.1, "p90": p50}}}}


def in_round(r, k, requests=8):
    return {**r, "round": k, "requests": requests}


# a tune at concurrency 8 (figures shaped as the simulator's): off clearly worse in round 1,
# mtp1 and mtp3 not separated in round 2, where the budget was spent
TUNE = {"host": "simulator", "unit": "simulator", "started": "2026-12-02T19:05:00Z", "prompts": {},
        "concurrency": 8, "concurrency_from": "the median #running-req of the 96 decode lines in its log's last 60 s",
        "budget_s": 300.0, "grid": 19, "winner": "mtp3", "separated": False, "stopped": "budget spent",
        "restored": False, "kept": None,
        "candidates": [{"profile": n} for n in ("off", "mtp1", "mtp3")],
        "rounds": [{"round": 1, "requests": 8, "candidates": ["off", "mtp1", "mtp3"], "leader": "mtp1",
                    "dropped": {"off": "clearly worse than mtp1: -28.3% (-29.1% to -27.4%, 95%)"}},
                   {"round": 2, "requests": 16, "candidates": ["mtp3", "mtp1"], "leader": "mtp3", "dropped": {}}],
        "results": [in_round(row("off", 8, 402.4, 6.29, 7.0, 15.9), 1),
                    in_round(accepted(row("mtp1", 8, 561.5, 8.77, 8.0, 20.1, 1.8, 0.8), 1.51, 1.79, 1.95), 1),
                    in_round(accepted(row("mtp3", 8, 557.9, 8.72, 8.0, 26.6, 2.41, 0.47), 1.54, 2.28, 3.05), 1),
                    in_round(accepted(row("mtp3", 8, 563.0, 8.80, 8.0, 25.9, 2.45, 0.48), 1.56, 2.31, 3.02), 2, 16),
                    in_round(accepted(row("mtp1", 8, 559.8, 8.75, 8.0, 20.2, 1.79, 0.79), 1.50, 1.80, 1.96), 2, 16)]}
TUNE["points"] = 5


def results_app(report=REPORT, saved="~/.local/share/mtptui/bench/simulator-20261130-135657.json"):
    app = make_app()

    async def run_before(pilot):
        await settle(pilot, pilot.app)
        pilot.app.push_screen(ResultsScreen(report, saved))
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


async def test_each_profile_s_acceptance_per_request_is_under_its_table():
    report = {**REPORT, "results": [accepted(r, 1.54, 2.28, 3.05) if r["profile"] == "mtp3" else r
                                    for r in REPORT["results"]]}
    app, run_before = results_app(report)
    async with app.run_test(size=(160, 48)) as pilot:
        await run_before(pilot)
        lines = [str(s.render()).splitlines() for s in app.screen.query(".acceptance")]
        assert len(lines) == 2 and lines[0][0].startswith("accept len per request")
        assert lines[0][1].split() == ["mtp3", "p10", "1.54", "p50", "2.28", "p90", "3.05", "(log", "2.49)",
                                       "code", "3.05", "(4)", "chat", "1.64", "(4)"]


async def test_a_tune_shows_its_rounds_and_winner_then_its_end():
    app, run_before = results_app(TUNE, "")
    async with app.run_test(size=(160, 48)) as pilot:
        await run_before(pilot)
        screen = app.screen
        titles = [str(s.render()) for s in screen.query(".title")]
        assert titles == ["round 1: 3 candidates, 8 requests each", "round 2: 2 candidates, 16 requests each"]
        tables = list(screen.query(DataTable))
        assert [[t.get_row_at(i)[1] for i in range(t.row_count)] for t in tables] == [["off", "mtp1", "mtp3"],
                                                                                     ["mtp3", "mtp1"]]
        assert any("dropped off: clearly worse than mtp1" in str(s.render()) for s in screen.query(".verdict"))
        ending = lambda: str(screen.query_one("#ending", Static).render()).splitlines()  # noqa: E731
        assert ending()[0] == "winner: mtp3 (not separated; stopped: budget spent)"
        assert ending()[1].startswith("measured 5 points (3 settings over 2 rounds, 56 requests)")
        assert len(ending()) == 2 and "not yet restored" in screen.query_one("Vertical").border_subtitle
        screen.finish({**TUNE, "restored": True}, "/data/tune-simulator-20261202-190500.json")
        await pilot.pause()
        assert ending()[2] == "host: restored" and screen.query_one("Vertical").border_subtitle == "restored as found"
        assert str(screen.query_one("#hint", Static).render()).startswith("saved: /data/tune-simulator-")


async def test_a_tune_stopped_in_its_first_round_says_so_without_a_chart():
    stopped = {**TUNE, "rounds": [], "results": TUNE["results"][:1], "winner": None, "stopped": "", "restored": True,
               "points": 1}
    app, run_before = results_app(stopped, "/data/tune-simulator-20261202-190500.json")
    async with app.run_test(size=(160, 48)) as pilot:
        await run_before(pilot)
        screen = app.screen
        assert str(screen.query_one("#ending", Static).render()).splitlines()[:2] == [
            "winner: none (no round finished)",
            "no round finished: 1 of 3 settings measured in the first; a grid over the same steps, topk and draft "
            "tokens: 19 points"]
        assert not screen.query(Bars) and not screen.query(DataTable)


async def test_a_tune_for_a_schedule_has_a_table_per_load_and_the_schedule_at_its_end():
    from mtptui.config.profile import Profile
    from mtptui.prove import schedule

    loads = [in_round(row("off", 64, 2400.0, 37.5, 9.0, 26.0), 1), in_round(row("mtp1", 64, 1900.0, 29.7, 9.0, 33.0), 1),
             in_round(row("mtp3", 64, 1500.0, 23.4, 9.0, 42.0), 1)]
    report = {**TUNE, "rounds": TUNE["rounds"][:1], "results": TUNE["results"][:3] + loads, "restored": True}
    candidates = [Profile("off"), Profile("mtp1", "NEXTN", 1, 1, 2), Profile("mtp3", "NEXTN", 3, 1, 4)]
    report["schedule"] = schedule.propose(report["results"], candidates, 8, "sglang", (0, 5, 16))
    app, run_before = results_app(report, "/data/tune-simulator-20261202-190500.json")
    async with app.run_test(size=(160, 48)) as pilot:
        await run_before(pilot)
        screen = app.screen
        assert [str(s.render()) for s in screen.query(".title")] == [
            f"round 1: 3 candidates, 8 requests each (at a higher concurrency, as many as it has in flight) · "
            f"concurrency {c}" for c in (8, 64)]
        assert [t.get_row_at(0)[0] for t in screen.query(DataTable)] == ["", "★"]  # off separated at 64 only
        ending = str(screen.query_one("#ending", Static).render())
        assert "c=64   batch 23-64    K 0 (off)" in ending and "adaptive tiers: 0, 1" in ending


def test_tune_results_screen(snap_compare):
    app, run_before = results_app({**TUNE, "kept": "mtp3"}, "~/.local/share/mtptui/bench/tune-simulator-20261202-190500.json")
    assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)
