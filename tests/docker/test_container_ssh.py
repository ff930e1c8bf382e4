"""A container host over SSH: a real OpenSSH sshd on loopback whose sessions talk to the tests'
own dockerd (its DOCKER_HOST set by sshd's SetEnv), as a GPU box's sshd talks to its own.
`record` follows the container's log and `spec` recreates it, both through the SSH connection."""

from __future__ import annotations

import json

from containers import free_port, inspect, mtptui, run_sim


def test_record_and_spec_over_ssh(dockerd, ssh_box, tmp_path, audit):
    name = "sim-ssh"
    run_sim(dockerd, name, free_port())
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[hosts]]\nname = "far"\naddress = "127.0.0.1"\nport = {ssh_box.port}\nuser = "{ssh_box.user}"\n'
                   f'identity = "{ssh_box.identity}"\nknown_hosts = "{ssh_box.known_hosts}"\nssh_config = "/dev/null"\n'
                   f'container = "{name}"\n[control]\nwait_timeout = 120\n')
    out = tmp_path / "far.jsonl"
    r = mtptui(dockerd, "record", "far", "--out", str(out), "--duration", "5", audit=audit, config=cfg,
               env={"DOCKER_HOST": "unix:///nonexistent"})  # only the SSH session reaches the daemon
    assert r.returncode == 0, r.stdout + r.stderr
    entries = [json.loads(x) for x in out.read_text().splitlines()]
    assert {e["_HOSTNAME"] for e in entries} == {"far"}
    assert any("Decode batch" in e["MESSAGE"] for e in entries)

    r = mtptui(dockerd, "spec", "far", "mtp1", "--yes", audit=audit, config=cfg,
               env={"DOCKER_HOST": "unix:///nonexistent"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified: accept len" in r.stdout and "127.0.0.1" in r.stdout
    cmd = inspect(dockerd, name)["Config"]["Cmd"]
    assert cmd[cmd.index("--speculative-num-steps") + 1] == "1"
