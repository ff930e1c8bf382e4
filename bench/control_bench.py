"""What the control path adds to a restart, on a real systemd host (a systemd-nspawn container).

Installs a unit running the project's simulator, then toggles it between mtp1 and off N times with
the real HostControl over SSH, and prints per cycle and as percentiles:
- confirm -> restart issued: from execute() to `systemctl restart` having returned (lock, write,
  daemon-reload, journal mark, restart);
- ready line -> verified: from journald's time of the ready line to the verdict (this includes
  waiting for the server's decode batches, which the simulator logs about every 0.3 s);
- verdict line -> verified: from journald's time of the line that settled the verdict to the
  verdict in mtptui: journald's follower wake-up, SSH, parsing;
- the whole action, and peak RSS.

    sudo .venv/bin/python bench/control_bench.py [--cycles 6]

Target: under 1 s for each of the first two (beyond the server's own stop and start).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

from hosts import nspawn, rootfs  # noqa: E402
from hosts.helpers import host_config, unique_unit  # noqa: E402

from mtptui.control.profiles import BUILTINS  # noqa: E402
from mtptui.control.restart import Settings  # noqa: E402
from mtptui.control.session import HostControl  # noqa: E402
from mtptui.control.target import SystemdTarget  # noqa: E402
from mtptui.transport.ssh import SshTransport  # noqa: E402
from machine import line as machine_line  # noqa: E402

SIM = ("/usr/bin/python3 -m mtptui.sim --model-path Qwen/Qwen3-8B --tp 1 --sim-load steady "
       "--sim-startup-seconds 1 --decode-log-interval 10 --port 30999")


def pct(v: list[float], p: float) -> float:
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))] if v else float("nan")


async def cycles(h, unit: str, n: int) -> list[dict]:
    cfg = host_config(h, unit)
    hc = HostControl(SystemdTarget(SshTransport(cfg), unit, host=cfg.name), host=cfg.name,
                     settings=Settings(wait_timeout=120))
    out = []
    try:
        for i in range(n):
            profile = BUILTINS["mtp1" if i % 2 == 0 else "off"]
            plan = await hc.plan("apply", profile)
            marks: dict[str, float] = {}
            t0 = time.time()

            def seen(ev, marks=marks):
                if ev.state == "ok":
                    marks.setdefault(ev.phase, time.time())

            outcome = await hc.execute(plan, seen)
            if outcome.exit_code != 0:
                raise SystemExit(f"cycle {i}: {outcome.message}")
            ready, verdict = outcome.ready_ts, outcome.verdict_ts
            out.append({"profile": profile.name, "to_restart": marks["restart"] - t0,
                        "ready_to_verified": marks["verify"] - ready if ready else float("nan"),
                        "verdict_to_verified": marks["verify"] - verdict if verdict else float("nan"),
                        "total": time.time() - t0})
    finally:
        await hc.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=6)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("control_bench: needs root (systemd-nspawn container hosts)", file=sys.stderr)
        return 1
    os.environ.setdefault("MTPTUI_AUDIT_LOG", str(Path(tempfile.mkdtemp()) / "audit.jsonl"))
    print(machine_line())
    cluster = nspawn.Cluster(rootfs.build())
    try:
        h = cluster.start(1)[0]
        unit = unique_unit("bench")
        text = (f"[Service]\nEnvironment=PYTHONPATH=/opt/mtptui PYTHONUNBUFFERED=1\nExecStart={SIM}\n")
        subprocess.run(h.ssh_argv(f"cat > /etc/systemd/system/{unit}.service"), input=text, text=True, check=True)
        h.ssh(f"systemctl daemon-reload && systemctl start {unit}")
        rows = asyncio.run(cycles(h, unit, args.cycles))
    finally:
        cluster.stop()
    for r in rows:
        print(f"{r['profile']:>5}: confirm->restart issued {r['to_restart'] * 1000:6.0f} ms · ready line->verified "
              f"{r['ready_to_verified'] * 1000:6.0f} ms · verdict line->verified {r['verdict_to_verified'] * 1000:5.0f} ms"
              f" · whole action {r['total']:.1f} s")
    for key, label in (("to_restart", "confirm -> restart issued"), ("ready_to_verified", "ready line -> verified"),
                       ("verdict_to_verified", "verdict line -> verified")):
        v = [r[key] for r in rows]
        print(f"{label:28s} p50 {pct(v, 50) * 1000:6.0f} ms  max {max(v) * 1000:6.0f} ms")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
