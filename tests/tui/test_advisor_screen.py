"""The advisor on screen: its line on the main screen while a rule holds (none on a healthy run),
the advisor screen (A) with each piece of advice's evidence and what tries it, whole at 80x24,
100x30 and 160x48; snapshots of it on a committed sample log."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import make_app, screen_text, settle

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
LONG = str(SAMPLES / "long-context-toggle.log")  # MTP slower than spec off past 32k tokens a request
GRAPH_OFF = str(SAMPLES / "incident-cuda-graph-off.log")
HEALTHY = str(SAMPLES / "mtp-on-tp4.log")
SIZES = [(80, 24), (100, 30), (160, 48)]
IDS = ["80x24", "100x30", "160x48"]


async def _advisor(pilot):
    await settle(pilot, pilot.app)
    await pilot.press("A")
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_advisor_screen(snap_compare, size):
    assert snap_compare(make_app(LONG, window="all"), terminal_size=size, run_before=_advisor)


async def _texts(path: str, size: tuple[int, int], press: str | None = None) -> list[str]:
    app = make_app(path, window="all")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        if press:
            await pilot.press(press)
            await pilot.pause()
            await pilot.pause()
        return screen_text(app)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_main_screen_says_what_to_try_while_it_holds(size):
    rows = await _texts(GRAPH_OFF, size)
    (line,) = [r for r in rows if " TRY " in r]
    assert "CUDA graphs off" in line
    assert not any(" TRY " in r for r in await _texts(HEALTHY, size))


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_advisor_screen_shows_the_evidence_whole(size):
    rows = await _texts(LONG, size, "A")
    text = "\n".join(rows)
    assert "speculation slower than spec off past 32-64k tokens/request" in text
    # the evidence's figures whole, wrapped maybe, never cut mid-number
    flat = " ".join(r.strip(" │┃") for r in rows)
    for figure in ("-11% at 32-64k", "-19% at 64k+"):
        assert figure in flat or figure.replace(" ", "  ") in flat, figure
    assert "try speculation off" in flat  # a replay cannot act: it says what, and which key would


def test_main_screen_with_advice_80x24(snap_compare):
    async def run_before(pilot):
        await settle(pilot, pilot.app)

    assert snap_compare(make_app(GRAPH_OFF, window="all"), terminal_size=(80, 24), run_before=run_before)
