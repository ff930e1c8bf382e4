"""Fixtures for the live layer's integration tests: a real OpenSSH sshd on loopback, and real
systemd + journald + sshd hosts (systemd-nspawn containers in network namespaces).

`cluster` (session scope) builds the cached rootfs if needed (as root, about a minute, once per
machine) and boots three containers; the tests start their own transient units in them.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hosts import nspawn, rootfs  # noqa: E402
from hosts import sshd as sshd_proc  # noqa: E402
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
    need(os.path.exists(sshd_proc.BINARY), "OpenSSH sshd is missing (apt-get install openssh-server)")
    info = sshd_proc.start(tmp_path / "sshd")
    try:
        yield info
    finally:
        info.stop()


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
