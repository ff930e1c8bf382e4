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

from mtptui.control.container import RuntimeTarget
from mtptui.control.container_start import container_starts
from mtptui.control.errors import ControlError
from mtptui.control.target import UnitState
from mtptui.sources.runtime import Selector, default_files_argv
from mtptui.transport.process import Transport

OVERRIDE = "compose.mtptui.yml"
UP_S = 300  # `up -d`: stop, remove and create each replica
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

    def _compose(self, *args: str, override: bool) -> list[str]:
        files = [*self.sel.files, *([self.path] if override else [])]
        argv = [*self.tool, "--project-directory", self.sel.project_dir]
        for f in files:
            argv += ["--file", f]
        return self.priv([*argv, *args])

    def up_command(self, override: bool) -> list[str]:
        return self._compose("up", "--detach", "--no-deps", "--scale", f"{self.sel.service}={self._replicas}",
                             self.sel.service, override=override)

    def restart_command(self) -> list[str]:
        return self._compose("restart", self.sel.service, override=self._override is not None)

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
        self.tool = await self._which_compose()
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
        return [*cmds, self.up_command(override) if write else self.restart_command(), self.unlock_command()]

    async def write(self, text: str | None) -> None:
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

    async def restart(self) -> None:
        if not self._written:  # restart as is: `up` would find nothing changed and leave it running
            await self.run(self.restart_command(), timeout=UP_S)
            return
        argv = self.up_command(self._override is not None)
        r = await self.run(argv, timeout=UP_S, check=False)
        if r.returncode != 0:
            # compose's last line is only "Encountered errors ...": its ERROR lines say which
            said = [x.strip() for x in r.stderr.splitlines() if x.startswith("ERROR")] or [r.stderr.strip()[-300:]]
            raise ControlError(f"{self.host}: `{shlex.join(argv)}` failed: {'; '.join(said)[-600:]}")
