"""The Textual app: themes, keymap, workers for the sources and the parser pump. Small on purpose;
the screen is in screens/main.py, the state in controller.py."""

from __future__ import annotations

import asyncio
import signal

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.worker import Worker, WorkerState

from mtptui.printable import printable
from mtptui.sources.base import FAILED, SourceStatus
from mtptui.tui import gpu_poll, metrics_poll
from mtptui.tui.attach import learn_run
from mtptui.tui.bindings import PALETTE_BINDING, keymap_from
from mtptui.tui.controller import Dashboard
from mtptui.tui.gcpace import GcPacer
from mtptui.config.keys import KEYS
from mtptui.tui.palette import DashboardCommands
from mtptui.tui.running import STICKY_S
from mtptui.tui.screens.main import MainScreen
from mtptui.tui.themes import install_themes

KEY_HOLD_S = 0.12
SIGNALS = {signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP", signal.SIGINT: "ctrl-c"}
LEAVE_AFTER_S = 1.5  # a quit that put hosts back: how long their end stays on screen before it leaves
THEME_VARIABLE_DEFAULTS = {"frame": "#3E4855", "log-decode": "#7FB7E6", "log-prefill": "#9C8FE0", "log-event": "#E5B94E",
                           "chart-ranks": "#4FC3F7,#FFB74D,#81C784,#F06292,#9575CD,#FFF176,#E57373,#E0E0E0"}


class MtpApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "mtptui"
    BINDINGS = [PALETTE_BINDING]
    COMMANDS = App.COMMANDS | {DashboardCommands}

    def __init__(self, dash: Dashboard, *, tick_hz: float = 10.0, theme: str | None = None,
                 start_sources: bool = True) -> None:
        super().__init__()
        self.dash = dash
        # No animations (the tab underline slides over a dozen frames): every frame under a
        # flood of lines costs parsing time, and a dashboard has nothing to animate.
        self.animation_level = "none"
        self.gc_pacer = GcPacer()
        self.tick_hz = tick_hz
        self.start_sources = start_sources
        self._leaving = False  # a quit's last timer is set
        dash.quitting.on_done = self._leave_if_done
        self.mtp_themes, self.theme_problems = install_themes(self, theme or dash.config.theme)
        self.keymap_used, problems = keymap_from(dash.config.keys)
        self.theme_problems += problems
        if self.keymap_used:
            self.set_keymap(self.keymap_used)
        # The status bar's "ended; ← to seek" names the key this user has for it.
        back = self.keymap_used.get("seek_back") or next(k.keys for k in KEYS if k.id == "seek_back")
        dash.timeline.back_key = self.get_key_display(Binding(back.split(",")[0], ""))

    # -- leaving (tui/quitting.py): q, ctrl-c, ctrl-q, SIGTERM, SIGHUP put a host being changed back first
    def request_leave(self, why: str, *, key: bool = True) -> None:
        """An interrupt: leave now, or first stop the actions under way and put their hosts back,
        verified (the dashboard leaves once they are back); again asks (a key) or leaves them as
        they stand (a signal: no one may be at the terminal)."""
        from mtptui.tui import quitting

        q = self.dash.quitting
        what = q.request(why, can_ask=key)
        if what == quitting.QUIT:
            self.exit(return_code=q.code if q.active else 0)
        elif what == quitting.STOPPING:
            hosts = ", ".join(r.what for r in q.acting())
            self.notify(f"{why}: stopping {hosts}; putting the host back as it was, verified, then leaving; "
                        f"{why} again asks to leave it as it stands", severity="warning", timeout=STICKY_S,
                        markup=False)
        elif what == quitting.ASK:
            self.run_worker(self._ask_leave(), group="quit", exit_on_error=False)
        else:
            self.notify(f"{why}: leaving at once: {q.said[-1]}", severity="error", timeout=STICKY_S, markup=False)
        self._leave_if_done()

    async def _ask_leave(self) -> None:
        from mtptui.tui.quitting import LEAVE
        from mtptui.tui.screens.confirm import ConfirmScreen

        q = self.dash.quitting
        # a ModalScreen[bool] is a Screen[bool]: Textual's stubs want the invariant Screen[object] here
        leave = bool(await self.push_screen_wait(ConfirmScreen(LeaveNow(q.leaving()))))  # type: ignore[arg-type]
        if q.left or not q.running:
            return
        if q.answered(leave) == LEAVE:
            self.notify(f"leaving at once: {q.said[-1]}", severity="error", timeout=STICKY_S, markup=False)
        else:
            self.notify("going on putting it back", severity="warning", markup=False)
        self._leave_if_done()

    def _leave_if_done(self) -> None:
        """Every stopped action has ended: leave, its end on screen a moment first (and printed
        again once the screen is gone: launch.run_dashboard)."""
        q = self.dash.quitting
        if q.done and not self._leaving:
            self._leaving = True
            self.set_timer(LEAVE_AFTER_S, lambda: self.exit(return_code=q.code))

    async def action_quit(self) -> None:  # ctrl+q, Textual's own
        self.request_leave("ctrl-q")

    def action_help_quit(self) -> None:  # ctrl+c: Textual's "press q to quit", unless a host is being changed
        if self.dash.quitting.active or self.dash.quitting.acting():
            self.request_leave("ctrl-c")
        else:
            super().action_help_quit()

    def _on_signal(self, name: str) -> None:
        self.request_leave(name, key=False)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def get_default_screen(self) -> MainScreen:
        return MainScreen(self.dash, tick_hz=self.tick_hz)

    def on_mount(self) -> None:
        self.gc_pacer.start()
        if not self.is_headless:  # a real terminal: SIGTERM, SIGHUP (and a kill -INT) leave as q does
            loop = asyncio.get_running_loop()
            for sig, name in SIGNALS.items():
                loop.add_signal_handler(sig, self._on_signal, name)
        for p in self.theme_problems:
            self.notify(printable(p), severity="warning", timeout=8, markup=False)  # it quotes the config
        self.run_worker(self.dash.feed.run_pump(), name="pump", group="pump", exit_on_error=True)
        if self.start_sources:
            self.start_source_workers()
            for ctl in self.dash.controls.values():
                self.run_worker(self._tell_interrupted(ctl), group="interrupted", exit_on_error=False)
            for host, ctl in self.dash.reach.items():
                self.run_worker(learn_run(self.dash, host, ctl), group="attach", exit_on_error=False)
        metrics_poll.start(self, self.dash, poll=self.start_sources)  # a replay: its records' scrapes and GPUs
        gpu_poll.start(self, self.dash, poll=self.start_sources)
        if self.dash.opening is not None:
            self.run_worker(self._open_files, name=self.dash.opening.label, group="open", thread=True,
                            exit_on_error=False)

    def _open_files(self) -> None:
        """In a thread: the files read at once (tui/opening.py), then handed to the screen."""
        from mtptui.sources.opener import Stopped
        from mtptui.sources.file import InputError

        opening = self.dash.opening
        assert opening is not None  # the worker runs only for a session that opens files
        try:
            opened = opening.read()  # begun as the dashboard was made
        except Stopped:
            return  # the session ended first
        except InputError as e:
            self.call_from_thread(self._open_failed, str(e))
            return
        self.call_from_thread(self._opened, opened)

    def _opened(self, opened) -> None:
        self.dash.adopt(opened)
        screen = self.screen
        if isinstance(screen, MainScreen):  # else a modal is up: the main screen redraws on its return
            screen.redraw_now()

    def _open_failed(self, problem: str) -> None:
        assert self.dash.opening is not None
        self.dash.opening.finish(problem)
        self.dash.feed.status(SourceStatus(None, FAILED, problem))
        self.notify(problem, severity="error", timeout=STICKY_S, markup=False)

    async def _tell_interrupted(self, ctl) -> None:
        """On connect: an action on the host that a killed console left half done, said once."""
        from mtptui.control.errors import ControlError

        try:
            line = await ctl.interrupted() if hasattr(ctl, "interrupted") else None
        except ControlError:
            return  # the host cannot be reached: its source says so
        if line:
            self.notify(line, severity="warning", timeout=60.0, markup=False)

    def start_source_workers(self) -> None:
        for src in self.dash.sources:
            self.run_worker(src.run(self.dash.feed), name=src.label or "source", group="sources",
                            exit_on_error=False)

    async def on_unmount(self) -> None:
        if not self.is_headless:  # the signals back to their default (a fleet opens the next dashboard)
            loop = asyncio.get_running_loop()
            for sig in SIGNALS:
                loop.remove_signal_handler(sig)
        if self.dash.opening is not None:
            self.dash.opening.progress.stop()  # a read under way gives up (q during the load)
        for ctl in self.dash.controls.values():
            await ctl.close()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        w = event.worker
        if w.group == "act" and event.state == WorkerState.ERROR:
            # An action that raised is a bug in mtptui, not a verdict on the host: say so, and
            # keep it on screen, for the host may be left mid-change (the audit log has the steps).
            self.notify(f"{w.name} stopped by an error in mtptui: {type(w.error).__name__}: {w.error}",
                        severity="error", timeout=STICKY_S, markup=False)
            return
        if w.group == "sources" and event.state == WorkerState.SUCCESS:
            # --give-up-after: with every host given up on there is nothing left to watch, and
            # the command's exit code tells a script so.
            if self.dash.sources and all(getattr(s, "gave_up", None) for s in self.dash.sources):
                self.exit(return_code=1)
        if w.group == "sources" and event.state == WorkerState.ERROR:
            # A source must report trouble as a status; one that raised is a bug, shown not hidden.
            err = w.error
            self.dash.feed.status(SourceStatus(None, FAILED, f"{w.name}: {type(err).__name__}: {err}"))
            self.notify(f"{w.name} stopped: {err}", severity="error", timeout=10)

    async def on_event(self, event: events.Event) -> None:
        # Input first: while a key is handled and its frame drawn, the parser pump waits. Under a
        # flood of lines this is what keeps keypress-to-screen short; the backlog catches up after.
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)):
            self.dash.feed.hold(KEY_HOLD_S)
            self.gc_pacer.input()
        await super().on_event(event)

    def cycle_theme(self) -> str:
        names = self.mtp_themes or list(self.available_themes)
        i = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(i + 1) % len(names)]
        return self.theme



class LeaveNow:
    """The second interrupt's question, in the shape the confirm screen shows (a Preview)."""

    host, prod = "", False
    subtitle, go = "the hosts are being put back", ("Leave", "leaves them so")

    def __init__(self, leaving: str) -> None:
        self.leaving = leaving

    def title(self) -> str:
        return "leave the hosts as they stand now?"

    def preview_lines(self) -> list[str]:
        return [f"stopping at once would leave {printable(self.leaving)}",
                "Leave stops putting them back and quits; Cancel goes on putting them back, then quits"]
