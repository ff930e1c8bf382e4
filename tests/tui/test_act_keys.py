"""The keys that change a server (s, [ ], p, R), driven through Textual's Pilot on the simulator
run as a real child and acted on through the real control path (sim_child.py): each plans,
shows the preview, runs only after y, shows the phase while it runs, refuses a second action on
the same host, and ends in a notification; the child's argv and pid, and the audit log, show
what ran."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sim_child import HOST, MTP, OFF, SIZE, acting, unstarted_control
from textual.widgets import Button, Input, OptionList
from tui_helpers import SMALL_LOG, make_app, notes, settle, until

from mtptui.config import load_config
from mtptui.control.audit import read_audit
from mtptui.control.launch import spec_flags
from mtptui.tui.screens.confirm import ConfirmScreen
from mtptui.tui.screens.profiles import ProfilePicker
from mtptui.tui.widgets.action_bar import ActionBar

def flags(n: int) -> list[str]:
    """MTP[n] as the preview's diff says it: one flag with its value a line."""
    return [f"{flag} {value}" for flag, value in zip(MTP[n][::2], MTP[n][1::2])]


def steps(argv: list[str]) -> tuple[str | None, int | None, int | None]:
    f = spec_flags(argv)
    return f["algorithm"], f["num_steps"], f["num_draft_tokens"]


def ran(audit: Path) -> list[tuple]:
    return [(e["action"], e["profile"], e["result"]) for e in read_audit(audit)]


async def preview(pilot, app):
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
    return app.screen.plan


async def apply(pilot, app) -> str:
    """y on the preview, then the action's end: the notification that told it."""
    before = len(notes(app))
    await pilot.press("y")
    await until(pilot, lambda: not app.dash.running, "the action's end")
    told = notes(app)[before:]
    assert len(told) == 1, told
    return told[0][0]


async def test_s_turns_speculation_off_while_the_dashboard_shows_it_then_on_again_as_it_ran(audit):
    async with acting(MTP[2]) as (pilot, app, child):
        pid = child.pid
        await pilot.press("s")
        plan = await preview(pilot, app)
        assert plan.title() == f"{HOST} · simulator: → off"
        assert [text for tag, text in plan.diff_lines() if tag != " "] == flags(2)
        assert all(tag == "-" for tag, _ in plan.diff_lines() if tag != " ")
        assert child.pid == pid and ran(audit) == [], "nothing runs before the answer"
        await pilot.press("y")
        bar = app.screen.query_one(ActionBar)
        shown = re.compile(r"ACTING +restarting gpu1 → off · (lock|restart|wait for ready|verify) 0:\d\d")
        await until(pilot, lambda: shown.search(str(bar.render())), "the phase in the action bar")
        await pilot.press("s")  # a second action on the same host is refused
        assert not isinstance(app.screen, ConfirmScreen)
        assert any(m.startswith("gpu1: one action at a time; under way: restarting gpu1 → off") and sev == "warning"
                   for m, sev in notes(app))
        await until(pilot, lambda: not app.dash.running, "the action's end")
        assert any(re.fullmatch(r"gpu1: off verified: speculation off, \d+ decode batches without accept len", m)
                   and sev == "information" for m, sev in notes(app)), notes(app)
        assert child.pid != pid and steps(child.argv) == (None, None, None)
        await until(pilot, lambda: not bar.display, "the action bar hidden again")

        pid = child.pid
        await pilot.press("s")
        plan = await preview(pilot, app)
        assert plan.title().endswith("→ mtp2"), "the profile it ran, not the default mtp3"
        told = await apply(pilot, app)
        assert re.fullmatch(r"gpu1: mtp2 verified: accept len \d\.\d\d after 3 batches", told), told
        assert child.pid != pid and steps(child.argv) == ("NEXTN", 2, 3)
    assert ran(audit) == [("apply", "off", "applied"), ("apply", "mtp2", "applied")]
    assert read_audit(audit)[-1]["exec_start_after"] == child.argv


async def test_cancelling_the_preview_or_the_picker_runs_nothing(audit):
    async with acting(MTP[3]) as (pilot, app, child):
        pid, argv = child.pid, list(child.argv)
        for first, asked, back in (("s", ConfirmScreen, "n"), ("s", ConfirmScreen, "escape"),
                                   ("p", ProfilePicker, "escape")):
            app.screen._flash = None  # the last answer's flash, gone
            await pilot.press(first)
            await until(pilot, lambda: isinstance(app.screen, asked), asked.__name__)
            await pilot.press(back)
            await until(pilot, lambda: not app.dash.running, "the flow's end")
            assert not isinstance(app.screen, (ProfilePicker, ConfirmScreen)), (first, back)
            flash = app.screen._flash
            assert (flash and flash[0]) == ("gpu1: cancelled, nothing changed" if asked is ConfirmScreen else None)
            assert child.pid == pid and child.argv == argv and child.running and child.starts == 1
    assert ran(audit) == []


async def test_p_picks_a_profile_and_the_child_runs_it(audit):
    async with acting(MTP[3]) as (pilot, app, child):
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ProfilePicker), "the picker")
        options = app.screen.query_one(OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert [p.split()[0] for p in prompts] == ["off", "mtp1", "mtp2", "mtp3"]
        assert "NEXTN steps=2 topk=1 draft=3" in prompts[2] and "runs now" in prompts[3]
        assert options.highlighted == 3  # the one that runs now
        await pilot.press("up", "enter")
        plan = await preview(pilot, app)
        assert plan.profile.name == "mtp2"
        told = await apply(pilot, app)
        assert re.fullmatch(r"gpu1: mtp2 verified: accept len \d\.\d\d after 3 batches", told), told
        assert steps(child.argv) == ("NEXTN", 2, 3)
    assert ran(audit) == [("apply", "mtp2", "applied")]


async def test_shift_r_restarts_the_child_as_it_is(audit):
    async with acting(MTP[3]) as (pilot, app, child):
        pid, argv = child.pid, list(child.argv)
        await pilot.press("R")
        plan = await preview(pilot, app)
        assert plan.title() == "gpu1 · simulator: restart as is" and "  (no change)" in plan.preview_lines()
        told = await apply(pilot, app)
        assert re.fullmatch(r"gpu1: restart verified: accept len \d\.\d\d after 3 batches", told), told
        assert child.pid != pid and child.argv == argv
    assert ran(audit) == [("restart", None, "applied")]


async def test_brackets_step_the_draft_steps_down_and_up(audit):
    async with acting(MTP[3]) as (pilot, app, child):
        for key, want, n in (("left_square_bracket", "mtp2", 2), ("right_square_bracket", "mtp3", 3)):
            await pilot.press(key)
            plan = await preview(pilot, app)
            assert plan.profile.name == want
            assert [text for tag, text in plan.diff_lines() if tag == "+"] == [
                f"--speculative-num-steps {n}", f"--speculative-num-draft-tokens {n + 1}"]
            told = await apply(pilot, app)
            assert told.startswith(f"gpu1: {want} verified: accept len"), told
            assert steps(child.argv) == ("NEXTN", n, n + 1)
    assert ran(audit) == [("apply", "mtp2", "applied"), ("apply", "mtp3", "applied")]


@pytest.mark.parametrize("spec, key, said", [
    (MTP[1], "left_square_bracket", "gpu1: already at 1 step; `s` turns speculation off"),
    (OFF, "right_square_bracket", "gpu1: speculation is off: `s` turns it on, `p` picks a profile"),
], ids=["[ at mtp1", "] with spec off"])
async def test_a_step_that_cannot_be_taken_is_one_line_and_nothing_runs(spec, key, said, audit):
    async with acting(spec) as (pilot, app, child):
        pid = child.pid
        await pilot.press(key)
        await until(pilot, lambda: not app.dash.running, "the flow's end")
        assert (said, "error") in notes(app)
        assert not isinstance(app.screen, ConfirmScreen) and child.pid == pid and child.starts == 1
    assert ran(audit) == []


async def test_a_profile_sglang_would_refuse_is_one_line_and_nothing_runs(tmp_path, audit):
    path = tmp_path / "config.toml"
    path.write_text('[profiles.bad]\nalgorithm = "NEXTN"\nnum_steps = 2\ntopk = 1\nnum_draft_tokens = 5\n')
    async with acting(MTP[3], config=load_config(str(path))) as (pilot, app, child):
        pid = child.pid
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ProfilePicker), "the picker")
        await pilot.press("down", "enter")  # from mtp3, which runs now, to the config's profile
        await until(pilot, lambda: not app.dash.running, "the flow's end")
        assert notes(app) == [("gpu1: profile bad: with topk 1, draft tokens must be steps + 1 "
                               "(SGLang would silently change 5 to 3)", "error")]
        assert not isinstance(app.screen, ConfirmScreen) and child.pid == pid and child.starts == 1
    assert ran(audit) == []


async def test_a_prod_host_runs_only_once_its_name_is_typed(audit):
    async with acting(MTP[3], prod=True) as (pilot, app, child):
        pid = child.pid
        await pilot.press("s")
        plan = await preview(pilot, app)
        screen = app.screen
        assert plan.prod and screen.has_class("-prod") and screen.query_one("#apply", Button).disabled
        await pilot.press("enter")  # not enough on a prod host: no name typed
        assert isinstance(app.screen, ConfirmScreen) and child.pid == pid
        await pilot.press(*HOST)  # the focus starts in the box
        assert screen.query_one("#typed", Input).value == HOST
        await pilot.press("enter")
        await until(pilot, lambda: not app.dash.running, "the action's end")
        assert any(m.startswith("gpu1: off verified") for m, _ in notes(app)), notes(app)
        assert child.pid != pid and steps(child.argv) == (None, None, None)
    assert ran(audit) == [("apply", "off", "applied")]


async def test_a_host_without_control_says_so(tmp_path):
    second = tmp_path / "gpu2.log"
    second.write_text(Path(SMALL_LOG).read_text().replace(" gpu1 ", " gpu2 "))
    app = make_app(SMALL_LOG, str(second), controls={HOST: unstarted_control()})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("tab", "s")
        assert app.dash.host == "gpu2" and not app.dash.running
        assert any("gpu2: mtptui cannot act on this host" in m for m, _ in notes(app))


async def test_a_flow_that_raises_is_told_not_lost():
    # an error in mtptui mid-action is said and kept on screen (the host may be mid-change): the
    # app's handler never saw the screen's workers, so it was lost without a word (issue 42)
    from tui_helpers import make_app

    from mtptui.tui import act

    class Closable:
        async def close(self) -> None:
            pass

    async def boom(app, ctl):
        raise RuntimeError("boom")

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.dash.controls[app.dash.host] = Closable()
        act.start(app.screen, boom)
        await until(pilot, lambda: any("stopped by an error in mtptui" in m for m, _ in notes(app)), "the error told")
        assert (f"act on {app.dash.host} stopped by an error in mtptui: RuntimeError: boom", "error") in notes(app)
        assert not app.dash.running
