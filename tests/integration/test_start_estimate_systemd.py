"""The downtime a plan expects, against a real systemd + journald host: the last start and the
median of the last few, as `mtptui spec --restart --dry-run` reads them from the journal, within a
second of the starts journald itself recorded (systemd's `Started` to the server's ready line, its
run's own, read with the plain ssh client)."""

from __future__ import annotations

import json
import re
import statistics
import time

import pytest
from hosts.helpers import journal_of, unique_unit
from test_spec_systemd import SIM, install_unit, spec, write_config

pytestmark = pytest.mark.systemd

SIM3 = [*SIM[:SIM.index("--sim-startup-seconds")], "--sim-startup-seconds", "3",
        *SIM[SIM.index("--sim-startup-seconds") + 2:]]
GREP = r"^Started |fired up and ready to roll|Application startup complete"


def real_starts(h, unit: str) -> list[float]:
    """journald's own record: for each run, PID 1's Started to that run's ready line."""
    started: dict[str, int] = {}
    out = []
    for e in journal_of(h, unit):
        msg = e.get("MESSAGE")
        if not isinstance(msg, str):
            continue
        if msg.startswith("Started ") and e.get("_PID") == "1":
            started[e["INVOCATION_ID"]] = int(e["__REALTIME_TIMESTAMP"])
        elif "fired up and ready" in msg and e.get("_SYSTEMD_INVOCATION_ID") in started:
            out.append((int(e["__REALTIME_TIMESTAMP"]) - started[e["_SYSTEMD_INVOCATION_ID"]]) / 1e6)
    return out


def wait_ready(h, unit: str, n: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(real_starts(h, unit)) < n:
        assert time.monotonic() < deadline, f"{unit}: fewer than {n} starts came ready"
        time.sleep(0.5)


def test_the_downtime_estimate_is_the_real_start(cluster, tmp_path):
    h = cluster.hosts[2]
    unit = unique_unit("start")
    install_unit(h, unit, sim=SIM3)
    wait_ready(h, unit, 1)
    for n in (2, 3, 4):
        h.ssh(["systemctl", "restart", unit])
        wait_ready(h, unit, n)
    real = real_starts(h, unit)
    # how journalctl hands `--grep` with `--lines` over on this host (252: newest first)
    probe = h.ssh(["journalctl", f"--unit={unit}", "--output=json", "--no-pager", f"--grep={GREP}", "--lines=60"]).stdout
    stamps = [int(json.loads(x)["__REALTIME_TIMESTAMP"]) for x in probe.splitlines() if x.strip()]
    version = h.ssh(["journalctl", "--version"]).stdout.split("\n")[0]
    order = "newest first" if stamps == sorted(stamps, reverse=True) else "oldest first" if stamps == sorted(stamps) else "mixed"

    cfg = write_config(tmp_path, h, unit)
    r = spec(cfg, f"gpu{h.index}", "--restart", "--dry-run", "--json", audit=tmp_path / "audit.jsonl")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)["hosts"][0]["plan"]
    est = plan["last_start_s"]
    median = statistics.median(real)
    line = next(x for x in r.stderr.splitlines() if x.startswith("downtime:"))
    print(f"\n{version}; --grep with --lines: {order}; real starts {[round(x, 2) for x in real]} s, "
          f"estimate {est:.2f} s; preview: {line}")
    assert len(real) == 4 and all(2.5 < x < 10 for x in real), real
    assert est is not None and abs(est - real[-1]) < 1.0, (est, real)
    m = re.fullmatch(r"downtime: last start (\d+\.\d) s \(Started → ready\), median of 4: (\d+\.\d) s", line)
    assert m, line
    assert float(m.group(1)) == round(est, 1) and abs(float(m.group(2)) - median) < 1.0, (line, real)
