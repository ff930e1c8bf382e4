"""Helpers of the live tests and the benchmark: a collecting feed, host configs, writers, oracle."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

from mtptui.config import HostConfig
from mtptui.sources.base import SourceStatus

from . import nspawn


class Collect:
    """A Feed that keeps everything, for assertions."""

    def __init__(self) -> None:
        self._lines: dict[str | None, list[str]] = {}
        self.statuses: list[SourceStatus] = []
        self.drops: list[tuple[int, str, str | None]] = []

    def lines(self, raw, host):
        self._lines.setdefault(host, []).extend(raw)

    def status(self, st):
        self.statuses.append(st)

    def dropped(self, n, reason, host):
        self.drops.append((n, reason, host))

    def got(self, host) -> list[str]:
        return self._lines.get(host, [])

    def states(self, host) -> list[str]:
        return [s.state for s in self.statuses if s.host == host]

    def last(self, host) -> SourceStatus | None:
        sts = [s for s in self.statuses if s.host == host]
        return sts[-1] if sts else None


def host_config(h: nspawn.TestHost, unit: str, **kw) -> HostConfig:
    """A HostConfig for container h, with quick keepalives and retries for tests."""
    keys = h.cluster.keys
    values = dict(name=f"gpu{h.index}", address=h.address, user="root",
                  identity=str(keys.identity), known_hosts=str(keys.known_hosts),
                  ssh_config="/dev/null", unit=unit, lines=100000, connect_timeout=2.0,
                  keepalive_interval=0.5, keepalive_count_max=2, reconnect_initial=0.2,
                  reconnect_max=1.0)
    values.update(kw)
    return HostConfig(**values)


def unique_unit(prefix: str = "mtp") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def start_writer(h: nspawn.TestHost, unit: str, rate: float, count: int) -> None:
    h.ssh(["systemd-run", "--quiet", f"--unit={unit}", "--property=LogRateLimitIntervalSec=0",
           "python3", "/opt/mtptui/tests/integration/hosts/linewriter.py", "--rate", str(rate),
           "--count", str(count)])


def two_writer_hosts(cluster, tmp_path, prefix: str, *, rate: float, count: int):
    """Starts a line writer unit on the first two hosts; returns the path of a config that names
    them gpu-a and gpu-b (SSH as root, the cluster's keys, that unit, 1000 lines of history)."""
    h1, h2 = cluster.hosts[:2]
    unit = unique_unit(prefix)
    keys = cluster.keys
    conf = tmp_path / "config.toml"
    conf.write_text(
        f'[defaults]\nunit = "{unit}"\nuser = "root"\nidentity = "{keys.identity}"\n'
        f'known_hosts = "{keys.known_hosts}"\nssh_config = "/dev/null"\nlines = 1000\n\n'
        f'[[hosts]]\nname = "gpu-a"\naddress = "{h1.address}"\n\n'
        f'[[hosts]]\nname = "gpu-b"\naddress = "{h2.address}"\n')
    for h in (h1, h2):
        start_writer(h, unit, rate=rate, count=count)
    return conf


def journal_of(h: nspawn.TestHost, unit: str) -> list[dict]:
    """journald's own answer: `journalctl -u UNIT -o json --all`, read with the plain ssh client."""

    out = h.ssh(["journalctl", f"--unit={unit}", "--output=json", "--all", "--no-pager"]).stdout
    return [json.loads(x) for x in out.splitlines() if x.strip()]


async def until(cond, timeout: float, what: str, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(step)
