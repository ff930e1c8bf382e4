"""The restart state machine: lock, write, reload, restart, wait for ready, verify; on any failure
roll back (restore, reload, restart, wait, verify the old state); unlock.

Three witnesses decide (control/verify.Watch): the journal, systemd's own state (polled every
second: a new InvocationID is the new run, `failed` or `auto-restart` its end) and the server's
HTTP side (/health 200 on the new run is ready; /server_info tells its settings and accept length
when the journal's lines do not come). Failure is any of: the unit failed or exited, systemd
scheduled an automatic restart, an error in the new run's log before ready, no ready within the
limit by any witness, verification failed. A journal line that never comes is no failure. Rollback restores
the drop-in as it was (or removes ours), and must itself be verified; if it fails too the action
stops touching the host and says so. An interrupt (`Action.interrupt`: ctrl-c, SIGTERM, SIGHUP)
is handled as a failure is: the host is put back as it was and verified (only the drop-in back and
reloaded when no restart was issued yet), result `interrupted`, exit 130; `Action.abandon` stops
at once, leaving the host where it stands. A link cut mid-action is retried until the deadline: every
step is safe to repeat (the lock knows its owner, the drop-in write is atomic, a restart already
seen in the journal is not issued twice, the follower resumes from the last cursor it read).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

from mtptui.control.errors import ControlError
from mtptui.control.probe import ServerProbe, accept_len_of, settings_of
from mtptui.control.verify import FAILED, LOADING, READY, STARTING, VERIFIED, Watch
from mtptui.transport.errors import TransportError

if TYPE_CHECKING:
    from mtptui.control.target import Target
    from mtptui.sources.journal import Run

_T = TypeVar("_T")

# Exit codes, shared by `mtptui spec` and the dashboard's messages. UNIT_FAILED: settings shown of
# a unit systemd calls failed; INTERRUPTED: stopped by a signal, the host put back and verified.
OK, NOT_RUN, BAD_ARGS, ROLLED_BACK, ROLLBACK_FAILED, UNIT_FAILED, INTERRUPTED = 0, 1, 2, 3, 4, 5, 130
APPLIED, RESULT_ROLLED_BACK, RESULT_ROLLBACK_FAILED, RESULT_NOT_RUN = "applied", "rolled_back", "rollback_failed", "not_run"
RESULT_INTERRUPTED = "interrupted"
STATUS_EVERY_S = 1.0  # how often the unit's state is asked while waiting
RECONNECT_EVERY_S = 1.0
# Ready, but fewer decode lines than verification needs this long after: /server_info's accept
# length stands in (journald may be dropping them)
HTTP_ACCEPT_AFTER_S = 10.0
STEPS_S = 300.0  # the bound on write, reload and restart together (a lost link retried within it)
UNLOCK_S = 60.0
# Tests only: the action holds still at this phase (after its step, or as its wait or verify
# begins) until interrupted or killed, so that a signal lands in that very phase (phases, by commas)
HOLD_ENV = "MTPTUI_TEST_HOLD"
# A server that still runs no request this long after ready, and again this long later with no
# request served between, is idle (its clients send nothing): no decode batch will come to verify
# by, so its settings are the verdict (not idle_after_ready's). One read was not enough: on a
# loaded machine the real vLLM's API server had not yet passed its clients' first requests on to
# the engine 5 s after ready (the engine tier, with traffic running), so it read as idle
IDLE_AFTER_S = 5.0


PhaseState: TypeAlias = Literal["start", "progress", "ok", "fail"]


@dataclass
class PhaseEvent:
    phase: str  # lock, write, reload, restart, wait, verify, rollback, rollback_wait, rollback_verify, unlock
    state: PhaseState
    detail: str = ""
    elapsed_s: float = 0.0  # since the action began

    def to_json(self) -> dict[str, object]:
        return {"phase": self.phase, "state": self.state, "detail": self.detail,
                "elapsed_s": round(self.elapsed_s, 3)}


@dataclass
class Outcome:
    result: str  # APPLIED, RESULT_ROLLED_BACK, RESULT_ROLLBACK_FAILED, RESULT_NOT_RUN
    exit_code: int
    message: str  # one line: "verified: accept len 2.41 after 3 batches", or why it failed
    phases: list[PhaseEvent] = field(default_factory=list)
    # journald's times of the last run's ready line and of the line that settled its verdict
    ready_ts: float | None = None
    verdict_ts: float | None = None


class StepFailed(Exception):
    """The new run (or the rollback's) did not come up as asked."""


@dataclass
class Settings:
    """How long to wait, and what counts as verified."""

    wait_timeout: float = 900.0  # stop + start + model load, until ready
    verify_batches: int = 3
    idle_after_ready: float = 60.0  # no decode batch this long after ready: judge by server_args
    stale_after: float = 1800.0
    break_lock: bool = False

    def put_back_s(self) -> float:
        """The most an interrupted action takes to put the host back and verify it: the steps
        (a lost link retried), the wait for ready, the verification, the unlock."""
        return STEPS_S + self.wait_timeout + self.idle_after_ready + UNLOCK_S


@dataclass
class _Waiting:
    """Where the wait for the new run stands: its limit, where the journal was read to, when the
    run became ready, and the watch's last step said."""

    deadline: float
    cursor: object
    ready_at: float | None = None
    last_step: str = ""


class Action:
    def __init__(self, target: Target[Any], *, old_dropin: str | None, new_dropin: str | None, write: bool,
                 expect_new: dict[str, Any], expect_old: dict[str, Any], engine: str, who: str,
                 settings: Settings | None = None,
                 on_phase: Callable[[PhaseEvent], None] | None = None,
                 probe: ServerProbe | None = None,
                 record_phase: Callable[[str], Awaitable[None]] | None = None,
                 on_verified: Callable[[], None] | None = None) -> None:
        self.t = target
        self.probe = probe  # the server's HTTP side; None: the journal and systemd decide alone
        self._quiet: tuple[float, float] | None = None  # (since, requests served then): idle per /metrics
        self.old_dropin = old_dropin
        self.new_dropin = new_dropin
        self.write = write
        self.expect_new = expect_new
        self.expect_old = expect_old
        self.engine = engine
        self.who = who
        self.s = settings or Settings()
        self.on_phase = on_phase
        # awaited as each step that touches the host begins: the lock's owner file names the
        # phase before the host changes, so a console killed there is reported at its true phase
        self.record_phase = record_phase
        # told once the new run is verified, before the finish: the audit log then holds that
        # verify passed, so a console killed in the finish is recovered forward, not rolled back
        self.on_verified = on_verified
        self.phases: list[PhaseEvent] = []
        self._t0 = time.monotonic()
        self.verified = ""
        self._changed = False  # whether the host differs from before (then a failure rolls back)
        self.touched = False  # a step that may change the host began (an interrupt puts it back)
        self.restarted = False  # a restart was issued (putting back then needs a verified run)
        self._times: tuple[float | None, float | None] = (None, None)
        self.phase = ""  # the phase under way
        self.putting_back = False  # rolling back (after a failure or an interrupt)
        self.interrupted: str | None = None  # why it was interrupted ("ctrl-c", "SIGTERM")
        self.abandoned = False
        self.left_at = ""  # the phase it was abandoned at
        self._ending = False  # decided: only the unlock is left
        self.finishing = False  # verified: only the finish and the unlock are left
        self._release = asyncio.Event()  # a test's hold (HOLD_ENV) let go
        self._task: asyncio.Task[Any] | None = None
        self._hold = set(filter(None, os.environ.get(HOLD_ENV, "").split(",")))

    # --- reporting ---------------------------------------------------------------------------------

    def _say(self, phase: str, state: PhaseState, detail: str = "", *, keep: bool = False) -> None:
        """keep: a progress worth the audit's record too (a lost link), not only the screen's."""
        ev = PhaseEvent(phase, state, detail, time.monotonic() - self._t0)
        if state == "start":
            self.phase = phase
        if state != "progress" or keep:
            self.phases.append(ev)
        if self.on_phase is not None:
            self.on_phase(ev)

    def note(self, detail: str) -> None:
        """What the target found on the host, said as the phase under way and kept in the audit."""
        self._say(self.phase or "lock", "progress", detail, keep=True)

    async def _step(self, phase: str, make: Callable[[], Awaitable[_T]], deadline: float, detail: str = "") -> _T:
        """One step, retried across a lost link until the deadline."""
        await self._record(phase)
        self._say(phase, "start", detail)
        while True:
            try:
                r = await make()
            except TransportError as e:
                if e.permanent or time.monotonic() > deadline:
                    self._say(phase, "fail", str(e))
                    raise ControlError(str(e)) from None
                self._say(phase, "progress", f"link lost ({e}); reconnecting", keep=True)
                await self._reconnect(deadline)
                continue
            except ControlError as e:
                self._say(phase, "fail", str(e))
                raise
            await self._held(phase)
            self._say(phase, "ok", detail)
            return r

    async def _record(self, phase: str) -> None:
        """The phase written where another console reads it, before it is said or begun."""
        if self.record_phase is not None and phase not in ("lock", "unlock"):
            await self.record_phase(phase)

    async def _held(self, phase: str) -> None:
        if phase in self._hold:
            self._hold.discard(phase)
            self._say(phase, "progress", f"held here ({HOLD_ENV})")
            await self._release.wait()  # an interrupt once verified lets the finish go on

    # --- interrupts ------------------------------------------------------------------------------

    def interrupt(self, why: str) -> bool:
        """Stops the change and puts the host back as it was, verified (the action's run() then
        returns `interrupted`, exit 130). A rollback under way goes on (it is putting the host
        back). Once the new run is verified (`finishing`) nothing is put back: the finish, bounded
        by UNLOCK_S, completes and the action ends applied. False when there is nothing to
        interrupt, or it was already."""
        if self.interrupted is not None or self.abandoned or self._ending:
            return False
        self.interrupted = why
        if self.finishing:
            self._release.set()
        elif self._task is not None and not self.putting_back:
            self._task.cancel()
        return True

    def abandon(self) -> None:
        """Stops at once, putting nothing back: the host is left where it stands (the operator
        asked to, or another console holds the lock now). run() raises CancelledError."""
        if not self.abandoned:
            self.left_at = self.phase or "lock"
        self.abandoned = True
        if self._task is not None:
            self._task.cancel()

    def _caught(self) -> bool:
        """An interrupt's cancel, caught: the action goes on to put the host back."""
        if self.interrupted is None or self.abandoned:
            return False
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        self._say(self.phase or "lock", "fail", f"interrupted ({self.interrupted})")
        return True

    async def _reconnect(self, deadline: float) -> None:
        runner = self.t.runner
        while True:
            try:
                await runner.close()
                await runner.connect()
                return
            except TransportError as e:
                if e.permanent or time.monotonic() > deadline:
                    raise ControlError(f"lost the host and could not reconnect: {e}") from None
                await asyncio.sleep(RECONNECT_EVERY_S)

    # --- the machine -------------------------------------------------------------------------------

    async def run(self) -> Outcome:
        if self.interrupted is not None:
            return Outcome(RESULT_INTERRUPTED, INTERRUPTED, f"interrupted ({self.interrupted}) before it began: "
                           "nothing changed", self.phases)
        self._task = asyncio.current_task()
        try:
            return await self._run()
        finally:
            self._task = None

    async def _run(self) -> Outcome:
        deadline = time.monotonic() + 120
        try:
            await self._step("lock", lambda: self.t.lock(self.who, stale_after=self.s.stale_after,
                                                         break_lock=self.s.break_lock), deadline)
        except ControlError as e:
            return Outcome(RESULT_NOT_RUN, NOT_RUN, str(e), self.phases)
        except asyncio.CancelledError:
            if not self._caught():
                raise
            await self._unlock()  # a lock half taken is ours: its mkdir may have been done
            return Outcome(RESULT_INTERRUPTED, INTERRUPTED, f"interrupted ({self.interrupted}) at lock: "
                           "nothing changed", self.phases)
        try:
            try:
                msg = await self._bring_up(self.new_dropin, self.expect_new, "")
                if self.interrupted is None:
                    self.finishing = True
                    await self._finish()
                    if self.interrupted is not None:
                        msg += f"; {self.interrupted} after verify: kept, not put back"
                    return Outcome(APPLIED, OK, msg, self.phases, *self._times)
                # its cancel was lost (a wait_for whose inner step ended at that very moment)
                why, by_interrupt = f"interrupted ({self.interrupted}) at {self.phase}", True
            except (StepFailed, ControlError) as e:
                why, by_interrupt = str(e), False
                if isinstance(e, ControlError) and not self._changed:
                    # refused before anything changed (sudo, permissions): nothing to roll back
                    return Outcome(RESULT_NOT_RUN, NOT_RUN, why, self.phases)
            except asyncio.CancelledError:
                if not self._caught():
                    raise
                why, by_interrupt = f"interrupted ({self.interrupted}) at {self.phase}", True
                if not self.touched:
                    return Outcome(RESULT_INTERRUPTED, INTERRUPTED, f"{why}: nothing changed", self.phases)
            return await self._roll_back(why, by_interrupt)
        finally:
            self._ending = True
            await self._unlock()

    async def _roll_back(self, why: str, by_interrupt: bool) -> Outcome:
        """The host put back as it was before this action, verified: the old drop-in (or ours
        removed), reload, restart, wait, verify; without the restart when none was issued yet
        (the run never changed). After an interrupt the result is `interrupted`."""
        self.putting_back = True
        self._say("rollback", "start", why)
        try:
            if self.restarted or not self.write:
                msg = await self._bring_up(self.old_dropin, self.expect_old, "rollback_")
            else:
                msg = await self._files_back()
        except (StepFailed, ControlError) as e2:
            self._say("rollback", "fail", str(e2))
            return Outcome(RESULT_ROLLBACK_FAILED, ROLLBACK_FAILED,
                           f"ROLLBACK FAILED: {e2} (after: {why}); mtptui stops touching this host",
                           self.phases)
        self._say("rollback", "ok", msg)
        if by_interrupt:
            return Outcome(RESULT_INTERRUPTED, INTERRUPTED, f"{why}; put back as it was: {msg}",
                           self.phases, *self._times)
        return Outcome(RESULT_ROLLED_BACK, ROLLED_BACK, f"{why}; rolled back, old state {msg}",
                       self.phases, *self._times)

    async def _files_back(self) -> str:
        """Before any restart: the old drop-in back and reloaded, then read back to check it (the
        running server was never replaced, so its settings are the old ones)."""
        steps_deadline = time.monotonic() + STEPS_S
        await self._step("rollback_write", lambda: self.t.write(self.old_dropin), steps_deadline,
                         "remove our drop-in" if self.old_dropin is None else "")
        await self._step("rollback_reload", self.t.reload, steps_deadline)

        async def read_back() -> str:
            st = await self.t.read()
            if st.dropin != self.old_dropin:
                raise ControlError("the drop-in read back is not the one put back")
            if not st.agrees:
                raise ControlError("systemd has not loaded the drop-in put back (a daemon-reload is pending)")
            return (f"not restarted: the drop-in back as it was, reloaded; the unit {st.active or 'unknown'} "
                    "on its old run")

        return await self._step("rollback_verify", read_back, steps_deadline, "the drop-in read back")

    async def _finish(self) -> None:
        """The new run is verified (said to on_verified first): what the target kept for a
        rollback goes (a `docker run` container's old container, control/container.py). A
        failure here is said, not rolled back."""
        if self.on_verified is not None:
            self.on_verified()
        finish = getattr(self.t, "finish", None)

        async def finishing() -> None:
            await self._held("finish")  # (tests) verified, and what was kept not yet removed
            if finish is not None:
                await finish()

        try:
            await self._step("finish", finishing, time.monotonic() + UNLOCK_S)
        except ControlError:
            pass  # said in the phases; what was kept stays, stopped

    async def _unlock(self) -> None:
        try:
            await self._step("unlock", self.t.unlock, time.monotonic() + UNLOCK_S)
        except ControlError:
            pass  # said in the phases; the lock goes stale and can be broken

    async def _bring_up(self, dropin: str | None, expect: dict[str, Any], prefix: str) -> str:
        steps_deadline = time.monotonic() + STEPS_S
        if self.write:
            self.touched = True
            await self._step(prefix + "write", lambda: self.t.write(dropin), steps_deadline,
                             "remove our drop-in" if dropin is None else "")
            self._changed = True  # the mv is atomic: before it, nothing on the host changed
            await self._step(prefix + "reload", self.t.reload, steps_deadline)
        async def where_now() -> tuple[Any, Run | None]:
            # where the journal stands, and the run a restart replaces (a run's lines name it)
            return await self.t.mark(), await self.t.running()

        mark, replaced = await self._step(prefix + "mark", where_now, steps_deadline)
        watch = Watch(expect, batches=self.s.verify_batches, engine=self.engine, replaced=replaced)
        tries = [0]

        async def restart_once() -> None:
            # A retry after a lost link: the first try may have reached systemd already.
            tries[0] += 1
            if tries[0] > 1 and await self.t.restarted_since(mark):
                return
            self._changed = True
            await self.t.restart()

        self.touched = self.restarted = True  # from here the run may be replaced
        await self._step(prefix + "restart", restart_once, steps_deadline)
        try:
            await self._wait(watch, mark, prefix)
        finally:
            self._times = (watch.ready_ts, watch.verdict_ts)
        return watch.summary()

    async def _wait(self, watch: Watch, mark: object, prefix: str) -> None:
        w = _Waiting(deadline=time.monotonic() + self.s.wait_timeout, cursor=mark)
        await self._record(prefix + "wait")
        self._say(prefix + "wait", "start", "waiting for the stop")
        await self._held(prefix + "wait")
        while not watch.done:
            try:
                proc = await self.t.follow(w.cursor)
            except TransportError as e:
                await self._link_lost(e, w, prefix, "cannot follow the journal")
                continue
            try:
                await self._follow(watch, proc, w, prefix)
            except TransportError as e:
                await self._link_lost(e, w, prefix, "lost the journal")
            finally:
                await proc.close()
        self._verdict(watch, w, prefix)

    async def _link_lost(self, e: TransportError, w: _Waiting, prefix: str, what: str) -> None:
        """A lost link while waiting: reconnect and go on, unless it is for good or time is up."""
        if e.permanent or time.monotonic() > w.deadline:
            raise StepFailed(f"{what}: {e}") from None
        self._say(prefix + "wait", "progress", f"link lost ({e}); reconnecting", keep=True)
        await self._reconnect(w.deadline)

    async def _follow(self, watch: Watch, proc: Any, w: _Waiting, prefix: str) -> None:
        """Feeds the journal's lines to the watch, asking the other witnesses every STATUS_EVERY_S,
        until it decides, the follower ends, or time is up. wait_timeout bounds the wait for ready;
        after it, idle_after_ready bounds the verification (an idle server ready just before the
        limit is still judged)."""
        next_status = time.monotonic() + STATUS_EVERY_S
        while not watch.done:
            now = time.monotonic()
            if w.ready_at is None and now > w.deadline:
                raise StepFailed(f"not ready after {self.s.wait_timeout:.0f} s ({watch.step})")
            if w.ready_at is not None and now - w.ready_at > self.s.idle_after_ready:
                watch.idle_verdict()
                return
            got = await proc.lines(max(0.05, next_status - now))
            if got is None:
                return  # the follower ended: start it again after the last cursor
            if got:
                watch.feed(got)
                if watch.cursor:
                    w.cursor = watch.cursor
            if time.monotonic() >= next_status:
                next_status = time.monotonic() + STATUS_EVERY_S
                await self._witnesses(watch, w.ready_at)
            if watch.state == READY and w.ready_at is None:
                await self._now_ready(w, prefix)
            if watch.step != w.last_step and not watch.done:
                w.last_step = watch.step
                self._say(prefix + ("verify" if w.ready_at else "wait"), "progress", watch.step)

    async def _now_ready(self, w: _Waiting, prefix: str) -> None:
        """The new run is ready: the wait ends and the verification begins."""
        w.ready_at = time.monotonic()
        self._quiet = None  # this run's idleness, not a run before it
        self._say(prefix + "wait", "ok", "ready")
        await self._record(prefix + "verify")
        self._say(prefix + "verify", "start", "waiting for decode batches")
        await self._held(prefix + "verify")

    def _verdict(self, watch: Watch, w: _Waiting, prefix: str) -> None:
        """What the watch decided, said; a failure raises."""
        if watch.state == FAILED:
            self._say(prefix + ("verify" if w.ready_at else "wait"), "fail", watch.reason)
            raise StepFailed(watch.reason)
        if watch.state == VERIFIED:
            if w.ready_at is None:
                self._say(prefix + "wait", "ok", "ready")
            self.verified = watch.summary()
            self._say(prefix + "verify", "ok", self.verified)

    async def _witnesses(self, watch: Watch, ready_at: float | None) -> None:
        """systemd's state, then the server's HTTP side where the journal has not told enough."""
        st = await self.t.status()
        watch.systemd(st)
        if watch.done or not watch.started:
            return
        probe = self.probe
        if watch.state in (STARTING, LOADING) and st.get("ActiveState", "active") == "active" and probe:
            if await probe.healthy():
                watch.http_ready()
        if watch.needs_settings and not await self._settings_by_http(watch):
            return
        if probe is None or watch.state != READY or ready_at is None:
            return
        if await self._idle_by_http(watch, probe, ready_at):
            return
        await self._accept_by_http(watch, probe, ready_at)

    async def _settings_by_http(self, watch: Watch) -> bool:
        """Ready without a server_args line: the settings from /server_info, else the run fails
        (False)."""
        probe = self.probe
        info = await probe.server_info() if probe else None
        if info is None:
            why = f" and /server_info did not answer ({probe.why_not})" if probe and probe.why_not else ""
            watch.fail(f"ready, but no server_args line was seen for the new run{why}")
            return False
        watch.http_settings(settings_of(info))
        return True

    async def _idle_by_http(self, watch: Watch, probe: ServerProbe, ready_at: float) -> bool:
        """Ready, no decode batch, and the server says it serves nothing: no batch can come, so it is
        judged by its settings, not after a minute, once that held IDLE_AFTER_S with the same
        requests served (True when the watch was told)."""
        if not (watch.decode == 0 and watch.seen is not None and time.monotonic() - ready_at > IDLE_AFTER_S):
            return False
        if not await probe.idle():
            self._quiet = None
            return False
        now = time.monotonic()
        if self._quiet is None or self._quiet[1] != probe.served:
            self._quiet = (now, probe.served)
            return False
        if now - self._quiet[0] >= IDLE_AFTER_S:
            watch.http_idle()
            return True
        return False

    async def _accept_by_http(self, watch: Watch, probe: ServerProbe, ready_at: float) -> None:
        """Ready a while with too few decode lines: the accept length from /server_info, else from
        /metrics."""
        if not (watch.decode < watch.batches_needed and time.monotonic() - ready_at > HTTP_ACCEPT_AFTER_S):
            return
        info = await probe.server_info()
        accept, source = (accept_len_of(info) if info is not None else None), "/server_info"
        if accept is None:  # an info without an accept length (or none): /metrics may have it
            metered = await probe.metrics_accept_len()
            if metered is not None:
                accept, source = metered, "/metrics"
        if info is not None or accept is not None:
            watch.http_accept(accept, source)
