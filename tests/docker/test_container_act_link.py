"""The link to an SSH-reached dockerd cut while `mtptui spec` waits for the recreated container,
and while it swaps the containers (an answer lost after the host did the step).

The console runs in a network namespace of the test's own (a veth pair of an integration-tier
slot, tests/integration/hosts/nspawn.py), the host's sshd listens on the pair's other end and
gives its sessions the tests' own dockerd (SetEnv DOCKER_HOST), as a GPU box's sshd does. The
console's end of the cable goes down while the host holds back an answer (a `docker` wrapper on
the sessions' PATH: the cut lands in the step meant, whatever the machine's load): packets vanish,
only keepalives tell. Once the console has said it is reconnecting the cable comes back and the
answers go: the action ends verified,
the container kept for a rollback removed only then, the lock freed, and the audit entry says
where the link was lost."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from containers import audit_entries, free_port, inspect, run_sim
from dockerd import PROJECT
from test_container_spec import names

from mtptui.control.container import lock_dir_of
from mtptui.sources.runtime import Selector, daemon_argv

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "integration"))
from hosts import nspawn, rootfs  # noqa: E402
from hosts import sshd as sshd_proc  # noqa: E402


@pytest.fixture
def cable(dockerd, tmp_path, need):
    """(the console's netns end, the sshd): a slot's veth pair and an sshd on its host end. Its
    sessions find `docker` first in tmp_path/bin, where a test puts a wrapper (hold())."""
    need(os.path.exists(sshd_proc.BINARY), "OpenSSH sshd is missing (run .ci/system-deps as root)")
    cluster = nspawn.Cluster(rootfs.build())  # only its slot: names and addresses no other run has
    try:
        h = nspawn.TestHost(cluster, 1)
        cluster.hosts.append(h)
        h._network()
        box = sshd_proc.start(tmp_path / "sshd", extra=f"ListenAddress {h.gateway}\nSetEnv DOCKER_HOST={dockerd.host} "
                              f"PATH={tmp_path / 'bin'}:{os.environ['PATH']}\n")
        try:
            yield h, box
        finally:
            box.stop()
    finally:
        cluster.stop()


def far_config(tmp_path, h, box, target: str) -> Path:
    """The config of host `far`, the sshd beyond the cable, whose server is `target` (TOML: a
    container, or a compose project and service), with short keepalives so a cut is seen soon."""
    known = tmp_path / "known_hosts"
    known.write_text(f"[{h.gateway}]:{box.port} {box.host_key}\n")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[hosts]]\nname = "far"\naddress = "{h.gateway}"\nport = {box.port}\nuser = "{box.user}"\n'
                   f'identity = "{box.identity}"\nknown_hosts = "{known}"\nssh_config = "/dev/null"\n'
                   f'{target}\nconnect_timeout = 3\nkeepalive_interval = 0.5\nkeepalive_count_max = 2\n'
                   "[control]\nwait_timeout = 120\n")
    return cfg


def spec_in(h, cfg: Path, audit: Path, profile: str) -> subprocess.Popen[str]:
    """`mtptui spec far PROFILE --yes` run in the console's netns."""
    env = {**os.environ, "MTPTUI_AUDIT_LOG": str(audit), "DOCKER_HOST": "unix:///nonexistent"}  # only SSH reaches it
    return subprocess.Popen(["ip", "netns", "exec", h.netns, sys.executable, "-m", "mtptui", "spec", "--config",
                             str(cfg), "far", profile, "--yes"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, stdin=subprocess.DEVNULL, cwd=PROJECT)


def read_until(proc: subprocess.Popen[str], seen: list[str], words: str) -> None:
    """Reads the console's lines into `seen` until one says `words` (or it ends)."""
    assert proc.stderr is not None
    for line in proc.stderr:
        seen.append(line)
        if words in line:
            return


def lock_of(d, name: str) -> str:
    """The container's lock on the tests' dockerd (the daemon's identity names it)."""
    return lock_dir_of(Selector("docker", container=name), d.docker(*daemon_argv("docker")[1:]).stdout.strip())


def hold(tmp_path, when: str) -> tuple[Path, Path]:
    """A `docker` first on the sshd sessions' PATH: the real client, then, where the shell test
    `when` holds (on the command's words "$1" "$3"), the answer held back until the test releases
    it; (held, release): the file it touches once it holds one, the file that lets all go."""
    held, release = tmp_path / "held", tmp_path / "release"
    (tmp_path / "bin").mkdir()
    wrapper = tmp_path / "bin" / "docker"
    wrapper.write_text(f"""#!/bin/sh
{shutil.which("docker")} "$@"; rc=$?
if {when} && [ ! -e {release} ]; then
    touch {held}
    while [ ! -e {release} ]; do sleep 0.1; done
fi
exit $rc
""")
    wrapper.chmod(0o755)
    return held, release


def cut_while_held(h, proc: subprocess.Popen[str], held: Path, release: Path, during,
                   counted: str | None = None) -> str:
    """Once an answer is held: the cable down, `during()` run, the lines read until the console
    says it lost the link; then the answers let go and the cable up or, where `counted` is given,
    the cable up, the lines read until the console says `counted`, and only then the answers let
    go (the host's command still running as the console comes back). All the console said."""
    seen: list[str] = []
    try:
        while not held.exists():
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        h.link(False)
        during()
        read_until(proc, seen, "reconnecting")
        if counted is None:
            release.touch()
            h.link(True)
        else:
            h.link(True)
            read_until(proc, seen, counted)
            time.sleep(1.0)  # a command asked again now meets the first still running on the host
            release.touch()
        out, err = proc.communicate(timeout=300)
    finally:
        release.touch()
        h.link(True)
        if proc.poll() is None:
            proc.kill()
    said = "".join(seen) + out + err
    assert "link lost" in "".join(seen) and proc.returncode == 0, said
    return said


def test_link_cut_mid_wait_ends_verified_with_nothing_left(dockerd, cable, tmp_path, audit):
    # every `docker inspect` after the new container's start is held, so the wait cannot end
    # before the cut: the cable goes down with the wait's own question to the host under way
    h, box = cable
    name = "act-cut"
    run_sim(dockerd, name, free_port())
    started = tmp_path / "started"
    held, release = hold(tmp_path, f'{{ [ "$1 $3" != "start {name}" ] || touch {started}; }} && '
                                   f'[ "$1" = inspect ] && [ -e {started} ]')
    proc = spec_in(h, far_config(tmp_path, h, box, f'container = "{name}"'), audit, "mtp1")

    def kept() -> None:
        assert names(dockerd, name) == {name, f"{name}-mtptui-old"}  # recreated, the old one kept

    said = cut_while_held(h, proc, held, release, kept)
    assert "verified: accept len" in said, said
    cmd = inspect(dockerd, name)["Config"]["Cmd"]
    assert cmd[cmd.index("--speculative-num-steps") + 1] == "1"
    assert names(dockerd, name) == {name}  # the kept one removed once the new one was verified
    assert not os.path.exists(lock_of(dockerd, name))
    last = audit_entries(audit)[-1]
    assert last["result"] == "applied" and last["profile"] == "mtp1"
    lost = [p for p in last["phases"] if p["detail"].startswith("link lost")]
    assert lost and lost[0]["phase"] == "wait", json.dumps(last["phases"])
    dockerd.docker("rm", "--force", name)  # a simulator left running takes the other tests' CPU


def test_link_cut_while_the_containers_are_swapped_is_finished_on_reconnect(dockerd, cable, tmp_path, audit):
    # The host renames the running container aside, but its answer never reaches the console: the
    # cable goes down while the wrapper holds it back. On reconnect the swap goes on from where the
    # host stands (the step retried from the top would stop a container no longer there).
    h, box = cable
    name = "act-swap"
    run_sim(dockerd, name, free_port())
    held, release = hold(tmp_path, f'[ "$1 $3" = "rename {name}-mtptui-old" ]')
    proc = spec_in(h, far_config(tmp_path, h, box, f'container = "{name}"'), audit, "mtp1")

    def aside() -> None:
        assert names(dockerd, name) == {f"{name}-mtptui-old", f"{name}-mtptui-new"}  # the host did the step

    said = cut_while_held(h, proc, held, release, aside)
    assert "verified: accept len" in said, said
    cmd = inspect(dockerd, name)["Config"]["Cmd"]
    assert cmd[cmd.index("--speculative-num-steps") + 1] == "1"
    assert names(dockerd, name) == {name} and not os.path.exists(lock_of(dockerd, name))
    last = audit_entries(audit)[-1]
    assert last["result"] == "applied"
    assert [p["phase"] for p in last["phases"] if p["detail"].startswith("link lost")] == ["restart"], last["phases"]
    dockerd.docker("rm", "--force", name)
