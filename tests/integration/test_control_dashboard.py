"""The dashboard acting on a real systemd host: `s` on a unit followed over SSH restarts it with
speculation on, the stop and start stream in, and the compare screen shows both epochs; after an
idle link cut it still acts and smokes."""

from __future__ import annotations

import time
from contextlib import asynccontextmanager

import pytest
from hosts.helpers import host_config, unique_unit
from test_spec_systemd import exec_start, install_unit

pytestmark = pytest.mark.systemd


@asynccontextmanager
async def dashboard_on(h, prefix: str, tmp_path, monkeypatch, *, sim=None, lines: int = 1000, before=None,
                       extra: str = ""):
    """(pilot, app, until, controls, name, unit): the dashboard following a new unit on host h
    over SSH, with the control of that host; until(cond, what, limit) waits in tenths of a second.
    before(unit): called once the unit runs, before the dashboard opens."""
    from mtptui.config import Config
    from mtptui.control.session import host_controls
    from mtptui.sources.ssh import SshJournalSource
    from mtptui.tui.launch import build_app

    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    unit = unique_unit(prefix)
    install_unit(h, unit, extra, **({"sim": sim} if sim else {}))
    if before is not None:
        before(unit)
    source = SshJournalSource(host_config(h, unit), lines=lines)
    controls = host_controls([source], Config())
    app = build_app([source], window="all", controls=controls)
    async with app.run_test(size=(160, 48)) as pilot:
        async def until(cond, what: str, limit: int = 900):
            for _ in range(limit):
                if cond():
                    return
                await pilot.pause(0.1)
            under_way = [(r.phase, r.detail) for r in app.dash.running.values()]
            pytest.fail(f"never: {what}; under way {under_way}; told {getattr(app, 'told', [])[-6:]}")

        yield pilot, app, until, controls, f"gpu{h.index}", unit


async def test_s_on_a_systemd_host_turns_mtp_on_and_compare_shows_both_epochs(cluster, tmp_path, monkeypatch):
    from mtptui.control.audit import read_audit
    from mtptui.tui.screens.compare import CompareScreen
    from mtptui.tui.screens.confirm import ConfirmScreen

    h = cluster.hosts[0]
    async with dashboard_on(h, "dash", tmp_path, monkeypatch) as (pilot, app, until, _, name, unit):
        dash = app.dash
        await until(lambda: dash.store.ranks(name), "the first batches over SSH")
        await pilot.press("s")
        await until(lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        assert app.screen.plan.title() == f"{name} · {unit}.service: → mtp3"
        await pilot.press("y")
        await until(lambda: not dash.running, "the action's end", limit=1200)
        notes = list(getattr(app, "told", []))
        assert any(m.startswith(f"{name}: mtp3 verified: accept len") for m, _ in notes), notes
        await until(lambda: len(dash.store.epochs.get(name, [])) >= 2, "the new epoch")
        await until(lambda: any(s.spec_seen for s in dash.store.ranks(name)), "accept len on screen")
        await pilot.press("c")
        assert isinstance(app.screen, CompareScreen)
        labels = [r.label for r in app.screen.rows]
        assert labels[0] == "spec off" and labels[-1].startswith("EAGLE steps=3"), labels
    assert "--speculative-num-steps 3" in exec_start(h, unit)
    assert [(e["profile"], e["result"]) for e in read_audit(tmp_path / "audit.jsonl")] == [("mtp3", "applied")]


async def test_after_an_idle_link_cut_the_dashboard_still_acts_and_smokes(cluster, tmp_path, monkeypatch):
    # The dashboard open, nothing running, the cable cut for longer than the keepalive limit: the
    # stream comes back by itself; the control's idle connection was closed by its keepalives and
    # is made again on the next use, so `x` and `s` work without restarting the console.
    from mtptui.sources.base import RECONNECTING, STREAMING
    from mtptui.tui.screens.confirm import ConfirmScreen

    h = cluster.hosts[1]
    try:
        async with dashboard_on(h, "blip", tmp_path, monkeypatch) as (pilot, app, until, controls, name, unit):
            dash = app.dash

            def said() -> list[str]:
                return [m for m, _ in getattr(app, "told", [])]

            await until(lambda: dash.store.ranks(name), "the first batches over SSH")
            await controls[name].state()  # the control's own connection is up (the dashboard's first read)
            h.link(False)
            await until(lambda: dash.feed.state_of(name) == RECONNECTING, "the stream noticing the cut")
            cut = time.monotonic()
            while time.monotonic() - cut < 4.0:  # keepalives (0.5 s x 2) give up on the idle control too
                await pilot.pause(0.2)
            h.link(True)
            await until(lambda: dash.feed.state_of(name) == STREAMING, "the stream back", limit=600)

            await pilot.press("x")
            await until(lambda: any(m.startswith("smoke test") for m in said()), "the smoke test's answer")
            smoke = next(m for m in said() if m.startswith("smoke test"))
            assert f"{name}: pass" in smoke, said()

            await pilot.press("s")
            await until(lambda: isinstance(app.screen, ConfirmScreen), "the preview")
            await pilot.press("y")
            await until(lambda: not dash.running, "the action's end", limit=1200)
            assert any(m.startswith(f"{name}: mtp3 verified") for m in said()), said()
    finally:
        h.link(True)
    assert "--speculative-num-steps 3" in exec_start(h, unit)


async def test_under_a_rate_limit_the_status_bar_says_the_settings_mtptui_verified(cluster, tmp_path, monkeypatch):
    # The old run's stop floods the journal past the unit's rate limit: the new run's settings line
    # is suppressed with the rest of its start. The status bar kept the run before's `spec off`
    # while the panels showed SPEC ON (issue 42); after a verified change it says the new run's
    # settings, read off the host (its ExecStart).
    from mtptui.tui.screens.confirm import ConfirmScreen
    from mtptui.tui.widgets.status_bar import StatusBar

    h = cluster.hosts[0]
    flood = ("ExecStop=/bin/sh /opt/mtptui/tests/integration/hosts/flood-stop.sh\n"
             "LogRateLimitIntervalSec=60s\nLogRateLimitBurst=300\n")
    async with dashboard_on(h, "rate", tmp_path, monkeypatch, extra=flood) as (pilot, app, until, _, name, unit):
        dash = app.dash
        await until(lambda: dash.store.spec.get(name) is not None, "the first run's settings line")
        await pilot.press("s")
        await until(lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        await pilot.press("y")
        await until(lambda: not dash.running, "the action's end", limit=1800)
        told = [m for m, _ in getattr(app, "told", [])]
        assert any(m.startswith(f"{name}: mtp3 verified") for m in told), told
        await pilot.pause(0.5)
        status = "\n".join(app.screen.query_one(StatusBar).render_line(y).text for y in range(2))
    said = h.ssh(["journalctl", f"--unit={unit}", "--output=cat", "--no-pager"]).stdout
    assert said.count("server_args=") == 1, "the new run's settings line was not suppressed"
    assert "spec off" not in status and "steps=3" in status and "(ExecStart)" in status, status
