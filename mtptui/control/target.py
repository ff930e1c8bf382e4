"""Where an action lands: a systemd unit reached through a runner (SSH, or this machine).

Every command is an argv; the ones that change the host go through `sudo -n --` when the host
says sudo = true, so a sudo that wants a password fails at once with a clear line. The drop-in is
written atomically: its text goes on stdin to `tee` into a hidden temp file beside it (systemd
reads only `*.conf`), then `mv` replaces the old one, so a cut link leaves the old file or the new
one, never half of one. A lock directory under /run/lock (mkdir is atomic) holds who acts and
since when, and the drop-in as it was, so a second console is refused and a reconnecting one
finds what it was doing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from mtptui.control import lock as lockinfo
from mtptui.control import systemd
from mtptui.control.errors import ControlError, LockedError
from mtptui.transport.aio import wait_for
from mtptui.sources.journal import LineSplitter, Run, cursor_of, journalctl_argv
from mtptui.transport.errors import TransportError
from mtptui.transport.process import CompletedCommand, StreamedProcess, Transport

LOCK_ROOT = "/run/lock"
STATUS_PROPS = ("ActiveState", "SubState", "Result", "NRestarts", "MainPID", "ExecMainStatus", "InvocationID")
# What says a server is ready (the end of a start, for the downtime to expect): SGLang's "The server
# is fired up and ready to roll!", else uvicorn's "Application startup complete." of that run
# (vLLM's ready line; SGLang logs it before its warm-up, so there it is not the end). One home for
# both: ready_at() below, read by the systemd target, the demo child and a container's start
# (control/container_start.py).
READY_LINE = "fired up and ready to roll"
HTTP_READY = "Application startup complete"
# What marks a start and its end in the journal.
_START_GREP = rf"^Started |{READY_LINE}|{HTTP_READY}"
_START_LINES = 60  # the newest matching entries asked for: a start is two or three of them
_STARTS_KEPT = 5  # the starts a plan shows the median of
_STARTED_ID = "39f53479d3a045ac8e11786248231fbf"  # systemd's MESSAGE_ID for "Started UNIT"


@dataclass
class UnitState:
    argv: list[str]  # the effective ExecStart
    source: str  # the file that set it
    dropin: str | None  # our drop-in's text, None when there is none
    agrees: bool  # `systemctl show` has the same ExecStart (else a daemon-reload is pending)
    active: str  # ActiveState
    prefix: str = ""  # its `-`, `+`, `:`, `!` prefix, kept through a profile change
    last_start_s: float | None = None
    environment: dict[str, str] = field(default_factory=dict)
    base_argv: list[str] | None = None  # the ExecStart without our drop-in (what a profile edits)
    starts_s: list[float] = field(default_factory=list)  # the last few starts (Started to ready), oldest first
    starts_from: str = "the journal"  # where the starts are read (a container's: its runtime's logs)

    @property
    def base(self) -> list[str]:
        return self.argv if self.base_argv is None else self.base_argv


_M = TypeVar("_M")


class Follower(Protocol):
    """The unit's log from a mark on, as whole lines: JournalFollower (below), the demo child's
    TapFollower (control/child.py)."""

    async def lines(self, timeout: float) -> list[str] | None:
        """The lines that came within `timeout` ([] if none); None when the follower ended."""
        ...

    async def close(self) -> None: ...


class Target(Protocol[_M]):
    """Where an action lands: SystemdTarget (a unit, through a transport) or the demo's ChildTarget.
    What HostControl (control/session.py) and the restart machine (control/restart.py) ask of it.
    _M is its mark of where the journal stands: mark() gives it, restarted_since() and follow()
    take it back (a journal cursor; for the child, the restarts asked so far)."""

    unit: str
    host: str

    @property
    def where(self) -> str: ...

    @property
    def runner(self) -> Transport: ...

    def commands_for(self, new_dropin: str | None, *, write: bool = True) -> list[list[str]]: ...

    def render(self, argv: list[str], env: dict[str, str], *, profile: str, written_by: str,
               prefix: str = "") -> str:
        """The text a plan writes to make the target run argv with env (a drop-in, an override)."""
        ...

    async def read(self) -> UnitState: ...

    async def lock(self, who: str, *, stale_after: float, break_lock: bool = False) -> None: ...

    async def unlock(self) -> None: ...

    async def write(self, text: str | None) -> None: ...

    async def reload(self) -> None: ...

    async def restart(self) -> None: ...

    async def mark(self) -> _M: ...

    async def restarted_since(self, mark: _M) -> bool: ...

    async def running(self) -> Run | None: ...

    async def status(self) -> dict[str, str]: ...

    async def follow(self, cursor: _M | str | None) -> Follower: ...


class HostTarget:
    """What every target on a host shares, whatever runs the server there (a systemd unit, a
    container, a compose service): the runner, sudo, a refused command said in one line, and the
    lock, a directory under /run/lock on that host with its owner file and heartbeat."""

    def __init__(self, runner: Transport, unit: str, *, sudo: bool = False, host: str = "",
                 lock_dir: str) -> None:
        self.runner = runner
        self.unit = unit  # what the plan, the lock and the audit log name: a unit, a container, a service
        self.sudo = sudo
        self.host: str = host or getattr(runner, "where", "")
        self.lock_dir = lock_dir
        self._token: str | None = None
        self._owner: dict[str, Any] | None = None  # the owner file as written, while the lock is ours
        self._guard = asyncio.Lock()  # a heartbeat and the unlock never overlap
        self._console: lockinfo.Console | None = None
        self.lock_info: dict[str, Any] = {}  # action, profile, audit_id: what the owner file says it does
        self.on_note: Callable[[str], None] | None = None  # told when a gone owner's lock is taken
        self.took_over: tuple[dict[str, Any], str] | None = None  # (owner file, why gone) of the lock taken
        self.pid_alive = lockinfo.pid_alive

    @property
    def where(self) -> str:
        where: str = getattr(self.runner, "where", self.host)  # a test's stand-in runner may say none
        return where

    async def last_server_args(self) -> dict[str, Any] | None:
        """The settings of the server's last settings line, from the kind's own log."""
        raise NotImplementedError

    # --- commands and the lock ------------------------------------------------------------------------
    def priv(self, argv: list[str]) -> list[str]:
        return ["sudo", "-n", "--", *argv] if self.sudo else list(argv)

    def lock_commands(self) -> list[list[str]]:
        return [self.priv(["mkdir", self.lock_dir]), self.priv(["tee", f"{self.lock_dir}/owner"])]

    def unlock_command(self) -> list[str]:
        return self.priv(["rm", "-rf", "--", self.lock_dir])

    async def run(self, argv: list[str], *, input: str | None = None, timeout: float = 60.0,
                  check: bool = True) -> CompletedCommand:
        r = await self.runner.run(argv, input=input, timeout=timeout)
        if r.returncode is None:
            # no exit status: the connection went (asyncssh answers so when keepalives give up
            # mid-command), or a signal ended it; whether the host did it is unknown either way,
            # so it is a lost link the step retries, never a refusal that rolls back
            raise TransportError(f"{self.host}: `{shlex.join(argv)}` ended without an exit status "
                                 "(the link lost?)", permanent=False)
        if check and r.returncode != 0:
            raise ControlError(self._why(argv, r))
        return r

    def _why(self, argv: list[str], r: CompletedCommand) -> str:
        err = (r.stderr or r.stdout or "").strip()
        low = err.lower()
        if "password is required" in low or "terminal is required" in low or "askpass" in low:
            return (f"{self.host}: sudo wants a password; mtptui runs only `sudo -n`: allow this user "
                    "systemctl, tee, mv, rm and mkdir without a password (NOPASSWD), or log in as root")
        if "not in the sudoers file" in low or "not allowed to execute" in low:
            return f"{self.host}: sudo refused: {err.splitlines()[-1]}"
        if "permission denied" in low or "access denied" in low or "interactive authentication required" in low:
            return (f"{self.host}: permission denied for `{shlex.join(argv)}`: set sudo = true for this "
                    "host or log in as a user allowed to manage the unit")
        last = err.splitlines()[-1] if err else f"exit status {r.returncode}"
        return f"{self.host}: `{shlex.join(argv)}` failed: {last}"

    async def lock(self, who: str, *, stale_after: float, break_lock: bool = False,
                   now: float | None = None) -> None:
        """Takes the lock (an atomic mkdir), writing the owner file (control/lock.py). A lock whose
        owner is provably gone is taken at once and said so through `on_note`; a live one is
        refused naming who, where, what and since when; an older mtptui's lock keeps the
        `stale_after` rule (--break-lock takes it once older)."""
        now = time.time() if now is None else now
        me = self.console
        self.took_over = None
        if self._token is None:  # kept across a retry after a lost link: the lock may be ours already
            self._token = f"{who}:{now:.6f}"
        info = self.lock_info
        owner = lockinfo.owner_record(who, me, now=now, token=self._token, action=info.get("action"),
                                      profile=info.get("profile"), audit_id=info.get("audit_id"))
        mk = self.lock_commands()[0]
        r = await self.run(mk, check=False)
        if r.returncode != 0:
            if "exists" not in (r.stderr or "").lower():
                raise ControlError(self._why(mk, r))
            held = await self.lock_owner()
            if held is not None and held.get("token") == self._token:
                owner["since"] = held.get("since", now)  # ours: the first try got through
            else:
                await self._take_over(held, me, now, stale_after=stale_after, break_lock=break_lock)
        await self.run(self.lock_commands()[1], input=json.dumps(owner) + "\n")
        self._owner = owner

    async def _take_over(self, held: dict[str, Any] | None, me: lockinfo.Console, now: float, *, stale_after: float,
                         break_lock: bool) -> None:
        """Takes a lock found held, if its owner is gone (or --break-lock may), else raises
        LockedError. The old lock is first renamed aside (atomic), then checked to be the one
        judged: a console that took it meanwhile keeps it."""
        v = lockinfo.verdict(held, me, now, self.pid_alive, stale_after=stale_after,
                             heartbeat_age=await self.owner_age() if held else None)
        by = lockinfo.owner_name(held)
        since = lockinfo.clock(held.get("since") if held else None, now)
        if v.gone:
            note = f"{self.host}: taking the lock of {by} (gone: {v.why})"
        elif not break_lock:
            raise LockedError(self._refusal(held, v, stale_after))
        elif not v.breakable:
            raise LockedError(f"{self.host}: {self.unit} is locked by {by} since {since}, "
                              f"less than {stale_after:.0f} s ago: not stale, not broken")
        else:
            note = f"{self.host}: breaking the lock of {by} since {since} (--break-lock)"
        aside = f"{self.lock_dir}.gone-{os.getpid()}-{int(now * 1e6)}"
        moved = await self.run(self.priv(["mv", "-T", "--", self.lock_dir, aside]), check=False)
        if moved.returncode == 0:
            r = await self.run(["cat", "--", f"{aside}/owner"], check=False)
            if r.returncode == 0 and _json_object(r.stdout) != held:
                await self.run(self.priv(["mv", "-T", "--", aside, self.lock_dir]), check=False)
                raise LockedError(f"{self.host}: {self.unit}: another console took the lock of {by} first: "
                                  "try again to see who holds it")
            await self.run(self.priv(["rm", "-rf", "--", aside]))
        mk = self.lock_commands()[0]
        r = await self.run(mk, check=False)
        if r.returncode != 0:
            if "exists" not in (r.stderr or "").lower():
                raise ControlError(self._why(mk, r))
            raise LockedError(self._refusal(await self.lock_owner(), None, stale_after))
        self.took_over = (held or {}, v.why)
        if self.on_note is not None:
            self.on_note(note)

    def _refusal(self, held: dict[str, Any] | None, v: lockinfo.Verdict | None, stale_after: float) -> str:
        by = lockinfo.owner_name(held)
        since = lockinfo.clock(held.get("since") if held else None)
        head = f"{self.host}: {self.unit} is locked by {by} since {since}"
        if v is None:  # taken by another console just now
            return f"{head}: wait for it to finish"
        if v.legacy:
            if v.breakable:
                return f"{head}; it is older than {stale_after:.0f} s: --break-lock takes it"
            return f"{head}: wait for it to finish (--break-lock takes it once older than {stale_after:.0f} s)"
        what = lockinfo.doing(held)
        return f"{head}{', ' + what if what else ''} ({v.why}): wait for it to finish, or --break-lock if you know it is gone"

    async def owner_age(self) -> float | None:
        """Seconds since the owner file was last written, by the host's clock (None if unknown)."""
        st = await self.run(["stat", "--format=%Y", "--", f"{self.lock_dir}/owner"], check=False)
        now = await self.run(["date", "+%s"], check=False)
        try:
            return float(now.stdout.strip()) - float(st.stdout.strip())
        except ValueError:
            return None

    async def lock_owner(self) -> dict[str, Any] | None:
        r = await self.run(["cat", "--", f"{self.lock_dir}/owner"], check=False)
        if r.returncode != 0:
            return None
        return _json_object(r.stdout)

    async def holds_lock(self) -> bool:
        """After a reconnect: whether the lock is still ours."""
        held = await self.lock_owner()
        return held is not None and bool(held) and held.get("token") == self._token

    async def heartbeat(self, phase: str | None = None) -> dict[str, Any] | None:
        """While the lock is ours: the owner file written again (atomically, a temp file then
        mv) with a fresh heartbeat and the phase. Returns the owner file of whoever holds the
        lock when it is no longer ours (taken as gone, or broken), else None."""
        async with self._guard:
            if self._token is None or self._owner is None:
                return None
            held = await self.lock_owner()
            if held is None:
                return None  # gone, or cannot be read right now: never made again from here
            if held.get("token") != self._token:
                return held
            owner = {**self._owner, "heartbeat": time.time(), "phase": phase or self._owner.get("phase")}
            tmp = f"{self.lock_dir}/.owner.tmp"
            await self.run(self.priv(["tee", "--", tmp]), input=json.dumps(owner) + "\n")
            await self.run(self.priv(["mv", "-f", "--", tmp, f"{self.lock_dir}/owner"]))
            self._owner = owner
            return None

    async def unlock(self) -> None:
        """Removes the lock, unless another console holds it now (it took ours as gone)."""
        async with self._guard:
            if self._token is not None:
                held = await self.lock_owner()
                if held is not None and held.get("token") not in (None, self._token):
                    self._token, self._owner = None, None
                    return
            await self.run(self.unlock_command())
            self._token, self._owner = None, None

    @property
    def console(self) -> lockinfo.Console:
        if self._console is None:
            self._console = lockinfo.Console.here()
        return self._console


class SystemdTarget(HostTarget):
    def __init__(self, runner: Transport, unit: str, *, sudo: bool = False, host: str = "",
                 journal_sudo: bool | None = None) -> None:
        try:
            unit = systemd.service_name(unit)  # checked before any path is built from it
        except systemd.UnitSyntaxError as e:
            raise ControlError(str(e)) from None
        super().__init__(runner, unit, sudo=sudo, host=host, lock_dir=f"{LOCK_ROOT}/mtptui-{unit}")
        self.journal_sudo = sudo if journal_sudo is None else journal_sudo
        self.dir = systemd.dropin_dir(self.unit)
        self.path = f"{self.dir}/{systemd.DROPIN_NAME}"
        self.tmp = f"{self.dir}/.{systemd.DROPIN_NAME}.mtptui-tmp"

    def render(self, argv: list[str], env: dict[str, str], *, profile: str, written_by: str, prefix: str = "") -> str:
        """The drop-in that makes the unit run argv (what a plan writes)."""
        return systemd.render_dropin(argv, env, profile=profile, written_by=written_by, prefix=prefix)

    # --- argv builders (pure; the preview shows exactly these) -----------------------------------

    def write_commands(self, text: str | None) -> list[list[str]]:
        if text is None:
            return [self.priv(["rm", "-f", "--", self.path])]
        return [self.priv(["mkdir", "-p", "--", self.dir]), self.priv(["tee", "--", self.tmp]),
                self.priv(["mv", "-f", "--", self.tmp, self.path])]

    def reload_command(self) -> list[str]:
        return self.priv(["systemctl", "daemon-reload"])

    def restart_command(self) -> list[str]:
        # --no-block: the stop of a big model can take minutes; the journal tells the rest
        return self.priv(["systemctl", "restart", "--no-block", "--", self.unit])

    def commands_for(self, new_dropin: str | None, *, write: bool = True) -> list[list[str]]:
        cmds = list(self.lock_commands())
        if write:
            cmds += self.write_commands(new_dropin) + [self.reload_command()]
        return cmds + [self.restart_command(), self.unlock_command()]

    # --- running ---------------------------------------------------------------------------------

    async def read(self) -> UnitState:
        cat = await self.run(["systemctl", "cat", "--no-pager", "--", self.unit], check=False)
        if cat.returncode != 0:
            err = (cat.stderr or "").strip()
            if "no files found" in err.lower() or "not found" in err.lower():
                raise ControlError(f"{self.host}: unit {self.unit} not found")
            raise ControlError(self._why(["systemctl", "cat", self.unit], cat))
        try:
            exec_start = systemd.effective_exec_start(cat.stdout)
        except systemd.UnitSyntaxError as e:
            raise ControlError(f"{self.host}: {self.unit}: {e}") from None
        show = await self.run(["systemctl", "show", "--no-pager", "--property=ExecStart",
                               f"--property={','.join(STATUS_PROPS)}", "--", self.unit])
        mine = await self.run(["cat", "--", self.path], check=False)
        dropin = mine.stdout if mine.returncode == 0 else None
        props = _props(show.stdout)
        try:
            own = systemd.effective_exec_start(cat.stdout, ignore_dropin=systemd.DROPIN_NAME)
        except systemd.UnitSyntaxError as e:
            raise ControlError(f"{self.host}: {self.unit} without our drop-in: {e}") from None
        later = os.path.basename(own.source)
        if own.source != self.path and own.source.endswith(".conf") and later > systemd.DROPIN_NAME:
            raise ControlError(f"{self.host}: {own.source} sets ExecStart and sorts after mtptui's "
                               f"{systemd.DROPIN_NAME}, so it would override ours: fold it into the unit "
                               "or rename it to sort first")
        if "@" in exec_start.prefix:
            raise ControlError(f"{self.host}: {self.unit}: an ExecStart with the @ prefix is not supported")
        return UnitState(argv=exec_start.argv, base_argv=own.argv, source=exec_start.source,
                         prefix=exec_start.prefix, dropin=dropin,
                         agrees=systemd.agrees(exec_start.argv, show.stdout, prefix=exec_start.prefix),
                         active=props.get("ActiveState", ""), environment=exec_start.environment,
                         **await self._starts())

    async def _starts(self) -> dict[str, Any]:
        starts = await self.last_start()
        return {"last_start_s": starts[-1] if starts else None, "starts_s": starts}

    async def last_start(self) -> list[float]:
        """The last few starts, `Started` to the ready line after it, from the journal (seconds,
        oldest first; empty when none is seen, or journalctl cannot grep)."""
        argv = self._journal(["journalctl", f"--unit={self.unit}", "--output=json", "--no-pager",
                              f"--grep={_START_GREP}", f"--lines={_START_LINES}"])
        try:
            r = await self.runner.run(argv, timeout=20)
        except TransportError:
            return []
        if r.returncode != 0:
            return []  # journalctl built without pattern matching, or no rights: unknown
        return start_durations(r.stdout.splitlines())[-_STARTS_KEPT:]

    def _journal(self, argv: list[str]) -> list[str]:
        return ["sudo", "-n", "--", *argv] if self.journal_sudo else argv

    async def status(self) -> dict[str, str]:
        r = await self.run(["systemctl", "show", "--no-pager", f"--property={','.join(STATUS_PROPS)}",
                            "--", self.unit])
        return _props(r.stdout)

    async def running(self) -> Run | None:
        """The run a restart would replace, as journald stamps its lines; None when the unit has
        no InvocationID (a stopped unit)."""
        st = await self.status()
        invocation = st.get("InvocationID")
        return Run(self.unit, invocation, st.get("MainPID", "")) if invocation else None

    # --- changing the unit -------------------------------------------------------------------------

    async def write(self, text: str | None) -> None:
        cmds = self.write_commands(text)
        if text is None:
            await self.run(cmds[0])
            return
        await self.run(cmds[0])
        await self.run(cmds[1], input=text)
        await self.run(cmds[2])

    async def reload(self) -> None:
        await self.run(self.reload_command(), timeout=120)

    async def restart(self) -> None:
        await self.run(self.restart_command(), timeout=120)

    # --- the journal ---------------------------------------------------------------------------------

    async def mark(self) -> str | None:
        """The cursor of the unit's newest journal entry: what comes after it is the new run."""
        r = await self.run(self._journal(["journalctl", f"--unit={self.unit}", "--lines=1",
                                          "--output=json", "--no-pager"]), check=False)
        for line in reversed(r.stdout.splitlines()):
            c = cursor_of(line)
            if c:
                return c
        return None

    async def last_server_args(self) -> dict[str, Any] | None:
        """The settings of the unit's last settings line: SGLang's `server_args=`, or vLLM's
        `non-default args: {...}` (under SGLang's names, as both are read everywhere)."""
        from mtptui.core.parse.events import server_args, vllm_args

        r = await self.run(self._journal(["journalctl", f"--unit={self.unit}", "--output=cat", "--no-pager",
                                          "--grep=server_args=|non-default args: ", "--lines=1"]), check=False)
        for line in reversed(r.stdout.splitlines()):
            if "server_args=" in line:
                return server_args(line)
            if "non-default args: " in line:
                return vllm_args(line)
        return None

    async def restarted_since(self, cursor: str | None) -> bool:
        """Whether the journal after `cursor` shows the unit stopping or starting."""
        argv = ["journalctl", f"--unit={self.unit}", "--output=cat", "--no-pager"]
        argv += [f"--after-cursor={cursor}"] if cursor else []
        r = await self.run(self._journal(argv), check=False)
        return any(x.startswith(("Stopping ", "Started ", "Stopped ")) for x in r.stdout.splitlines())

    async def follow(self, cursor: str | None) -> "JournalFollower":
        proc = await self.runner.stream(journalctl_argv(self.unit, cursor=cursor, lines=1, resumed=True,
                                                        sudo=self.journal_sudo))
        return JournalFollower(proc)


class JournalFollower:
    """`journalctl -f -o json` read as whole entries (a line cut by a break is never handed on)."""

    def __init__(self, proc: StreamedProcess) -> None:
        self.proc = proc
        self.splitter = LineSplitter()

    async def lines(self, timeout: float) -> list[str] | None:
        """Whole entries that came within `timeout` ([] if none); None when the follower ended.
        Raises TransportError when the link is lost."""
        try:
            data = await wait_for(self.proc.read(), timeout)
        except asyncio.TimeoutError:
            return []
        if not data:
            return None
        return self.splitter.push(data)

    async def close(self) -> None:
        await self.proc.close()


def _props(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep and k in STATUS_PROPS:
            out[k] = v
    return out


def last_start_seconds(json_lines: list[str]) -> float | None:
    """From journal entries (json) of `Started` and ready lines, in either order: the last
    start's seconds from `Started` to its ready line."""
    starts = start_durations(json_lines)
    return starts[-1] if starts else None


def start_durations(json_lines: list[str]) -> list[float]:
    """Every start in journal entries (json) of `Started` and ready lines, oldest first: seconds
    from systemd's `Started` to the server's ready line after it ("fired up and ready", else
    uvicorn's "Application startup complete" of that run).

    The entries may come oldest or newest first (journalctl 252 gives `--grep` with `--lines`
    newest first): they are put in journal order first, by the sequence number in each cursor
    (one journal's entries), else by the time journald stamped them."""
    entries = []
    for line in json_lines:
        try:
            e = json.loads(line)
            ts = int(e["__REALTIME_TIMESTAMP"]) / 1e6
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(e.get("MESSAGE"), str):
            entries.append((e, ts))
    seqs = [_seqnum(e) for e, _ in entries]
    known = [s for s in seqs if s is not None]
    if entries and len(known) == len(seqs) and len({s for s, _ in known}) == 1:
        order = sorted(range(len(entries)), key=lambda i: known[i][1])
    else:
        order = sorted(range(len(entries)), key=lambda i: entries[i][1])
    out: list[float] = []
    started: tuple[float, str | None] | None = None  # (time, its run's invocation id)
    run: list[tuple[float, str]] = []  # the server's lines of that run: (time, message)

    def done() -> None:
        ready = ready_at(run) if started is not None else None
        if started is not None and ready is not None:
            # systemd's Started and the server's own line are stamped by different writers: a
            # server up within a second can come out stamped before it; that start took ~0 s
            out.append(max(0.0, ready - started[0]))

    for i in order:
        e, ts = entries[i]
        msg = e["MESSAGE"]
        if msg.startswith("Started ") and (e.get("MESSAGE_ID") == _STARTED_ID or e.get("_PID", "1") == "1"):
            done()
            started, run = (ts, e.get("INVOCATION_ID")), []
            continue
        if started is None:
            continue
        inv = e.get("_SYSTEMD_INVOCATION_ID")
        if started[1] and inv and inv != started[1]:
            continue  # a line of another run of the unit
        run.append((ts, msg))
    done()
    return out


def ready_at(lines: Iterable[tuple[float, str]]) -> float | None:
    """When one run's server said it was ready, from its lines in order ((time, message)): its
    first READY_LINE, else its first HTTP_READY (a vLLM run has no READY_LINE); None when neither."""
    http: float | None = None
    for ts, msg in lines:
        if READY_LINE in msg:
            return ts
        if http is None and HTTP_READY in msg:
            http = ts
    return http


def _seqnum(e: dict[str, Any]) -> tuple[str, int] | None:
    """(seqnum id, seqnum) from the entry's cursor (`s=ID;i=HEX;...`), or None."""
    c = e.get("__CURSOR")
    if not isinstance(c, str):
        return None
    parts = dict(p.split("=", 1) for p in c.split(";") if "=" in p)
    try:
        return parts["s"], int(parts["i"], 16)
    except (KeyError, ValueError):
        return None


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        v = json.loads(text)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None
