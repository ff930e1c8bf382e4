"""Where an action lands when the server is a compose service: an override file of mtptui's own,
`compose.mtptui.yml` beside the user's compose files, and `compose up -d SERVICE`, which recreates
that service's replicas only. The user's files are never written: removing (or restoring) the
override and running `up -d` again rolls back.

The override names the service's entrypoint and command (the whole argv the container runs) and
the profile's environment; compose merges it over the user's files. It is JSON, which
YAML reads as it is, under comment lines that say who wrote it and the command it replaced (`#
base:`, what a revert goes back to). Compose v2 (`docker compose`) is used where the host has it,
else v1 (`docker-compose` 1.29, Debian's); the preview's commands say which.

A later `docker compose up` by hand without `-f compose.mtptui.yml` drops mtptui's settings: the
preview says so (the same holds for any override file).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import replace

from mtptui.control.container import Mark, RuntimeTarget
from mtptui.control.container_start import container_starts
from mtptui.control.errors import ControlError
from mtptui.control.target import UnitState
from mtptui.sources.runtime import Container, Selector, default_files_argv
from mtptui.transport.process import Transport

OVERRIDE = "compose.mtptui.yml"
UP_S = 300  # `up -d`: stop, remove and create each replica
BUSY = 75  # flock's exit when another `up` held the service that long (EX_TEMPFAIL)
_BASE = re.compile(r"^# base: (\[.*\])$", re.M)
_VERSION = re.compile(r"""^version:\s*["']?([0-9.]+)["']?\s*$""", re.M)


class ComposeTarget(RuntimeTarget):
    def __init__(self, runner: Transport, sel: Selector, *, host: str, sudo: bool = False) -> None:
        super().__init__(runner, sel, host=host, sudo=sudo)
        self.path = os.path.join(sel.project_dir, OVERRIDE)
        self.tmp = os.path.join(sel.project_dir, f".{OVERRIDE}.mtptui-tmp")
        self.tool: list[str] = [sel.runtime, "compose"]  # until read() asks the host
        self._override: str | None = None  # as the host has it (after a write: as written)
        self._version: str | None = None  # the user's first file's `version:`, repeated in ours
        self._replicas = 1
        self._written = False  # an action wrote the override: `up` recreates; else `restart` restarts
        self._tool_known = False  # compose's version is asked once per target (read())
        self._base: list[str] = []  # the service's own command (the user's files'), as read
        self._want: list[str] = []  # the command the replicas run once the written override is up
        self._unchanged = False  # the override written is the one the replicas run: `up` would keep them

    @property
    def up_lock(self) -> str:
        """Beside the action's lock: held (flock) by every `up` and `restart` of the service that
        mtptui runs, so that one asked again after a lost link waits for the first, still running
        on the host, instead of racing it."""
        return f"{self.lock_dir}.up"

    def _serial(self, argv: list[str]) -> list[str]:
        # flock's fork keeps the lock in compose itself too (no --close): a flock killed with its
        # session leaves it held until compose ends
        return ["flock", "--timeout", str(UP_S), "--conflict-exit-code", str(BUSY), "--", self.up_lock, *argv]

    def _compose(self, *args: str, override: bool, serial: bool = False) -> list[str]:
        files = [*self.sel.files, *([self.path] if override else [])]
        argv = [*self.tool, "--project-directory", self.sel.project_dir]
        for f in files:
            argv += ["--file", f]
        return self.priv(self._serial([*argv, *args]) if serial else [*argv, *args])

    def up_command(self, override: bool) -> list[str]:
        return self._compose("up", "--detach", "--no-deps", "--scale", f"{self.sel.service}={self._replicas}",
                             self.sel.service, override=override, serial=True)

    def restart_command(self) -> list[str]:
        return self._compose("restart", self.sel.service, override=self._override is not None, serial=True)

    def check_command(self, override: bool) -> list[str]:
        return self._compose("config", "--quiet", override=override)

    async def _which_compose(self) -> list[str]:
        """v2's plugin where the host has it, else v1's docker-compose."""
        for tool in ([self.sel.runtime, "compose"], [f"{self.sel.runtime}-compose"]):
            r = await self.run([*tool, "version"], check=False)
            if r.returncode == 0:
                return tool
        raise ControlError(f"{self.host}: neither `{self.sel.runtime} compose` nor `{self.sel.runtime}-compose` "
                           "runs there")

    async def read(self) -> UnitState:
        await self.identify()
        if not self._tool_known:  # a host's compose does not change under an action
            self.tool, self._tool_known = await self._which_compose(), True
        if not self.sel.files:
            found_files = (await self.run(default_files_argv(self.sel.project_dir))).stdout.split("\n")
            files = tuple(f for f in found_files if f)
            if not files:
                raise ControlError(f"{self.host}: no compose file in {self.sel.project_dir}")
            self.sel = replace(self.sel, files=files)
        found = await self.containers()
        if not found:
            raise ControlError(f"{self.host}: no container of {self.sel.name} (is the service up? "
                               f"`{shlex.join(self._compose('ps', override=False))}`)")
        self._last, self._replicas = found, len(found)
        mine = await self.run(["cat", "--", self.path], check=False)
        self._override = mine.stdout if mine.returncode == 0 else None
        first = await self.run(["cat", "--", self.sel.files[0]], check=False)
        if first.returncode != 0:
            raise ControlError(f"{self.host}: cannot read {self.sel.files[0]}: {first.stderr.strip()}")
        m = _VERSION.search(first.stdout)
        self._version = m.group(1) if m else None
        c = found[0]
        base = c.argv
        if self._override is not None:
            b = _BASE.search(self._override)
            if b is None:
                raise ControlError(f"{self.host}: {self.path} is not mtptui's (no `# base:` line): move it away")
            base = json.loads(b.group(1))
        self._base = list(base)
        differ = [x.name for x in found if x.argv != c.argv]
        if differ:
            raise ControlError(f"{self.host}: the replicas of {self.sel.service} run different commands "
                               f"({', '.join(differ)}): recreate them first (`up -d`)")
        return UnitState(argv=c.argv, base_argv=base, source=" ".join(self.sel.files), dropin=self._override,
                         agrees=True, active=self.active(c), **await container_starts(self, found))

    def render(self, argv: list[str], env: dict[str, str], *, profile: str, written_by: str,
               prefix: str = "") -> str:
        c = self._last[0]
        base = c.argv
        if self._override is not None and (b := _BASE.search(self._override)):
            base = json.loads(b.group(1))
        # both, always: the override replaces mtptui's earlier one whole, and compose merges it over
        # the user's entrypoint and command; argv is the container's whole exec argv
        service: dict[str, object] = {"entrypoint": argv[:1], "command": argv[1:]}
        if env:
            service["environment"] = dict(env)
        doc: dict[str, object] = {"version": self._version} if self._version else {}
        doc["services"] = {self.sel.service: service}
        return (f"# Written by mtptui for {self.host} by {written_by}: speculation profile {profile}.\n"
                f"# Your compose files are not changed; remove this file and `up -d {self.sel.service}` to go back.\n"
                f"# base: {json.dumps(base)}\n{json.dumps(doc, indent=2)}\n")

    def write_commands(self, text: str | None) -> list[list[str]]:
        if text is None:
            return [self.priv(["rm", "-f", "--", self.path])]
        return [self.priv(["tee", "--", self.tmp]), self.priv(["mv", "-f", "--", self.tmp, self.path])]

    def commands_for(self, new_dropin: str | None, *, write: bool = True) -> list[list[str]]:
        override = (new_dropin if write else self._override) is not None
        cmds = list(self.lock_commands())
        if write:
            cmds += [*self.write_commands(new_dropin), self.check_command(override)]
        up = write and not self._runs(new_dropin, self._last)
        return [*cmds, self.up_command(override) if up else self.restart_command(), self.unlock_command()]

    def wanted(self, text: str | None) -> list[str]:
        """The command the replicas run under an override of this text (None: the user's own)."""
        if text is None:
            return list(self._base)
        body = "\n".join(x for x in text.splitlines() if not x.startswith("#"))
        try:
            service = json.loads(body)["services"][self.sel.service]
            return [*service["entrypoint"], *service["command"]]
        except (ValueError, KeyError, TypeError):
            raise ControlError(f"{self.host}: {self.path} is not mtptui's (no service {self.sel.service})") from None

    def _runs(self, text: str | None, found: list[Container]) -> bool:
        """Whether the replicas found already run what an override of this text asks, with that
        override the one on the host: `up` would find nothing to recreate."""
        return (text == self._override and len(found) == self._replicas
                and all(c.argv == self.wanted(text) for c in found))

    async def write(self, text: str | None) -> None:
        self._want = self.wanted(text)
        self._unchanged = self._runs(text, await self.containers())
        cmds = self.write_commands(text)
        if text is None:
            await self.run(cmds[0])
        else:
            await self.run(cmds[0], input=text)  # a temp file, then mv: the old one or the new, never half
            await self.run(cmds[1])
        self._override, self._written = text, True

    async def reload(self) -> None:
        """compose reads the files as merged: a refusal here comes before anything restarts."""
        await self.run(self.check_command(self._override is not None))

    async def restarted_since(self, mark: Mark) -> bool:
        """Asked when a restart is tried again after a lost link: the first `up` may have gone on
        on the host (or still runs there). Done when every replica is a new run, started, of the
        command asked; else `up` goes again, and waits for a first one still running (flock), so
        it recreates only what that one left. Said in the action's phases either way."""
        found = await self.containers()
        done = self._recreated(found, mark)
        finished = len(done) == self._replicas == len(found)
        if self.on_note is not None:
            self.on_note(f"{self.host}: after the lost link, {len(done)} of {self._replicas} replicas of "
                         f"{self.sel.service} run {'its command' if self._restarts else 'the command asked'} "
                         "in a new run" + (": the host finished without the console" if finished else
                                           f"; {len(found)} there: asked again, after any still running "
                                           "there (flock)"))
        return finished

    @property
    def _restarts(self) -> bool:
        """The next restart restarts the replicas as they are (compose's `restart`), not `up`."""
        return not self._written or self._unchanged

    def _recreated(self, found: list[Container], mark: Mark) -> list[Container]:
        """The replicas the restart under way has done: a run since the mark, started, of the
        command asked (any command, for a restart as is)."""
        return [c for c in found if c.run not in mark.runs and c.started_at
                and (self._restarts or c.argv == self._want)]

    async def restart(self) -> None:
        """`up` of the override written; a restart where `up` would find nothing to recreate (the
        same override again, as a recovery writes it): a new run to verify either way."""
        if self._restarts:
            argv = self.restart_command()
        else:
            argv = self.up_command(self._override is not None)
        r = await self.run(argv, timeout=2 * UP_S, check=False)  # its flock's wait, then its own time
        if r.returncode == BUSY:
            raise ControlError(f"{self.host}: another `up` of {self.sel.service} still ran after {UP_S} s "
                               f"(it holds {self.up_lock})")
        if r.returncode != 0:
            # compose's last line is only "Encountered errors ...": its ERROR lines say which
            said = [x.strip() for x in r.stderr.splitlines() if x.startswith("ERROR")] or [r.stderr.strip()[-300:]]
            raise ControlError(f"{self.host}: `{shlex.join(argv)}` failed: {'; '.join(said)[-600:]}")
