"""A container's log, or a compose service's replicas' logs, followed with `docker logs -f
--timestamps` (or Podman's, the same verbs), over SSH or on this machine, and resumed without loss.

The runtime has no cursor. Each line carries its stamp (RFC 3339, nanoseconds), and `--since T`
gives every line stamped at T or later, so a resume asks from a little before the latest stamp
pushed (WINDOW_S: stdout's and stderr's lines are not in stamp order between them) and skips the
lines of that window already pushed (by their text): nothing lost, nothing twice. A line cut by
the break is never pushed; it comes whole after the resume.

A container's runs: `docker logs -f` ends when the container stops. The source then waits for it
to start again (a restart keeps the id and changes the start time) or for its replacement (a
compose recreate, a `docker run` recreated by mtptui: a new id), and says so with a line of
mtptui's own, `Started container NAME (id ID)`, stamped with the runtime's start time, as
systemd's `Started UNIT` marks a unit's run in the journal: the new run is a new epoch. A compose
service's replicas are separate engines, each named `HOST-N` by its replica number.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections import deque

from mtptui.config import HostConfig
from mtptui.core.parse import timeparse
from mtptui.sources.backoff import Backoff
from mtptui.sources.base import (CONNECTING, FAILED, RECONNECTING, STREAMING, Feed, LineSplitter, Source,
                                 SourceStatus)
from mtptui.sources.runtime import (Container, RuntimeError_, Selector, inspect_argv, logs_argv, parse_inspect,
                                    stamp_key, stamp_of)
from mtptui.transport.errors import TransportError
from mtptui.transport.process import CompletedCommand, Transport

POLL_S = 1.0  # how often the target's containers are listed (a new replica, a recreate)


def merged(argv: list[str]) -> list[str]:
    """argv with its stderr on its stdout: `docker logs` gives the container's stderr (where
    SGLang and vLLM log) on its own stderr, in order with its stdout only when both are one pipe."""
    return ["sh", "-c", f"exec {shlex.join(argv)} 2>&1"]


def started_line(c: Container) -> str:
    """mtptui's line for a run's start, stamped when the runtime started it."""
    return f"{c.started_at} Started container {c.name} (id {c.id[:12]})"


async def containers(runner: Transport, sel: Selector) -> list[Container]:
    """The target's containers as `inspect` tells them (replicas in their order). Raises
    TransportError (the link), RuntimeError_ (the runtime's answer)."""
    r = _answered(await runner.run(sel.list_argv(), timeout=30), f"{sel.runtime} ps")
    if r.returncode != 0:
        raise RuntimeError_(f"`{sel.runtime} ps` failed: {(r.stderr or '').strip()[-200:]}")
    ids = r.stdout.split()
    if not ids:
        return []
    got = _answered(await runner.run(inspect_argv(sel.runtime, ids), timeout=30), f"{sel.runtime} inspect")
    # a container removed between the two asks: inspect says so and answers for the others
    found = parse_inspect(got.stdout) if got.stdout.strip() else []
    return sorted(found, key=lambda c: (c.number or 0, c.created))


def _answered(r: CompletedCommand, what: str) -> CompletedCommand:
    """r, where the command ended with an exit status; none (asyncssh's answer where keepalives
    gave up mid-command) is the link lost, never the runtime's refusal nor an empty list."""
    if r.returncode is None:
        raise TransportError(f"`{what}` ended without an exit status (the link lost?)", permanent=False)
    return r


# How far back a resume asks: the runtime's stdout and stderr lines need not be in stamp order
# between them (dockerd stamps each stream's line in that stream's copier, then the two take turns
# writing the log), so a line stamped before the last one pushed may come after it, and a link
# lost between the two must not lose it. The lines pushed within the window are known by their text.
# (A simulator's log here, 308 lines, 2 on stdout: none out of order; the window costs a resume
# the re-read of WINDOW_S of log.)
WINDOW_S = 10.0


class Resume:
    """Where a container's log stands: the latest stamp pushed, and the lines pushed within
    WINDOW_S of it (those a resume from WINDOW_S back brings again)."""

    def __init__(self) -> None:
        self.stamp: str | None = None
        self._key: tuple[str, str] | None = None
        self._latest = 0.0  # the latest stamp as epoch seconds
        self._recent: dict[str, float] = {}  # line -> its stamp's epoch seconds
        self._order: deque[tuple[float, str]] = deque()  # the same, as pushed (the oldest go first)
        self.said = ""  # the last unstamped line: the runtime's own complaint (stderr is merged)

    @property
    def since(self) -> str | None:
        """`--since` for a resume: WINDOW_S before the latest stamp pushed (None: nothing pushed)."""
        return f"{self._latest - WINDOW_S:.9f}" if self.stamp else None

    @property
    def recent(self) -> set[str]:
        return set(self._recent)

    def new(self, lines: list[str]) -> list[str]:
        """The lines not pushed yet, in order; notes them as pushed."""
        out = []
        for line in lines:
            stamp = stamp_of(line)
            if stamp is None:
                self.said = line[:300] if line.strip() else self.said
                continue
            if line in self._recent:
                continue
            self._note(line, stamp)
            out.append(line)
        return out

    def seed(self, line: str) -> bool:
        """A line pushed before (a record's, read from its end back): False once it is older than
        the window of the latest, where what a resume brings again has ended."""
        stamp = stamp_of(line)
        ts = timeparse.rfc3339(stamp) if stamp else None
        if stamp is None or ts is None:
            return True
        if self.stamp and ts < self._latest - WINDOW_S:
            return False
        self._note(line, stamp, ts)
        return True

    def _note(self, line: str, stamp: str, ts: float | None = None) -> None:
        ts = timeparse.rfc3339(stamp) if ts is None else ts
        if ts is None:
            return
        key = stamp_key(stamp)
        if self._key is None or key > self._key:
            self.stamp, self._key, self._latest = stamp, key, max(self._latest, ts)
        self._recent[line] = ts
        self._order.append((ts, line))
        floor = self._latest - WINDOW_S
        while self._order and self._order[0][0] < floor:
            self._recent.pop(self._order.popleft()[1], None)


def _marked(lines: list[str], mark: str) -> tuple[list[str], str | None]:
    """The lines with the run's start line before the first of the run (None: placed), or as they
    are while all are of the run before (the mark still to place)."""
    key = stamp_key(mark.split(" ", 1)[0])
    for i, line in enumerate(lines):
        stamp = stamp_of(line)
        if stamp is not None and stamp_key(stamp) >= key:
            return [*lines[:i], mark, *lines[i:]], None
    return lines, mark


class ContainerLogSource(Source):
    """One configured host: a container, or every replica of a compose service."""

    host: str  # a container source always names its host

    def __init__(self, runner: Transport, selector: Selector, *, host: str, lines: int = 200,
                 since: str | None = None, backoff: Backoff | None = None, poll_s: float = POLL_S,
                 config: HostConfig | None = None, known: frozenset[str] | None = None) -> None:
        self.runner = runner
        # the runs that were there before (a restart's mark): any other is a new run, said at
        # once; None: those found first are the history, not new runs
        self.known = known
        self.config = config  # the configured host it follows (its control is made from it)
        self.selector = selector
        self.host = host
        self.lines = lines
        self.since = since  # RFC 3339 or anything `docker logs --since` takes; else the last `lines`
        self.backoff = backoff or Backoff()
        self.poll_s = poll_s
        self.label = f"{selector.runtime} {selector.name}"
        self.received = 0
        self.connects = 0  # `docker logs` streams started
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._connected = False
        self._resume: dict[str, Resume] = {}  # by container id
        # where a record's streams stood (`record --append`), by engine (HOST or HOST-N): each
        # container taken up as that engine goes on from there
        self.resumed: dict[str, Resume] = {}

    @property
    def where(self) -> str:
        return getattr(self.runner, "where", "this machine")

    async def run(self, feed: Feed) -> None:
        feed.status(SourceStatus(self.host, CONNECTING, self.label))
        first = True
        try:
            while True:
                try:
                    if not self._connected:  # SSH's connect makes a new connection each time
                        await self.runner.connect()
                        self._connected = True
                    found = await containers(self.runner, self.selector)
                except TransportError as e:
                    if e.permanent:
                        feed.status(SourceStatus(self.host, FAILED, e.message))
                        return
                    await self._wait(feed, self.host, e.message)
                    continue
                except RuntimeError_ as e:
                    feed.status(SourceStatus(self.host, FAILED, str(e)))
                    return
                self.backoff.reset()
                if not found and first:
                    feed.status(SourceStatus(self.host, CONNECTING, f"no container of {self.selector.name} yet"))
                for c in found:
                    task = self._tasks.get(c.id)
                    if task is None or task.done():
                        fresh = c.run not in self.known if self.known is not None else not first
                        if task is None and fresh and c.started_at:
                            feed.lines([started_line(c)], c.replica(self.host))  # a new replica, a recreate
                        was = self.resumed.get(c.replica(self.host)) if task is None else None
                        # started again since the record it resumes: the new run said among its lines
                        mark = started_line(c) if was and was.stamp and c.started_at and \
                            stamp_key(c.started_at) > stamp_key(was.stamp) else None
                        self._tasks[c.id] = asyncio.ensure_future(self._follow(c, feed, history=first, mark=mark))
                first = False
                await asyncio.sleep(self.poll_s)
        finally:
            for t in self._tasks.values():
                t.cancel()
            if self._tasks:
                await asyncio.wait(list(self._tasks.values()))

    async def _wait(self, feed: Feed, host: str, why: str, *, link: bool = True) -> None:
        """Waits before the next try; `link`: the link was lost (connected again before it), not
        only one `docker logs` that ended (the other replicas' streams go on over the link)."""
        delay = self.backoff.next()
        feed.status(SourceStatus(host, RECONNECTING, why, retry_at=time.time() + delay))
        if link and self._connected:
            self._connected = False
            try:
                await self.runner.close()
            except TransportError:
                pass
        await asyncio.sleep(delay)

    async def _follow(self, c: Container, feed: Feed, *, history: bool, mark: str | None = None) -> None:
        """One container until it is gone: its log across its restarts, resumed after any break;
        `mark`: a run's start line, pushed before the first line stamped at or after its start."""
        host = c.replica(self.host)
        if c.id not in self._resume:
            self._resume[c.id] = self.resumed.pop(host) if host in self.resumed else Resume()
        resume = self._resume[c.id]
        run = c.run
        while True:
            since = resume.since or (self.since if history else None)
            argv = merged(logs_argv(self.selector.runtime, c.id, since=since,
                                    tail=self.lines if history and not since else None))
            try:
                proc = await self.runner.stream(argv)
            except TransportError as e:
                if e.permanent:
                    feed.status(SourceStatus(host, FAILED, e.message))
                    return
                await self._wait(feed, host, e.message)
                continue
            self.connects += 1
            feed.status(SourceStatus(host, STREAMING, f"{self.selector.runtime} logs {c.name}"
                                     + (f" (resumed at {resume.stamp})" if resume.stamp else "")))
            splitter = LineSplitter()
            try:
                while data := await proc.read(1 << 16):
                    got = resume.new(splitter.feed(data))
                    if got:
                        self.received += len(got)
                        if mark is not None:
                            got, mark = _marked(got, mark)
                        feed.lines(got, host)
            finally:
                await proc.close()
            # a line without its end is dropped here: it comes again, whole, from --since
            rc = await proc.wait()
            try:
                now = await self._inspect(c.id)
            except TransportError as e:
                await self._wait(feed, host, e.message)
                continue
            if now is None:
                return  # removed: its replacement, if any, is a container of its own
            if now.running and now.run == run:
                if rc not in (0, None):
                    await self._wait(feed, host, f"{self.selector.runtime} logs ended (exit {rc})"
                                     + (f": {resume.said}" if resume.said else ""), link=False)
                continue  # the stream broke, the container runs on: resume
            nxt = await self._next_run(now, run)
            if nxt is None:
                return
            run = nxt
            c = (await self._inspect(c.id)) or c
            feed.lines([started_line(c)], host)

    async def _next_run(self, c: Container, run: str) -> str | None:
        """Waits for the stopped container's next start (its run), None once it is removed."""
        while True:
            if c.running and c.run != run:
                return c.run
            await asyncio.sleep(self.poll_s)
            try:
                got = await self._inspect(c.id)
            except TransportError:
                continue
            if got is None:
                return None
            c = got

    async def _inspect(self, ref: str) -> Container | None:
        r = await self.runner.run(inspect_argv(self.selector.runtime, [ref]), timeout=30)
        if r.returncode != 0:
            if "no such" in (r.stderr or "").lower():
                return None
            raise TransportError(f"{self.selector.runtime} inspect failed: {(r.stderr or '').strip()[-200:]}",
                                 permanent=False)
        found = parse_inspect(r.stdout)
        return found[0] if found else None
