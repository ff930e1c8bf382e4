"""Attaching to a server that has run for a while: its `server_args=` line is thousands of lines
older than the history read, yet the first screen says what it runs (the source asks systemd for
the current run's InvocationID and journald for that run's settings line)."""

from __future__ import annotations

import time

import pytest
from hosts.helpers import host_config, unique_unit
from test_spec_systemd import SIM, install_unit

pytestmark = pytest.mark.systemd

BUSY = [*SIM[:SIM.index("--tp") + 1], "4", *SIM[SIM.index("--tp") + 2:SIM.index("--decode-log-interval")],
        "--decode-log-interval", "1", "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
HISTORY = 500


def lines_after_settings(h, unit: str) -> int:
    out = h.ssh(["journalctl", f"--unit={unit}", "--output=cat", "--no-pager"]).stdout.splitlines()
    at = max((i for i, x in enumerate(out) if "server_args=" in x), default=None)
    return -1 if at is None else len(out) - at - 1


async def test_the_first_screen_knows_the_settings_of_a_long_running_server(cluster, tmp_path, monkeypatch):
    from mtptui.config import Config
    from mtptui.control.session import host_controls
    from mtptui.sources.ssh import SshJournalSource
    from mtptui.tui.launch import build_app
    from mtptui.tui.viewmodel import spec_short

    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    h = cluster.hosts[2]
    unit = unique_unit("attach")
    install_unit(h, unit, sim=BUSY)
    deadline = time.time() + 120
    while lines_after_settings(h, unit) < 3000:
        assert time.time() < deadline, f"only {lines_after_settings(h, unit)} lines after server_args"
        time.sleep(1)
    source = SshJournalSource(host_config(h, unit), lines=HISTORY)
    app = build_app([source], window="all", controls=host_controls([source], Config()))
    name = f"gpu{h.index}"
    async with app.run_test(size=(160, 48)) as pilot:
        dash = app.dash
        for _ in range(300):
            if dash.store.ranks(name):
                break
            await pilot.pause(0.1)
        await pilot.pause(0.5)
        spec = dash.store.spec.get(name) or {}
        assert spec_short(spec) == "spec EAGLE steps=3 topk=1 draft=4", spec
        # one line more than the history: the settings line, before it, counted once
        assert source.received >= HISTORY + 1
