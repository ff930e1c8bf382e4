"""SVG snapshots of the main screen on committed sample logs (sample_logs/, made by the simulator),
at 160x48, 120x36, 100x30 and 80x24, and of the enlarged panes (e, l, r) on small screens.

Deterministic: the log is replayed at full speed to its end before the shot, the wall clock is
frozen (no lines/s, no clock on screen), nothing random. Update with `pytest --snapshot-update`
and look at the SVGs (tests/tui/__snapshots__/) before committing them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import make_app, settle

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
DP8 = str(SAMPLES / "dp-attention-8.log")  # 8 DP-attention ranks, MTP on
TOGGLE = str(SAMPLES / "mtp-toggle-restarts.log")  # off, NEXTN 3 steps, 1 step, across restarts
COLLAPSE = str(SAMPLES / "incident-acceptance-collapse.log")  # acceptance falls to ~1.0: alerts
DP8_COLLAPSE = str(Path(__file__).parent / "data" / "dp8-collapse.log")  # ... on all 8 ranks: one alert
SMALL = [(80, 24), (120, 36)]
SMALL_IDS = ["80x24", "120x36"]


async def _settled(pilot):
    await settle(pilot, pilot.app)


@pytest.mark.parametrize("size", [(160, 48), (120, 36), (100, 30), (80, 24)],
                         ids=["160x48", "120x36", "100x30", "80x24"])
def test_main_screen(snap_compare, size):
    assert snap_compare(make_app(DP8, window="all"), terminal_size=size, run_before=_settled)


@pytest.mark.parametrize("key", ["e", "l", "r"], ids=["events", "log", "ranks"])
@pytest.mark.parametrize("size", SMALL, ids=SMALL_IDS)
def test_enlarged_pane(snap_compare, size, key):
    async def run_before(pilot):
        await settle(pilot, pilot.app)
        await pilot.press(key)
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(make_app(DP8, window="all"), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(160, 48), *SMALL], ids=["160x48", *SMALL_IDS])
def test_host_wide_collapse_is_one_alert(snap_compare, size):
    assert snap_compare(make_app(DP8_COLLAPSE, window="all"), terminal_size=size, run_before=_settled)


def test_restarts_mark_epochs(snap_compare):
    assert snap_compare(make_app(TOGGLE, window="all"), terminal_size=(160, 48), run_before=_settled)


def test_acceptance_collapse_raises_alerts(snap_compare):
    assert snap_compare(make_app(COLLAPSE, window="all"), terminal_size=(160, 48), run_before=_settled)


def test_focused_rank_throughput(snap_compare):
    async def run_before(pilot):
        await settle(pilot, pilot.app)
        await pilot.press("3", "m", "m")

    assert snap_compare(make_app(DP8, window="all"), terminal_size=(160, 48), run_before=run_before)


def test_preview_modal(snap_compare):
    from sim_child import planned

    from mtptui.tui.screens.confirm import ConfirmScreen

    async def run_before(pilot):
        await settle(pilot, pilot.app)
        pilot.app.push_screen(ConfirmScreen(await planned()))
        await pilot.pause()

    assert snap_compare(make_app(TOGGLE, window="all"), terminal_size=(160, 48), run_before=run_before)


async def _at_end_of_mtp_epoch(pilot):
    """The toggle sample at the last line of its first MTP run, which followed a spec-off run."""
    from test_epoch_strip import last_decode_line
    from test_screen_truth import seek_to

    await settle(pilot, pilot.app)
    await seek_to(pilot, pilot.app, last_decode_line(pilot.app, "gpu-h1", 1))


@pytest.mark.parametrize("size", [(160, 48), (120, 36), (80, 24)], ids=["160x48", "120x36", "80x24"])
def test_epoch_strip_after_restart_from_spec_off(snap_compare, size):
    assert snap_compare(make_app(TOGGLE, window="5m"), terminal_size=size, run_before=_at_end_of_mtp_epoch)


@pytest.mark.parametrize("size", [(160, 48), (80, 24)], ids=["160x48", "80x24"])
def test_loading_after_restart(snap_compare, tmp_path, size):
    from test_loading import restart_log

    assert snap_compare(make_app(restart_log(tmp_path, "loading"), window="5m"), terminal_size=size,
                        run_before=_settled)


def test_compare_screen(snap_compare):
    async def run_before(pilot):
        await settle(pilot, pilot.app)
        await pilot.press("c", "down")

    assert snap_compare(make_app(TOGGLE, window="all"), terminal_size=(160, 48), run_before=run_before)


@pytest.mark.parametrize("size", [(100, 30), (80, 24)], ids=["100x30", "80x24"])
def test_compare_screen_narrow(snap_compare, size):
    """Every figure whole: the columns without room left out (the detail under the table says
    them), short headers and settings where the first seven need them."""
    async def run_before(pilot):
        await settle(pilot, pilot.app)
        await pilot.press("c", "down")

    assert snap_compare(make_app(TOGGLE, window="all"), terminal_size=size, run_before=run_before)


def test_opened_file_whole(snap_compare, tmp_path):
    """`mtptui open` on a log longer than the ring buffers: the whole file at once, the playhead
    at its end; the chart and sparklines over the full span (the overview before the rings)."""
    from tui_helpers import long_log, open_app

    assert snap_compare(open_app(long_log(tmp_path / "long.log")), terminal_size=(160, 48), run_before=_settled)
