"""GPUs from a container host over SSH: the simulator's nvidia-smi stand-in (on the hosts' PATH,
tests/integration/hosts/sim-unit.sh) streamed by the dashboard over the journal's connection, on the
main screen and in the record; a host without the tool gets one line, and is not asked again."""

from __future__ import annotations

import pytest
from test_control_dashboard import dashboard_on

from mtptui.tui.widgets.gpu_panel import GpuPanel

pytestmark = pytest.mark.systemd


async def test_the_stand_ins_gpus_over_ssh(cluster, tmp_path, monkeypatch):
    h = cluster.hosts[0]
    assert "STAND-IN" in h.ssh("nvidia-smi --help").stdout
    async with dashboard_on(h, "gpus", tmp_path, monkeypatch) as (pilot, app, until, _, name, unit):
        dash = app.dash
        await until(lambda: dash.gpus_now(name) and dash.store.ranks(name), "GPU samples over SSH")
        await pilot.pause(0.5)
        got = dash.gpus_now(name)
        assert got[0].name == "NVIDIA H100 80GB HBM3" and got[0].mem_total == 81559
        text = str(app.screen.query_one(GpuPanel).render())
        assert text.startswith("GPUs  GPU0 ") and text.endswith("W"), text


async def test_a_host_without_nvidia_smi_gets_one_line(cluster, tmp_path, monkeypatch):
    h = cluster.hosts[1]
    h.ssh("rm -f /usr/local/bin/nvidia-smi")
    try:
        async with dashboard_on(h, "nogpus", tmp_path, monkeypatch) as (pilot, app, until, _, name, unit):
            dash = app.dash
            await until(lambda: name in dash.gpu_note and dash.store.ranks(name), "the note")
            await pilot.pause(3.0)  # time for a loop, were there one
            assert dash.gpu_note[name] == f"no nvidia-smi on {name}: GPU panel off"
            assert dash.gpus_now(name) == []
            assert str(app.screen.query_one(GpuPanel).render()) == f"no nvidia-smi on {name}: GPU panel off"
            assert [w for w in app.workers if w.group == "gpus" and not w.is_finished] == []
    finally:
        h.ssh("ln -sf /opt/mtptui/tests/integration/hosts/nvidia-smi /usr/local/bin/nvidia-smi")
