"""A console SIGKILLed mid-`spec` on a compose service (as test_container_spec.py does for a
`docker run` container): the override it wrote and the replica it recreated are left, with its
lock and an audit entry `running`; the next `mtptui spec` says what was cut off, `--recover` says
in one line that no settings were verified to go back to (changing nothing), and `--revert`
removes mtptui's override: the service runs its own command again and the user's compose files
are byte for byte as they were throughout. (`--recover` of verified settings is the systemd
tier's: the same session code, its plan the override as the audit log holds it.)"""

from __future__ import annotations

import os
import subprocess

from containers import audit_entries, compose_project, digest, killed_at, mtptui, replicas
from test_compose_spec import OVERRIDE, steps

from mtptui.control.container import lock_dir_of
from mtptui.sources.runtime import Selector, daemon_argv


def spec(d, cfg, audit, *args: str) -> subprocess.CompletedProcess[str]:
    return mtptui(d, "spec", "sim", *args, audit=audit, config=cfg)


def test_killed_console_is_reported_and_reverted_with_the_users_files_untouched(dockerd, tmp_path, audit):
    root = compose_project(dockerd, tmp_path / "actkill", replicas=1)
    users = digest(root)
    own = replicas(dockerd, root)[0]["Config"]["Cmd"]
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[hosts]]\nname = "sim"\ncompose = "{root}"\nservice = "sim"\nlocal = true\n'
                   "[control]\nwait_timeout = 120\n")
    daemon = dockerd.docker(*daemon_argv("docker")[1:]).stdout.strip()  # the lock is the service's on that daemon
    lock = lock_dir_of(Selector("docker", project_dir=str(root), service="sim"), daemon)

    killed_at(dockerd, "sim", "mtp1", audit=audit, config=cfg)
    cut = replicas(dockerd, root)
    assert [steps(c) for c in cut] == ["1"]  # the cut-off action's replica runs
    written = (root / OVERRIDE).read_bytes()
    assert b"speculation profile mtp1" in written and os.path.isdir(lock)

    show = spec(dockerd, cfg, audit)
    assert show.returncode == 0, show.stdout + show.stderr
    assert "was interrupted at wait (process not running)" in show.stdout + show.stderr

    r = spec(dockerd, cfg, audit, "--recover", "--yes")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "has no verified settings of compose:actkill/sim to recover" in r.stderr.strip().splitlines()[-1], r.stderr
    assert (root / OVERRIDE).read_bytes() == written and replicas(dockerd, root)[0]["Id"] == cut[0]["Id"]

    r = spec(dockerd, cfg, audit, "--revert", "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (root / OVERRIDE).exists() and digest(root) == users
    now = replicas(dockerd, root)
    assert [c["Config"]["Cmd"] for c in now] == [own] and now[0]["State"]["Running"]
    assert sorted(p.name for p in root.iterdir()) == ["docker-compose.yml"]  # no temp file of mtptui's left
    assert not os.path.exists(lock)
    entries = audit_entries(audit)
    assert [(e["action"], e.get("profile"), e["result"]) for e in entries] == [
        ("apply", "mtp1", "interrupted"), ("revert", None, "applied")], entries
    assert entries[0]["interrupted"]["why"] == "process not running" and entries[0]["interrupted"]["phase"] == "wait"
    dockerd.docker("rm", "--force", *(c["Id"] for c in now))  # faster than compose down; its CPU to the others
