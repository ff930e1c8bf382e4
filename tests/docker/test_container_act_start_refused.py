"""The runtime refuses to start the recreated container (as dockerd does when a GPU container's
device driver is gone: `could not select device driver "" with capabilities: [[gpu]]`): the
refusal is said, and the rollback starts the kept container itself again, nothing else left.

The refusal is made by a `docker` first on mtptui's PATH that answers the swap's `docker start`
as dockerd would, once, and passes every other command to the real client."""

from __future__ import annotations

import os
import shutil

from containers import audit_entries, free_port, inspect, mtptui, run_sim
from test_container_spec import names

REFUSAL = 'Error response from daemon: could not select device driver "" with capabilities: [[gpu]]'


def test_a_start_the_runtime_refuses_is_rolled_back_to_the_kept_container(dockerd, tmp_path, audit):
    name = "act-refused"
    run_sim(dockerd, name, free_port())
    before = inspect(dockerd, name)
    once = tmp_path / "refused"
    (tmp_path / "bin").mkdir()
    wrapper = tmp_path / "bin" / "docker"
    wrapper.write_text(f"""#!/bin/sh
if [ "$1" = start ] && [ "$3" = {name} ] && [ ! -e {once} ]; then
    touch {once}
    echo '{REFUSAL}' >&2
    exit 1
fi
exec {shutil.which("docker")} "$@"
""")
    wrapper.chmod(0o755)
    cfg = tmp_path / "config.toml"
    cfg.write_text("[control]\nwait_timeout = 120\n")
    r = mtptui(dockerd, "spec", "--local", "--container", name, "mtp1", "--yes", audit=audit, config=cfg,
               env={"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"})
    assert once.exists()
    assert r.returncode == 3, r.stdout + r.stderr
    assert "rolled back" in r.stdout and "could not select device driver" in r.stdout + r.stderr, r.stdout + r.stderr
    back = inspect(dockerd, name)
    assert back["Id"] == before["Id"] and back["State"]["Running"]  # the kept container itself, started again
    assert back["Config"]["Cmd"] == before["Config"]["Cmd"]
    assert names(dockerd, name) == {name}  # the refused one removed
    last = audit_entries(audit)[-1]
    assert last["result"] == "rolled_back"
    assert ("rollback_verify", "ok") in [(p["phase"], p["state"]) for p in last["phases"]]
    dockerd.docker("rm", "--force", name)  # a simulator left running takes the other tests' CPU
