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


async def test_a_replayed_record_shows_its_gpus_at_the_playhead(tmp_path):
    from mtptui.core.gpus import GpuSample
    from mtptui.sources.record import RecordWriter

    path = tmp_path / "gpus.jsonl"
    w = RecordWriter(str(path))
    w.write(['{"MESSAGE":"hello","__REALTIME_TIMESTAMP":"1000000"}'], "elsewhere")
    start = 1773072000.0  # the DP8 sample's first line (2026-03-09 16:00:00 UTC)
    for k in range(0, 240):
        t = start + k
        w.gpus("gpu-h2", [GpuSample(t, i, "NVIDIA H100 80GB HBM3", util=float(k % 100), mem_used=71771.0,
                                    mem_total=81559.0, power=300.0 + i) for i in range(2)], t)
    w.close()
    app = make_app(DP8, str(path), window="all")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        for _ in range(50):
            if app.dash.gpus.get("gpu-h2"):
                break
            await pilot.pause(0.1)
        app.screen.redraw_now()
        await pilot.pause()
        t = app.dash.timeline.playhead()
        got = app.dash.gpus_now("gpu-h2")
        assert t is not None and [s.index for s in got] == [0, 1]
        assert got[0].t <= t and got[0].util == float(int(got[0].t - start) % 100)
        assert str(app.screen.query_one(GpuPanel).render()).startswith(f"GPUs  GPU0 {got[0].util:.0f}% 70/80G 300W")
