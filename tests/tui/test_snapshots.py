"""SVG snapshots of the main screen on the committed sample log, at 160x48 and 100x30.

Deterministic: the log is replayed at full speed to its end before the shot, the wall clock is
frozen (no lines/s, no clock on screen), nothing random. Update with `pytest --snapshot-update`
and look at the SVGs (tests/tui/__snapshots__/) before committing them.
"""

from __future__ import annotations

import pytest
from tui_helpers import make_app, settle


async def _settled(pilot):
    await settle(pilot, pilot.app)


@pytest.mark.parametrize("size", [(160, 48), (100, 30)], ids=["160x48", "100x30"])
def test_main_screen(snap_compare, size):
    assert snap_compare(make_app(window="all"), terminal_size=size, run_before=_settled)


def test_main_screen_focused_rank_throughput(snap_compare):
    async def run_before(pilot):
        await settle(pilot, pilot.app)
        await pilot.press("3", "m", "m")

    assert snap_compare(make_app(window="all"), terminal_size=(160, 48), run_before=run_before)
