"""The preview modal: focus starts on Cancel, y applies, n and Escape cancel, a prod host needs
its name typed, and the flag diff is coloured."""

from __future__ import annotations

import pytest
from sim_child import planned
from textual.widgets import Button, Input, Static
from tui_helpers import make_app, settle

from mtptui.tui.screens.confirm import ConfirmScreen

SIZE = (160, 48)


async def open_modal(pilot, plan) -> list:
    answers: list = []
    pilot.app.push_screen(ConfirmScreen(plan), answers.append)
    await pilot.pause()
    return answers


async def test_focus_starts_on_cancel_and_enter_there_cancels():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        answers = await open_modal(pilot, await planned())
        assert isinstance(app.screen, ConfirmScreen)
        assert app.focused is app.screen.query_one("#cancel", Button)
        await pilot.press("enter")
        assert answers == [False] and not isinstance(app.screen, ConfirmScreen)


async def test_y_confirms():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        answers = await open_modal(pilot, await planned())
        await pilot.press("y")
        assert answers == [True]


@pytest.mark.parametrize("key", ["n", "escape"])
async def test_n_and_escape_cancel(key):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        answers = await open_modal(pilot, await planned())
        await pilot.press(key)
        assert answers == [False]


async def test_the_apply_button_applies():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        answers = await open_modal(pilot, await planned())
        await pilot.click("#apply")
        assert answers == [True]


async def test_a_prod_host_needs_its_name_typed():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        answers = await open_modal(pilot, await planned(host="gpu-prod-ny", prod=True))
        screen = app.screen
        apply = screen.query_one("#apply", Button)
        box = screen.query_one("#typed", Input)
        assert app.focused is box and apply.disabled  # prod: the focus starts in the box
        await pilot.press("enter")  # not yet: nothing typed
        assert answers == [] and isinstance(app.screen, ConfirmScreen)
        assert "type gpu-prod-ny exactly" in str(screen.query_one("#hint", Static).render())
        await pilot.press(*"gpu-prod-n")  # y and n go into the box, not to the bindings
        assert box.value == "gpu-prod-n" and answers == [] and apply.disabled
        await pilot.press("enter")  # a wrong name does not apply
        assert answers == []
        await pilot.press("y")
        assert box.value == "gpu-prod-ny" and not apply.disabled and answers == []
        await pilot.press("enter")
        assert answers == [True]


async def test_the_preview_shows_the_commands_and_colours_the_diff():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        plan = await planned()
        await open_modal(pilot, plan)
        content = app.screen.query_one("#preview Static", Static).visual
        text = content.plain
        assert text == "\n".join(plan.preview_lines()) and "\n  kill -TERM PID\n" in text
        added = [s for s in content.spans if text[s.start:s.end].lstrip().startswith("+")]
        assert len(added) == 4 and all("success" in str(s.style) for s in added)


class _LongPreview:
    """A preview as long as a tune's (13 candidates, then each one's flag diff)."""

    def __init__(self, prod: bool) -> None:
        self.host, self.prod = "gpu1", prod

    def title(self) -> str:
        return "tune gpu1"

    def preview_lines(self) -> list[str]:
        return [f"  candidate {i}: NEXTN steps={i} topk=1" for i in range(60)]


@pytest.mark.parametrize("prod", [False, True], ids=["plain", "prod"])
@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_long_preview_scrolls_and_leaves_the_buttons_and_hint_on_screen(size, prod):
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await open_modal(pilot, _LongPreview(prod))
        await pilot.pause()
        screen = app.screen
        for sel in ("#apply", "#cancel", "#hint") + (("#typed",) if prod else ()):
            r = screen.query_one(sel).region
            assert r.height >= 1 and 0 <= r.y and r.bottom <= size[1] - 1, (sel, r)  # inside the border too
        assert screen.query_one("#preview").max_scroll_y > 0  # the rest is a scroll away
