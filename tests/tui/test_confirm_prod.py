"""The prod confirmation (issue 17): the box for the host's name has the focus when the modal
opens, text typed anywhere in the modal goes into the box (never dropped, and an `n` in a host's
name never cancels), and the hint says what is true."""

from __future__ import annotations

from sim_child import planned
from textual.widgets import Button, Input, Static
from tui_helpers import make_app, settle

from mtptui.tui.screens.confirm import ConfirmScreen

SIZE = (160, 48)
HOST = "gpu-prod-ny"


async def open_prod(pilot) -> list:
    answers: list = []
    pilot.app.push_screen(ConfirmScreen(await planned(host=HOST, prod=True)), answers.append)
    await pilot.pause()
    return answers


async def test_the_box_is_focused_at_open_and_the_name_typed_at_once_applies():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        answers = await open_prod(pilot)
        screen = app.screen
        box = screen.query_one("#typed", Input)
        assert app.focused is box
        await pilot.press("enter")  # a stray Enter on the empty box changes nothing
        assert answers == [] and isinstance(app.screen, ConfirmScreen)
        await pilot.press(*HOST)
        assert box.value == HOST and not screen.query_one("#apply", Button).disabled
        await pilot.press("enter")
        assert answers == [True]


async def test_text_typed_with_the_focus_elsewhere_goes_into_the_box():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        answers = await open_prod(pilot)
        screen = app.screen
        box = screen.query_one("#typed", Input)
        for elsewhere in ("#cancel", "#preview"):
            box.value = ""
            screen.query_one(elsewhere).focus()
            await pilot.pause()
            await pilot.press(*HOST)  # n and y are letters of the name here, not cancel and apply
            assert box.value == HOST and answers == [], elsewhere
            assert app.focused is box
        await pilot.press("enter")
        assert answers == [True]


async def test_one_tab_from_the_box_reaches_a_button_and_escape_cancels():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        answers = await open_prod(pilot)
        screen = app.screen
        await pilot.press("tab")
        assert app.focused is screen.query_one("#cancel", Button)
        await pilot.press("escape")
        assert answers == [False]


async def test_the_prod_hint_says_what_is_true():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await open_prod(pilot)
        hint = str(app.screen.query_one("#hint", Static).render())
        assert "Tab to the box" not in hint and HOST in hint and "Esc" in hint
        assert "n or Esc" not in hint  # n is a letter of the name in the box
