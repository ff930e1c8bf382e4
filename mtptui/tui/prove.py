"""The keys that prove a change, for the shown host: x asks its server the smoke question (it
changes nothing, so read-only sessions keep it); b runs the A/B benchmark of the built-in
profiles through the same preview and confirm as the acting keys, shows its progress in the
action bar (b again stops it; the host is restored either way), then the results screen."""

from __future__ import annotations

from mtptui.control.errors import ControlError
from mtptui.control.profiles import BUILTINS
from mtptui.tui.running import Running
from mtptui.tui.viewmodel import host_label

# The dashboard's benchmark: short enough to watch, long enough to rank the profiles.
BENCH_PROFILES = ("off", "mtp1", "mtp3")
BENCH_CONCURRENCY = (1, 8)
BENCH_REQUESTS = 8
BENCH_MAX_TOKENS = 64


def smoke(screen) -> None:
    dash, app = screen.dash, screen.app
    ctl = dash.reach.get(dash.host)
    if ctl is None:
        app.notify(f"{host_label(dash.host)}: this session reaches no server (a replay reads a log)",
                   severity="warning", markup=False)
        return
    screen.flash(f"{host_label(dash.host)}: asking the server")
    screen.run_worker(_smoke(app, ctl, dash.config.control), group="smoke", exit_on_error=False)


async def _smoke(app, ctl, control) -> None:
    from mtptui.prove.smoke import PASS, smoke_host

    r = await smoke_host(ctl, control.smoke_prompt, control.smoke_expect)
    app.notify(f"smoke test {r.line()}", severity="information" if r.result == PASS else "error",
               timeout=12.0 if r.result == PASS else 30.0, markup=False)


def bench(screen) -> None:
    dash, app = screen.dash, screen.app
    host = dash.host
    label = host_label(host)
    busy = dash.running.get(host)
    if busy is not None and busy.cancel is not None:
        busy.cancel()
        app.notify(f"{label}: stopping the benchmark; the host is being restored as it was found",
                   severity="warning", markup=False)
        return
    ctl = dash.controls.get(host)
    if ctl is None:
        app.notify(f"{label}: mtptui cannot act on this host in this session", severity="warning", markup=False)
        return
    if busy is not None:
        app.notify(f"{label}: one action at a time; under way: {busy.text()}", severity="warning", markup=False)
        return
    running = dash.running[host] = Running(host, label)
    screen.run_worker(_bench(screen, ctl, running), group="act", name=f"bench {label}", exit_on_error=False)


async def _bench(screen, ctl, running: Running) -> None:
    from mtptui.prove import results
    from mtptui.prove.bench import Bench
    from mtptui.tui.screens.confirm import ConfirmScreen
    from mtptui.tui.screens.results import ResultsScreen

    app = screen.app
    label = host_label(running.host)

    def progress(p) -> None:
        running.phase, running.detail = p.step, f"{p.profile} {p.status()}".strip()

    try:
        b = Bench(ctl, [BUILTINS[n] for n in BENCH_PROFILES], list(BENCH_CONCURRENCY), BENCH_REQUESTS,
                  max_tokens=BENCH_MAX_TOKENS, on_progress=progress)
        try:
            await b.preview()
        except ControlError as e:
            app.notify(f"{label}: {str(e).removeprefix(f'{label}: ')}", severity="error", markup=False)
            return
        running.phase = "confirm"
        if not await app.push_screen_wait(ConfirmScreen(b)):
            screen.flash(f"{label}: cancelled, nothing changed")
            return
        running.begin(f"benchmark {label}")
        running.cancel = b.cancel
        report = await b.run()
        data = report.to_json()
        try:
            saved = str(results.save(data)[0])
        except OSError as e:
            saved = f"not saved: {e.strerror or e}"
        code = report.exit_code
        app.notify(f"{label}: benchmark {b.summary()}", markup=False, timeout=30.0,
                   severity="information" if code == 0 else "error" if not report.restored else "warning")
        if data["results"]:
            app.push_screen(ResultsScreen(data, saved))
    finally:
        screen.dash.running.pop(running.host, None)
