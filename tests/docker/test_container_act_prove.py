"""`mtptui bench` and `mtptui tune` on a `docker run` container of the tests' own dockerd, in the
smallest runs the commands allow (one profile other than the running one, one request of a few
tokens): each recreates the container for its profile through the control path, measures, and
restores it as found: the container's own command and options under its own name, no mtptui
label, no kept or new container left, running; the audit has the apply and the restore."""

from __future__ import annotations

import json

from containers import audit_entries, free_port, inspect, mtptui, run_sim
from test_container_spec import names

from mtptui.control.container import SPEC_LABEL

SMALL = ("--concurrency", "1", "--requests", "1", "--max-tokens", "8", "--yes")


def found(d, name: str) -> tuple:
    """What `as found` compares: the command, the options carried to a recreated container, the labels."""
    c = inspect(d, name)
    hc = c["HostConfig"]
    return (c["Config"]["Cmd"], c["Config"]["Entrypoint"], c["Config"]["Image"], sorted(c["Config"]["Env"]),
            hc["NetworkMode"], hc["Binds"], c["Config"]["Labels"] or {})


def steps(d, name: str) -> str | None:
    cmd = inspect(d, name)["Config"]["Cmd"]
    return cmd[cmd.index("--speculative-num-steps") + 1] if "--speculative-num-steps" in cmd else None


def assert_as_found(d, name: str, before: tuple) -> None:
    assert found(d, name) == before
    assert SPEC_LABEL not in before[-1]
    assert inspect(d, name)["State"]["Running"]
    assert names(d, name) == {name}  # no NAME-mtptui-old or -new left


def test_bench_measures_a_profile_and_restores_the_container_as_found(dockerd, tmp_path, audit):
    name = "act-bench"
    run_sim(dockerd, name, free_port())
    before = found(dockerd, name)
    out = tmp_path / "b.json"
    r = mtptui(dockerd, "bench", "--local", "--container", name, "--profiles", "mtp1", *SMALL, "--json", str(out),
               audit=audit, env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(out.read_text())
    assert report["restored"] is True and report["unit"] == name
    assert [(x["profile"], x["requests"], x["errors"]) for x in report["results"]] == [("mtp1", 1, 0)]
    assert_as_found(dockerd, name, before)
    assert steps(dockerd, name) == "3"
    entries = audit_entries(audit)
    assert [(e["action"], e.get("profile"), e["result"]) for e in entries] == [
        ("bench", None, "done"), ("apply", "mtp1", "applied"), ("restore", None, "applied")]
    assert json.loads(entries[1]["dropin_after"])["profile"] == "mtp1"  # the label mtptui put on its container
    assert entries[-1]["dropin_after"] is None  # the container's own command again, not mtptui's
    dockerd.docker("rm", "--force", name)  # a simulator left running takes the other tests' CPU


def test_tune_measures_and_restores_the_container_as_found(dockerd, tmp_path, audit):
    name = "act-tune"
    run_sim(dockerd, name, free_port())
    before = found(dockerd, name)
    out = tmp_path / "t.json"
    r = mtptui(dockerd, "tune", "--local", "--container", name, "--profiles", "off", "--budget", "1m", *SMALL,
               "--json", str(out), audit=audit, env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(out.read_text())
    assert [c["profile"] for c in data["candidates"]] == ["off"]
    assert data["kept"] is None and data["restored"] and "host: restored" in r.stdout
    assert_as_found(dockerd, name, before)
    entries = audit_entries(audit)
    assert [(e["action"], e.get("profile"), e["result"]) for e in entries] == [
        ("tune", None, "done"), ("apply", "off", "applied"), ("restore", None, "applied")]
    dockerd.docker("rm", "--force", name)
