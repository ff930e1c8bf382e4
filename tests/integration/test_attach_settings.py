"""Attaching to a server that has run for a while: its `server_args=` line is three times the
history read further back, yet the first screen says what it runs (the source asks systemd for
the current run's InvocationID and journald for that run's settings line)."""

from __future__ import annotations

import time

import pytest
from test_control_dashboard import dashboard_on
from test_spec_systemd import SIM

from mtptui.tui.viewmodel import spec_short

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


def wait_for_lines(h, unit: str, n: int = 3 * HISTORY) -> None:
    deadline = time.time() + 120
    while lines_after_settings(h, unit) < n:
        assert time.time() < deadline, f"only {lines_after_settings(h, unit)} lines after server_args"
        time.sleep(1)


async def test_a_run_whose_settings_line_the_journal_lost_is_labelled_from_its_exec_start(cluster, tmp_path,
                                                                                          monkeypatch):
    # The journal no longer holds the current run's server_args line (vacuumed here; rotated away
    # or dropped by a rate limit on a real host): the dashboard asks the host, and says so.
    from mtptui.tui.viewmodel import spec_for

    h = cluster.hosts[2]

    def lose_the_settings_line(unit: str) -> None:
        wait_for_lines(h, unit, n=20)
        h.ssh(["journalctl", "--rotate"])
        time.sleep(2)  # the archived file's newest entry older than what --vacuum-time keeps
        h.ssh(["journalctl", "--vacuum-time=1s"])
        assert lines_after_settings(h, unit) == -1, "the server_args line is still in the journal"

    async with dashboard_on(h, "lost", tmp_path, monkeypatch, sim=BUSY, lines=HISTORY,
                            before=lose_the_settings_line) as (pilot, app, until, _, name, unit):
        dash = app.dash
        await until(lambda: dash.store.ranks(name), "the first batches")
        await until(lambda: not dash.needs_settings(name), "the run's settings from the host")
        assert spec_short(spec_for(dash.store, name, None)) == "spec EAGLE steps=3 topk=1 draft=4 (ExecStart)"
        assert [e.label for e in dash.store.epochs[name]] == ["EAGLE steps=3 topk=1 draft=4"]
        await until(lambda: name in dash.servers, "the server's version")
        assert dash.servers[name].startswith("SGLang ") and dash.servers[name].endswith(" (simulator)"), dash.servers
