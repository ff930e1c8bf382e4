"""T on the simulator run as a real child (sim_child.py): the preview lists every candidate with
the budget and the grid's count; Cancel changes nothing; y runs the rounds with the round in the
action bar, then the results screen shows each round and the winner under the question whether
to keep it: n restores the child, y leaves the winner applied. T again stops the tune and the
child is restored. (A read-only session has no T: test_prove_keys.py.)"""

from __future__ import annotations

import re

import pytest
from sim_child import HOST, MTP, acting
from textual.widgets import DataTable, Static
from tui_helpers import notes, until

from mtptui.config import Config
from mtptui.control.audit import read_audit
from mtptui.control.plan import APPLY
from mtptui.control.profiles import Profile
from mtptui.tui import prove
from mtptui.tui.screens.confirm import ConfirmScreen
from mtptui.tui.screens.results import ResultsScreen
from mtptui.tui.widgets.action_bar import ActionBar


@pytest.fixture
def short_tune(monkeypatch, tmp_path):
    # off and mtp1, with mtp1's neighbourhood: one round (the budget is spent after it)
    monkeypatch.setattr(prove, "TUNE_PROFILES", ("off", "mtp1"))
    monkeypatch.setattr(prove, "TUNE_REQUESTS", 3)
    monkeypatch.setattr(prove, "TUNE_MAX_TOKENS", 16)
    monkeypatch.setattr(prove, "TUNE_BUDGET_S", 6.0)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


# two candidates: off and a tree, which has no neighbourhood (prove.tune varies chains only)
TREE = Config(profiles={"tree": Profile("tree", algorithm="NEXTN", num_steps=1, topk=2, num_draft_tokens=2)})


@pytest.fixture
def two(short_tune, monkeypatch):
    monkeypatch.setattr(prove, "TUNE_PROFILES", ("off", "tree"))


def ready(app) -> bool:
    """Served: the ready line and a decode line (its #running-req is the concurrency tuned for)."""
    return (any(ev.kind == "ready" for ev in app.dash.store.events)
            and any(len(s.decode) for s in app.dash.store.ranks(HOST)))


def question(app) -> bool:
    return isinstance(app.screen, ConfirmScreen) and isinstance(app.screen.plan, prove.KeepWinner)


async def preview(pilot, app) -> str:
    await until(pilot, lambda: ready(app), "the ready line")
    await pilot.press("T")
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
    return "\n".join(app.screen.plan.preview_lines())


async def test_t_previews_every_candidate_and_cancel_changes_nothing(short_tune, audit):
    async with acting(MTP[1]) as (pilot, app, source):
        before = list(source.argv)
        text = await preview(pilot, app)
        head = text.splitlines()[0]
        # its own requests one at a time on top of the load the log shows (the child's steady
        # traffic goes on): measured at that load, not at twice it
        m = re.match(r"tune: (\d+) candidates at concurrency (1) \(one at a time, on top of the (\d+) running that "
                     r"its log shows, the median #running-req of \d+ decode lines in its log's last 60 s\); "
                     r"(\d+) requests each in the first round", head)
        assert m and int(m[3]) > 1, head
        # TUNE_REQUESTS (3) or, where more run at once, the concurrency: fewer never have it in flight
        assert int(m[4]) == max(3, int(m[2])), head
        assert "budget 0.1 min" in head and re.search(r"a grid would measure \d+ points", head)
        n = int(head.split()[1])
        candidates = app.screen.plan.profiles
        # the one the server runs (mtp1) first: it is measured without a restart
        assert len(candidates) == n and n > 2 and [p.name for p in candidates[:2]] == ["mtp1", "off"]
        # every candidate on a line of its settings (the whole list in one screen), the diffs below
        listed = text.split("the candidates, in the order the first round runs them:\n", 1)[1].split("\n\n")[0]
        assert [line.split()[0] for line in listed.splitlines()] == [p.name for p in candidates] + ["restore"]
        assert all(re.fullmatch(r"  \S+ +(spec off|NEXTN steps=\d topk=\d draft=\d)( .*)?", line)
                   for line in listed.splitlines()[:-1]), listed
        # round 1 restarts for every candidate the server does not run, whatever the budget, at the cost
        # of a start as the log measured it (issue 42): the child's own, from its start to its ready line
        changed = n - listed.count("(no change: no restart)")
        restarts = text.splitlines()[1]
        assert re.match(rf"restarts: round 1 restarts the server {changed} times whatever the budget, "
                        r"about [\d.]+ s at its last start \([\d.]+ s, Started → ready\); then one per", restarts), restarts
        await pilot.press("n")
        await until(pilot, lambda: not app.dash.running, "the cancel")
        assert source.argv == before and not audit.exists()


async def test_t_runs_the_rounds_and_no_restores_the_child(two, audit, tmp_path):
    async with acting(MTP[1], config=TREE) as (pilot, app, source):
        before = list(source.argv)
        await preview(pilot, app)
        await pilot.press("y")
        bar = app.screen.query_one(ActionBar)
        await until(pilot, lambda: "tune gpu1" in str(bar.render()) and "round 1, 1 of 2: off" in str(bar.render()),
                    "the round in the action bar")
        await until(pilot, lambda: question(app), "the question", seconds=180)
        winner = app.screen.plan.t.tr.winner
        assert app.screen.plan.title().endswith(f"apply the winner {winner}?")
        results = app.screen_stack[-2]
        assert isinstance(results, ResultsScreen)
        assert [str(s.render()) for s in results.query(".title")][0].startswith("round 1: ")
        assert len(results.query(DataTable)) == 1
        ending = str(results.query_one("#ending", Static).render())
        assert ending.startswith(f"winner: {winner} (") and " points (" in ending
        await pilot.press("n")
        subtitle = lambda: results.query_one("Vertical").border_subtitle  # noqa: E731
        await until(pilot, lambda: subtitle() == "restoring the host as it was found", "the answer on the screen")
        await until(pilot, lambda: not app.dash.running, "the restore", seconds=120)
        assert subtitle() == "restored as found"
        assert app.screen is results and str(results.query_one("#ending", Static).render()).endswith("host: restored")
        assert source.argv == before
        assert list((tmp_path / "data" / "mtptui" / "bench").glob("tune-gpu1-*.json"))
    tune = [e for e in read_audit(audit) if e["action"] == "tune"]
    assert tune[-1]["result"] == "done" and tune[-1]["restored"] is True


async def test_t_yes_leaves_the_winner_applied(two, audit):
    async with acting(MTP[1], config=TREE) as (pilot, app, source):
        await preview(pilot, app)
        await pilot.press("y")
        await until(pilot, lambda: question(app), "the question", seconds=180)
        t = app.screen.plan.t
        await pilot.press("y")
        await until(pilot, lambda: not app.dash.running, "the winner kept", seconds=120)
        winner = next(p for p in t.profiles if p.name == t.tr.winner)
        assert t.tr.kept == winner.name and not (await t.hc.plan(APPLY, winner)).changes
        assert any(m.startswith(f"gpu1: tune winner {winner.name}") and "as accepted" in m for m, _ in notes(app))


async def test_t_again_stops_the_tune_and_the_child_is_restored(short_tune, monkeypatch, audit):
    monkeypatch.setattr(prove, "TUNE_REQUESTS", 200)
    async with acting(MTP[1]) as (pilot, app, source):  # off, the first candidate, changes it
        before = list(source.argv)
        await preview(pilot, app)
        await pilot.press("y")
        running = lambda: app.dash.running.get(HOST)  # noqa: E731
        await until(pilot, lambda: running() and running().phase == "measure"
                    and running().detail.startswith("round 1, 1 of "), "off measured")
        await pilot.press("T")
        await until(pilot, lambda: not app.dash.running, "the tune's end", seconds=120)
        assert any("stopping the tune" in m for m, _ in notes(app))
        assert source.argv == before
    tune = [e for e in read_audit(audit) if e["action"] == "tune"]
    assert tune[0]["result"] == "interrupted" and tune[0]["restored"] is True

