"""`mtptui record --out` over a record that exists, against a real host over SSH: refused in one
line unless --force or --append; with the host's link cut, neither touches a byte of it; with the
host back, --append resumes after the file's last cursor, nothing twice and nothing missed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest
from hosts.helpers import start_writer, unique_unit

pytestmark = pytest.mark.systemd


def mtptui(*args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtptui", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def seqs(data: bytes) -> list[int]:
    out = []
    for line in data.decode().splitlines():
        m = re.search(r"seq: (\d+),", str(json.loads(line).get("MESSAGE")))
        if m:
            out.append(int(m.group(1)))
    return out


def test_an_existing_record_survives_a_host_that_is_down_and_resumes_by_cursor(cluster, tmp_path):
    h = cluster.hosts[1]
    unit = unique_unit("keep")
    start_writer(h, unit, rate=20, count=100000)
    keys = cluster.keys
    conf = tmp_path / "config.toml"
    conf.write_text(f'[[hosts]]\nname = "gpu1"\naddress = "{h.address}"\nuser = "root"\nunit = "{unit}"\n'
                    f'identity = "{keys.identity}"\nknown_hosts = "{keys.known_hosts}"\nssh_config = "/dev/null"\n'
                    "lines = 100000\nconnect_timeout = 2\nkeepalive_interval = 0.5\nkeepalive_count_max = 2\n"
                    "reconnect_initial = 0.2\nreconnect_max = 1\n")
    out = tmp_path / "precious.json"
    time.sleep(1.5)
    r = mtptui("record", "--config", str(conf), "--out", str(out), "--duration", "3")
    assert r.returncode == 0, r.stderr
    before = out.read_bytes()
    first = seqs(before)
    assert len(first) > 40 and first == list(range(len(first)))

    r = mtptui("record", "--config", str(conf), "--out", str(out), "--duration", "3")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr == f"mtptui record: {out} exists: --append to resume it, --force to overwrite\n"
    assert out.read_bytes() == before

    h.link(False)
    try:
        for mode in ("--force", "--append"):
            r = mtptui("record", "--config", str(conf), "--out", str(out), mode, "--give-up-after", "3")
            assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
            assert out.read_bytes() == before, mode
            assert r.stderr.splitlines()[-2:] == [f"mtptui record: {out}: no entry received, left as it was",
                                                  "gpu1: 0 entries"], r.stderr
        fresh = tmp_path / "fresh.json"
        r = mtptui("record", "--config", str(conf), "--out", str(fresh), "--give-up-after", "3")
        assert r.returncode == 1 and not fresh.exists(), r.stderr
        assert r.stderr.splitlines()[-2] == f"mtptui record: {fresh}: no entry received, not written"
    finally:
        h.link(True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml", "precious.json"]  # no temp files

    time.sleep(1)
    r = mtptui("record", "--config", str(conf), "--out", str(out), "--append", "--duration", "3")
    assert r.returncode == 0, r.stderr
    assert f"gpu1: resuming {out} after its last entry there" in r.stderr
    after = out.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    got = seqs(after)
    assert got == list(range(len(got))) and len(got) > len(first) + 100  # nothing twice, none missed
    cursors = [json.loads(x)["__CURSOR"] for x in after.decode().splitlines() if "__CURSOR" in x]
    assert len(cursors) == len(set(cursors))
