"""The keys that prove a change, for the shown host: x asks its server the smoke question (it
changes nothing, so read-only sessions keep it); b runs the A/B benchmark of the built-in
profiles through the same preview and confirm as the acting keys, shows its progress in the
action bar (b again stops it; the host is restored either way), then the results screen; T
tunes (prove.tune) at the load the dashboard's log shows (its own requests on top of it, one per
DP group), the same way, and at the end asks whether to leave the winner applied (no: the host
is restored as found)."""

from __future__ import annotations

import asyncio
from functools import partial

from mtptui.control.errors import ControlError
from mtptui.control.profiles import BUILTINS
from mtptui.printable import printable
from mtptui.tui.running import Running
from mtptui.tui.viewmodel import host_label

# The dashboard's benchmark: short enough to watch, long enough to rank the profiles. Two
# requests per slot at the highest concurrency: with one wave the figure is its slowest request's
# (tokens over the wall time), and a speculative profile's slowest is its least predictable
# prompt: in the demo one wave of 8 put mtp3 behind off one time in seven where it leads by 15%.
BENCH_PROFILES = ("off", "mtp1", "mtp3")
BENCH_CONCURRENCY = (1, 8)
BENCH_REQUESTS = 16
BENCH_MAX_TOKENS = 64
# The dashboard's tune: the command's default profiles, a budget to watch it in.
TUNE_PROFILES = ("off", "mtp1", "mtp2", "mtp3")
TUNE_BUDGET_S = 300.0
TUNE_REQUESTS = 8
TUNE_MAX_TOKENS = 64
SERVED_S = 60.0  # the newest log time this long back: where the concurrency served is read


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
    app.notify(f"smoke test {printable(r.line())}", severity="information" if r.result == PASS else "error",
               timeout=12.0 if r.result == PASS else 30.0, markup=False)


def bench(screen) -> None:
    _start(screen, "benchmark", _bench)


def tune(screen) -> None:
    _start(screen, "tune", _tune)


def _start(screen, noun: str, flow) -> None:
    """One of the proving runs (`noun`: what the action bar calls it) on the shown host; its key
    again while it runs stops it (the host is restored)."""
    dash, app = screen.dash, screen.app
    host = dash.host
    label = host_label(host)
    busy = dash.running.get(host)
    if busy is not None and busy.cancel is not None and busy.what.startswith(f"{noun} "):
        busy.cancel()
        app.notify(f"{label}: stopping the {noun}; the host is being restored as it was found",
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
    # the app's worker, as act.start's: a run that raised is told (MtpApp.on_worker_state_changed)
    app.run_worker(flow(screen, ctl, running), group="act", name=f"{noun} {label}", exit_on_error=False)


async def _bench(screen, ctl, running: Running) -> None:
    from mtptui.prove import results
    from mtptui.prove.bench import Bench
    from mtptui.tui.screens.results import ResultsScreen

    app = screen.app
    label = host_label(running.host)

    def progress(p) -> None:
        running.phase, running.detail = p.step, f"{p.profile} {p.status()}".strip()

    async def make() -> Bench:
        return Bench(ctl, [BUILTINS[n] for n in BENCH_PROFILES], list(BENCH_CONCURRENCY), BENCH_REQUESTS,
                     max_tokens=BENCH_MAX_TOKENS, on_progress=progress)

    try:
        b = await _confirmed(screen, running, "benchmark", make)
        if b is None:
            return
        data, saved = _ended(app, running, f"{label}: benchmark", b, await b.run(), results.save)
        if data["results"] and not running.stopping:
            app.push_screen(ResultsScreen(data, saved))
    finally:
        screen.dash.quitting.ended_action(running.host)


async def _confirmed(screen, running: Running, noun: str, make):
    """The run `make` builds (a Bench or a Tune), previewed and confirmed, and begun in the action
    bar (its key again cancels it); None, told, where it could not be planned or was cancelled."""
    from mtptui.control.launch import LaunchError
    from mtptui.tui.screens.confirm import ConfirmScreen

    app = screen.app
    label = host_label(running.host)
    try:
        runner = await make()
        await runner.preview()
    except (ControlError, LaunchError) as e:
        app.notify(f"{label}: {str(e).removeprefix(f'{label}: ')}", severity="error", markup=False)
        return None
    running.phase = "confirm"
    if not await app.push_screen_wait(ConfirmScreen(runner)):
        screen.flash(f"{label}: cancelled, nothing changed")
        return None
    running.begin(f"{noun} {label}")
    running.cancel = runner.cancel
    task = asyncio.current_task()
    assert task is not None  # the worker's
    running.stop, running.leave, running.leaving = (lambda why: runner.cancel()), task.cancel, runner.leaving
    return runner


def _ended(app, running: Running, head: str, runner, report, save) -> tuple[dict, str]:
    """A run's end told (its summary, coloured by how it ended) and its report saved: (the
    report's JSON, where it was saved or why not)."""
    data = report.to_json()
    try:
        saved = str(save(data)[0])
    except OSError as e:
        saved = f"not saved: {e.strerror or e}"
    app.notify(f"{head} {runner.summary()}", markup=False, timeout=30.0,
               severity="information" if report.exit_code == 0 else "error" if not report.restored else "warning")
    if running.stopping:  # a quit stopped it: told again once the dashboard has left
        app.dash.quitting.ended(printable(f"{head} {runner.summary()}"), put_back=report.restored)
    return data, saved


def served(store, host) -> tuple[int | None, str]:
    """The tune's concurrency for the host, from the decode lines the dashboard holds (their
    #running-req over the newest SERVED_S seconds of each rank, as prove.tune.served reads them):
    one request per DP group on top of that load, and the words that name it; (None, why)
    without such lines."""
    from mtptui.prove.tune import served as from_samples

    samples: list[tuple[str, int]] = []
    for s in store.ranks(host):
        last = s.decode.last_time()
        if last is not None:
            samples += [(s.rank, int(v)) for v in s.window("running_req", last - SERVED_S)[1]]
    found = from_samples(samples)
    if found is None:
        return None, f"no decode line with #running-req in the last {SERVED_S:g} s of its log"
    return found.own(), found.words(f"in its log's last {SERVED_S:g} s")


class KeepWinner:
    """The tune's last question, in the shape the confirm screen shows (a Preview): leave the
    winner applied? Cancel restores the host as it was found."""

    def __init__(self, t, plan) -> None:
        self.t, self.plan = t, plan

    @property
    def host(self) -> str:
        return self.t.host

    @property
    def prod(self) -> bool:
        return self.t.prod

    def title(self) -> str:
        return f"{self.t.hc.host} · {self.t.hc.unit}: apply the winner {self.t.tr.winner}?"

    def preview_lines(self) -> list[str]:
        from mtptui.prove import tune

        ending = tune.ending_lines(self.t.tr.to_json())
        return [f"apply the winner {self.t.tr.winner} and leave it running: through the normal apply path "
                "(restart, wait, verify; rolled back on failure); Cancel restores the host as it was found",
                *ending[:2], "", "against the unit as it was found:", *self.plan.preview_lines()]


async def _tune(screen, ctl, running: Running) -> None:
    from mtptui.control.profiles import resolve
    from mtptui.prove import tune
    from mtptui.tui.screens.confirm import ConfirmScreen
    from mtptui.tui.screens.results import ResultsScreen

    app, dash = screen.app, screen.dash
    label = host_label(running.host)
    shown: list[ResultsScreen] = []  # the results screen the last question was asked over
    measuring: list[tune.Tune] = []  # the tune while its rounds run (the action bar names the round)

    def progress(p) -> None:
        running.phase, running.detail = p.step, f"{p.profile} {p.status()}".strip()
        if measuring and not p.step.startswith("restore"):
            running.detail = (f"round {len(measuring[0].tr.rounds) + 1}, {min(p.steps_done + 1, p.steps_total)} of "
                              f"{p.steps_total}: {running.detail}")

    async def accept(t: tune.Tune) -> bool:
        """The rounds and the winner on the results screen, and over it the question."""
        measuring.clear()
        plan = await t.winner_plan()
        if plan is None:
            return False
        running.phase, running.detail = "asking", f"apply the winner {t.tr.winner}?"
        shown.append(ResultsScreen(t.tr.to_json(), ""))
        await app.push_screen(shown[0])
        keep = bool(await app.push_screen_wait(ConfirmScreen(KeepWinner(t, plan))))
        if shown[0] in app.screen_stack:
            shown[0].answered(keep)
        return keep

    async def make(concurrency: int, where: str) -> tune.Tune:
        profiles = [resolve(n, dash.config.profiles) for n in TUNE_PROFILES]  # [profiles.NAME] first
        return await tune.prepare(ctl, profiles, concurrency, where, TUNE_REQUESTS, budget_s=TUNE_BUDGET_S,
                                  accept=accept, max_tokens=TUNE_MAX_TOKENS, on_progress=progress)

    try:
        concurrency, where = served(dash.store, running.host)
        if concurrency is None:
            app.notify(f"{label}: nothing to tune for: {where} (the tune measures at the concurrency served)",
                       severity="warning", markup=False)
            return
        t = await _confirmed(screen, running, "tune", partial(make, concurrency, where))
        if t is None:
            return
        measuring.append(t)
        data, saved = _ended(app, running, f"{label}: tune", t, await t.run(), tune.save)
        if shown and shown[0] in app.screen_stack:
            shown[0].finish(data, saved)
        elif data["results"] and not shown and not running.stopping:
            app.push_screen(ResultsScreen(data, saved))
    finally:
        dash.quitting.ended_action(running.host)
