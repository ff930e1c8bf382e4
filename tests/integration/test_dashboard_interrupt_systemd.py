"""Quitting the dashboard in the middle of an action on a real systemd host (issue 42): q (or
ctrl-c) while `s` applies a profile, while `b` benchmarks or while `T` tunes stops it and puts the
unit back as it was, verified, with its lock free, before the dashboard leaves (exit 130), saying
how it ended, as `mtptui spec` does on ctrl-c (test_spec_interrupt_systemd.py)."""

from __future__ import annotations

import asyncio
import signal

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
        # to be held at verify the server must first come back ready and decode: minutes on a loaded machine
        await until(lambda: any("held here" in r.detail for r in dash.running.values()), f"held at {phase}",
                    limit=3000)
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


def test_sigterm_to_the_dashboard_in_a_terminal_puts_the_unit_back(cluster, tmp_path, need):
    """The real `mtptui live` in a tmux pane: SIGTERM (how systemd or a closing session stops it)
    while `s` waits for the new run puts the unit back, verified, restores the terminal, and says
    how it ended after the screen is gone; exit 130."""
    import os
    import shlex
    import shutil
    import subprocess
    import sys
    import time
    import uuid

    from hosts.helpers import unique_unit
    from test_spec_systemd import install_unit, write_config

    need(shutil.which("tmux"), "tmux is not installed")
    h = cluster.hosts[2]
    unit = unique_unit("dterm")
    install_unit(h, unit)
    cfg = write_config(tmp_path, h, unit)
    name = f"gpu{h.index}"
    before = dropin_of(h, unit), exec_start(h, unit)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(MTPTUI_AUDIT_LOG=str(tmp_path / "audit.jsonl"), MTPTUI_TEST_HOLD="wait")
    sock = f"mtptui-test-{uuid.uuid4().hex[:8]}"
    # Textual draws on stderr: what is said after the screen is gone is read off the pane
    cmd = f"{shlex.join([sys.executable, '-m', 'mtptui', 'live', '--config', cfg, name])}; echo EXIT=$?; sleep 120"

    def tmux(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True, timeout=10, env=env)

    def wait_for(text: str, limit: float = 120.0) -> str:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            screen = tmux("capture-pane", "-p", "-t", "t").stdout
            if text in screen:
                return screen
            time.sleep(0.3)
        raise AssertionError(f"{text!r} never appeared:\n{screen}")

    assert tmux("new-session", "-d", "-x", "160", "-y", "48", "-s", "t", cmd).returncode == 0
    try:
        wait_for("SPEC OFF")  # the first batches
        tmux("send-keys", "-t", "t", "s")
        wait_for("nothing has changed yet")
        tmux("send-keys", "-t", "t", "y")
        wait_for("held here")
        shell = tmux("list-panes", "-t", "t", "-F", "#{pane_pid}").stdout.strip()
        pid = subprocess.run(["pgrep", "-P", shell], capture_output=True, text=True).stdout.split()[0]
        os.kill(int(pid), signal.SIGTERM)
        said = wait_for("EXIT=", 180)
    finally:
        tmux("kill-server")
    assert "EXIT=130" in said, said
    assert f"mtptui: {name}: mtp3 stopped: interrupted (SIGTERM) at wait; put back as it was: " in " ".join(said.split()), said
    assert "Traceback" not in said, said
    assert (dropin_of(h, unit), exec_start(h, unit)) == before, unit_files(h, unit)
    assert h.ssh(["systemctl", "is-active", unit]).stdout.strip() == "active"
    assert not locked(h, unit)
