"""The container tier: a real dockerd of the tests' own (tests/docker/dockerd.py), the simulator
run in it as a container and as a compose service, and mtptui's commands against them.

`dockerd` (session scope) installs Debian's docker.io and docker-compose where they are missing
(through .ci/system-deps, the one list of the tests' system packages), starts the daemon on its
own socket, imports the hosts' root fs as its image, and stops it after. Without root it skips
with the reason; under CI=true it fails instead, as every tier does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "integration"))
from dockerd import PROJECT, Dockerd  # noqa: E402
from hosts import rootfs  # noqa: E402
from hosts import sshd as sshd_proc  # noqa: E402



def _missing() -> list[str]:
    return [t for t in ("dockerd", "docker", "docker-compose", "debootstrap") if shutil.which(t) is None]


@pytest.fixture(scope="session")
def dockerd(need, tmp_path_factory):
    need(os.geteuid() == 0, "needs root (dockerd)")
    if _missing():
        r = subprocess.run([str(PROJECT / ".ci" / "system-deps")], capture_output=True, text=True)
        need(r.returncode == 0, f"cannot install docker.io and docker-compose: {r.stderr.strip()[-300:]}")
    need(not _missing(), f"{', '.join(_missing())} missing after .ci/system-deps")
    d = Dockerd(tmp_path_factory.mktemp("dockerd"))
    try:
        d.start()
        d.import_rootfs(rootfs.build())
        yield d
    finally:
        d.stop()


@pytest.fixture(autouse=True)
def _containers_removed_at_the_end(request):
    """Every container a test of this tier made is removed when it ends, passed or failed (`rm
    --force`: a kill, where compose's `down` waits out each replica's stop): a simulator left
    running takes the CPU of the tests after it on its worker's daemon (one per worker, its tests
    one at a time, so what was not there before the test is the test's)."""
    if "dockerd" not in request.fixturenames:
        yield
        return
    d = request.getfixturevalue("dockerd")
    before = set(d.docker("ps", "--all", "--quiet", "--no-trunc").stdout.split())
    yield
    left = [c for c in d.docker("ps", "--all", "--quiet", "--no-trunc", check=False).stdout.split() if c not in before]
    if left:
        d.docker("rm", "--force", *left, check=False)


@pytest.fixture
def audit(tmp_path) -> Path:
    return tmp_path / "audit.jsonl"


@pytest.fixture
def ssh_box(dockerd, tmp_path, need):
    """A real OpenSSH sshd on loopback whose sessions talk to the tests' dockerd (its DOCKER_HOST
    set by sshd's SetEnv), as a GPU box's sshd talks to its own."""
    need(os.path.exists(sshd_proc.BINARY), "OpenSSH sshd is missing (run .ci/system-deps as root)")
    box = sshd_proc.start(tmp_path / "sshd", extra=f"SetEnv DOCKER_HOST={dockerd.host}\n")
    try:
        yield box
    finally:
        box.stop()
