"""The keys that change a server (s, [ ], p, R): each a flow in a worker for the shown host:
plan, preview and confirm, execute with the phase on screen, then tell the outcome. One action
per host at a time; the dashboard stays live throughout (execute is async)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from mtptui.control.plan import APPLY, RESTART, Plan
from mtptui.control.profiles import BUILTINS, ProfileError
from mtptui.control.errors import ControlError
from mtptui.control.restart import OK, ROLLBACK_FAILED
from mtptui.printable import printable
from mtptui.tui.running import Running, outcome_notice
from mtptui.tui.viewmodel import host_label

Choose = Callable[..., Awaitable["Plan | None"]]  # (app, control) -> the plan, or None: backed out


def start(screen, choose: Choose) -> None:
    """Starts a flow on the shown host, unless it cannot be acted on or an action runs there."""
    dash, app = screen.dash, screen.app
    host = dash.host
    label = host_label(host)
    ctl = dash.controls.get(host)
    if ctl is None:
        app.notify(f"{label}: mtptui cannot act on this host in this session", severity="warning", markup=False)
        return
    busy = dash.running.get(host)
    if busy is not None:
        app.notify(f"{label}: one action at a time; under way: {busy.text()}", severity="warning", markup=False)
        return
    running = dash.running[host] = Running(host, label)
    # the app's worker: its end reaches MtpApp.on_worker_state_changed (a screen's would not), which
    # tells a flow that raised
    app.run_worker(_flow(screen, ctl, choose, running), group="act", name=f"act on {label}", exit_on_error=False)


async def _flow(screen, ctl, choose: Choose, running: Running) -> None:
    app = screen.app
    label = host_label(running.host)
    try:
        try:
            plan = await choose(app, ctl)
        except (ControlError, ProfileError) as e:
            text = printable(str(e))  # the control's messages often name the host already
            app.notify(text if text.startswith(f"{label}:") else f"{label}: {text}", severity="error", markup=False)
            return
        if plan is None:
            return
        from mtptui.tui.screens.confirm import ConfirmScreen

        running.phase = "confirm"
        if not await app.push_screen_wait(ConfirmScreen(plan)):
            screen.flash(f"{label}: cancelled, nothing changed")
            return
        target = plan.profile.name if plan.action == APPLY and plan.profile else plan.action
        running.begin(f"restarting {label}" + (f" → {target}" if plan.action == APPLY else f" ({target})"))
        task = asyncio.current_task()
        assert task is not None  # the worker's

        def leave() -> None:  # a quit's second word: as it stands (also before the action began)
            ctl.abandon()
            task.cancel()

        running.stop, running.leave, running.leaving = ctl.interrupt, leave, ctl.leaving
        def on_phase(ev) -> None:
            running.on_phase(ev)
            if ev.phase.endswith("restart") and ev.state == "start":  # this run ends by mtptui's hand
                screen.dash.note_restart(running.host, target if ev.phase == "restart" else "rollback")

        try:
            outcome = await ctl.execute(plan, on_phase)
        except ControlError as e:  # could not even begin (the host went away since the preview)
            app.notify(f"{label}: nothing changed: {printable(str(e))}", severity="error", markup=False)
            return
        if outcome.exit_code == OK:
            await _settings_of_new_run(screen.dash, running.host, ctl)
        message, severity, timeout = outcome_notice(running.host, target, outcome)
        app.notify(printable(message, newlines=True), severity=severity, timeout=timeout, markup=False)
        if running.stopping:
            # put back, or in a state verified anyway (it ended just before): anything but a failed put-back
            screen.dash.quitting.ended(printable(message), put_back=outcome.exit_code != ROLLBACK_FAILED)
    finally:
        screen.dash.quitting.ended_action(running.host)


async def _settings_of_new_run(dash, host, ctl) -> None:
    """After a verified change: the new run's settings as the host says it was started, for a run
    whose settings line journald dropped (its rate limit): the status bar would keep the run
    before's (`spec off`) while the panels show speculation on. Nothing when the line came."""
    if not dash.needs_settings(host):
        return
    try:
        found = await ctl.running_settings()
    except ControlError:
        return
    if found:
        dash.note_settings(host, *found)


async def toggle(app, ctl) -> Plan:
    """s: off <-> the last profile that was on."""
    return await ctl.toggle_plan()


async def step(app, ctl, delta: int) -> Plan:
    """[ and ]: one draft step less or more than now."""
    from mtptui.control.profiles import step as step_profile

    return await ctl.plan(APPLY, step_profile(await ctl.current(), delta))


async def pick(app, ctl) -> Plan | None:
    """p: a profile from the picker."""
    from mtptui.tui.screens.profiles import ProfilePicker

    profiles = [*BUILTINS.values(), *app.dash.config.profiles.values()]
    profile = await app.push_screen_wait(ProfilePicker(host_label(ctl.host), profiles, await ctl.current()))
    return None if profile is None else await ctl.plan(APPLY, profile)


async def restart(app, ctl) -> Plan:
    """R: restart as is."""
    return await ctl.plan(RESTART)
