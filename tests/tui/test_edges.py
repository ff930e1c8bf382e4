"""The edges of a session: the end of a replay, a live host that cannot be reached."""

from __future__ import annotations

import asyncio

import pytest
from tui_helpers import make_app, settle

from mtptui.config import parse_config
from mtptui.tui.widgets.status_bar import StatusBar

SIZE = (120, 36)


def status_text(app) -> str:
    return str(app.screen.query_one(StatusBar).render())


@pytest.mark.parametrize("keys, key_shown", [("", "←"), ('[keys]\nseek_back = "h"\n', "h")])
async def test_after_the_end_left_seeks_back_from_the_end_at_once(keys, key_shown):
    # small.log spans four minutes: at 1000x it ends in a quarter of a second
    app = make_app(speed=1000.0, window="1m", config=parse_config(keys) if keys else None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        tl = app.dash.timeline
        end = tl.newest()
        await asyncio.sleep(0.5)  # wall time goes on: at 1000x, 500 log seconds past the end
        await pilot.press(*["minus"] * 7)  # down to 1x, to look at the end closely
        assert app.dash.replay.speed == 1.0
        assert tl.playhead() == end
        assert f"REPLAY ended; {key_shown} to seek" in status_text(app)
        await pilot.press("h" if keys else "left")
        # at 1x the replay plays on from there: a fraction of a second, not the 6 s step
        assert tl.playhead() == pytest.approx(end - tl.step(), abs=1.0), "one step back from the end"
        assert "REPLAY playing 1x" in status_text(app)
