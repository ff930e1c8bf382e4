"""--read-only: the keys that change a server do not exist (footer, help, palette), pressing them
does nothing, and the status bar says READ-ONLY. c and a stay: they only read."""

from __future__ import annotations

import pytest
from sim_child import unstarted_control
from textual.command import CommandPalette
from textual.widgets._footer import FooterKey
from tui_helpers import make_app, notes, settle

from mtptui.tui.screens.compare import CompareScreen
from mtptui.tui.screens.help import HelpScreen
from mtptui.tui.widgets.status_bar import StatusBar

SIZE = (160, 48)
ACTING = ["s", "left_square_bracket", "right_square_bracket", "p", "R"]


def footer(app) -> list[str]:
    return [k.description for k in app.screen.query(FooterKey)]


async def palette_names(pilot, query: str) -> list[str]:
    await pilot.press("ctrl+p")
    await pilot.press(*query)
    await pilot.pause(0.3)
    from textual.command import CommandList

    names = [str(o.prompt) for o in pilot.app.screen.query_one(CommandList).options]
    await pilot.press("escape")
    return names


async def help_text(pilot) -> str:
    await pilot.press("question_mark")
    assert isinstance(pilot.app.screen, HelpScreen)
    text = str(pilot.app.screen.query_one("Static").render())
    await pilot.press("escape")
    return text


@pytest.mark.parametrize("read_only", [False, True])
async def test_acting_keys_exist_only_without_read_only(read_only, audit):
    ctl = unstarted_control("gpu1")
    app = make_app(read_only=read_only, controls={"gpu1": ctl})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        keys = footer(app)
        assert "compare" in keys
        assert ("spec" in keys) is not read_only and ("profile" in keys) is not read_only
        text = await help_text(pilot)
        assert "compare" in text and "audit" in text
        assert all((bid in text) is not read_only for bid in ("spec_toggle", "spec_step_down", "spec_step_up",
                                                               "profiles", "restart "))
        assert ("READ-ONLY" in text) is read_only
        names = await palette_names(pilot, "spec")
        assert ("Speculation on/off" in " ".join(names)) is not read_only
        assert ("READ-ONLY" in str(app.screen.query_one(StatusBar).render())) is read_only
        if read_only:
            await pilot.press(*ACTING)
            await pilot.pause()
            assert app.screen is app.screen_stack[0] and not app.dash.running and notes(app) == []
            assert ctl.target.source.starts == 0 and not audit.exists(), "nothing ran"
            assert not CommandPalette.is_open(app)
            await pilot.press("c")
            assert isinstance(app.screen, CompareScreen)


async def test_a_replay_has_no_acting_keys_and_no_read_only_badge():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert "spec" not in footer(app) and "compare" in footer(app)
        assert "READ-ONLY" not in str(app.screen.query_one(StatusBar).render())
        assert "only reads logs" in await help_text(pilot)
        await pilot.press("s")
        assert not app.dash.running
