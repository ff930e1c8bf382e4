"""`mtptui spec` on a `docker run` container of the tests' own dockerd: the container recreated
with the profile's command and the old one kept, stopped and renamed, until the new one is
verified; a refused start rolled back to that very container; a console SIGKILLed mid-action
reported, and the container before it left for a person to choose, with the command that puts
it back."""

from __future__ import annotations

import signal
import subprocess

from containers import BROKEN, audit_entries, free_port, held_at, inspect, killed_at, mtptui, run_sim


def names(d, name: str) -> set[str]:
    """The containers of this test (its container's name and those mtptui made from it)."""
    return {n for n in d.docker("ps", "--all", "--format", "{{.Names}}").stdout.split() if n.startswith(name)}


def test_apply_keeps_the_old_container_until_verified_and_a_refused_start_rolls_back(dockerd, tmp_path, audit):
    name = "sim-run"
    run_sim(dockerd, name, free_port())
    cfg = tmp_path / "config.toml"
    cfg.write_text(BROKEN + "[control]\nwait_timeout = 120\n")

    plan = mtptui(dockerd, "spec", "--local", "--container", name, "mtp1", "--dry-run", audit=audit, config=cfg)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert f"docker rename {name} {name}-mtptui-old" in plan.stdout  # the old one kept, by name
    assert "+ --speculative-num-steps 1" in plan.stdout and "- --speculative-num-steps 3" in plan.stdout

    r = mtptui(dockerd, "spec", "--local", "--container", name, "mtp1", "--yes", audit=audit, config=cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified: accept len" in r.stdout
    now = inspect(dockerd, name)
    cmd = now["Config"]["Cmd"]
    assert cmd[cmd.index("--speculative-num-steps") + 1] == "1"
    assert now["HostConfig"]["NetworkMode"] == "host" and now["HostConfig"]["Binds"]  # its options carried
    assert names(dockerd, name) == {name}  # the old one removed once the new one was verified
    phases = [p["phase"] for p in audit_entries(audit)[-1]["phases"]]
    assert phases.index("verify") < phases.index("finish")

    applied = now["Id"]
    r = mtptui(dockerd, "spec", "--local", "--container", name, "broken", "--yes", audit=audit, config=cfg)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "rolled back" in r.stdout and "unrecognized arguments" in r.stdout, r.stdout
    back = inspect(dockerd, name)
    assert back["Id"] == applied and back["State"]["Running"]  # the kept container itself, started again
    assert back["Config"]["Cmd"] == cmd
    assert names(dockerd, name) == {name}  # the refused new one removed
    last = audit_entries(audit)[-1]
    assert last["result"] == "rolled_back" and last["profile"] == "broken"
    assert ("rollback_verify", "ok") in [(p["phase"], p["state"]) for p in last["phases"]]


def test_a_console_killed_mid_action_is_reported_and_the_kept_container_is_left_to_a_person(dockerd, tmp_path, audit):
    name = "sim-kill"
    run_sim(dockerd, name, free_port())
    before = inspect(dockerd, name)["Id"]
    killed_at(dockerd, "--local", "--container", name, "mtp1", audit=audit)
    assert names(dockerd, name) == {name, f"{name}-mtptui-old"}  # the new one runs, the old one kept

    show = mtptui(dockerd, "spec", "--local", "--container", name, audit=audit)
    assert show.returncode == 0, show.stdout + show.stderr
    assert "was interrupted at wait (process not running)" in show.stdout + show.stderr
    assert "  command:     NEXTN num_steps=1" in show.stdout  # the new container's, not yet verified

    again = mtptui(dockerd, "spec", "--local", "--container", name, "mtp2", "--yes", audit=audit)
    assert again.returncode == 1, again.stdout + again.stderr
    said = again.stderr.strip().splitlines()[-1]
    assert f"{name}-mtptui-old is the container before an action that did not finish" in said
    back = said.split("`")[1]  # the command it says puts the old one back
    subprocess.run(["sh", "-c", back], env=dockerd.env, check=True, capture_output=True, timeout=120)
    assert inspect(dockerd, name)["Id"] == before and names(dockerd, name) == {name}
    assert [e["result"] for e in audit_entries(audit)] == ["interrupted", "not_run"]


def test_a_ctrl_c_once_verified_keeps_the_new_container_and_removes_the_old(dockerd, audit):
    # The new container has verified: the first ctrl-c no longer puts the old one back (a second
    # restart for nothing, the verified settings thrown away); the finish completes, exit 0.
    name = "sim-int"
    run_sim(dockerd, name, free_port())
    spec, said = held_at(dockerd, "--local", "--container", name, "mtp1", audit=audit, phase="finish")
    try:
        assert names(dockerd, name) == {name, f"{name}-mtptui-old"}, said  # verified, the old one kept
        spec.send_signal(signal.SIGINT)
        out, err = spec.communicate(timeout=120)
    finally:
        if spec.poll() is None:
            spec.kill()
    err = "".join(said) + err
    assert spec.returncode == 0, out + err
    assert "new settings are verified: kept" in err and "putting" not in err, err
    assert "ctrl-c after verify: kept, not put back" in out, out
    cmd = inspect(dockerd, name)["Config"]["Cmd"]
    assert cmd[cmd.index("--speculative-num-steps") + 1] == "1"
    assert names(dockerd, name) == {name}  # the old one removed: the finish ran to its end
    entry = audit_entries(audit)[-1]
    assert (entry["result"], entry.get("verified")) == ("applied", "after"), entry
    assert ("finish", "ok") in [(p["phase"], p["state"]) for p in entry["phases"]]
