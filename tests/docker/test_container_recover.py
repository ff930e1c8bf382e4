"""`mtptui spec HOST --recover` after a console SIGKILLed once its action's verify passed but
before the action finished: for `docker run`, the container kept for the rollback not yet
removed; for compose, mtptui's override in place and its replica verified. The audit log holds
that verify passed (the entry's `verified`, written before the finish), so the recovery keeps
those settings: the running container restarted and verified again, then the kept one removed
(docker run); the override kept byte for byte, the replica restarted and verified (compose). Not
a rollback, and the user's compose files untouched throughout."""

from __future__ import annotations

import os

from containers import audit_entries, compose_project, digest, free_port, inspect, killed_at, mtptui, run_sim
from test_compose_spec import OVERRIDE, replicas, steps
from test_container_spec import names

from mtptui.control.container import lock_dir_of
from mtptui.sources.runtime import Selector, daemon_argv


def lock_of(d, sel: Selector) -> str:
    return lock_dir_of(sel, d.docker(*daemon_argv("docker")[1:]).stdout.strip())


def test_recover_after_a_kill_past_verify_keeps_the_new_container_and_removes_the_old(dockerd, audit):
    name = "sim-recover"
    run_sim(dockerd, name, free_port())
    try:
        killed_at(dockerd, "--local", "--container", name, "mtp1", audit=audit, phase="finish")
        assert names(dockerd, name) == {name, f"{name}-mtptui-old"}  # verified, the old one not yet removed
        new = inspect(dockerd, name)
        assert new["Config"]["Cmd"][new["Config"]["Cmd"].index("--speculative-num-steps") + 1] == "1"
        assert audit_entries(audit)[-1]["verified"] == "after"  # written before the finish

        r = mtptui(dockerd, "spec", "--local", "--container", name, "--recover", "--yes", audit=audit)
        out = r.stdout + r.stderr
        assert r.returncode == 0, out
        assert "was interrupted at finish (process not running)" in out
        assert "recovering the settings verified by" in out and "verified: accept len" in out
        assert f"docker rm -f -- {name}-mtptui-old" in r.stdout and "docker create" not in r.stdout  # its plan
        now = inspect(dockerd, name)
        assert now["Id"] == new["Id"] and now["State"]["Running"]  # the verified one kept, restarted
        assert now["State"]["StartedAt"] != new["State"]["StartedAt"]
        assert names(dockerd, name) == {name}  # the old one removed, after the verification
        assert not os.path.exists(lock_of(dockerd, Selector("docker", container=name)))
        entries = audit_entries(audit)
        assert [(e["action"], e["result"], e.get("verified")) for e in entries] == [
            ("apply", "interrupted", "after"), ("restore", "applied", "after")], entries
        assert entries[0]["interrupted"]["phase"] == "finish"
        assert [p["phase"] for p in entries[1]["phases"] if p["state"] == "ok"][-2:] == ["finish", "unlock"]
    finally:
        dockerd.docker("rm", "--force", name, f"{name}-mtptui-old", check=False)


def test_recover_after_a_kill_past_verify_keeps_the_compose_override(dockerd, tmp_path, audit):
    root = compose_project(dockerd, tmp_path / "recover", replicas=1)
    users = digest(root)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[hosts]]\nname = "sim"\ncompose = "{root}"\nservice = "sim"\nlocal = true\n'
                   "[control]\nwait_timeout = 120\n")
    try:
        killed_at(dockerd, "sim", "mtp1", audit=audit, phase="finish", config=cfg)
        written = (root / OVERRIDE).read_bytes()
        cut = replicas(dockerd, root)
        assert [steps(c) for c in cut] == ["1"] and b"speculation profile mtp1" in written

        r = mtptui(dockerd, "spec", "sim", "--recover", "--yes", audit=audit, config=cfg)
        out = r.stdout + r.stderr
        assert r.returncode == 0, out
        assert "was interrupted at finish (process not running)" in out and "verified: accept len" in out
        assert " restart sim" in r.stdout and " up " not in r.stdout  # `up` would recreate nothing
        assert (root / OVERRIDE).read_bytes() == written and digest(root) == users
        now = replicas(dockerd, root)
        assert [steps(c) for c in now] == ["1"] and now[0]["Id"] == cut[0]["Id"] and now[0]["State"]["Running"]
        assert now[0]["State"]["StartedAt"] != cut[0]["State"]["StartedAt"]  # a new run, verified
        assert not os.path.exists(lock_of(dockerd, Selector("docker", project_dir=str(root), service="sim")))
        entries = audit_entries(audit)
        assert [(e["action"], e["result"], e.get("verified")) for e in entries] == [
            ("apply", "interrupted", "after"), ("restore", "applied", "after")], entries
    finally:
        ids = [c["Id"] for c in replicas(dockerd, root)]
        if ids:
            dockerd.docker("rm", "--force", *ids)
