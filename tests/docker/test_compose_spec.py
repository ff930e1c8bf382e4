"""`mtptui spec` on a compose service of two replicas in the tests' own dockerd (docker-compose
1.29, Debian's): mtptui's override file beside the user's, `up -d SERVICE`, a refused start
rolled back by restoring the override; the user's compose files byte for byte as they were.
(`--revert`, the override removed, is the same path as the rollback: not run here, for the tier's time.)"""

from __future__ import annotations

import re

from containers import BROKEN, audit_entries, compose_project, digest, mtptui, replicas

OVERRIDE = "compose.mtptui.yml"


def steps(c: dict) -> str:
    cmd = c["Config"]["Cmd"]
    return cmd[cmd.index("--speculative-num-steps") + 1]


def test_override_applies_to_both_replicas_rolls_back_and_leaves_the_users_files(dockerd, tmp_path, audit):
    root = compose_project(dockerd, tmp_path / "proj", replicas=2)
    users = digest(root)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[hosts]]\nname = "sim"\ncompose = "{root}"\nservice = "sim"\nlocal = true\n'
                   + BROKEN + "[control]\nwait_timeout = 120\n")

    plan = mtptui(dockerd, "spec", "sim", "mtp1", "--dry-run", audit=audit, config=cfg)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert f"docker-compose --project-directory {root} --file {root}/docker-compose.yml --file {root}/{OVERRIDE} " \
           "up --detach --no-deps --scale sim=2 sim" in plan.stdout  # v1 here, said by the command itself
    assert not (root / OVERRIDE).exists()

    r = mtptui(dockerd, "spec", "sim", "mtp1", "--yes", audit=audit, config=cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified: accept len" in r.stdout
    assert [steps(c) for c in replicas(dockerd, root)] == ["1", "1"]
    applied = (root / OVERRIDE).read_bytes()
    assert digest(root) == users

    r = mtptui(dockerd, "spec", "sim", "broken", "--yes", audit=audit, config=cfg)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "rolled back" in r.stdout and "unrecognized arguments" in r.stdout, r.stdout
    assert (root / OVERRIDE).read_bytes() == applied  # the override as it was, byte for byte
    now = replicas(dockerd, root)
    assert [steps(c) for c in now] == ["1", "1"] and all(c["State"]["Running"] for c in now)
    assert digest(root) == users
    last = audit_entries(audit)[-1]
    assert last["result"] == "rolled_back" and last["dropin_before"] == applied.decode()
    # read after mtp1's replicas were verified: each replica's start, StartedAt to its ready line
    assert re.search(r"^downtime: last start \d+\.\d s \(Started → ready\), median of 2: \d+\.\d s$", r.stdout, re.M), r.stdout
