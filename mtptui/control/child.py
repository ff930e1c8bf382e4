"""The demo's target: the simulator child of `mtptui demo`, restarted by the same control path.

It stands where a systemd unit stands: the "drop-in" is the same text the unit would get, read
back with the same systemd parser, and a restart stops the child and starts the new argv. The
journal is the child's own output, tapped from the source that feeds the dashboard.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

from mtptui.control import systemd
from mtptui.control.target import HTTP_READY, READY_LINE, UnitState, start_durations
from mtptui.transport.aio import wait_for
from mtptui.sources.process import ProcessSource
from mtptui.transport.errors import TransportError
from mtptui.transport.process import CompletedCommand, StreamedProcess, Transport
from mtptui.transport.tunnel import Forward, direct


class ChildTarget:
    """A Target (control/target.py) whose mark is the count of restarts asked; it is its own
    transport (connected always, the server's port its own, no commands to run)."""

    unit = "simulator"
    where = "a child process of this mtptui"

    def __init__(self, source: ProcessSource) -> None:
        self.source = source
        source.restartable = True
        self.base_argv = list(source.argv)
        self.base_env = dict(source.env or os.environ)
        self.dropin: str | None = None
        self.runner: Transport = self  # nothing to reconnect
        self.host = source.host or "simulator"
        self._restarts_requested = 0
        self._follower_queue: asyncio.Queue[list[str]] | None = None
        # its starts as the journal would hold them (each start, then its ready lines), so that a
        # start is measured by the systemd target's own rule (target.start_durations)
        self._start_entries: list[str] = []
        self._run_seen = 0  # the source's start whose Started entry is kept
        source.watch = self._watch

    def _watch(self, lines: list[str]) -> None:
        for line in lines:
            if READY_LINE not in line and HTTP_READY not in line:
                continue
            if self._run_seen != self.source.starts and self.source.started_at is not None:
                self._run_seen = self.source.starts
                self._start_entries.append(_entry(self.source.started_at, f"Started {self.unit}."))
            self._start_entries.append(_entry(time.time(), line))
        del self._start_entries[:-_KEPT_ENTRIES]

    async def connect(self) -> None:
        """Nothing to connect to."""

    async def close(self) -> None:
        """Nothing to close."""

    async def forward(self, host: str, port: int) -> Forward:
        """The child listens on this machine."""
        return direct(host, port)

    async def run(self, argv: list[str], *, input: str | None = None,
                  timeout: float | None = 60.0) -> CompletedCommand:
        """No command runs where the child is (a version query is answered by its HTTP side)."""
        raise TransportError(f"{self.where}: no commands run there", permanent=True)

    async def stream(self, argv: list[str]) -> StreamedProcess:
        """Its output is tapped from its source (follow()), not streamed by a command."""
        raise TransportError(f"{self.where}: no commands run there", permanent=True)

    def commands_for(self, new_dropin: str | None, *, write: bool = True) -> list[list[str]]:
        argv, _ = self._argv_env(new_dropin) if write else (self.source.argv, None)
        return [["kill", "-TERM", str(self.source.pid or "PID")], argv]

    def render(self, argv: list[str], env: dict[str, str], *, profile: str, written_by: str,
               prefix: str = "") -> str:
        """The drop-in a unit would get: the child reads it back with the unit's parser."""
        return systemd.render_dropin(argv, env, profile=profile, written_by=written_by, prefix=prefix)

    def _argv_env(self, dropin: str | None) -> tuple[list[str], dict[str, str]]:
        if dropin is None:
            return list(self.base_argv), dict(self.base_env)
        es = systemd.effective_exec_start(f"# {self.unit}\n[Service]\nExecStart={systemd.render_exec(self.base_argv)}\n"
                                          f"# drop-in\n{dropin}")
        return es.argv, {**self.base_env, **es.environment}

    async def read(self) -> UnitState:
        starts = start_durations(self._start_entries)
        return UnitState(argv=list(self.source.argv), base_argv=list(self.base_argv),
                         source="the simulator child", dropin=self.dropin, agrees=True,
                         active="active" if self.source.running else "inactive",
                         last_start_s=starts[-1] if starts else None, starts_s=starts,
                         starts_from="the simulator's lines")

    async def lock(self, who: str, *, stale_after: float, break_lock: bool = False) -> None:
        """One console owns its child: nothing to lock."""

    async def unlock(self) -> None:
        """Nothing locked."""

    async def write(self, text: str | None) -> None:
        self._argv_env(text)  # refuses text the unit parser refuses, before it is kept
        self.dropin = text

    async def reload(self) -> None:
        """Nothing to reload: the next start reads the argv."""

    async def mark(self) -> int:
        return self._restarts_requested

    async def restart(self) -> None:
        self._restarts_requested += 1
        argv, env = self._argv_env(self.dropin)
        self._follower_queue = self.source.tap()
        await self.source.restart(argv, env)

    async def restarted_since(self, mark: int) -> bool:
        return self._restarts_requested > (mark or 0)

    async def status(self) -> dict[str, str]:
        if self.source.running:
            return {"ActiveState": "active"}
        rc = self.source.returncode
        return {"ActiveState": "failed" if rc not in (0, None) else "inactive",
                "Result": f"exit-code {rc}" if rc else ""}

    async def running(self) -> None:
        """No journald stamps the child's lines: its start is the restart itself."""

    async def follow(self, cursor: int | str | None) -> TapFollower:
        q = self._follower_queue or self.source.tap()
        self._follower_queue = None
        return TapFollower(self.source, q)


_KEPT_ENTRIES = 30  # a start is a Started entry and one or two ready lines: the last ten or so


def _entry(t: float, message: str) -> str:
    """A line as `journalctl --output=json` gives it, with what start_durations reads (the
    Started entry as systemd's own: PID 1)."""
    return json.dumps({"__REALTIME_TIMESTAMP": str(int(t * 1e6)), "MESSAGE": message, "_PID": "1"})


class TapFollower:
    def __init__(self, source: ProcessSource, q: asyncio.Queue[list[str]]) -> None:
        self.source, self.q = source, q

    async def lines(self, timeout: float) -> list[str] | None:
        try:
            first = await wait_for(self.q.get(), timeout)
        except asyncio.TimeoutError:
            return []
        out = list(first)
        while not self.q.empty():
            out += self.q.get_nowait()
        return out

    async def close(self) -> None:
        self.source.untap(self.q)
