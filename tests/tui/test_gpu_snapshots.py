"""The main screen with the GPU line, at 80x24, 100x30 and 160x48: the committed DP8 sample and a
fixed set of eight GPUs' samples at the playhead (as the stand-in or the real tool gives them, one
with power [N/A]), so the shot is deterministic. With the host's CUDA_VISIBLE_DEVICES known (unset)
the sample's server_args (TP 8, DP attention) puts DP i on GPU i, and the line names each GPU's
rank; without it, GPUs by index only. Entries are whole at every size, in rows by design
(test_gpu_view.py), on the screen as composed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tui_helpers import make_app, screen_text, settle

from mtptui.core.gpus import GpuHistory, parse_text
from mtptui.tui.widgets.gpu_panel import GpuPanel

DP8 = str(Path(__file__).resolve().parents[2] / "sample_logs" / "dp-attention-8.log")
ROWS = "".join(f"{i}, NVIDIA H100 80GB HBM3, {90 + i}, 71771, 81559, {640 + 7 * i}.25, 700.00, {60 + i}, 1980\n"
               for i in range(7)) + "7, NVIDIA H100 80GB HBM3, 12, 71771, 81559, [N/A], 700.00, 41, 1980\n"
# two more GPUs on the host that serve no rank of the server: idle, memory free
IDLE = "".join(f"{i}, NVIDIA H100 80GB HBM3, 0, 4, 81559, 61.5, 700.00, 30, 345\n" for i in (8, 9))
ENTRY = re.compile(r"(?:DP\d )?GPU\d(?: no rank)? (?:\d+%|-) (?:\d+/\d+G|-) (?:\d+W|-)")
SIZES = pytest.mark.parametrize("size", [(160, 48), (100, 30), (80, 24)], ids=["160x48", "100x30", "80x24"])


async def _with_gpus(pilot, rows: str = ROWS, *, visible_known: bool = True):
    await settle(pilot, pilot.app)
    dash = pilot.app.dash
    t = dash.timeline.playhead() or dash.store.last_ts or 0.0
    h = GpuHistory()
    h.add(parse_text(rows, t - 1.0))
    h.add(parse_text(rows, t))
    dash.gpus[dash.host] = h
    if visible_known:
        dash.gpu_visible[dash.host] = None  # as tui/gpu_poll.py learns it from the unit: unset
    pilot.app.screen.redraw_now()
    await pilot.pause()
    await pilot.pause()


async def _by_index(pilot):
    await _with_gpus(pilot, visible_known=False)


@SIZES
def test_main_screen_with_gpus(snap_compare, size):
    assert snap_compare(make_app(DP8, window="all"), terminal_size=size, run_before=_with_gpus)


def test_main_screen_with_gpus_by_index(snap_compare):
    assert snap_compare(make_app(DP8, window="all"), terminal_size=(160, 48), run_before=_by_index)


def _gpu_rows(app, panel: GpuPanel) -> list[str]:
    """The GPU line's rows as the composed screen shows them, each the panel's whole."""
    text = str(panel.render())
    screen = screen_text(app)
    rows = text.splitlines()
    for row in rows:
        assert any(line.startswith(" " + row) for line in screen), (row, screen)
    return rows


@SIZES
@pytest.mark.parametrize("known", [True, False], ids=["by-rank", "by-index"])
async def test_the_gpu_line_is_whole_at_every_size(size, known):
    app = make_app(DP8, window="all")
    async with app.run_test(size=size) as pilot:
        await _with_gpus(pilot, visible_known=known)
        panel = app.screen.query_one(GpuPanel)
        rows = _gpu_rows(app, panel)
        assert panel.display and len(rows) == (1 if size[1] < 30 else 2)
        assert rows[0].startswith("GPUs  DP0 GPU0 90% 70/80G 640W" if known else "GPUs  GPU0 90% 70/80G 640W")
        for row in rows:
            assert len(row) <= size[0] - 2
            # nothing but whole entries, the head and the count of those left out
            assert re.sub(r"\+\d+ more", "", ENTRY.sub("", row)).replace("GPUs", "").strip() == "", row
        shown = sum(len(ENTRY.findall(row)) for row in rows)
        more = re.search(r"\+(\d+) more", rows[-1])
        assert shown + (int(more.group(1)) if more else 0) == 8
        if size == (160, 48):
            # all eight in two rows of four, by design rather than by wrap
            assert [len(ENTRY.findall(row)) for row in rows] == [4, 4]
            assert ("DP7 GPU7 12% 70/80G -" if known else "GPU7 12% 70/80G -") in rows[1]  # [N/A]: never 0 W


async def test_gpus_that_serve_no_rank_say_so():
    app = make_app(DP8, window="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await _with_gpus(pilot, ROWS + IDLE)
        rows = _gpu_rows(app, app.screen.query_one(GpuPanel))
        text = "\n".join(rows)
        assert "DP3 GPU3 93% 70/80G 661W" in text
        assert "GPU8 no rank 0% 0/80G 62W" in text and "GPU9 no rank 0% 0/80G 62W" in text
        assert sum(len(ENTRY.findall(row)) for row in rows) == 10


async def test_no_rank_on_a_gpu_where_the_readings_disagree():
    """CUDA_VISIBLE_DEVICES said unset, but the GPUs the settings put ranks on read idle (it was
    set where the unit's Environment= does not say): by index only, rather than a wrong rank."""
    idle_first = "".join(f"{i}, NVIDIA H100 80GB HBM3, 0, 4, 81559, 61.5, 700.00, 30, 345\n" for i in range(8))
    app = make_app(DP8, window="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await _with_gpus(pilot, idle_first)
        rows = _gpu_rows(app, app.screen.query_one(GpuPanel))
        assert rows[0].startswith("GPUs  GPU0 0% 0/80G 62W") and "DP" not in "".join(rows) and "no rank" not in "".join(rows)


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
