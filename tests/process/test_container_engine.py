"""What a container target asks its engine once, against real dockerds of the test's own (the
docker tier's recipe, tests/docker/dockerd.py, without an image): the daemon's identity, which
names the action's lock (one container name on two daemons: two locks; one daemon by two names:
one lock, refused to a second console), and compose's version (v2's plugin or v1's
docker-compose), asked once per target however often it reads the service."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from mtptui.control.compose import ComposeTarget
from mtptui.control.container import ContainerTarget, lock_dir_of
from mtptui.control.errors import LockedError
from mtptui.sources.runtime import SERVICE_LABEL, WORKDIR_LABEL, Selector, daemon_argv
from mtptui.transport.local import LocalRunner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docker"))
from dockerd import Dockerd  # noqa: E402

EMPTY = "mtptui-test:empty"


class DaemonRunner(LocalRunner):
    """This machine, its docker client pointed at one daemon (as a GPU box's sshd sets
    DOCKER_HOST for its sessions); every argv asked kept, to count the questions."""

    def __init__(self, docker_host: str) -> None:
        self.docker_host = docker_host
        self.asked: list[list[str]] = []

    async def run(self, argv, *, input=None, timeout=60.0):
        self.asked.append(list(argv))
        return await super().run(["env", f"DOCKER_HOST={self.docker_host}", *argv], input=input, timeout=timeout)


@pytest.fixture(scope="module")
def daemons(need, tmp_path_factory):
    """Two bare dockerds (no image but an empty one: nothing here starts a container)."""
    need(os.geteuid() == 0, "needs root (dockerd)")
    need(shutil.which("dockerd") and shutil.which("docker-compose"), "dockerd or docker-compose missing "
         "(run .ci/system-deps as root)")
    started = []
    try:
        for n in (1, 2):
            d = Dockerd(tmp_path_factory.mktemp(f"dockerd{n}"))
            started.append(d)
            d.start()
        yield started
    finally:
        for d in started:
            d.stop()


def test_one_name_on_two_daemons_two_locks_one_daemon_by_two_names_one_lock(daemons, tmp_path):
    one, two = daemons
    alias = tmp_path / "one.sock"  # the same daemon by a second name
    alias.symlink_to(one.sock)
    ids = [d.docker(*daemon_argv("docker")[1:]).stdout.strip() for d in daemons]
    assert ids[0] != ids[1]  # (20.10's engine ids alone are equal here: one /etc/docker/key.json)
    sel = Selector("docker", container="sim")
    targets = [ContainerTarget(DaemonRunner(h), sel, host=f"h{n}", sudo=False)
               for n, h in enumerate((one.host, two.host, f"unix://{alias}"))]

    async def go() -> None:
        for t in targets:
            await t.identify()
        first, other, same = targets
        assert first.lock_dir != other.lock_dir and first.lock_dir == same.lock_dir
        assert first.lock_dir == lock_dir_of(sel, ids[0])
        await first.lock("ops@a", stale_after=1800)
        try:
            await other.lock("ops@b", stale_after=1800)  # another daemon's container of that name
            await other.unlock()
            with pytest.raises(LockedError, match="sim is locked by ops@a"):
                await same.lock("ops@c", stale_after=1800)
        finally:
            await first.unlock()
        assert not os.path.exists(first.lock_dir)
        for t in targets:
            await t.identify()
            asked = [a for a in t.runner.asked if a[1:2] == ["info"]]
            assert len(asked) == 1, asked  # asked once, though the lock read it again

    asyncio.run(go())


def _empty_image(d: Dockerd) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("etc")
        info.type = tarfile.DIRTYPE
        tar.addfile(info)
    subprocess.run(["docker", "import", "-", EMPTY], input=buf.getvalue(), env=d.env, check=True,
                   capture_output=True, timeout=60)


def test_compose_version_asked_once_per_target(daemons, tmp_path):
    # a replica as compose labels it, created (never started): what read() needs of a service
    one = daemons[0]
    _empty_image(one)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "docker-compose.yml").write_text('version: "2.4"\nservices:\n  sim:\n    image: x\n')
    one.docker("create", "--name", "proj_sim_1", "--label", f"{WORKDIR_LABEL}={root}", "--label",
               f"{SERVICE_LABEL}=sim", "--label", "com.docker.compose.container-number=1", EMPTY, "/sim", "--x")
    runner = DaemonRunner(one.host)
    t = ComposeTarget(runner, Selector("docker", project_dir=str(root), service="sim"), host="proj")

    async def go() -> None:
        for _ in range(3):
            st = await t.read()
            assert st.argv == ["/sim", "--x"]
        assert t.tool == ["docker-compose"]  # this machine has v1 only (Debian's 1.29)
        t.commands_for(None, write=True)

    try:
        asyncio.run(go())
    finally:
        one.docker("rm", "--force", "proj_sim_1", check=False)
    versions = [a for a in runner.asked if a[-1:] == ["version"]]
    assert versions == [["docker", "compose", "version"], ["docker-compose", "version"]], versions
    assert len([a for a in runner.asked if a[1:2] == ["info"]]) == 1
