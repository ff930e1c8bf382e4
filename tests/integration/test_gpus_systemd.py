"""GPUs from a container host over SSH: the simulator's nvidia-smi stand-in (on the hosts' PATH,
tests/integration/hosts/sim-unit.sh) streamed by the dashboard over the journal's connection, on the
main screen, each GPU named by the rank it serves (the unit's Environment= sets no
CUDA_VISIBLE_DEVICES, the simulator's server_args TP 1 on GPU 0); a host without the tool gets one
line, and is not asked again."""

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
        panel = app.screen.query_one(GpuPanel)
        await until(lambda: str(panel.render()).startswith("GPUs  rank (TP=1) GPU0 "), "the rank on its GPU")
        assert name in dash.gpu_visible and dash.gpu_visible[name] is None  # read from the unit: unset
        text = str(panel.render())
        assert text.endswith("W") and "no rank" not in text, text


async def test_a_host_without_nvidia_smi_gets_one_line(cluster, tmp_path, monkeypatch):
    h = cluster.hosts[1]
    h.ssh("rm -f /usr/local/bin/nvidia-smi")
    try:
        async with dashboard_on(h, "nogpus", tmp_path, monkeypatch) as (pilot, app, until, _, name, unit):
            dash = app.dash
            await until(lambda: name in dash.gpu_note and dash.store.ranks(name), "the note")
            await pilot.pause(3.0)  # time for a loop, were there one
            # nor amd-smi nor rocm-smi (the hosts have neither): each asked once, then the one line
            note = f"no nvidia-smi, amd-smi or rocm-smi on {name}: GPU panel off"
            assert dash.gpu_note[name] == note
            assert dash.gpus_now(name) == []
            assert str(app.screen.query_one(GpuPanel).render()) == note
            assert [w for w in app.workers if w.group == "gpus" and not w.is_finished] == []
    finally:
        h.ssh("ln -sf /opt/mtptui/tests/integration/hosts/nvidia-smi /usr/local/bin/nvidia-smi")
