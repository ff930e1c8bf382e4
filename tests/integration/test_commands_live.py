"""The commands as an operator runs them: `mtptui record` over SSH into a file that `summary`
reads, and `mtptui local` / `record --local` on the box itself (inside a container host)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from hosts.helpers import start_writer, two_writer_hosts, unique_unit

pytestmark = pytest.mark.systemd


def mtptui(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtptui", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_record_two_hosts_then_summary(cluster, tmp_path):
    conf = two_writer_hosts(cluster, tmp_path, "rec", rate=50, count=100)
    time.sleep(2.5)
    out = tmp_path / "rec.json"
    r = mtptui("record", "--config", str(conf), "--out", str(out), "--duration", "3")
    assert r.returncode == 0, r.stderr
    assert "gpu-a: streaming" in r.stderr and "gpu-b: 10" in r.stderr
    entries = [json.loads(x) for x in out.read_text().splitlines()]
    for name in ("gpu-a", "gpu-b"):
        mine = [e for e in entries if e["_HOSTNAME"] == name and "Decode batch" in str(e["MESSAGE"])]
        assert len(mine) == 100
        assert all({"__CURSOR", "__REALTIME_TIMESTAMP", "_SYSTEMD_UNIT"} <= e.keys() for e in mine)
    s = mtptui("summary", "--json", str(out))
    assert s.returncode == 0, s.stderr
    series = {x["host"]: x["decode"]["batches"] for x in json.loads(s.stdout)["series"]}
    assert series == {"gpu-a": 100, "gpu-b": 100}


def test_record_reports_a_failed_host_and_exits_1(cluster, tmp_path):
    h = cluster.hosts[0]
    kh = tmp_path / "empty_known_hosts"
    kh.write_text("")
    conf = tmp_path / "c.toml"
    conf.write_text(f'[[hosts]]\nname = "stranger"\naddress = "{h.address}"\nunit = "u"\n'
                    f'identity = "{cluster.keys.identity}"\nknown_hosts = "{kh}"\n'
                    'ssh_config = "/dev/null"\n')
    r = mtptui("record", "--config", str(conf), "--out", str(tmp_path / "r.json"), "--duration", "5")
    assert r.returncode == 1
    # the name once, then the address it was reached at, which the name does not tell
    assert f"stranger: failed (not retrying): {h.address}: host key of {h.address} is unknown" in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_config_is_one_line(tmp_path):
    conf = tmp_path / "c.toml"
    conf.write_text('[[hosts]]\nname = "a"\nunit = "u"\nport = "22"\n')
    r = mtptui("record", "--config", str(conf), "--out", str(tmp_path / "r.json"))
    assert r.returncode == 2
    assert r.stderr.strip() == f"mtptui record: {conf}:4: hosts[0].port: must be an integer from 1 to 65535 (got '22')"


ON_BOX = "cd /tmp && PYTHONPATH=/opt/mtptui PYTHONDONTWRITEBYTECODE=1 python3 -m mtptui "


def test_local_without_journal_rights_says_sudo_or_group(cluster):
    h = cluster.hosts[2]
    r = h.ssh(ON_BOX + "local --unit mtptui-sim", user="viewer", check=False)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "no rights" in lines[0]
    assert "sudo" in lines[0] and "systemd-journal" in lines[0]


def test_record_local_on_the_box(cluster):
    h = cluster.hosts[2]
    unit = unique_unit("loc")
    start_writer(h, unit, rate=100, count=150)
    r = h.ssh(ON_BOX + f"record --local --unit {unit} --lines 1000 --out /tmp/{unit}.json "
              "--duration 3 --host box3", check=False)
    assert r.returncode == 0, r.stderr
    entries = [json.loads(x) for x in h.ssh(f"cat /tmp/{unit}.json").stdout.splitlines()]
    decode = [e for e in entries if "Decode batch" in str(e["MESSAGE"])]
    assert len(decode) == 150 and {e["_HOSTNAME"] for e in entries} == {"box3"}
