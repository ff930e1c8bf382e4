"""Quitting the dashboard in the middle of an action on a real systemd host (issue 42): q (or
ctrl-c) while `s` applies a profile, while `b` benchmarks or while `T` tunes stops it and puts the
unit back as it was, verified, with its lock free, before the dashboard leaves (exit 130), saying
how it ended, as `mtptui spec` does on ctrl-c (test_spec_interrupt_systemd.py)."""

from __future__ import annotations

import asyncio

import pytest
from test_control_dashboard import dashboard_on
from test_prove_systemd import dropin_of, journal_tail, unit_files
from test_spec_systemd import audit_entries, exec_start

from mtptui.control.restart import HOLD_ENV
from mtptui.tui.screens.confirm import ConfirmScreen

pytestmark = pytest.mark.systemd


def locked(h, unit: str) -> bool:
    return h.ssh(["test", "-e", f"/run/lock/mtptui-{unit}.service"], check=False).returncode == 0


async def leaves(pilot, app) -> int:
    for _ in range(1800):
        if app.return_code is not None:
            return app.return_code
        await pilot.pause(0.1)
    running = [(r.phase, r.detail) for r in app.dash.running.values()]
    pytest.fail(f"the dashboard never left: under way {running}; told {getattr(app, 'told', [])}")


@pytest.mark.parametrize("key,phase", [("q", "wait"), ("ctrl+c", "restart"), ("q", "verify")])
async def test_quitting_mid_apply_puts_the_unit_back_verified(cluster, tmp_path, monkeypatch, key, phase):
    h = cluster.hosts[2]
    monkeypatch.setenv(HOLD_ENV, phase)
    async with dashboard_on(h, "dquit", tmp_path, monkeypatch) as (pilot, app, until, _, name, unit):
        dash = app.dash
        await until(lambda: dash.store.ranks(name), "the first batches over SSH")
        before = dropin_of(h, unit), exec_start(h, unit)
        await pilot.press("s")
        await until(lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        await pilot.press("y")
        await until(lambda: any("held here" in r.detail for r in dash.running.values()), f"held at {phase}")
        assert locked(h, unit) and dropin_of(h, unit) != before[0]
        await pilot.press(key)
        code = await leaves(pilot, app)
        said = dash.quitting.said
    why = "q" if key == "q" else "ctrl-c"
    assert code == 130, (said, journal_tail(h, unit))
    assert len(said) == 1 and said[0].startswith(f"{name}: mtp3 stopped: interrupted ({why}) at {phase}; put back as "
                                                 "it was: "), said
    assert (dropin_of(h, unit), exec_start(h, unit)) == before, unit_files(h, unit)
    assert h.ssh(["systemctl", "is-active", unit]).stdout.strip() == "active"
    assert not locked(h, unit)
    last = audit_entries(tmp_path / "audit.jsonl")[-1]
    assert (last["profile"], last["result"], last["restored"], last["verified"]) == ("mtp3", "interrupted", True,
                                                                                     "before"), last


@pytest.mark.parametrize("key,noun", [("b", "bench"), ("T", "tune")])
async def test_quitting_mid_benchmark_or_tune_restores_the_unit(cluster, tmp_path, monkeypatch, key, noun):
    h = cluster.hosts[2]
    async with dashboard_on(h, "dq" + key.lower(), tmp_path, monkeypatch) as (pilot, app, until, _, name, unit):
        dash = app.dash
        await until(lambda: dash.store.ranks(name) and any(s.decode.last_time() for s in dash.store.ranks(name)),
                    "decode lines over SSH (the tune measures at the concurrency they show)")
        before = dropin_of(h, unit), exec_start(h, unit)
        await pilot.press(key)
        await until(lambda: isinstance(app.screen, ConfirmScreen), "the preview", limit=600)
        await pilot.press("y")
        for _ in range(1200):  # a profile other than off (which runs already) applied
            if await asyncio.to_thread(dropin_of, h, unit) is not None:
                break
            await pilot.pause(0.1)
        else:
            pytest.fail("no profile was applied")
        await pilot.press("q")
        code = await leaves(pilot, app)
        said = dash.quitting.said
    assert code == 130, (said, journal_tail(h, unit))
    assert len(said) == 1 and "restored" in said[0] and "interrupted" in said[0], said
    assert (dropin_of(h, unit), exec_start(h, unit)) == before, unit_files(h, unit)
    assert h.ssh(["systemctl", "is-active", unit]).stdout.strip() == "active"
    assert not locked(h, unit)
    run = next(e for e in audit_entries(tmp_path / "audit.jsonl") if e["action"] == noun)
    assert (run["result"], run["restored"], run["exit_code"]) == ("interrupted", True, 130), run
