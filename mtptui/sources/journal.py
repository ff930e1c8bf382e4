"""Following one unit's journal with `journalctl -f -o json`, and resuming it without loss.

The source remembers the ``__CURSOR`` of the last whole line it pushed. After any break (a lost
connection, a killed journalctl, a host reboot) it starts journalctl again with
``--after-cursor=C``: journald then sends exactly the entries after the last one seen, so nothing
is lost and nothing comes twice. A line cut short by the break is never pushed (and its cursor never
kept); journald sends it whole after the resume. The transport (SSH or a local subprocess) is the
subclass's part.
"""

from __future__ import annotations

import abc
import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from mtptui.transport.aio import wait_for
from mtptui.core.timespec import span_seconds
from mtptui.sources.backoff import Backoff
from mtptui.sources.base import (CONNECTING, FAILED, RECONNECTING, STREAMING, Feed, Source,
                                 SourceStatus)
from mtptui.transport.errors import TransportError
from mtptui.transport.process import StreamedProcess

# A line longer than this is not buffered further: it is counted as dropped. journald's own limit
# for a field is far above anything a server logs; this only keeps memory bounded.
MAX_LINE = 64 << 20


def since_arg(spec: str) -> str:
    """`10min`, `1h 30min` (a span back from now) -> `-10min`, journalctl's relative form; anything
    else (`2026-03-09 16:00`, `today`, `-1h`) is journalctl's to read."""
    s = spec.strip()
    return f"-{s}" if span_seconds(s) is not None else s


def journalctl_argv(unit: str, *, cursor: str | None = None, since: str | None = None,
                    lines: int = 10, extra: tuple[str, ...] | list[str] = (), sudo: bool = False,
                    resumed: bool = False, started_at: float | None = None) -> list[str]:
    """The follower's argv. Values are whole argv items (`--unit=X`), never spliced into a
    shell string, and so cannot be taken for options or shell syntax.

    Where to start: after `cursor` when one was seen. A resume without a cursor means no entry had
    come yet: the first window (`--since`, or the last `lines` entries) was empty then, so asking
    again for all of it (`--lines=all` instead of the last few) loses nothing.
    """
    argv = ["journalctl", f"--unit={unit}", "--follow", "--output=json", "--all", "--no-pager",
            *extra]
    if cursor:
        argv.append(f"--after-cursor={cursor}")
    elif since:
        argv.append(f"--since={since_arg(since)}")
    elif not resumed:
        argv.append(f"--lines={lines}")
    elif lines > 0:
        argv.append("--lines=all")
    else:
        # lines = 0 asked for nothing old, so nothing marks where the first run began but the
        # clock: the entries since the first start (a little before it, for clock skew).
        argv.append(f"--since=@{int((started_at or time.time()) - 5)}")
    return ["sudo", "-n", "--", *argv] if sudo else argv


_CURSOR_KEY = '"__CURSOR":"'
# The line that says what the run was started with: SGLang's server_args (both forms), vLLM's
# engine config (speculative_config=) and its `non-default args:`.
SETTINGS_GREP = r"server_args=|speculative_config=|non-default args: "


RUN_START_TIMEOUT_S = 10.0  # a journal without the line is searched whole: not for longer


def run_start_argvs(unit: str) -> tuple[list[str], list[str]]:
    """(ask systemd for the unit's current InvocationID, the journal query for that run's settings
    line, with `{}` where the id goes). The settings line is the run's first lines; read forward
    from the run's start, the first match is it (the caller stops reading there)."""
    return (["systemctl", "show", "--property=InvocationID", "--value", "--", unit],
            ["journalctl", "_SYSTEMD_INVOCATION_ID={}", "--output=json", "--all", "--no-pager",
             f"--grep={SETTINGS_GREP}"])


def realtime_of(line: str) -> int | None:
    v = _string_field(line, "__REALTIME_TIMESTAMP")
    return int(v) if v and v.isdigit() else None


def cursor_of(line: str) -> str | None:
    """The entry's cursor. journalctl writes __CURSOR first; a cursor has no quotes or escapes."""
    c = _string_field(line, "__CURSOR", near=200)
    if c is not None or _CURSOR_KEY in line:
        return c or None
    if '"__CURSOR"' not in line:
        return None
    try:  # not journalctl's compact layout: read it properly
        c = json.loads(line).get("__CURSOR")
    except (ValueError, AttributeError):
        return None
    return c if isinstance(c, str) else None


@dataclass(frozen=True)
class Run:
    """One run of a unit as journald stamps the lines of its processes: the unit, the run's
    InvocationID, and the PID that logged (for stdout and stderr, the run's main process)."""

    unit: str
    invocation: str
    pid: str


def run_of(line: str) -> Run | None:
    """The run a journal entry (json) is from: a line of a unit's process, or PID 1's about a
    unit's run (its UNIT and INVOCATION_ID, without the _); None for any other line."""
    invocation = _string_field(line, "_SYSTEMD_INVOCATION_ID")
    if invocation is not None:
        return Run(_string_field(line, "_SYSTEMD_UNIT") or "", invocation, _string_field(line, "_PID") or "")
    invocation = _string_field(line, "INVOCATION_ID")
    if invocation is not None and _string_field(line, "_PID") == "1":
        return Run(_string_field(line, "UNIT") or "", invocation, "1")
    return None


def _string_field(line: str, key: str, near: int | None = None) -> str | None:
    """A field of journalctl's compact json whose value has no quote in it (ids, numbers, unit
    names); read properly when it has an escape. `near`: looked for in the line's first `near`
    characters first (where journalctl writes its own fields)."""
    k = f'"{key}":"'
    i = line.find(k, 0, near) if near else -1
    if i < 0:
        i = line.find(k)
    if i < 0:
        return None
    i += len(k)
    j = line.find('"', i)
    if j <= i:
        return None
    v = line[i:j]
    if "\\" in v:
        try:
            v = json.loads(f'"{v}"')
        except ValueError:
            return None
    return v


class LineSplitter:
    """Bytes in, whole lines out (as str, without the newline). Keeps the unfinished tail."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.buf = bytearray()
        self.max_line = max_line
        self.skipping = False  # inside a line over max_line, until its end
        self.too_long = 0

    def push(self, data: bytes) -> list[str]:
        """The whole lines the buffer now holds. Decoded in bulk (one decode of all of them, then
        one split): a newline is never part of a UTF-8 sequence, so each line decodes as it would
        alone, a broken sequence at its end replaced the same (tests/unit/test_lane_journal.py)."""
        start = len(self.buf)
        self.buf += data
        end = self.buf.rfind(b"\n", start)
        if end < 0:
            if len(self.buf) > self.max_line:
                if not self.skipping:
                    self.too_long += 1
                self.skipping = True
                self.buf.clear()
            return []
        block = self.buf[:end]
        del self.buf[:end + 1]
        if self.skipping:  # the rest of the oversize line
            cut = block.find(b"\n")
            if cut < 0:
                self.skipping = False
                return []
            del block[:cut + 1]
            self.skipping = False
        # journalctl's own notes ("-- No entries --") are not entries: only JSON objects are
        return [p for p in block.decode("utf-8", "replace").split("\n") if p[:1] == "{"]

    def discard(self) -> bool:
        """Forgets an unfinished line (it will come again after the resume); True if there was one."""
        had = bool(self.buf) or self.skipping
        self.buf.clear()
        self.skipping = False
        return had


class Entries:
    """What the follower makes of each read of `journalctl -f -o json`: its whole entries pushed to
    the feed in one list (the feed's lane reads them in bulk), the cursor of the newest one noted
    after they are pushed, a line over MAX_LINE counted as dropped. The source and the dashboard's
    flood benchmark (bench/tui_bench.py) both read through it."""

    def __init__(self, host: str | None) -> None:
        self.host = host
        self.splitter = LineSplitter()
        self.cursor: str | None = None  # of the newest entry pushed that had one

    def take(self, data: bytes, feed: Feed) -> int:
        """Pushes the entries that data completes; returns how many."""
        splitter = self.splitter
        lines = splitter.push(data)
        if splitter.too_long:
            feed.dropped(splitter.too_long, f"journal line over {MAX_LINE >> 20} MiB", self.host)
            splitter.too_long = 0
        if not lines:
            return 0
        cursor = None
        for line in reversed(lines):
            cursor = cursor_of(line)
            if cursor:
                break
        feed.lines(lines, self.host)
        if cursor:
            self.cursor = cursor
        return len(lines)


def diagnose(stderr: str, returncode: int | None, *, who: str, where: str, sudo: bool,
             local: bool) -> TransportError | None:
    """A permanent, one-line reason from what journalctl or sudo said; None if retrying may help."""
    low = stderr.lower()
    if "insufficient permissions" in low or "not seeing messages from other users and the system" in low:
        if local:
            hint = ("run it as root (sudo mtptui local, or --sudo), or join the systemd-journal "
                    f"group: sudo usermod -aG systemd-journal {who}, then log in again")
        else:
            hint = (f"add {who} to the systemd-journal group (usermod -aG systemd-journal {who}) "
                    "or set sudo = true for this host")
        return TransportError(f"{where}: no rights to read the system journal as {who}: {hint}",
                              permanent=True)
    if "password is required" in low or "terminal is required" in low or "askpass" in low:
        return TransportError(
            f"{where}: sudo wants a password for {who}; mtptui runs only `sudo -n`: allow "
            "journalctl without a password (NOPASSWD) or use a user in the systemd-journal group",
            permanent=True)
    if "not in the sudoers file" in low or "not allowed to execute" in low:
        return TransportError(f"{where}: sudo refused {who}: {_last(stderr)}", permanent=True)
    if returncode == 127 or "journalctl: not found" in low or "journalctl: command not found" in low:
        return TransportError(f"{where}: journalctl not found (is this a systemd host?)",
                              permanent=True)
    if any(s in low for s in ("unrecognized option", "invalid option", "failed to add filter",
                              "failed to parse", "invalid argument", "unknown output format",
                              "failed to add match")):
        return TransportError(f"{where}: journalctl rejected its arguments: {_last(stderr)}",
                              permanent=True)
    return None


def _last(text: str) -> str:
    lines = [x for x in text.splitlines() if x.strip()]
    return lines[-1].strip() if lines else ""


class JournalSource(Source):
    """One host's unit, followed until cancelled; reconnects with backoff, resumes by cursor."""

    host: str  # a journal source always names its host

    def __init__(self, host: str, unit: str, *, sudo: bool = False, since: str | None = None,
                 lines: int = 200, extra: tuple[str, ...] | list[str] = (),
                 backoff: Backoff | None = None) -> None:
        self.host = host
        self.unit = unit
        self.sudo = sudo
        self.since = since
        self.lines = lines
        self.extra = tuple(extra)
        self.backoff = backoff or Backoff()
        self.cursor: str | None = None
        self.received = 0  # whole entries pushed
        self.connects = 0  # successful starts of journalctl
        self._fatal: TransportError | None = None
        self._started_at: float | None = None

    # --- the transport's part --------------------------------------------------------------------

    @abc.abstractmethod
    async def open(self, argv: list[str]) -> StreamedProcess:
        """Starts argv where the journal is; raises TransportError."""

    async def drop_connection(self) -> None:
        """Forgets the transport's connection after a break (SSH reconnects from scratch)."""

    @property
    @abc.abstractmethod
    def where(self) -> str:
        """`user@host:port` or `this machine`, for messages."""

    @property
    def via(self) -> str:
        """How the host is reached when its name does not say it (`root@10.0.0.5:2222`), else ""."""
        return ""

    @property
    @abc.abstractmethod
    def who(self) -> str:
        """The user journalctl runs as (before sudo), for messages."""

    # --- the loop --------------------------------------------------------------------------------

    def argv(self) -> list[str]:
        return journalctl_argv(self.unit, cursor=self.cursor, since=self.since, lines=self.lines,
                               extra=self.extra, sudo=self.sudo, resumed=self.connects > 0,
                               started_at=self._started_at)

    async def run(self, feed: Feed) -> None:
        host = self.host
        feed.status(SourceStatus(host, CONNECTING, self.via))
        try:
            while True:
                try:
                    reason = await self._follow_once(feed)
                except TransportError as e:
                    if e.permanent:
                        feed.status(SourceStatus(host, FAILED, self._unnamed(e.message)))
                        return
                    reason = e.message
                await self.drop_connection()
                delay = self.backoff.next()
                feed.status(SourceStatus(host, RECONNECTING, self._unnamed(reason),
                                         retry_at=time.time() + delay))
                await asyncio.sleep(delay)
        finally:
            await self.drop_connection()

    def _unnamed(self, message: str) -> str:
        """The message without a leading `host:` (a status line names the host itself); an
        address that differs from the name (`10.0.0.5: unreachable`) stays, it tells more."""
        for prefix in (f"{self.where}: ", f"{self.host}: "):
            if message.startswith(prefix):
                return message[len(prefix):]
        return message

    async def _run_to_end(self, argv: list[str], push: Callable[[list[str]], None] | None = None,
                          first: bool = False) -> list[str]:
        """Runs a non-following journalctl. Returns its lines, or hands them to push(lines) as
        they come (a long history is never held whole); `first`: stops at the first whole line.
        Raises TransportError."""
        proc = await self.open(argv)
        splitter = LineSplitter()
        lines: list[str] = []
        try:
            while data := await proc.read(1 << 16):
                got = splitter.push(data)
                if push is None:
                    lines += got
                elif got:
                    push(got)
                if first and lines:
                    await proc.close()
                    return lines[:1]
        finally:
            rc = await proc.wait()
            await proc.close()
        fatal = diagnose(proc.stderr_text, rc, who=self.who, where=self.where, sudo=self.sudo,
                         local=self.where == "this machine")
        if fatal is not None:
            raise fatal
        # Any other failure (journalctl exits 1 when a --grep matched nothing) is left to the
        # follower that comes next: it fails the same way if something is really wrong.
        return lines

    async def _start_position(self, feed: Feed) -> None:
        """Before the first follow: push the history and set the cursor to follow from.

        `journalctl -u U -f` positioned at the tail (--lines, --since) misses entries of a unit
        that has none yet in the journal file (seen with systemd 252: a fresh unit's first few
        hundred lines, or all but the last few). Positioned by a cursor it misses nothing. So:
        first the journal's newest cursor (any unit), then the unit's history (pushed), then follow
        after the newest of the two. An entry that comes in between is in the history or after.
        """
        head = ["journalctl", "--lines=1", "--output=json", "--output-fields=__CURSOR", "--no-pager"]
        newest = self._wrap(head)
        found = await self._run_to_end(newest)
        cursor = cursor_of(found[-1]) if found else None
        history = ["journalctl", f"--unit={self.unit}", "--output=json", "--all", "--no-pager",
                   *self.extra]
        if self.since:
            history.append(f"--since={since_arg(self.since)}")
        elif self.lines > 0:
            history.append(f"--lines={self.lines}")
        else:
            history = []
        start = await self._run_start() if history else None
        if history:
            last: list[str | None] = [None]

            def push(lines: list[str]) -> None:
                nonlocal start
                if start is not None:
                    # the current run's settings line, where the history begins after it
                    older = not lines or (realtime_of(start) or 0) < (realtime_of(lines[0]) or 0)
                    lines = [start, *lines] if older else lines
                    start = None
                feed.lines(lines, self.host)
                self.received += len(lines)
                for line in reversed(lines):
                    c = cursor_of(line)
                    if c:
                        last[0] = c
                        break

            await self._run_to_end(self._wrap(history), push)
            if start is not None:  # no history at all: the run said nothing since its start
                push([])
            cursor = last[0] or cursor
        self.cursor = cursor

    async def _output(self, argv: list[str], limit: int = 4096) -> str:
        """A short command's stdout (not journal entries), at most `limit` bytes."""
        proc = await self.open(argv)
        out = b""
        try:
            while len(out) < limit and (data := await proc.read(limit)):
                out += data
        finally:
            await proc.wait()
            await proc.close()
        return out.decode("utf-8", "replace")

    async def _run_start(self) -> str | None:
        """The settings line of the unit's current run, however far back it is (a server that
        has run for days logged it before the history asked for): so the first screen says what
        the server runs. None when the unit has no run, or the journal holds no such line."""
        ask, query = run_start_argvs(self.unit)
        try:
            invocation = (await wait_for(self._output(ask), RUN_START_TIMEOUT_S)).strip()
            if not invocation or not all(c in "0123456789abcdef" for c in invocation):
                return None
            argv = [a.replace("{}", invocation) if a.startswith("_SYSTEMD_INVOCATION_ID=") else a for a in query]
            found = await wait_for(self._run_to_end(self._wrap(argv), first=True), RUN_START_TIMEOUT_S)
        except (TransportError, asyncio.TimeoutError):
            return None  # the history and the follower say what is wrong, if anything is
        return found[0] if found and found[0].startswith("{") else None

    def _wrap(self, argv: list[str]) -> list[str]:
        return ["sudo", "-n", "--", *argv] if self.sudo else argv

    async def _follow_once(self, feed: Feed) -> str:
        """Streams until the follower ends. Returns why (a retryable break), or raises."""
        if self.cursor is None and self.connects == 0:
            await self._start_position(feed)
        argv = self.argv()
        self._fatal = None
        proc = await self.open(argv)
        proc.on_stderr = self._check_stderr
        if self._started_at is None:
            self._started_at = time.time()
        self.connects += 1
        resumed = f" after {self.cursor[:40]}…" if self.cursor and self.connects > 1 else ""
        feed.status(SourceStatus(self.host, STREAMING, f"{self.via + ': ' if self.via else ''}"
                                 f"journalctl -u {self.unit}{' (resumed' + resumed + ')' if resumed else ''}"))
        entries = Entries(self.host)
        got_data = False
        try:
            while True:
                data = await proc.read(1 << 16)
                if not data:
                    break
                n = entries.take(data, feed)
                if not n:
                    continue
                if entries.cursor:
                    self.cursor = entries.cursor
                self.received += n
                if not got_data:
                    got_data = True
                    self.backoff.reset()
        except asyncio.CancelledError:
            await proc.close()
            raise
        entries.splitter.discard()
        rc = await proc.wait()
        await proc.close()
        if self._fatal is not None:
            raise self._fatal
        fatal = diagnose(proc.stderr_text, rc, who=self.who, where=self.where, sudo=self.sudo,
                         local=self.where == "this machine")
        if fatal is not None:
            raise fatal
        said = _last(proc.stderr_text)
        if rc is None:
            return "stream lost" + (f" ({said})" if said else "")
        return f"journalctl ended (exit {rc}{': ' + said if said else ''})"

    def _check_stderr(self, line: str, proc: StreamedProcess) -> None:
        # journalctl keeps following after some complaints (the "Hint: you are not seeing ...");
        # a stream that can never show the unit is stopped at once, with the reason.
        if self._fatal is None:
            fatal = diagnose(line, None, who=self.who, where=self.where, sudo=self.sudo,
                             local=self.where == "this machine")
            if fatal is not None:
                self._fatal = fatal
                asyncio.ensure_future(proc.close())
