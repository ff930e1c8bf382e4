"""The main screen with the GPU line, at 80x24, 100x30 and 160x48: the committed DP8 sample and a
fixed set of eight GPUs' samples at the playhead (as the stand-in or the real tool gives them, one
with power [N/A]), so the shot is deterministic. Entries are whole at every size
(test_gpu_view.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import make_app, settle

from mtptui.core.gpus import GpuHistory, parse_text
from mtptui.tui.widgets.gpu_panel import GpuPanel

DP8 = str(Path(__file__).resolve().parents[2] / "sample_logs" / "dp-attention-8.log")
ROWS = "".join(f"{i}, NVIDIA H100 80GB HBM3, {90 + i}, 71771, 81559, {640 + 7 * i}.25, 700.00, {60 + i}, 1980\n"
               for i in range(7)) + "7, NVIDIA H100 80GB HBM3, 12, 71771, 81559, [N/A], 700.00, 41, 1980\n"


async def _with_gpus(pilot):
    await settle(pilot, pilot.app)
    dash = pilot.app.dash
    t = dash.timeline.playhead() or dash.store.last_ts or 0.0
    h = GpuHistory()
    h.add(parse_text(ROWS, t - 1.0))
    h.add(parse_text(ROWS, t))
    dash.gpus[dash.host] = h
    pilot.app.screen.redraw_now()
    await pilot.pause()
    await pilot.pause()


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)], ids=["160x48", "100x30", "80x24"])
def test_main_screen_with_gpus(snap_compare, size):
    assert snap_compare(make_app(DP8, window="all"), terminal_size=size, run_before=_with_gpus)


@pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)], ids=["160x48", "100x30", "80x24"])
async def test_the_gpu_line_is_whole_at_every_size(size):
    app = make_app(DP8, window="all")
    async with app.run_test(size=size) as pilot:
        await _with_gpus(pilot)
        panel = app.screen.query_one(GpuPanel)
        text = str(panel.render())
        assert panel.display and text.startswith("GPUs  GPU0 90% 70/80G 640W")
        assert all(len(line) <= size[0] - 2 for line in text.splitlines())
        if size[0] >= 160:
            assert "GPU7 12% 70/80G -" in text  # power [N/A]: a dash, never 0 W
