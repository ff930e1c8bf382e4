"""Attaching to a server that has run for a while: its `server_args=` line is thousands of lines
older than the history read, yet the first screen says what it runs (the source asks systemd for
the current run's InvocationID and journald for that run's settings line)."""

from __future__ import annotations

import time

import pytest
from test_control_dashboard import dashboard_on
from test_spec_systemd import SIM

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
    from mtptui.tui.viewmodel import spec_short

    h = cluster.hosts[2]
    async with dashboard_on(h, "attach", tmp_path, monkeypatch, sim=BUSY, lines=HISTORY,
                            before=lambda unit: wait_for_lines(h, unit)) as (pilot, app, until, _, name, unit):
        dash = app.dash
        await until(lambda: dash.store.ranks(name), "the first batches")
        await pilot.pause(0.5)
        spec = dash.store.spec.get(name) or {}
        assert spec_short(spec) == "spec EAGLE steps=3 topk=1 draft=4", spec
        # one line more than the history: the settings line, before it
        assert app.dash.sources[0].received >= HISTORY + 1


def wait_for_lines(h, unit: str, n: int = 3000) -> None:
    deadline = time.time() + 120
    while lines_after_settings(h, unit) < n:
        assert time.time() < deadline, f"only {lines_after_settings(h, unit)} lines after server_args"
        time.sleep(1)
