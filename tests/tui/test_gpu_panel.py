"""The GPUs on the main screen and the compare screen: the demo's simulator's nvidia-smi stand-in streamed by the dashboard
(tui/gpu_poll.py), shown under the latency line at 80x24 and 160x48 with whole figures, each named
by the rank it serves (the simulator's server_args: TP 8 with DP attention, DP i on GPU i), and
recorded beside the lines so a replay has them."""

from __future__ import annotations

import re

import pytest

from mtptui.commands import demo
from mtptui.config import Config
from mtptui.control.session import host_controls
from mtptui.sources.record import recorded_gpus
from mtptui.tui.launch import build_app
from mtptui.tui.widgets.gpu_panel import GpuPanel

FAST = ["--sim-startup-seconds", "1", "--decode-log-interval", "8"]


async def _until(pilot, cond, tries=400):
    for _ in range(tries):
        await pilot.pause(0.1)
        if cond():
            return
    pytest.fail("never came")


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_demo_shows_its_gpus_and_records_them(tmp_path, size):
    record = tmp_path / "demo.jsonl"
    args = demo.build_parser().parse_args(["--record", str(record)])
    source, writer = demo.demo_source(args, FAST)
    controls = host_controls([source], Config())
    app = build_app([source], title="demo", window="all", controls=controls)
    try:
        async with app.run_test(size=size) as pilot:
            dash = app.dash
            await _until(pilot, lambda: len(dash.gpus_now("simulator")) == 8 and dash.store.current_epoch("simulator"))
            await pilot.pause(1.5)
            panel = app.screen.query_one(GpuPanel)
            text = str(panel.render())
            assert panel.display and text.startswith("GPUs  DP0 GPU0 ")
            assert all(len(line) <= size[0] - 2 for line in text.splitlines())
            if size[0] == 80:
                assert len(text.splitlines()) == 1 and re.search(r"  \+\d more$", text), text
            else:  # every GPU with its rank, in two rows of four
                rows = text.splitlines()
                assert [len(re.findall(r"DP\d GPU\d ", row)) for row in rows] == [4, 4], text
                assert all(f"DP{i} GPU{i} " in text for i in range(8)) and "no rank" not in text
            if size == (160, 48):  # the compare screen: the epoch's GPUs and energy per token
                await _until(pilot, lambda: dash.store.current_epoch("simulator").batches > 20)
                await pilot.press("c")
                await pilot.pause(0.5)
                detail = str(app.screen.query_one("#ranks").render())
                assert "GPUs 8 · util " in detail and (" J/token" in detail), detail
                await pilot.press("escape")
            app.workers.cancel_group(app, "gpus")
            await pilot.pause(0.2)
    finally:
        source.kill_now()
        if writer is not None:
            writer.close()
    got = recorded_gpus(str(record))
    assert {s.index for s in got["simulator"]} == set(range(8))
