"""Fixtures for the live layer's integration tests: a real OpenSSH sshd on loopback, and real
systemd + journald + sshd hosts (systemd-nspawn containers in network namespaces).

`cluster` (session scope) builds the cached rootfs if needed (as root, about a minute, once per
machine) and boots three containers; the tests start their own transient units in them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hosts import nspawn, rootfs  # noqa: E402
from hosts.helpers import Collect  # noqa: E402
from simproc import Sim  # noqa: E402




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


@pytest.fixture
def collect():
    return Collect()


@pytest.fixture
def audit(tmp_path):
    """The audit log of one test's `mtptui spec` runs (MTPTUI_AUDIT_LOG)."""
    return tmp_path / "audit.jsonl"


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


# --- the live simulator as a process ------------------------------------------------------------

@pytest.fixture
def children(tmp_path):
    """start(cls, args): a child process's wrapper (`cls(args, tmp_path)`, with `.stop()`: Sim,
    Exporter) that is stopped when the test ends, however it ends."""
    made = []

    def start(cls, args):
        c = cls(args, tmp_path)
        made.append(c)
        return c

    yield start
    for c in made:
        c.stop()


@pytest.fixture
def sim_factory(children):
    return lambda args: children(Sim, args)
