"""The link to an SSH-reached dockerd cut while `mtptui spec` waits for the recreated container.

The console runs in a network namespace of the test's own (a veth pair of an integration-tier
slot, tests/integration/hosts/nspawn.py), the host's sshd listens on the pair's other end and
gives its sessions the tests' own dockerd (SetEnv DOCKER_HOST), as a GPU box's sshd does. The
console's end of the cable goes down as the wait begins: packets vanish, only keepalives tell.
Once the console has said it is reconnecting the cable comes back: the action ends verified,
the container kept for a rollback removed only then, the lock freed, and the audit entry says
where the link was lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from containers import audit_entries, free_port, inspect, run_sim
from dockerd import PROJECT
from test_container_spec import names

from mtptui.control.container import ContainerTarget
from mtptui.sources.runtime import Selector
from mtptui.transport.local import LocalRunner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "integration"))
from hosts import nspawn, rootfs  # noqa: E402
from hosts import sshd as sshd_proc  # noqa: E402


@pytest.fixture
def cable(dockerd, tmp_path, need):
    """(the console's netns end, the sshd): a slot's veth pair and an sshd on its host end."""
    need(os.path.exists(sshd_proc.BINARY), "OpenSSH sshd is missing (run .ci/system-deps as root)")
    cluster = nspawn.Cluster(rootfs.build())  # only its slot: names and addresses no other run has
    try:
        h = nspawn.TestHost(cluster, 1)
        cluster.hosts.append(h)
        h._network()
        box = sshd_proc.start(tmp_path / "sshd", extra=f"ListenAddress {h.gateway}\nSetEnv DOCKER_HOST={dockerd.host}\n")
        try:
            yield h, box
        finally:
            box.stop()
    finally:
        cluster.stop()


def test_link_cut_mid_wait_ends_verified_with_nothing_left(dockerd, cable, tmp_path, audit):
    h, box = cable
    name = "sim-cut"
    run_sim(dockerd, name, free_port())
    known = tmp_path / "known_hosts"
    known.write_text(f"[{h.gateway}]:{box.port} {box.host_key}\n")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[hosts]]\nname = "far"\naddress = "{h.gateway}"\nport = {box.port}\nuser = "{box.user}"\n'
                   f'identity = "{box.identity}"\nknown_hosts = "{known}"\nssh_config = "/dev/null"\n'
                   f'container = "{name}"\nconnect_timeout = 3\nkeepalive_interval = 0.5\nkeepalive_count_max = 2\n'
                   "[control]\nwait_timeout = 120\n")
    lock = ContainerTarget(LocalRunner(), Selector("docker", container=name), host="far").lock_dir
    env = {**os.environ, "MTPTUI_AUDIT_LOG": str(audit), "DOCKER_HOST": "unix:///nonexistent"}  # only SSH reaches it
    proc = subprocess.Popen(["ip", "netns", "exec", h.netns, sys.executable, "-m", "mtptui", "spec", "--config",
                             str(cfg), "far", "mtp1", "--yes"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, stdin=subprocess.DEVNULL, cwd=PROJECT)
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if "wait start" in line:
                break
        h.link(False)
        assert names(dockerd, name) == {name, f"{name}-mtptui-old"}  # recreated, the old one kept
        for line in proc.stderr:  # until the console itself says the link is lost
            seen.append(line)
            if "reconnecting" in line:
                break
        h.link(True)
        out, err = proc.communicate(timeout=300)
    finally:
        h.link(True)
        if proc.poll() is None:
            proc.kill()
    said = "".join(seen) + out + err
    assert "link lost" in "".join(seen), said
    assert proc.returncode == 0, said
    assert "verified: accept len" in out, said
    cmd = inspect(dockerd, name)["Config"]["Cmd"]
    assert cmd[cmd.index("--speculative-num-steps") + 1] == "1"
    assert names(dockerd, name) == {name}  # the kept one removed once the new one was verified
    assert not os.path.exists(lock)
    last = audit_entries(audit)[-1]
    assert last["result"] == "applied" and last["profile"] == "mtp1"
    lost = [p for p in last["phases"] if p["detail"].startswith("link lost")]
    assert lost and lost[0]["phase"] == "wait", json.dumps(last["phases"])
