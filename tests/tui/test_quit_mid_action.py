"""Quitting the dashboard while it changes a host (issue 42): as `mtptui spec` on ctrl-c, the
action stops and the host is put back as it was, verified, before the dashboard leaves, saying so
on screen and after it (exit 130); a second q asks, and "y" leaves the host where it stands (exit
4). On the simulator run as a real child (sim_child.py), held in a phase by MTPTUI_TEST_HOLD."""

from __future__ import annotations

import pytest
from sim_child import MTP, acting
from tui_helpers import notes, until

from mtptui.control.audit import read_audit
from mtptui.control.launch import spec_flags
from mtptui.control.restart import HOLD_ENV
from mtptui.tui.screens.confirm import ConfirmScreen


async def held(pilot, app, phase: str) -> None:
    """s, y: the action under way, held in `phase` (MTPTUI_TEST_HOLD)."""
    await pilot.press("s")
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
    await pilot.press("y")
    await until(pilot, lambda: any("held here" in r.detail for r in app.dash.running.values()), f"held at {phase}")


async def left(pilot, app) -> None:
    try:
        await until(pilot, lambda: app.return_code is not None, "the dashboard leaving", seconds=120)
    except AssertionError:
        running = [(r.phase, r.detail, r.stopping) for r in app.dash.running.values()]
        raise AssertionError(f"never left: under way {running}; told {notes(app)}") from None


@pytest.mark.parametrize("key", ["q", "ctrl+c"])
async def test_quitting_mid_action_puts_the_host_back_verified_then_leaves(audit, monkeypatch, key):
    monkeypatch.setenv(HOLD_ENV, "wait")
    async with acting(MTP[2]) as (pilot, app, child):
        before = list(child.argv)
        await held(pilot, app, "wait")
        assert spec_flags(child.argv)["algorithm"] is None  # off is starting: the host is changed
        await pilot.press(key)
        why = {"q": "q", "ctrl+c": "ctrl-c"}[key]
        assert any(m.startswith(f"{why}: stopping restarting gpu1 → off; putting the host back as it was, verified")
                   for m, _ in notes(app)), notes(app)
        await left(pilot, app)
        assert app.return_code == 130
        said = app.dash.quitting.said
        assert len(said) == 1 and said[0].startswith(f"gpu1: off stopped: interrupted ({why}) at wait; put back as it "
                                                     "was: "), said
        assert any(m == said[0] for m, _ in notes(app)), "said on screen before leaving"
        assert child.argv == before and child.running
    last = read_audit(audit)[-1]
    assert (last["profile"], last["result"], last.get("restored"), last.get("verified")) == \
        ("off", "interrupted", True, "before")


async def test_quitting_with_nothing_under_way_leaves_at_once(audit):
    async with acting(MTP[2]) as (pilot, app, child):
        await pilot.press("q")
        await left(pilot, app)
        assert app.return_code == 0 and app.dash.quitting.said == []
    assert read_audit(audit) == []


async def test_a_second_q_asks_and_y_leaves_the_host_as_it_stands(audit, monkeypatch):
    monkeypatch.setenv(HOLD_ENV, "wait,rollback_wait")  # the put-back held too: the question comes while it runs
    async with acting(MTP[2]) as (pilot, app, child):
        await held(pilot, app, "wait")
        await pilot.press("q")
        await until(pilot, lambda: any("held here" in r.detail and r.phase == "rollback_wait"
                                       for r in app.dash.running.values()), "the put-back held at its wait")
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        lines = app.screen.plan.preview_lines()
        assert lines[0].startswith("stopping at once would leave gpu1 · simulator at rollback_wait, being put back"), lines
        await pilot.press("n")  # goes on putting it back ...
        assert app.return_code is None and app.dash.running
        await pilot.press("q")  # ... and the next asks again
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question again")
        await pilot.press("y")
        await left(pilot, app)
        assert app.return_code == 4
        assert app.dash.quitting.said[-1].startswith("left as it stands: gpu1 · simulator at rollback_wait"), \
            app.dash.quitting.said
    last = read_audit(audit)[-1]
    assert (last["result"], last["restored"]) == ("interrupted", False), last
