"""Fixtures for the live layer's integration tests: a real OpenSSH sshd on loopback, and real
systemd + journald + sshd hosts (systemd-nspawn containers in network namespaces).

`cluster` (session scope) builds the cached rootfs if needed (as root, about a minute, once per
machine) and boots three containers; the tests start their own transient units in them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hosts import nspawn, rootfs  # noqa: E402

from mtptui.config import HostConfig  # noqa: E402
from mtptui.sources.base import SourceStatus  # noqa: E402



def have_nspawn_prereqs() -> tuple[bool, str]:
    if os.geteuid() != 0:
        return False, "needs root (systemd-nspawn, network namespaces)"
    for tool in ("systemd-nspawn", "debootstrap", "ip", "ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return False, f"{tool} is missing (run .ci/system-deps as root)"
    return True, ""


@pytest.fixture(scope="session")
def cluster(need):
    ok, why = have_nspawn_prereqs()
    need(ok, why)
    c = nspawn.Cluster(rootfs.build())
    try:
        c.start(3)
        yield c
    finally:
        c.stop()


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


@pytest.fixture
def collect():
    return Collect()


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


def journal_of(h: nspawn.TestHost, unit: str) -> list[dict]:
    """journald's own answer: `journalctl -u UNIT -o json --all`, read with the plain ssh client."""
    import json

    out = h.ssh(["journalctl", f"--unit={unit}", "--output=json", "--all", "--no-pager"]).stdout
    return [json.loads(x) for x in out.splitlines() if x.strip()]


async def until(cond, timeout: float, what: str, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(step)


# --- loopback sshd ------------------------------------------------------------------------------

@pytest.fixture
def sshd(tmp_path, need):
    """A real OpenSSH sshd on 127.0.0.1 (any free port), for the current user and a fresh key."""
    binary = "/usr/sbin/sshd"
    need(os.path.exists(binary), "OpenSSH sshd is missing (apt-get install openssh-server)")
    d = tmp_path / "sshd"
    d.mkdir()
    os.chmod(d, 0o755)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_ed25519")],
                   check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "client")],
                   check=True)
    (d / "authorized_keys").write_text((d / "client.pub").read_text())
    os.chmod(d / "authorized_keys", 0o644)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_ed25519\nPidFile {d}/sshd.pid\n"
        f"AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nAllowTcpForwarding yes\n")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", exist_ok=True)
    log = open(d / "sshd.log", "w")  # noqa: SIM115
    proc = subprocess.Popen([binary, "-f", str(d / "sshd_config"), "-D", "-e"],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"sshd did not start: {(d / 'sshd.log').read_text()}")
            time.sleep(0.02)
    host_pub = (d / "host_ed25519.pub").read_text().split()
    (d / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")

    class Info:
        pass

    info = Info()
    info.dir, info.port, info.proc = d, port, proc
    info.identity = str(d / "client")
    info.known_hosts = str(d / "known_hosts")
    info.host_key = f"{host_pub[0]} {host_pub[1]}"
    import getpass

    info.user = getpass.getuser()
    try:
        yield info
    finally:
        proc.terminate()
        proc.wait(5)
        log.close()
