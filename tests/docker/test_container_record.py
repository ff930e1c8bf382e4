"""`mtptui record --append` and `mtptui export` on a container host of the tests' own dockerd.

A record resumed with --append goes on from its last line's runtime stamp (the lines at that
stamp known by their text), across a container restart between the two sessions: the record
holds every line `docker logs --timestamps` gives, once, and the restart as a new run. The
exporter's figures come from the container's lines: its counts equal `docker logs`' once the
container has stopped writing."""

from __future__ import annotations

import json
import re
import time
import urllib.request

from containers import free_port, inspect, mtptui, run_sim
from test_container_live import docker_logs, order

from mtptui.sources.record import STAMP
from mtptui.sources.runtime import stamp_key


def config(tmp_path, name: str):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[hosts]]\nname = "box"\ncontainer = "{name}"\nlocal = true\n')
    return cfg


def recorded(path) -> list[str]:
    """The record's container lines as `docker logs --timestamps` prints them (stamp, text)."""
    entries = [json.loads(x) for x in path.read_text().splitlines()]
    assert {e["_HOSTNAME"] for e in entries} == {"box"}
    return [f"{e[STAMP]} {e['MESSAGE']}" for e in entries if STAMP in e]


def test_append_resumes_the_stream_across_a_restart_losing_and_doubling_nothing(dockerd, tmp_path, audit):
    name = "sim-rec"
    run_sim(dockerd, name, free_port())
    cfg, out = config(tmp_path, name), tmp_path / "rec.jsonl"
    first = mtptui(dockerd, "record", "box", "--out", str(out), "--lines", "100000", "--duration", "5",
                   audit=audit, config=cfg)
    assert first.returncode == 0, first.stdout + first.stderr
    before = recorded(out)
    assert before and not any(" Started container " in x for x in before)
    # written while no record runs: the second session must bring these, then the new run's
    dockerd.docker("restart", "--time", "1", name)
    started = inspect(dockerd, name)["State"]["StartedAt"]
    again = mtptui(dockerd, "record", "box", "--out", str(out), "--append", "--duration", "5",
                   audit=audit, config=cfg)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"box: resuming {out} after its last entry there (stamped {before[-1].split()[0]})" in again.stderr
    got = recorded(out)
    assert got[:len(before)] == before  # the first session's lines as they were
    marks = [x for x in got if " Started container " in x]
    cid = inspect(dockerd, name)["Id"][:12]
    assert marks == [f"{started} Started container {name} (id {cid})"]  # the restart: a new run
    at = got.index(marks[0])
    assert all(stamp_key(x.split()[0]) < stamp_key(started) for x in got[len(before):at])
    assert all(stamp_key(x.split()[0]) >= stamp_key(started) for x in got[at:])
    lines = [x for x in got if x not in marks]
    assert len(lines) == len(set(lines))  # nothing twice
    last = stamp_key(lines[-1].split()[0])
    want = [x for x in docker_logs(dockerd, name) if stamp_key(x.split()[0]) <= last]
    assert sorted(lines, key=order) == sorted(want, key=order)  # nothing lost, up to the last line recorded
    assert any(stamp_key(x.split()[0]) > stamp_key(before[-1].split()[0]) for x in lines[:at])
    dockerd.docker("rm", "--force", name)


def scrape(port: int) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    return {m.group(1): float(m.group(2)) for m in re.finditer(r'^(\S+\{[^}]*host="box"[^}]*\}) (\S+)$', text, re.M)}


def test_export_serves_the_containers_lines(dockerd, tmp_path, audit):
    import subprocess
    import sys

    name = "sim-export"
    run_sim(dockerd, name, free_port())
    port = free_port()
    cfg = config(tmp_path, name)
    proc = subprocess.Popen([sys.executable, "-m", "mtptui", "export", "--config", str(cfg), "box", "--lines",
                             "100000", "--listen", f"127.0.0.1:{port}", "--stale-after", "86400"],
                            env=dict(dockerd.env, MTPTUI_AUDIT_LOG=str(audit)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        decode = r"^\S+ .*Decode batch.*accept len: ([\d.]+)"
        seen: dict[str, float] = {}
        deadline = time.monotonic() + 120
        while not any(k.startswith("mtptui_decode_batches_total") and v for k, v in seen.items()):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.5)
            try:
                seen = scrape(port)
            except OSError:
                pass
        dockerd.docker("kill", name)  # its log is whole now: the exporter must come to the same counts
        logs = docker_logs(dockerd, name)
        lens = [float(m.group(1)) for x in logs if (m := re.match(decode, x))]
        assert lens
        while True:
            seen = scrape(port)
            batches = sum(v for k, v in seen.items() if k.startswith("mtptui_decode_batches_total"))
            read = sum(v for k, v in seen.items() if k.startswith("mtptui_lines_read_total"))
            if read >= len(logs) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert (read, batches) == (len(logs), len(lens))
        accept = [v for k, v in seen.items() if k.startswith("mtptui_spec_accept_length{")]
        assert accept == [lens[-1]]
    finally:
        proc.terminate()
        proc.wait(30)
        dockerd.docker("rm", "--force", name, check=False)
