"""The link to an SSH-reached dockerd cut while `compose up` recreates a service of two replicas
(the cable of test_container_act_link.py: the console in a network namespace of the test's own).

The host's `up` is held mid-way, after one replica runs its new container (a `docker-compose`
first on the sessions' PATH stops the real one there, SIGSTOP, until the test lets it go), and
the cable goes down with its answer under way. On reconnect the console counts the replicas that
run the command asked, and asks `up` again only for what is left, after the first one still
running on the host (they share a flock beside the action's lock): the action ends verified,
not rolled back, the two `up`s never overlap, the user's compose files are byte for byte as they
were, and the audit entry says where the link was lost and what the host had done."""

from __future__ import annotations

import json
import os
import shutil

from containers import audit_entries, compose_project, digest
from test_compose_spec import OVERRIDE, replicas, steps
import test_container_act_link as link
from test_container_act_link import spec_in

from mtptui.control.container import lock_dir_of
from mtptui.sources.runtime import SERVICE_LABEL, WORKDIR_LABEL, Selector, daemon_argv

cable = link.cable  # the console's netns and the host's sshd, as the `docker run` link test has them


def hold_up(tmp_path, root) -> tuple:
    """A `docker-compose` first on the sshd sessions' PATH: the real one, but its first `up` is
    stopped (SIGSTOP) once a replica has a container that was not there before (created, maybe
    started: compose v1 recreates the replicas side by side), until the test releases it; each
    `up` logs its start and end. (held, release, log)."""
    held, release, log = tmp_path / "held", tmp_path / "release", tmp_path / "ups.log"
    real = shutil.which("docker-compose")
    ps = (f"docker ps --no-trunc --quiet --filter label={WORKDIR_LABEL}={root} "
          f"--filter label={SERVICE_LABEL}=sim")
    (tmp_path / "bin").mkdir()
    wrapper = tmp_path / "bin" / "docker-compose"
    wrapper.write_text(f"""#!/bin/sh
case " $* " in *" up "*) ;; *) exec {real} "$@" ;; esac
echo "start $$" >> {log}
if [ -e {release} ]; then {real} "$@"; rc=$?; echo "end $$" >> {log}; exit $rc; fi
before=$({ps} --all)
{real} "$@" & pid=$!
while kill -0 $pid 2>/dev/null; do
    new=$(for id in $({ps} --all); do case "$before" in *"$id"*) ;; *) echo "$id" ;; esac; done)
    [ -n "$new" ] && break
    sleep 0.05
done
kill -STOP $pid
touch {held}
while [ ! -e {release} ]; do sleep 0.1; done
kill -CONT $pid
wait $pid; rc=$?
echo "end $$" >> {log}
exit $rc
""")
    wrapper.chmod(0o755)
    return held, release, log


def test_link_cut_mid_up_goes_on_from_where_the_host_stands(dockerd, cable, tmp_path, audit):
    h, box = cable
    root = compose_project(dockerd, tmp_path / "linkup", replicas=2)
    users = digest(root)
    before = {c["Id"] for c in replicas(dockerd, root)}
    held, release, log = hold_up(tmp_path, root)
    proc = spec_in(h, link.far_config(tmp_path, h, box, f'compose = "{root}"\nservice = "sim"'), audit, "mtp1")

    def mid_up() -> None:
        now = replicas(dockerd, root)
        assert any(c["Id"] not in before and steps(c) == "1" for c in now), now  # one recreated, or being

    try:
        said = link.cut_while_held(h, proc, held, release, mid_up, counted="after the lost link")
        assert "verified: accept len" in said, said
        now = replicas(dockerd, root)
        assert [steps(c) for c in now] == ["1", "1"] and all(c["State"]["Running"] for c in now)
        assert not {c["Id"] for c in now} & before
        assert digest(root) == users  # the user's compose files byte for byte as they were
        assert sorted(p.name for p in root.iterdir()) == sorted(["docker-compose.yml", OVERRIDE])
        ups = log.read_text().split()[::2]
        assert ups == ["start", "end", "start", "end"], log.read_text()  # asked again, never two at once
        last = audit_entries(audit)[-1]
        assert last["result"] == "applied" and last["profile"] == "mtp1", json.dumps(last)
        details = [(p["phase"], p["detail"]) for p in last["phases"] if p["state"] == "progress"]
        assert [ph for ph, d in details if d.startswith("link lost")] == ["restart"], details
        counted = [d for ph, d in details if ph == "restart" and "replicas of sim run the command asked" in d]
        assert counted and "asked again" in counted[0], details  # the host had not finished: `up` again
        daemon = dockerd.docker(*daemon_argv("docker")[1:]).stdout.strip()
        lock = lock_dir_of(Selector("docker", project_dir=str(root), service="sim"), daemon)
        assert not os.path.exists(lock)
    finally:
        ids = [c["Id"] for c in replicas(dockerd, root)]
        if ids:
            dockerd.docker("rm", "--force", *ids)  # a simulator left running takes the other tests' CPU
        daemon = dockerd.docker(*daemon_argv("docker")[1:]).stdout.strip()
        up_lock = lock_dir_of(Selector("docker", project_dir=str(root), service="sim"), daemon) + ".up"
        if os.path.exists(up_lock):
            os.remove(up_lock)
