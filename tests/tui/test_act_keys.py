"""The keys that change a server (s, p, R), driven through Textual's Pilot: each plans, shows the
preview, runs only after y, shows the phase while it runs, refuses a second action on the same
host, and ends in a notification. The control is kept in memory (standin.py); the demo test
drives the real control path on the simulator."""

from __future__ import annotations

from pathlib import Path

from standin import MTP3_ON, StandInControl
from textual.widgets import OptionList
from tui_helpers import SMALL_LOG, make_app, settle

from mtptui.control.errors import ControlError
from mtptui.tui.screens.confirm import ConfirmScreen
from mtptui.tui.screens.profiles import ProfilePicker
from mtptui.tui.widgets.action_bar import ActionBar

SIZE = (160, 48)


async def until(pilot, cond, what: str, limit: int = 500) -> None:
    for _ in range(limit):
        if cond():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"never: {what}")


def notes(app) -> list[tuple[str, str]]:
    return [(n.message, n.severity) for n in app._notifications]


async def test_s_turns_speculation_on_after_the_preview_and_shows_the_phase():
    ctl = StandInControl("gpu1")
    app = make_app(controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        assert app.screen.plan.title() == "gpu1 · sglang.service: → mtp3"
        assert not ctl.executed, "nothing runs before the answer"
        await pilot.press("y")
        await until(pilot, lambda: ctl.executed, "execute")
        await pilot.pause(0.1)  # a tick draws the action bar
        bar = app.screen.query_one(ActionBar)
        assert bar.display and "restarting gpu1 → mtp3 · wait for ready 0:0" in str(bar.render())
        await pilot.press("s")  # a second action on the same host is refused
        assert len(ctl.executed) == 1 and not isinstance(app.screen, ConfirmScreen)
        assert any("one action at a time" in m and sev == "warning" for m, sev in notes(app))
        await pilot.press("q")  # quitting mid-restart asks once more
        assert app.is_running and any("q again quits" in m for m, _ in notes(app))
        ctl.gate.set()
        await until(pilot, lambda: not app.dash.running, "the end of the action")
        assert ("gpu1: mtp3 verified: accept len 2.41 after 3 batches", "information") in notes(app)
        await until(pilot, lambda: not bar.display, "the action bar hidden again")
        await pilot.press("q")
    assert ctl.closed, "the app closes its controls when it ends"


async def test_s_on_a_host_with_speculation_turns_it_off():
    ctl = StandInControl("gpu1", settings=MTP3_ON)
    app = make_app(controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        assert app.screen.plan.title().endswith("→ off")
        assert any(tag == "-" for tag, _ in app.screen.plan.diff_lines())


async def test_n_cancels_and_nothing_runs():
    ctl = StandInControl("gpu1")
    app = make_app(controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        await pilot.press("n")
        await until(pilot, lambda: not app.dash.running, "the flow's end")
        assert not ctl.executed and "cancelled, nothing changed" in app.screen._flash[0]


async def test_p_picks_a_profile_then_previews_it():
    ctl = StandInControl("gpu1", settings=MTP3_ON)
    app = make_app(controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ProfilePicker), "the picker")
        options = app.screen.query_one(OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert [p.split()[0] for p in prompts] == ["off", "mtp1", "mtp2", "mtp3"]
        assert "NEXTN steps=2 topk=1 draft=3" in prompts[2] and "runs now" in prompts[3]
        assert options.highlighted == 3  # the one that runs now
        await pilot.press("up", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        assert app.screen.plan.profile.name == "mtp2"


async def test_p_then_escape_backs_out():
    ctl = StandInControl("gpu1")
    app = make_app(controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("p")
        await until(pilot, lambda: isinstance(app.screen, ProfilePicker), "the picker")
        await pilot.press("escape")
        await until(pilot, lambda: not app.dash.running, "the flow's end")
        assert not ctl.executed and not isinstance(app.screen, (ProfilePicker, ConfirmScreen))


async def test_shift_r_restarts_as_is_after_the_preview():
    ctl = StandInControl("gpu1")
    app = make_app(controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        assert app.screen.plan.title().endswith("restart as is")
        await pilot.press("y")
        ctl.gate.set()
        await until(pilot, lambda: not app.dash.running, "the end of the action")
        assert ctl.executed[0].action == "restart"
        assert any(m.startswith("gpu1: restart verified") for m, _ in notes(app))


async def test_a_control_error_is_one_line_and_nothing_runs():
    ctl = StandInControl("gpu1")
    ctl.plan_error = ControlError("gpu1: sudo: a password is required (set NOPASSWD for systemctl)")
    app = make_app(controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("s")
        await until(pilot, lambda: not app.dash.running, "the flow's end")
        assert ("gpu1: sudo: a password is required (set NOPASSWD for systemctl)", "error") in notes(app)
        assert not ctl.executed and not isinstance(app.screen, ConfirmScreen)


async def test_a_host_without_control_says_so(tmp_path):
    second = tmp_path / "gpu2.log"
    second.write_text(Path(SMALL_LOG).read_text().replace(" gpu1 ", " gpu2 "))
    ctl = StandInControl("gpu1")
    app = make_app(SMALL_LOG, str(second), controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("tab", "s")
        assert app.dash.host == "gpu2" and not app.dash.running
        assert any("gpu2: mtptui cannot act on this host" in m for m, _ in notes(app))


async def test_brackets_step_the_draft_steps_down_and_up():
    ctl = StandInControl("gpu1", settings=MTP3_ON)
    app = make_app(controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        for key, want in (("left_square_bracket", "mtp2"), ("right_square_bracket", "mtp4")):
            await pilot.press(key)
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
            profile = app.screen.plan.profile
            assert profile.name == want and profile.num_draft_tokens == profile.num_steps + 1
            await pilot.press("escape")
            await until(pilot, lambda: not app.dash.running, "the flow's end")
        assert not ctl.executed


async def test_a_bracket_with_speculation_off_says_why_in_one_line():
    ctl = StandInControl("gpu1")
    app = make_app(controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: not app.dash.running, "the flow's end")
        assert ("gpu1: speculation is off: `s` turns it on, `p` picks a profile", "error") in notes(app)
        assert not isinstance(app.screen, ConfirmScreen) and not ctl.executed
