"""Where an action lands when the server runs in a container: what every container target shares
(`RuntimeTarget`: the runtime's state as the witnesses read it, the log followed from a mark, the
lock on the host), and the `docker run` container (`ContainerTarget`). The compose service is
control/compose.py; a Kubernetes workload would be one more module of this kind (docs/kubernetes.md).

A container's command cannot be changed in place: the runtime's answer is to recreate it. So a
`docker run` container is recreated with the same options (read from `inspect`) and the new
command, and the old one is kept, stopped and renamed `NAME-mtptui-old`, until the new one is
verified: a rollback starts it again as it was. Only then is it removed.

The restart machine (control/restart.py) speaks systemd's words to its witnesses; a container
target answers in them: `status()` gives ActiveState (running: active, exited: failed), its
InvocationID is the containers' runs (id and start time: a `docker restart` is a new run), and
NRestarts the runtime's restart count. Its "drop-in" is what mtptui asked the container to run, a
JSON document kept on the container as the label `io.mtptui.spec`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mtptui.control.container_start import container_starts
from mtptui.control.errors import ControlError
from mtptui.control.target import LOCK_ROOT, HostTarget, UnitState
from mtptui.sources.base import FAILED, SourceStatus
from mtptui.sources.container import ContainerLogSource, containers
from mtptui.sources.journal import Run
from mtptui.sources.runtime import Container, RuntimeError_, Selector, daemon_argv
from mtptui.transport.aio import wait_for
from mtptui.transport.errors import TransportError
from mtptui.transport.process import CompletedCommand, Transport

if TYPE_CHECKING:
    from mtptui.control.compose import ComposeTarget

SPEC_LABEL = "io.mtptui.spec"
STOP_S = 30  # `docker stop -t`: the server's own shutdown before the runtime kills it
_SETTINGS = r"server_args=|non-default args: "
_STATE = {"running": "active", "restarting": "activating", "created": "activating", "paused": "active",
          "exited": "failed", "dead": "failed", "removing": "deactivating"}


@dataclass(frozen=True)
class Mark:
    """Where the target stood before a restart: the host's clock (RFC 3339) and its runs."""

    since: str
    runs: frozenset[str]


class ExecRunner:
    """Runs a command inside the target's container (the engine's interpreter is there, not on
    the host): `docker exec ID ...` through the host's runner."""

    def __init__(self, target: RuntimeTarget) -> None:
        self.target = target

    async def run(self, argv: list[str], *, input: str | None = None, timeout: float | None = 60.0) -> CompletedCommand:
        found = await self.target.containers()
        if not found:
            return CompletedCommand(1, "", "no container")
        return await self.target.runner.run([self.target.sel.runtime, "exec", found[0].id, *argv],
                                            input=input, timeout=timeout)


class RuntimeTarget(HostTarget):
    """A target whose server runs in containers of a runtime (Docker, Podman): one container, or a
    compose service's replicas (control/compose.py)."""

    def __init__(self, runner: Transport, sel: Selector, *, host: str, sudo: bool = False) -> None:
        # the lock's name until the daemon is known (identify(): every use of the lock asks first)
        super().__init__(runner, sel.name, sudo=sudo, host=host, lock_dir=lock_dir_of(sel, ""))
        self.sel = sel
        self.exec_runner = ExecRunner(self)
        self._replaced: frozenset[str] = frozenset()  # the runs at the last mark
        self._last: list[Container] = []  # as the last read() found them
        self.daemon: str | None = None  # the runtime's identity on this host, once asked

    # --- the daemon, and the lock named by it ------------------------------------------------------

    async def identify(self) -> str:
        """The daemon's identity, asked once per target: the lock is the container's on that
        daemon, so two hosts of the config that reach one daemon by two names share it, and one
        name on two daemons (a rootless and a system one, Docker and Podman) does not."""
        if self.daemon is None:
            argv = daemon_argv(self.sel.runtime)
            r = await self.run(argv, check=False)
            said = r.stdout.strip()
            if r.returncode != 0 or not said:
                raise ControlError(f"{self.host}: `{shlex.join(argv)}` failed: "
                                   f"{(r.stderr or r.stdout or '').strip()[-200:] or f'exit status {r.returncode}'}")
            self.daemon = said
            self.lock_dir = lock_dir_of(self.sel, said)
        return self.daemon

    async def lock(self, who: str, *, stale_after: float, break_lock: bool = False,
                   now: float | None = None) -> None:
        await self.identify()
        await super().lock(who, stale_after=stale_after, break_lock=break_lock, now=now)

    async def lock_owner(self) -> dict[str, Any] | None:
        await self.identify()  # the heartbeat, the unlock and a cut-off action's report read it first
        return await super().lock_owner()

    # --- the runtime's answers ---------------------------------------------------------------------

    async def containers(self) -> list[Container]:
        try:
            return await containers(self.runner, self.sel)
        except RuntimeError_ as e:
            raise ControlError(f"{self.host}: {e}") from None

    async def first(self) -> Container:
        found = await self.containers()
        if not found:
            raise ControlError(f"{self.host}: no container of {self.sel.name} (is it created? "
                               f"`{self.sel.runtime} ps -a` lists them)")
        return found[0]

    async def status(self) -> dict[str, str]:
        """The containers' state under systemd's names, as the restart machine's witness reads them.
        The new run is the one where none of the runs at the mark is left (a compose service
        recreates its replicas one by one: until the last, the old run stands)."""
        found = await self.containers()
        if not found:
            return {"ActiveState": "activating", "SubState": "recreating"}
        runs = {c.run for c in found}
        old = ",".join(sorted(self._replaced))
        new = not (runs & self._replaced)
        props = {"InvocationID": ",".join(sorted(runs)) if new else old,
                 "NRestarts": str(sum(c.restart_count for c in found))}
        judged = [c for c in found if c.run not in self._replaced] or found
        bad = [c for c in judged if c.status in ("exited", "dead")]
        if bad:
            c = bad[0]
            return {**props, "ActiveState": "failed", "SubState": c.status, "Result": f"exit-code {c.exit_code}",
                    "ExecMainStatus": str(c.exit_code)}
        if any(c.status == "restarting" for c in judged):
            return {**props, "ActiveState": "activating", "SubState": "auto-restart",
                    "Result": f"exit-code {judged[0].exit_code}"}
        if all(c.running for c in judged):
            return {**props, "ActiveState": "active", "SubState": "running"}
        return {**props, "ActiveState": "activating", "SubState": "starting"}

    async def running(self) -> Run | None:
        found = await self.containers()
        runs = ",".join(sorted(c.run for c in found if c.started_at))
        return Run(self.unit, runs, "") if runs else None

    async def mark(self) -> Mark:
        r = await self.run(["date", "-u", "+%Y-%m-%dT%H:%M:%S.%NZ"])
        found = await self.containers()
        self._replaced = frozenset(c.run for c in found)
        return Mark(r.stdout.strip(), self._replaced)

    async def restarted_since(self, mark: Mark) -> bool:
        found = await self.containers()
        return any(c.run not in mark.runs for c in found) or len(found) != len(mark.runs)

    async def follow(self, cursor: Mark | str | None) -> ContainerFollower:
        since = cursor.since if isinstance(cursor, Mark) else cursor
        known = cursor.runs if isinstance(cursor, Mark) else self._replaced
        return ContainerFollower(ContainerLogSource(self.runner, self.sel, host=self.host, since=since or None,
                                                    poll_s=0.5, known=known))

    async def last_server_args(self) -> dict[str, Any] | None:
        from mtptui.core.parse.events import server_args, vllm_args

        c = await self.first()
        logs = shlex.join(self.priv([self.sel.runtime, "logs", c.id]))
        r = await self.run(["sh", "-c", f"{logs} 2>&1 | grep -m1 -E {shlex.quote(_SETTINGS)}"], check=False)
        for line in r.stdout.splitlines():
            if "server_args=" in line:
                return server_args(line)
            if "non-default args: " in line:
                return vllm_args(line)
        return None

    def published(self, port: int) -> tuple[str, int] | None:
        """Where the host reaches the server's port inside the container (as read last): the same
        port on the host's network, its published port, else None (no way in from the host)."""
        if not self._last:
            return None
        hc = self._last[0].raw.get("HostConfig") or {}
        if hc.get("NetworkMode") == "host":
            return "127.0.0.1", port
        for b in (hc.get("PortBindings") or {}).get(f"{port}/tcp") or []:
            if str(b.get("HostPort") or "").isdigit():
                ip = b.get("HostIp") or ""
                return (ip if ip not in ("", "0.0.0.0", "::") else "127.0.0.1"), int(b["HostPort"])
        return None

    def active(self, c: Container) -> str:
        return _STATE.get(c.status, "inactive")

    async def reload(self) -> None:
        """Nothing to reload: the next create reads the command."""


class _Queue:
    """The live source's feed, for the watch: lines queued as they come; a failure said."""

    def __init__(self) -> None:
        self.q: asyncio.Queue[list[str]] = asyncio.Queue()
        self.failed: str | None = None

    def lines(self, raw: list[str], host: str | None) -> None:
        self.q.put_nowait(list(raw))

    def status(self, st: SourceStatus) -> None:
        if st.state == FAILED:
            self.failed = st.detail
            self.q.put_nowait([])

    def dropped(self, n: int, reason: str, host: str | None) -> None:
        """The source drops nothing on the way to the watch."""


class ContainerFollower:
    """The target's log from a mark on (its replicas' together, a recreated container's too),
    through the live source (sources/container.py): the restart machine's Follower."""

    def __init__(self, source: ContainerLogSource) -> None:
        self.feed = _Queue()
        self.task = asyncio.ensure_future(source.run(self.feed))

    async def lines(self, timeout: float) -> list[str] | None:
        q = self.feed.q
        try:
            first = await wait_for(q.get(), timeout)
        except asyncio.TimeoutError:
            return []
        if self.feed.failed is not None:
            raise TransportError(self.feed.failed, permanent=True)
        out = list(first)
        while not q.empty():
            out += q.get_nowait()
        return out

    async def close(self) -> None:
        self.task.cancel()
        await asyncio.wait({self.task})


def lock_dir_of(sel: Selector, daemon: str) -> str:
    """The lock of a target on a daemon (its identity as `daemon_argv` tells it; "" before it is
    known): readable by its name, unique by a digest of the daemon, the runtime and the target."""
    slug = re.sub(r"[^A-Za-z0-9_.-]", "-", sel.name)
    key = "\0".join((daemon, sel.runtime, sel.name, sel.project_dir)) if daemon else sel.name + sel.project_dir
    return f"{LOCK_ROOT}/mtptui-{slug}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def _quoted_env(env: list[str]) -> dict[str, str]:
    out = {}
    for item in env:
        k, sep, v = item.partition("=")
        if sep:
            out[k] = v
    return out


def create_argv(runtime: str, c: Container, name: str, argv: list[str], env: dict[str, str],
                spec: str | None) -> list[str]:
    """`docker create` of a container like c (its image, network, mounts, ports, devices, GPUs,
    restart policy, user, workdir, labels, environment) that runs argv with env added; the
    label io.mtptui.spec says what mtptui asked (none: the container's own command)."""
    hc = c.raw.get("HostConfig") or {}
    cfg = c.raw.get("Config") or {}
    out = [runtime, "create", "--name", name]
    for options in _HOST_OPTIONS:
        out += options(hc)
    out += _identity_options(cfg, spec)
    for k, v in {**_quoted_env(cfg.get("Env") or []), **env}.items():
        out += ["--env", f"{k}={v}"]
    entry, cmd = _entrypoint_and_command(list(c.entrypoint), argv)
    return [*out, *entry, "--", cfg.get("Image") or "", *cmd]


def _network(hc: dict) -> list[str]:
    net = hc.get("NetworkMode") or ""
    return ["--network", net] if net and net not in ("default", "bridge") else []


def _restart(hc: dict) -> list[str]:
    policy = hc.get("RestartPolicy") or {}
    if not policy.get("Name") or policy["Name"] == "no":
        return []
    n = policy.get("MaximumRetryCount") or 0
    return ["--restart", policy["Name"] + (f":{n}" if policy["Name"] == "on-failure" and n else "")]


def _volumes(hc: dict) -> list[str]:
    return [x for b in hc.get("Binds") or [] for x in ("--volume", b)]


def _ports(hc: dict) -> list[str]:
    out = []
    for port, binds in sorted((hc.get("PortBindings") or {}).items()):
        for b in binds or []:
            ip, hp = b.get("HostIp") or "", b.get("HostPort") or ""
            out += ["--publish", ":".join(x for x in (ip, hp) if x) + f":{port}" if hp else port]
    return out


def _devices(hc: dict) -> list[str]:
    out = []
    for d in hc.get("Devices") or []:
        out += ["--device", f"{d.get('PathOnHost')}:{d.get('PathInContainer')}:{d.get('CgroupPermissions') or 'rwm'}"]
    for req in hc.get("DeviceRequests") or []:
        ids, count = req.get("DeviceIDs") or [], req.get("Count")
        out += ["--gpus", "device=" + ",".join(ids) if ids else "all" if count in (-1, None) else str(count)]
    return out


def _privileges(hc: dict) -> list[str]:
    out = ["--privileged"] if hc.get("Privileged") else []
    return out + [x for cap in hc.get("CapAdd") or [] for x in ("--cap-add", cap)]


def _runtime_options(hc: dict) -> list[str]:
    """IPC, /dev/shm and the OCI runtime, each only where it is not the runtime's default."""
    out = []
    if hc.get("IpcMode") and hc["IpcMode"] not in ("private", "shareable", ""):
        out += ["--ipc", hc["IpcMode"]]
    if hc.get("ShmSize") and hc["ShmSize"] != 64 << 20:
        out += ["--shm-size", str(hc["ShmSize"])]
    if hc.get("Runtime") and hc["Runtime"] != "runc":
        out += ["--runtime", hc["Runtime"]]
    return out


_HOST_OPTIONS = (_network, _restart, _volumes, _ports, _devices, _privileges, _runtime_options)


def _identity_options(cfg: dict, spec: str | None) -> list[str]:
    """User, workdir and labels; mtptui's own label replaced by what this action asks."""
    out = []
    if cfg.get("User"):
        out += ["--user", cfg["User"]]
    if cfg.get("WorkingDir"):
        out += ["--workdir", cfg["WorkingDir"]]
    for k, v in sorted((cfg.get("Labels") or {}).items()):
        if k != SPEC_LABEL:
            out += ["--label", f"{k}={v}"]
    if spec is not None:
        out += ["--label", f"{SPEC_LABEL}={spec}"]
    return out


def _entrypoint_and_command(ep: list[str], argv: list[str]) -> tuple[list[str], list[str]]:
    """The image's entrypoint kept where argv starts with it; else argv's first word replaces it."""
    if ep and argv[:len(ep)] == ep:
        return [], argv[len(ep):]
    entry = ["--entrypoint", argv[0]] if ep or not argv else []
    return entry, argv[1:] if ep else argv


class ContainerTarget(RuntimeTarget):
    """A `docker run` container, recreated with its new command; the old one kept until verified."""

    def __init__(self, runner: Transport, sel: Selector, *, host: str, sudo: bool = False) -> None:
        super().__init__(runner, sel, host=host, sudo=sudo)
        self.name = sel.container
        self.new = f"{self.name}-mtptui-new"
        self.kept = f"{self.name}-mtptui-old"
        self._pending = "same"  # what the next restart does: "new" (swap in), "kept" (swap back), "same"
        self._kept_spec: str | None = None  # the spec of the container kept (None: its own command)
        self._swap_spec: str | None = None  # the spec of the container the pending swap sets aside
        self._has_kept = False
        self._stale = False  # NAME-mtptui-old is there, left by an action that did not finish
        self._leftover = False  # ... by an action whose settings were verified: it goes at finish

    def _rt(self, *args: str) -> list[str]:
        return self.priv([self.sel.runtime, *args])

    async def read(self) -> UnitState:
        await self.identify()
        c = await self.first()
        kept = await self.run(self._rt("inspect", "--type", "container", "--", self.kept), check=False)
        self._stale = kept.returncode == 0 and not self._has_kept and not self._leftover
        self._last = [c]
        spec = c.labels.get(SPEC_LABEL)
        base = c.argv
        if spec is not None:
            try:
                base = list(json.loads(spec)["base"])
            except (ValueError, KeyError, TypeError):
                raise ControlError(f"{self.host}: {self.name}'s label {SPEC_LABEL} is not mtptui's") from None
        return UnitState(argv=c.argv, base_argv=base, source=f"{self.sel.runtime} inspect {self.name}", dropin=spec,
                         agrees=True, active=self.active(c), **await container_starts(self, [c]))

    def render(self, argv: list[str], env: dict[str, str], *, profile: str, written_by: str,
               prefix: str = "") -> str:
        base = self._last[0].labels.get(SPEC_LABEL) if self._last else None
        base_argv = json.loads(base)["base"] if base else (self._last[0].argv if self._last else argv)
        return json.dumps({"written_by": written_by, "profile": profile, "argv": argv, "env": env,
                           "base": base_argv}, separators=(",", ":"))

    def _wanted(self, spec: str | None) -> tuple[list[str], dict[str, str]]:
        if spec is None:
            c = self._last[0]
            base = c.labels.get(SPEC_LABEL)
            return (list(json.loads(base)["base"]) if base else c.argv), {}
        doc = json.loads(spec)
        return list(doc["argv"]), dict(doc.get("env") or {})

    def _create(self, spec: str | None) -> list[str]:
        argv, env = self._wanted(spec)
        return self.priv(create_argv(self.sel.runtime, self._last[0], self.new, argv, env, spec))

    def swap_commands(self) -> list[list[str]]:
        return [self._rt("stop", "-t", str(STOP_S), "--", self.name), self._rt("rename", self.name, self.kept),
                self._rt("rename", self.new, self.name), self._rt("start", "--", self.name)]

    def settle(self, verified: str | None) -> None:
        """The audit log says an action verified `verified` (its drop-in: here the spec label)
        and was cut off before it finished: where the container running now is that very one,
        the container kept for its rollback is what that action left to remove. A recovery then
        restarts and verifies the running one, and removes the kept one only after (finish)."""
        now = self._last[0].labels.get(SPEC_LABEL) if self._last else None
        if self._stale and now == verified:
            self._stale, self._leftover = False, True

    def commands_for(self, new_dropin: str | None, *, write: bool = True) -> list[list[str]]:
        cmds = list(self.lock_commands())
        if self._leftover and write and self._last and new_dropin == self._last[0].labels.get(SPEC_LABEL):
            # a recovery of the settings running now: restarted, verified, then the kept one goes
            return [*cmds, self._rt("restart", "-t", str(STOP_S), "--", self.name),
                    self._rt("rm", "-f", "--", self.kept), self.unlock_command()]
        if not write:
            cmds.append(self._rt("restart", "-t", str(STOP_S), "--", self.name))
        else:
            cmds += [self._create(new_dropin), *self.swap_commands(),
                     self._rt("rm", "-f", "--", self.kept)]  # once the new one is verified
        return cmds + [self.unlock_command()]

    async def write(self, text: str | None) -> None:
        """Makes ready what the next restart starts: a new container (created, not started), or
        the kept one back (a rollback), or nothing (the running one is already it)."""
        if self._stale:
            # an action cut off before its verification left the container before it: a person
            # chooses which to keep (mtptui never removes the only copy of a verified run)
            back = shlex.join(self._rt("rm", "-f", "--", self.name)) + " && " + \
                shlex.join(self._rt("rename", self.kept, self.name)) + " && " + shlex.join(self._rt("start", "--", self.name))
            raise ControlError(f"{self.host}: {self.kept} is the container before an action that did not finish: "
                               f"`{back}` puts it back; `{shlex.join(self._rt('rm', '--', self.kept))}` keeps the "
                               f"one running; then try again")
        await self.run(self._rt("rm", "-f", "--", self.new))
        if self._has_kept and text == self._kept_spec:
            self._pending = "kept"
            return
        now = (await self.first())
        if text == now.labels.get(SPEC_LABEL) and not self._has_kept:
            self._pending = "same"  # nothing was swapped: the running container is the one asked for
            return
        self._last = [now]
        await self.run(self._create(text))
        self._pending, self._swap_spec = "new", now.labels.get(SPEC_LABEL)

    async def restarted_since(self, mark: Mark) -> bool:
        """A swap not yet finished is not a restart done: restart() goes on from where the host
        stands (the container renamed aside is no container of the name, yet nothing runs)."""
        if self._pending != "same":
            return False
        return await super().restarted_since(mark)

    async def _present(self) -> set[str]:
        """Which of the container, the new one and the kept one the runtime has now."""
        r = await self.run(self._rt("inspect", "--type", "container", "--format", "{{.Name}}", "--",
                                    self.name, self.new, self.kept), check=False)
        return {x.strip().lstrip("/") for x in r.stdout.splitlines() if x.strip()}

    async def restart(self) -> None:
        """Each step is taken from where the host stands, not from where the last try began: a
        step retried after a lost link finds the host done with what it was asked (a rename whose
        answer was lost) and goes on from there."""
        if self._pending == "new":
            await self._swap_in()
        elif self._pending == "kept":
            await self._swap_back()
        else:
            await self.run(self._rt("restart", "-t", str(STOP_S), "--", self.name), timeout=STOP_S + 60)
        self._pending = "same"

    async def _swap_in(self) -> None:
        stop, aside, into, start = self.swap_commands()
        present = await self._present()
        if self.new in present and self.kept not in present:
            await self.run(stop, timeout=STOP_S + 60)
            await self.run(aside)
        # from here a rollback starts the kept container again, whatever fails next
        self._has_kept, self._kept_spec = True, self._swap_spec
        if self.new in present:
            await self.run(into)
        await self.run(start, timeout=STOP_S + 60)

    async def _swap_back(self) -> None:
        present = await self._present()
        if self.kept in present:
            if self.name in present:
                await self.run(self._rt("rm", "-f", "--", self.name))
            await self.run(self._rt("rename", self.kept, self.name))
        await self.run(self._rt("start", "--", self.name), timeout=STOP_S + 60)
        self._has_kept = False

    async def finish(self) -> None:
        """The new container is verified: the old one kept for a rollback goes."""
        if self._has_kept or self._leftover:
            await self.run(self._rt("rm", "-f", "--", self.kept))
            self._has_kept = self._leftover = False


def target_for(runner: Transport, sel: Selector, *, host: str, sudo: bool = False) -> ContainerTarget | ComposeTarget:
    """The target of a container host: a compose service, or a `docker run` container."""
    if sel.compose:
        from mtptui.control.compose import ComposeTarget

        return ComposeTarget(runner, sel, host=host, sudo=sudo)
    return ContainerTarget(runner, sel, host=host, sudo=sudo)

