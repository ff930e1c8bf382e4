"""A container runtime's words, as argvs and as what `inspect` answers: the one home of how mtptui
asks Docker (or Podman, which takes the same verbs) about a container or a compose service.

A host's target names either one container (`docker run --name X`) or a compose service (its
project directory or file and the service's name). A compose service's replicas are found by
the labels every compose (v1's docker-compose 1.29 and v2's plugin) puts on its containers: the
project's working directory and the service, never by guessing the project's name. Each replica is
its own engine: it is named `HOST-N` by its compose number (`com.docker.compose.container-number`),
so the service's sum is the replicas' (core/parse/envelope.service_of strips the `-N`).

Pure: argvs in, parsed answers out; the runner that runs them is the caller's.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from mtptui.config import HostConfig
from mtptui.core.parse import timeparse

RUNTIMES = ("docker", "podman")
WORKDIR_LABEL = "com.docker.compose.project.working_dir"
SERVICE_LABEL = "com.docker.compose.service"
NUMBER_LABEL = "com.docker.compose.container-number"
# Compose's default file names, in the order compose itself looks for them in a directory
COMPOSE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")
COMPOSE_OVERRIDES = ("compose.override.yaml", "compose.override.yml", "docker-compose.override.yml",
                     "docker-compose.override.yaml")
_NEVER = "0001-01-01T00:00:00Z"  # Docker's zero time: a container never started or never finished


class RuntimeError_(Exception):
    """What the runtime answered that mtptui cannot use: one line."""


@dataclass(frozen=True)
class Selector:
    """What a host follows and acts on: one container by name, or a compose service's replicas."""

    runtime: str  # docker or podman
    container: str = ""  # a container's name (or id)
    project_dir: str = ""  # a compose service: the project's directory ...
    files: tuple[str, ...] = ()  # ... its files as the user runs them (-f), in order
    service: str = ""

    @property
    def compose(self) -> bool:
        return bool(self.service)

    @property
    def name(self) -> str:
        """The target as the plan, the lock and the audit log name it."""
        return f"compose:{os.path.basename(self.project_dir.rstrip('/')) or '/'}/{self.service}" if self.compose \
            else self.container

    def list_argv(self) -> list[str]:
        """Every container of the target, running or not, one id a line."""
        if not self.compose:
            return [self.runtime, "ps", "--all", "--no-trunc", "--quiet", "--filter", f"name=^/?{re.escape(self.container)}$"]
        return [self.runtime, "ps", "--all", "--no-trunc", "--quiet",
                "--filter", f"label={WORKDIR_LABEL}={self.project_dir}",
                "--filter", f"label={SERVICE_LABEL}={self.service}"]


def selector_of(h: HostConfig) -> Selector:
    """The target a container host's config names (its `compose` path is the host's own: a
    directory, or a compose file whose directory is the project's)."""
    if not h.service:
        return Selector(h.runtime_name, container=h.container)
    path = os.path.normpath(h.compose)
    if os.path.splitext(path)[1] in (".yml", ".yaml"):
        return Selector(h.runtime_name, project_dir=os.path.dirname(path), files=(path,), service=h.service)
    return Selector(h.runtime_name, project_dir=path, service=h.service)  # its files: found on the host


def default_files_argv(project_dir: str) -> list[str]:
    """Lists the compose files compose itself would read in the directory: the first of its
    default names, and the first override name present."""
    names = " ".join(shlex.quote(os.path.join(project_dir, n)) for n in COMPOSE_FILES)
    overs = " ".join(shlex.quote(os.path.join(project_dir, n)) for n in COMPOSE_OVERRIDES)
    return ["sh", "-c", f"for f in {names}; do [ -e \"$f\" ] && {{ echo \"$f\"; break; }}; done; "
                        f"for f in {overs}; do [ -e \"$f\" ] && {{ echo \"$f\"; break; }}; done; true"]


def daemon_argv(runtime: str) -> list[str]:
    """What names the daemon a client reaches, one line: Docker's engine id with its data root
    (dockerd 20.10's id is the machine's trust key, /etc/docker/key.json, shared by every daemon
    of the machine: the data root tells two of them apart), Podman's storage root (no daemon:
    its store is what two names share)."""
    if runtime == "podman":
        return [runtime, "info", "--format", "{{.Store.GraphRoot}}"]
    return [runtime, "info", "--format", "{{.ID}} {{.DockerRootDir}}"]


def inspect_argv(runtime: str, refs: list[str]) -> list[str]:
    return [runtime, "inspect", "--type", "container", "--", *refs]


def logs_argv(runtime: str, ref: str, *, since: str | None = None, tail: int | None = None,
              follow: bool = True) -> list[str]:
    """`docker logs` with the runtime's stamp on every line (RFC 3339, nanoseconds): from `since`
    (inclusive: the runtime keeps a line stamped at it), else the last `tail` lines (all: None)."""
    argv = [runtime, "logs", "--timestamps"] + (["--follow"] if follow else [])
    if since:
        argv.append(f"--since={since}")
    else:
        argv.append(f"--tail={'all' if tail is None else tail}")
    return [*argv, "--", ref]


@dataclass(frozen=True)
class Container:
    """One container as `inspect` tells it."""

    id: str
    name: str
    running: bool
    status: str  # created, running, restarting, exited, dead, paused
    exit_code: int
    started_at: str  # RFC 3339; "" when never started
    created: str
    restart_count: int
    entrypoint: tuple[str, ...]
    cmd: tuple[str, ...]
    labels: dict[str, str] = field(default_factory=dict)
    number: int | None = None  # its compose replica number
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def argv(self) -> list[str]:
        """What the container runs: its entrypoint, then its command."""
        return [*self.entrypoint, *self.cmd]

    @property
    def run(self) -> str:
        """One start of it: a `docker restart` keeps the id and changes the start time."""
        return f"{self.id[:12]}@{self.started_at}"

    @property
    def started_ts(self) -> float | None:
        return timeparse.rfc3339(self.started_at) if self.started_at else None

    def replica(self, host: str) -> str:
        """The engine's host name: the config's, with `-N` for a compose replica."""
        return f"{host}-{self.number}" if self.number is not None else host


def parse_inspect(text: str) -> list[Container]:
    """`inspect`'s JSON array; raises RuntimeError_ for anything else."""
    try:
        doc = json.loads(text or "[]")
    except ValueError:
        raise RuntimeError_(f"inspect answered no JSON: {text[:80]!r}") from None
    if not isinstance(doc, list):
        raise RuntimeError_("inspect answered no list")
    return [_container(d) for d in doc if isinstance(d, dict)]


def _strs(v: Any) -> tuple[str, ...]:
    if isinstance(v, str):
        return (v,)
    return tuple(str(x) for x in v) if isinstance(v, list) else ()


def _container(d: dict[str, Any]) -> Container:
    state: dict[str, Any] = d["State"] if isinstance(d.get("State"), dict) else {}
    config: dict[str, Any] = d["Config"] if isinstance(d.get("Config"), dict) else {}
    labels: dict[str, Any] = config["Labels"] if isinstance(config.get("Labels"), dict) else {}
    started = str(state.get("StartedAt") or "")
    number = labels.get(NUMBER_LABEL)
    return Container(
        id=str(d.get("Id") or ""), name=str(d.get("Name") or "").lstrip("/"),
        running=bool(state.get("Running")), status=str(state.get("Status") or ""),
        exit_code=int(state.get("ExitCode") or 0), started_at="" if started.startswith(_NEVER[:4]) else started,
        created=str(d.get("Created") or ""), restart_count=int(d.get("RestartCount") or 0),
        entrypoint=_strs(config.get("Entrypoint")), cmd=_strs(config.get("Cmd")),
        labels={str(k): str(v) for k, v in labels.items()},
        number=int(number) if isinstance(number, str) and number.isdigit() else None, raw=d)


def stamp_of(line: str) -> str | None:
    """The runtime's stamp at the head of a `logs --timestamps` line, or None."""
    head, sep, _ = line.partition(" ")
    return head if sep and head[:1].isdigit() and head.endswith("Z") else None


def stamp_key(stamp: str) -> tuple[str, str]:
    """A stamp as a key that sorts by time: the second, then the fraction padded to nanoseconds
    (the runtime drops trailing zeros: `...:29.06Z` is `...:29.060000000Z`)."""
    body = stamp.rstrip("Z")
    sec, _, frac = body.partition(".")
    return sec, frac.ljust(9, "0")
