"""The downtime a `spec` preview expects for a `docker run` container, from the runtime itself: the
simulator's container restarted in the tests' own dockerd, the preview's figure is its last start,
State.StartedAt (`docker inspect`) to the ready line of that run (`docker logs --timestamps`), as
this test reads them with the docker client, not mtptui's code."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from datetime import datetime

from containers import free_port, inspect, mtptui, run_sim

READY = "The server is fired up and ready to roll!"


def epoch(stamp: str) -> float:
    """Docker's RFC 3339 stamp with nanoseconds, as seconds (datetime takes microseconds only)."""
    head, _, frac = stamp.rstrip("Z").partition(".")
    whole = datetime.fromisoformat(head + "+00:00").timestamp()
    return whole + (int(frac) / 10 ** len(frac) if frac else 0.0)


def healthy(port: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5).status == 200:
                return
        except (urllib.error.URLError, OSError):
            pass
        assert time.monotonic() < deadline, f"no /health 200 on {port} in {timeout:.0f} s"
        time.sleep(0.2)


def test_the_preview_says_the_containers_last_start_as_the_runtime_saw_it(dockerd, tmp_path, audit):
    name, port = "sim-downtime", free_port()
    run_sim(dockerd, name, port)
    try:
        healthy(port)
        first = inspect(dockerd, name)["State"]["StartedAt"]
        # the figure must be this run's, not the first one's, whose ready line is in the same log
        dockerd.docker("restart", "--time", "1", name)
        healthy(port)
        started = inspect(dockerd, name)["State"]["StartedAt"]
        assert started != first
        logs = dockerd.docker("logs", "--timestamps", f"--since={started}", name)
        ready = [epoch(x.split(" ", 1)[0]) for x in (logs.stdout + logs.stderr).splitlines() if READY in x]
        assert len(ready) == 1, logs.stdout + logs.stderr
        took = ready[0] - epoch(started)
        # the simulator says ready 1 s (--sim-startup-seconds) after its interpreter is up
        assert 1.0 <= took < 60, took

        plan = mtptui(dockerd, "spec", "--local", "--container", name, "mtp1", "--dry-run", "--json", audit=audit)
        assert plan.returncode == 0, plan.stdout + plan.stderr
        est = json.loads(plan.stdout)["hosts"][0]["plan"]["last_start_s"]
        assert est is not None and abs(est - took) < 0.001, (est, took)
        line = next(x for x in plan.stderr.splitlines() if x.startswith("downtime:"))
        m = re.fullmatch(r"downtime: last start (\d+\.\d) s \(Started → ready\)", line)  # one start: no median
        assert m and float(m.group(1)) == round(took, 1), (line, took)
    finally:
        dockerd.docker("rm", "--force", name, check=False)  # a simulator left running takes the others' CPU
