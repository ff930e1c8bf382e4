"""One host's control: plan an action from the unit as it is, then run it through the restart
machine and write the audit log. The dashboard keeps one per host; `mtptui spec` makes one per
host named. A host is reached as the dashboard reaches it (SSH, this machine, the demo's child)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from mtptui.control import audit, launch, systemd, version
from mtptui.control import lock as lockinfo
from mtptui.control.errors import BadProfile, ControlError
from mtptui.control.plan import APPLY, RESTART, RESTORE, REVERT, Plan, PlanAction
from mtptui.control.probe import ServerProbe, settings_of
from mtptui.control.profiles import BUILTINS, Profile, ProfileError, check_profile
from mtptui.control.restart import (RESULT_INTERRUPTED, ROLLBACK_FAILED, Action, Outcome, PhaseEvent,
                                    Settings)
from mtptui.control.target import Follower, HostTarget, SystemdTarget, Target, UnitState
from mtptui.control.verify import EXPECT_KEYS, SPEC_KEYS
from mtptui.core.epochs import adaptive_words
from mtptui.transport.aio import wait_for
from mtptui.transport.errors import TransportError
from mtptui.transport.tunnel import Forward

if TYPE_CHECKING:
    from mtptui.config import Config, HostConfig
    from mtptui.sources.base import Source

__all__ = ["ControlError", "HostControl", "host_controls"]

RESULT_LOCK_LOST = "lock_lost"  # another console took the lock for gone mid-action: it stopped
_DROPIN_PROFILE = re.compile(r"^# Written by mtptui for .*: speculation profile (.*)\.$", re.M)
RECORD_S = 10.0  # the most a phase's write into the owner file holds the action up


class HostControl:
    def __init__(self, target: Target[Any], *, host: str, prod: bool = False, settings: Settings | None = None,
                 where: str = "", http_port: int | None = None) -> None:
        self.target = target
        self.host = host
        self.unit = target.unit
        self.prod = prod
        self.settings = settings or Settings()
        self.where = where or target.where
        self.last_on: Profile = BUILTINS["mtp3"]
        self.running = False  # an action is under way (a second one is refused)
        self.action: Action | None = None  # the action under way, while one is
        self._interrupt: str | None = None  # an interrupt that came before the action began
        self.http_port = http_port  # the config's; None: the server's --port (or its default)
        self._connected = False
        self._forward: Forward | None = None  # the tunnel to the server's HTTP port, while its connection lives
        self._version: tuple[tuple[str, ...], str | None, str] | None = None  # (argv, version, from)

    async def _ensure(self) -> None:
        if not self._connected:
            try:
                await self.target.runner.connect()
            except Exception as e:  # noqa: BLE001 - a TransportError, said in one line
                raise ControlError(str(e)) from None
            self._connected = True

    async def close(self) -> None:
        if self._forward is not None:
            await self._forward.close()
            self._forward = None
        if self._connected:
            await self.target.runner.close()
            self._connected = False

    async def reconnect(self) -> None:
        """After a lost link: a fresh connection (the tunnel follows it on next use)."""
        await self.close()
        await self._ensure()

    async def endpoint(self) -> Forward:
        """The server's HTTP side, reachable from here (transport.tunnel.Forward): over SSH a
        local port forwarded to the config's http_port, else to the unit's --port and --host."""
        if self._forward is not None and self._forward.alive():
            return self._forward
        if self.http_port:
            await self._ensure()
            host, port = "127.0.0.1", self.http_port
        else:
            try:
                host, port = launch.listen_address((await self.state()).argv)
            except launch.LaunchError as e:
                raise ControlError(f"{self.host}: {self.unit}: {e} (set http_port for this host)") from None
            published = getattr(self.target, "published", None)  # a container's port, as the host reaches it
            if published is not None:
                found = published(port)
                if found is None:  # never another server's port of the same number on the host
                    raise ControlError(f"{self.host}: the server's port {port} is not reachable from the host "
                                       "(neither the host's network nor published): set http_port for this host")
                host, port = found
        try:
            self._forward = await self.target.runner.forward(host, port)
        except Exception as e:  # noqa: BLE001 - a TransportError, said in one line
            raise ControlError(f"{self.host}: cannot forward a port to the server: {e}") from None
        return self._forward

    async def follow_log(self) -> Follower:
        """The unit's log from now on (`.lines(timeout)`, `.close()`)."""
        await self._ensure()
        try:
            return await self.target.follow(await self.target.mark())
        except Exception as e:  # noqa: BLE001 - a TransportError, said in one line
            raise ControlError(f"{self.host}: cannot follow the log: {e}") from None

    async def state(self) -> UnitState:
        await self._ensure()
        try:
            return await self.target.read()
        except ControlError:
            raise
        except Exception as e:  # noqa: BLE001 - transport trouble, said in one line
            raise ControlError(f"{self.host}: {e}") from None

    async def last_server_args(self) -> dict[str, Any] | None:
        """The settings the server itself reported at its last start (`server_args=`)."""
        await self._ensure()
        if not isinstance(self.target, HostTarget):
            return None  # the demo's child: its log is the dashboard's
        return await self.target.last_server_args()

    async def server_version(self, argv: list[str] | None = None) -> tuple[str | None, str]:
        """(the engine's version, where it was read) for the unit's ExecStart (or argv): its
        interpreter first (what the next start runs), then the server's own answer; (None, why)
        when neither tells. A known one is kept until the ExecStart changes."""
        if argv is None:
            argv = (await self.state()).argv
        if self._version is not None and self._version[0] == tuple(argv):
            return self._version[1], self._version[2]
        try:
            found = launch.find_launch(argv)
        except launch.LaunchError as e:
            return None, str(e)
        await self._ensure()
        # a container's interpreter is inside it (docker exec), not on the host
        runner = getattr(self.target, "exec_runner", None) or self.target.runner
        v = await version.from_interpreter(runner, version.interpreter_argv(argv, found))
        where = "the unit's interpreter"
        if v is None:
            try:
                fwd = await self.endpoint()
            except ControlError:
                fwd = None
            v, path = await version.from_server(fwd, found.engine)
            where = f"the server's {path}" if v else "neither the interpreter nor the server said"
        if v is not None:  # an unknown version is asked again next time (the server may be up then)
            self._version = (tuple(argv), v, where)
        return v, where

    async def server_name(self) -> str | None:
        """`SGLang 0.5.23` (`SGLang 0.5.12 (simulator)` for mtptui's stand-in) for the unit's
        server; None when its ExecStart names no server mtptui knows, or its version is not known."""
        st = await self.state()
        try:
            found = launch.find_launch(st.argv)
        except launch.LaunchError:
            return None
        engine = found.engine
        v, where = await self.server_version(st.argv)
        simulated = where.endswith(version.SIMULATED) or "mtptui.sim" in found.kind
        if v is None and not simulated:
            return None  # not known yet (the server may be loading): asked again later
        name = launch.ENGINE_NAMES.get(engine, engine) + (f" {v}" if v else "")
        return f"{name} (simulator)" if simulated else name

    async def running_settings(self) -> tuple[dict[str, Any], str] | None:
        """(the settings the unit's current run was started with, where they were read) for a
        run whose settings line is not in the journal (vacuumed, or dropped by a rate limit):
        its ExecStart as systemd holds it, else the server's own /server_info. Under the names a
        server_args line gives them. None while the unit is not running, or when neither tells."""
        st = await self.state()
        if st.active not in ("active", "activating", "reloading"):
            return None
        if st.agrees:  # no edit since the unit was loaded: the run was started with this
            try:
                v = (await self.server_version(st.argv))[0]
                flags, ctx = launch.effective_flags(st.argv, v), launch.context_of(st.argv, v)
                engine = launch.find_launch(st.argv).engine
            except launch.LaunchError:
                pass
            else:
                spec = {**{k: flags.get(k) for k in launch.SPEC_KEYS}, "model_path": ctx.model_path,
                        "tp_size": ctx.tp, "dp_size": ctx.dp, "enable_dp_attention": ctx.enable_dp_attention,
                        "enable_two_batch_overlap": "--enable-two-batch-overlap" in ctx.flags_on}
                if engine == "sglang" and str(spec["algorithm"]).upper() == "NEXTN":
                    spec["algorithm"] = "EAGLE"  # as SGLang logs and reports it (every version since 0.4.6)
                return spec, "ExecStart"
        info = await ServerProbe(self.endpoint).server_info()
        return (settings_of(info), "/server_info") if info else None

    async def current(self) -> dict[str, Any]:
        """The speculation settings as the unit's ExecStart has them now."""
        st = await self.state()
        return launch.spec_flags(st.argv, (await self.server_version(st.argv))[0])  # its abbreviations

    async def plan(self, action: PlanAction, profile: Profile | None = None, *,
                   before: UnitState | None = None) -> Plan:
        """What `action` would do now. RESTORE writes back the drop-in of `before` (a UnitState
        read earlier by `state()`), byte for byte, or removes ours when there was none."""
        st = await self.state()
        try:
            found = launch.find_launch(st.argv)
        except launch.LaunchError as e:
            raise ControlError(f"{self.host}: {self.unit}: {e}") from None
        server_version, version_from = await self.server_version(st.argv)
        current = launch.spec_flags(st.argv, server_version)
        base = st.base
        if action == APPLY:
            if profile is None:
                raise BadProfile("which profile?")
            try:
                check_profile(profile, launch.context_of(base, server_version), found.engine)
                new_argv = launch.apply_profile(base, profile, server_version)
                new_dropin = self.target.render(new_argv, dict(profile.env), profile=profile.name,
                                                written_by=audit.local_user(), prefix=st.prefix)
            except ProfileError as e:
                raise BadProfile(str(e)) from None  # it names the profile already
            except (systemd.UnitSyntaxError, launch.LaunchError) as e:
                raise BadProfile(f"profile {profile.name}: {e}") from None
        elif action == REVERT:
            if st.dropin is None:
                raise ControlError(f"{self.host}: {self.unit} has no mtptui drop-in to remove")
            new_argv, new_dropin = list(base), None
        elif action == RESTART:
            new_argv, new_dropin = list(st.argv), st.dropin
        elif action == RESTORE:
            if before is None:
                raise ControlError("restore to what?")
            # no drop-in: the unit's own ExecStart, as it is now
            new_argv = list(before.argv) if before.dropin is not None else list(base)
            new_dropin = before.dropin
        else:
            raise ControlError(f"unknown action {action!r}")
        write = action != RESTART
        commands = self.target.commands_for(new_dropin, write=write)
        plan = Plan(host=self.host, unit=self.unit, action=action, profile=profile, engine=found.engine,
                    old_argv=list(st.argv), new_argv=new_argv, old_dropin=st.dropin,
                    new_dropin=new_dropin, commands=commands, current=current,
                    last_start_s=st.last_start_s, starts_s=list(st.starts_s), starts_from=st.starts_from,
                    prod=self.prod, where=self.where)
        plan.server_version, plan.version_from = server_version, version_from
        if not st.agrees:
            plan.warnings = ["systemctl show differs from the unit files: a daemon-reload is pending "
                             "(applying reloads it)"]
        return plan

    async def recover_plan(self) -> tuple[Plan, str]:
        """The plan that puts back the last settings an action verified on this host and unit
        (the audit log's drop-in, byte for byte), and a line saying which. Raises ControlError
        when the audit log has none."""
        try:
            found = audit.last_verified(self.host, self.unit, where=self.where)
        except audit.AuditError as e:
            raise ControlError(str(e)) from None
        if found is None:
            raise ControlError(f"{self.host}: the audit log ({audit.audit_path()}) has no verified settings of "
                               f"{self.unit} to recover: name a PROFILE, or --revert")
        entry, dropin, argv = found
        before = UnitState(argv=argv, source="the audit log", dropin=dropin, agrees=True, active="")
        settle = getattr(self.target, "settle", None)  # a container kept by a verified action cut off
        if settle is not None:
            await self.state()
            settle(dropin)
        plan = await self.plan(RESTORE, before=before)
        said = (f"{self.host}: recovering the settings verified by {entry.get('user') or 'someone'} at "
                f"{lockinfo.clock(entry.get('time'))}: {dropin_name(dropin, argv)}")
        return plan, said

    def interrupt(self, why: str) -> bool:
        """The action under way stops and puts the host back as it was, verified (its outcome
        is then `interrupted`, exit 130). False when none is under way."""
        if self.action is not None:
            return self.action.interrupt(why)
        if self.running:  # between its start and its action's: the action stops as it begins
            self._interrupt = why
            return True
        return False

    @property
    def finishing(self) -> bool:
        """The action under way has verified its run: an interrupt no longer puts anything back."""
        return self.action is not None and self.action.finishing

    def abandon(self) -> None:
        """The action under way stops at once, leaving the host where it stands."""
        if self.action is not None:
            self.action.abandon()

    def leaving(self) -> str:
        """What stopping the action under way at once would leave, in words."""
        a = self.action
        if a is None:
            return f"{self.host}: no action under way"
        where = a.phase or "lock"
        if not a.touched:
            return f"{self.host}: at {where}, nothing changed yet"
        if a.putting_back:
            state = "being put back: its drop-in" + (" back as it was" if a.phase.startswith("rollback_") and
                                                     a.phase != "rollback_write" else " maybe not yet back")
        else:
            state = "changed: the new drop-in" + (" written" if a.phase != "write" else " maybe written")
        restarted = ", the unit restarted and not verified" if a.restarted else ""
        return (f"{self.host} · {self.unit} at {where}, {state}{restarted}; its lock freed; "
                f"`mtptui spec {self.host} --recover` puts back the last verified settings")

    async def execute(self, plan: Plan, on_phase: Callable[[PhaseEvent], None] | None = None, *,
                      break_lock: bool = False) -> Outcome:
        if self.running:
            raise ControlError(f"{self.host}: an action is already running")
        self.running = True
        self._interrupt = None
        try:
            return await self._execute(plan, on_phase, break_lock)
        finally:
            self.running = False

    async def _execute(self, plan: Plan, on_phase: Callable[[PhaseEvent], None] | None,
                       break_lock: bool) -> Outcome:
        await self._ensure()
        locking = self.target if isinstance(self.target, HostTarget) else None  # the demo's child has no lock
        console = locking.console if locking is not None else None
        entry = audit.new_entry(host=plan.host, unit=plan.unit, action=plan.action,
                                profile=plan.profile.name if plan.profile else None,
                                where=plan.where, exec_start_before=plan.old_argv,
                                exec_start_after=plan.new_argv, dropin_before=plan.old_dropin,
                                dropin_after=plan.new_dropin, commands=plan.commands,
                                result="running", phases=[], server_version=plan.server_version,
                                **({"console": console.fields()} if console is not None else {}))
        audit.append(entry)
        s = self.settings
        settings = Settings(wait_timeout=s.wait_timeout, verify_batches=s.verify_batches,
                            idle_after_ready=s.idle_after_ready, stale_after=s.stale_after,
                            break_lock=break_lock or s.break_lock)
        beat = _Heartbeat(self.target, on_phase)
        beat.prepare(plan, entry)
        on_phase = beat.on_phase
        action = Action(self.target, old_dropin=plan.old_dropin, new_dropin=plan.new_dropin,
                        write=plan.action != RESTART, expect_new=expected(plan.new_argv, plan.server_version),
                        expect_old=expected(plan.old_argv, plan.server_version), engine=plan.engine,
                        who=entry["user"], settings=settings, on_phase=on_phase,
                        probe=ServerProbe(self.endpoint), record_phase=beat.record,
                        on_verified=lambda: _verified_on_record(entry, action))
        beat.action = self.action = action
        if self._interrupt is not None:
            action.interrupt(self._interrupt)
        beat.start()
        try:
            try:
                outcome = await action.run()
            finally:
                beat.acting = False
                self.action = None
        except asyncio.CancelledError as e:
            if beat.lost is None:
                if action.abandoned:
                    entry["interrupted"] = {"why": "left where it stood at the operator's word", "phase": action.left_at}
                message = (f"left at {action.left_at}, not put back" if action.abandoned else
                           f"{type(e).__name__}: {e}".rstrip(": "))
                entry.update(result=RESULT_INTERRUPTED, message=message, restored=not action.touched,
                             phases=[p.to_json() for p in action.phases])
                audit.append(entry)
                raise
            beat.uncancel()
            outcome = Outcome(RESULT_LOCK_LOST, ROLLBACK_FAILED,
                              f"lost the lock to {lockinfo.owner_name(beat.lost)} (it took this console for "
                              f"gone): stopped at {beat.phase}; the host is in that console's hands, look at it",
                              action.phases)
        except BaseException as e:
            entry.update(result="interrupted", message=f"{type(e).__name__}: {e}".rstrip(": "),
                         phases=[p.to_json() for p in action.phases])
            audit.append(entry)
            raise
        finally:
            await beat.stop()
        taken = locking.took_over if locking is not None else None
        if taken:
            entry["took_lock_of"] = {"owner": taken[0], "why": taken[1]}
            self._close_taken(*taken)
        if outcome.result == "applied" and plan.profile is not None and plan.profile.on:
            self.last_on = plan.profile
        entry.update(result=outcome.result, exit_code=outcome.exit_code, message=outcome.message,
                     phases=[p.to_json() for p in outcome.phases])
        if outcome.result == RESULT_INTERRUPTED:
            entry["restored"] = True  # put back as it was (else the result is rollback_failed)
        verified = _verified_by(outcome, action)
        if verified:
            entry["verified"] = verified
        else:  # verified, then put back after all (an interrupt in the finish): not these settings
            entry.pop("verified", None)
        audit.append(entry)
        return outcome

    def _close_taken(self, owner: dict[str, Any], why: str) -> None:
        """The audit entry of the action whose lock was just taken as gone, closed as interrupted
        (when it is in this audit log and still open)."""
        aid = owner.get("audit_id")
        try:
            running = audit.running_entries(self.host, self.unit, where=self.where)
        except audit.AuditError:
            return
        for entry in running:
            if aid and entry.get("id") == aid:
                audit.close_interrupted(entry, why=why, phase=owner.get("phase"),
                                        message=f"interrupted at {owner.get('phase') or '?'} ({why}); "
                                                "its lock was taken by the next action")

    async def interrupted(self) -> str | None:
        """An action on this host and unit that was cut off (its console killed, the laptop
        closed): an audit entry still `running` whose owner is gone, or a lock left by a gone
        owner. Closes such entries in the audit log as `interrupted`, with what was found, and
        says it in one line with the unit's state now: the phase it was at (the lock's owner
        file names each phase before the step), the drop-in on the host matched whole against
        the one before and after that action, the unit's state, and how to recover. The last
        action that ended with the host not verified (left where it stood, rollback failed,
        lock lost) is said again each time, until an action verifies the unit. None when there
        is nothing to say."""
        t = self.target
        if not isinstance(t, HostTarget):
            return None  # the demo's child: one console owns it, nothing is left behind
        await self._ensure()
        owner, v, now = await self._lock_now(t)
        entries = self._audit_entries()
        gone = [(entry, why) for entry in entries if entry.get("result") == "running"
                and (why := lockinfo.entry_gone(entry, owner, v, t.console, now, t.pid_alive))]
        lock_left = owner is not None and v is not None and v.gone
        left = _last_unverified(entries) if not gone else None
        if not gone and not lock_left and left is None:
            return None
        st = await self.state()
        runs = _runs_now(st, gone[-1][0] if gone else left)
        tail = self._state_tail(st, runs, lock_left)
        found = {"runs": _profile_in(st.dropin) or runs_what(launch.spec_flags(st.argv)), "active": st.active or "unknown",
                 "exec_start": st.argv, "dropin": st.dropin, "lock_left": lock_left}
        head = self._close_gone(gone, owner, now, tail, found)
        if not head and lock_left:  # a lock without an entry in this audit log (another user's console)
            assert owner is not None and v is not None
            head = self._lock_left_head(owner, v.why, now)
        if not head:
            assert left is not None
            head = self._unverified_head(left, now)
        more = f" (and {len(gone) - 1} earlier)" if len(gone) > 1 else ""
        return head + more + tail

    async def _lock_now(self, t: HostTarget) -> tuple[dict[str, Any] | None, lockinfo.Verdict | None, float]:
        """The lock's owner file on the host, what its owner's liveness says (None without one), and now."""
        try:
            owner = await t.lock_owner()
            age = await t.owner_age() if owner else None
        except (TransportError, OSError) as e:
            raise ControlError(f"{self.host}: {e}") from None
        now = time.time()
        v = (lockinfo.verdict(owner, t.console, now, t.pid_alive, stale_after=self.settings.stale_after,
                              heartbeat_age=age) if owner else None)
        return owner, v, now

    def _audit_entries(self) -> list[dict[str, Any]]:
        """This host's and unit's entries in the audit log, oldest first; none where it cannot be
        read (said by `mtptui audit`): the lock still tells."""
        try:
            return [e for e in audit.read_audit() if audit.same_target(e, self.host, self.unit, self.where)]
        except audit.AuditError:
            return []

    def _state_tail(self, st: UnitState, runs: str, lock_left: bool) -> str:
        """What an interrupted action left: the unit's settings and state now, a lock left, and how
        to recover."""
        tail = f"; the unit now runs {runs}, {st.active or 'unknown'}"
        if not st.agrees:
            tail += " (a daemon-reload is pending)"
        if lock_left:
            tail += "; its lock is left on the host: the next action takes it"
        return tail + "; " + self._recovery(st)

    def _close_gone(self, gone: list[tuple[dict[str, Any], str]], owner: dict[str, Any] | None, now: float,
                    tail: str, found: dict[str, Any]) -> str:
        """Closes each cut-off action's entry in the audit log as interrupted, with what was found
        and its line; returns the line of the last ('' without one)."""
        head = ""
        for entry, why in gone:
            phase = owner.get("phase") if owner is not None and owner.get("audit_id") == entry.get("id") else None
            what = entry.get("profile") or entry.get("action") or "an action"
            head = (f"{self.host}: {what} by {entry.get('user') or 'someone'} at {lockinfo.clock(entry.get('time'), now)} "
                    f"was interrupted{' at ' + phase if phase else ''} ({why})")
            audit.close_interrupted(entry, why=why, phase=phase, message=head + tail, found=found)
        return head

    def _lock_left_head(self, owner: dict[str, Any], why: str, now: float) -> str:
        """A lock whose owner is gone, of an action this audit log does not hold."""
        what = owner.get("profile") if owner.get("action") == APPLY else owner.get("action")
        phase = owner.get("phase")
        return (f"{self.host}: {what or 'an action'} by {lockinfo.owner_name(owner)} since "
                f"{lockinfo.clock(owner.get('since'), now)} was interrupted{' at ' + phase if phase else ''} "
                f"(gone: {why})")

    def _unverified_head(self, left: dict[str, Any], now: float) -> str:
        """The last action, which ended with the host not verified."""
        at = _phase_of(left)
        return (f"{self.host}: the last action, {left.get('profile') or left.get('action')} by "
                f"{left.get('user') or 'someone'} at {lockinfo.clock(left.get('time'), now)}, ended "
                f"{left.get('result')}{' at ' + at if at else ''}, not verified")

    def _recovery(self, st: UnitState) -> str:
        """One line on how to put the unit back on settings an action verified."""
        try:
            found = audit.last_verified(self.host, self.unit, where=self.where)
        except audit.AuditError:
            found = None
        if found is None:
            return (f"to recover: `mtptui spec {self.host} PROFILE` (the audit log has no verified settings of "
                    f"{self.unit})")
        entry, dropin, argv = found
        same = " (the one on the host now, not verified since)" if dropin == st.dropin else ""
        return (f"to recover: `mtptui spec {self.host} --recover` puts back {dropin_name(dropin, argv)}{same}, "
                f"verified at {lockinfo.clock(entry.get('time'))}, and verifies it")

    async def toggle_plan(self) -> Plan:
        """`s`: off when speculation is on (remembering the profile it ran), else the last one."""
        cur = await self.current()
        if cur.get("algorithm"):
            self.last_on = profile_of(cur, self.last_on)
            return await self.plan(APPLY, BUILTINS["off"])
        return await self.plan(APPLY, self.last_on)


class _Heartbeat:
    """While an action runs: the lock's owner file written again every HEARTBEAT_S and at each
    new phase, so that another console sees it alive and what it does. If another console holds
    the lock (it took this one for gone: a laptop closed too long), the action is cancelled: it
    stops touching the host. A target without a lock (the demo's child) gets no heartbeat."""

    def __init__(self, target: Target[Any], on_phase: Callable[[PhaseEvent], None] | None) -> None:
        # the target whose lock beats (the demo's child has none)
        self.target = target if isinstance(target, HostTarget) else None
        self.outer = on_phase
        self.phase = "lock"
        self.lost: dict[str, Any] | None = None  # the owner file of whoever took the lock
        self._wake = asyncio.Event()
        self._task: asyncio.Future[None] | None = None
        self.acting = False  # the action is under way (only then may a lost lock cancel it)
        self.action: Action | None = None  # stopped where it stands when the lock is lost

    def prepare(self, plan: Plan, entry: dict[str, Any]) -> None:
        if self.target is not None:
            self.target.lock_info = {"action": plan.action, "audit_id": entry["id"],
                                     "profile": plan.profile.name if plan.profile else None}
            self.target.on_note = self.note

    def note(self, text: str) -> None:
        """The target's word: the lock of a gone owner taken (said as the lock phase's progress),
        or, while the action runs, what it found on the host (kept in the action's phases)."""
        if self.action is not None and self.acting and self.action.phase:
            self.action.note(text)
        elif self.outer is not None:
            self.outer(PhaseEvent("lock", "progress", text))

    async def record(self, phase: str) -> None:
        """The phase written into the owner file now, before the step that may change the host
        (a console killed in it is then reported at it); a write that fails is left to the beat."""
        self.phase = phase
        if self.target is None:
            return
        try:
            held = await wait_for(self.target.heartbeat(phase), RECORD_S)
        except (TransportError, ControlError, OSError, AssertionError, AttributeError, asyncio.TimeoutError):
            return
        if held is not None and self.acting:
            self._lose(held)

    def _lose(self, held: dict[str, Any], task: asyncio.Task[Any] | None = None) -> None:
        """Another console holds the lock: the action stops where it stands."""
        self.lost = held
        if self.action is not None:
            self.action.abandon()
        elif task is not None:
            task.cancel()

    def on_phase(self, ev: PhaseEvent) -> None:
        if ev.state == "start" and ev.phase != self.phase:
            self.phase = ev.phase
            self._wake.set()
        if self.outer is not None:
            self.outer(ev)

    def start(self) -> None:
        """Beats for the action that the current task runs now (it is cancelled if the lock is
        lost; the action runs in this task, never in one of its own, so that its steps keep
        their order with the rest of the loop)."""
        self.acting = True
        task = asyncio.current_task()
        if self.target is not None and task is not None:
            self._task = asyncio.ensure_future(self._loop(self.target, task))

    def uncancel(self) -> None:
        """The cancel of a lost lock is handled: later awaits of this task are not cancelled."""
        task = asyncio.current_task()
        if task is not None and hasattr(task, "uncancel"):  # Python 3.11+
            task.uncancel()

    async def _loop(self, target: HostTarget, acting_task: asyncio.Task[Any]) -> None:
        while self.acting:
            try:
                await wait_for(self._wake.wait(), lockinfo.HEARTBEAT_S)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()
            if not self.acting:
                return
            try:
                held = await target.heartbeat(self.phase)
            except (TransportError, ControlError, OSError, AssertionError, AttributeError):
                # the link is down, or being made again by the action (a runner between its
                # close and connect has no connection): the next beat tries again
                continue
            if held is not None and self.acting:
                self._lose(held, acting_task)
                return

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})
        if self.target is not None:
            self.target.on_note = None


_ACTIONS = (APPLY, REVERT, RESTART, RESTORE)  # the audit entries of one action (not bench's, tune's)


def _verified_by(outcome: Outcome, action: Action) -> str | None:
    """Which settings an ended action saw verified on a new run ("after": its own, "before": those
    put back), what `spec HOST --recover` puts back; None: neither."""
    if outcome.result == RESULT_INTERRUPTED and action.restarted:
        return "before"
    return {"applied": "after", "rolled_back": "before"}.get(outcome.result)


def _verified_on_record(entry: dict[str, Any], action: Action) -> None:
    """The action's new settings verified, in the audit log before its finish: a console killed
    from here on leaves an entry whose settings `--recover` keeps (audit.last_verified)."""
    entry.update(verified="after", phases=[p.to_json() for p in action.phases])
    audit.append(entry)


def _last_unverified(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last action, where it ended with the host not verified (said again until one verifies)."""
    acted = [e for e in entries if e.get("action") in _ACTIONS]
    return acted[-1] if acted and _left_unverified(acted[-1]) else None


def _left_unverified(entry: dict[str, Any]) -> bool:
    """An action that ended with the host neither as it asked nor put back verified."""
    result = entry.get("result")
    if result == RESULT_INTERRUPTED:  # cut off after its settings were verified: verified
        return entry.get("restored") is not True and entry.get("verified") != "after"
    return result in ("rollback_failed", RESULT_LOCK_LOST)


def _phase_of(entry: dict[str, Any]) -> str | None:
    """Where an ended action stopped: as the console that closed it found it, else its last phase."""
    cut = entry.get("interrupted")
    if isinstance(cut, dict) and isinstance(cut.get("phase"), str):
        return str(cut["phase"])
    phases = entry.get("phases") or []
    return str(phases[-1]["phase"]) if phases else None


def _runs_now(st: UnitState, entry: dict[str, Any] | None) -> str:
    """What the unit runs, named by its whole drop-in (its header names the profile that wrote
    it), and that drop-in against the one before and after the action of `entry`."""
    name = dropin_name(st.dropin, st.argv)
    if entry is None or ("dropin_before" not in entry and "dropin_after" not in entry):
        return f"{runs_what(launch.spec_flags(st.argv))} (ExecStart)"  # an entry of an older mtptui
    before, after = entry.get("dropin_before"), entry.get("dropin_after")
    if st.dropin == after and st.dropin != before:
        return f"{name}: the drop-in that action wrote"
    if st.dropin == before and st.dropin != after:
        return f"{name}: as before that action" + (" (its drop-in put back)" if before is not None else "")
    if st.dropin == before:
        return f"{name}: unchanged by that action"
    return f"{name}: changed since that action"


def dropin_name(dropin: str | None, argv: list[str]) -> str:
    """mtptui's drop-in by the profile its header names (`mtp3's drop-in`), else the unit's own
    ExecStart by its flags (`its own ExecStart (speculation off)`)."""
    if dropin is not None:
        name = _profile_in(dropin)
        return f"{name}'s drop-in" if name else "a drop-in of mtptui"
    return f"its own ExecStart ({runs_what(launch.spec_flags(argv))})"


def _profile_in(dropin: str | None) -> str | None:
    """The profile mtptui's drop-in was written for (its header names it)."""
    m = _DROPIN_PROFILE.search(dropin) if dropin is not None else None
    return m.group(1) if m else None


def runs_what(flags: dict[str, Any]) -> str:
    """What a unit's ExecStart runs, in words: mtp3, speculation off, or its flags."""
    if not flags.get("algorithm"):
        return "speculation off"
    p = profile_of(flags, BUILTINS["mtp3"])
    if p.name != "previous":
        return p.name
    adapts = adaptive_words(flags)
    return " ".join([str(flags["algorithm"])] + [f"{k}={flags[k]}" for k in ("num_steps", "topk", "num_draft_tokens")
                                                if flags.get(k) is not None] + ([adapts] if adapts else []))


def expected(argv: list[str], version: str | None = None) -> dict[str, Any]:
    flags = launch.effective_flags(argv, version)  # what that version will run (it changes some counts)
    return {k: flags.get(k) for k in EXPECT_KEYS}


def profile_of(settings: dict[str, Any], fallback: Profile) -> Profile:
    """The profile that gives these settings: a built-in when one does, else an unnamed one."""
    adapts = settings.get("adaptive") is True or bool(settings.get("schedule"))
    for p in BUILTINS.values():  # (a built-in never adapts)
        if p.on and not adapts and all(getattr(p, k) == settings.get(k) for k in SPEC_KEYS):
            return p
    if not settings.get("algorithm"):
        return fallback
    return Profile("previous", algorithm=settings["algorithm"], num_steps=settings.get("num_steps"),
                   topk=settings.get("topk"), num_draft_tokens=settings.get("num_draft_tokens"),
                   draft_model_path=settings.get("draft_model_path"), adaptive=settings.get("adaptive") is True,
                   adaptive_config=settings.get("adaptive_config"),
                   schedule=tuple(tuple(e) for e in settings.get("schedule") or ()))


class Controls(dict[str | None, "HostControl"]):
    """The dashboard's controls by the store's host name. A compose service's replicas are hosts
    of their own (`sim-1`, `sim-2`) whose lines came after the controls were made: a replica finds
    its service's control (an action on a replica recreates its service, as the preview says)."""

    def get(self, host: str | None, default: HostControl | None = None) -> HostControl | None:  # type: ignore[override]
        found = super().get(host)
        if found is None and host:
            from mtptui.control.compose import ComposeTarget
            from mtptui.core.parse.envelope import service_of

            service = super().get(service_of(host))
            found = service if service is not None and isinstance(service.target, ComposeTarget) else None
        return found if found is not None else default


def host_controls(sources: Iterable[Source], config: Config) -> Controls:
    """One HostControl per source that can act, keyed by the store's host name (a read-only
    dashboard keeps them only for the smoke test, which changes nothing)."""
    from mtptui.sources.container import ContainerLogSource
    from mtptui.sources.local import LocalJournalSource
    from mtptui.sources.process import ProcessSource
    from mtptui.sources.ssh import SshJournalSource

    out = Controls()
    settings = settings_from(config)
    for src in sources:
        inner = getattr(src, "inner", src)
        if isinstance(inner, SshJournalSource):
            out[inner.config.name] = control_for(inner.config, config, settings)
        elif isinstance(inner, ContainerLogSource) and inner.config is not None:
            out[inner.host] = control_for(inner.config, config, settings)
        elif isinstance(inner, LocalJournalSource):
            from mtptui.transport.local import LocalRunner

            target = SystemdTarget(LocalRunner(), inner.unit, sudo=inner.sudo, host=inner.host)
            out[inner.host] = HostControl(target, host=inner.host, settings=settings)
        elif isinstance(inner, ProcessSource):
            from mtptui.control.child import ChildTarget

            child = ChildTarget(inner)
            out[inner.host] = HostControl(child, host=child.host, settings=settings)
    return out


def control_for(h: HostConfig, config: Config, settings: Settings | None = None) -> HostControl:
    """The control of a configured host, reached over SSH (or, for a container host with
    local = true, on this machine): its unit, its container or its compose service. Raises
    ControlError for a unit name systemd would refuse."""
    from mtptui.transport.local import LocalRunner
    from mtptui.transport.process import Transport
    from mtptui.transport.ssh import SshTransport

    runner: Transport = LocalRunner() if h.local else SshTransport(h)
    target: Target[Any]
    if h.kind == "systemd":
        target = SystemdTarget(runner, h.unit, sudo=h.sudo, host=h.name)
    else:
        from mtptui.control.container import target_for
        from mtptui.sources.runtime import selector_of

        target = target_for(runner, selector_of(h), host=h.name, sudo=h.sudo)
    return HostControl(target, host=h.name, prod=config.control.is_prod(h),
                       settings=settings or settings_from(config),
                       where="this machine" if h.local else h.describe(), http_port=h.http_port)


def settings_from(config: Config) -> Settings:
    c = config.control
    return Settings(wait_timeout=c.wait_timeout, verify_batches=c.verify_batches,
                    stale_after=c.lock_stale_after)
