"""Live-layer benchmark on real hosts: latency from a line written on a host to its record in the
store, and drops, through journald, `journalctl -f -o json`, SSH and the parser.

Boots systemd-nspawn container hosts (root; the rootfs is built and cached on first use), starts
the numbered line writer as a transient unit on each, follows them with SshJournalSource, and feeds
every line through the core Ingest into a sink that stamps each batch record on arrival. Latency is
arrival time minus the `sent:` stamp the writer put in the line (the containers share this
machine's clock). Drops: written sequence numbers that never arrived; doubles are counted too.

    sudo .venv/bin/python bench/live_bench.py [--seconds 10] [--json]

Targets: p99 <= 250 ms, no drops, at 100 and 5,000 lines/s on one host and 16 hosts x 200 lines/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from hosts import nspawn, rootfs  # noqa: E402
from hosts.helpers import host_config, start_writer, unique_unit  # noqa: E402

from mtptui.core.ingest import Ingest  # noqa: E402
from mtptui.sources.base import STREAMING  # noqa: E402
from mtptui.sources.ssh import SshJournalSource  # noqa: E402


class StampSink:
    """The store's stand-in: keeps, per host, each batch's sequence number and its latency."""

    def __init__(self) -> None:
        self.latency: list[float] = []
        self.seen: dict[str, list[int]] = {}

    def add_batch(self, rec) -> None:
        now = time.time()
        sent = rec.extra.get("sent")
        seq = rec.extra.get("seq")
        if sent is None or seq is None:
            return
        self.latency.append(now - float(sent))
        self.seen.setdefault(rec.host, []).append(int(seq))

    def add_event(self, ev) -> None:
        pass


class IngestFeed:
    def __init__(self, sink: StampSink) -> None:
        self.ingest = Ingest(sink)
        self.states: dict[str | None, str] = {}
        self.dropped_n = 0

    def lines(self, raw, host) -> None:
        feed = self.ingest.feed
        for line in raw:
            feed(line, host)

    def status(self, st) -> None:
        self.states[st.host] = st.state

    def dropped(self, n, reason, host) -> None:
        self.dropped_n += n


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


async def scenario(hosts, rate: float, seconds: float) -> dict:
    unit = unique_unit("bench")
    count = int(rate * seconds)
    sink = StampSink()
    feed = IngestFeed(sink)
    # lines=0: no history, the stream starts at the writer's first line
    sources = [SshJournalSource(host_config(h, unit, name=f"h{h.index}", lines=0,
                                            keepalive_interval=5.0, reconnect_max=5.0))
               for h in hosts]
    tasks = [asyncio.ensure_future(s.run(feed)) for s in sources]
    try:
        t0 = time.monotonic()
        while not all(feed.states.get(s.host) == STREAMING for s in sources):
            if time.monotonic() - t0 > 60:
                raise SystemExit(f"hosts not streaming: {feed.states}")
            await asyncio.sleep(0.05)
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(None, start_writer, h, unit, rate, count)
                               for h in hosts))
        deadline = time.monotonic() + seconds + 30
        while time.monotonic() < deadline:
            if all(len(sink.seen.get(s.host, [])) >= count for s in sources):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # anything doubled or late arrives now
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    lost = doubled = 0
    for s in sources:
        seen = sink.seen.get(s.host, [])
        lost += count - len(set(seen) & set(range(count)))
        doubled += len(seen) - len(set(seen))
    return {"hosts": len(hosts), "rate_per_host": rate, "lines_per_host": count,
            "received": len(sink.latency), "lost": lost, "doubled": doubled,
            "source_dropped": feed.dropped_n, "parser_dropped": feed.ingest.counts.dropped,
            "p50_ms": round(pct(sink.latency, 50) * 1000, 1),
            "p99_ms": round(pct(sink.latency, 99) * 1000, 1),
            "max_ms": round(max(sink.latency, default=float("nan")) * 1000, 1),
            "mean_ms": round(statistics.fmean(sink.latency) * 1000, 1) if sink.latency else None}


# journald's own floor, measured on the host itself: a plain `journalctl -f` there, no SSH, no
# mtptui. journald tells followers about new entries through a coalescing timer (250 ms in
# systemd 252), so this is the least any follower can do.
FLOOR = r"""
import json, subprocess, sys, time
unit, count = sys.argv[1], int(sys.argv[2])
newest = json.loads(subprocess.run(["journalctl", "-n1", "-ojson", "--output-fields=__CURSOR"],
                                   capture_output=True, text=True).stdout)["__CURSOR"]
p = subprocess.Popen(["journalctl", "--unit=" + unit, "-f", "-ojson", "--after-cursor=" + newest],
                     stdout=subprocess.PIPE, text=True)
print("ready", flush=True)
lat = []
for line in p.stdout:
    now = time.time()
    msg = json.loads(line).get("MESSAGE", "")
    if isinstance(msg, str) and ", sent: " in msg:
        lat.append(now - float(msg.rsplit(", sent: ", 1)[1]))
        if len(lat) >= count:
            break
p.kill()
lat.sort()
print(json.dumps({"n": len(lat), "p50_ms": round(lat[len(lat) // 2] * 1000, 1),
                  "p99_ms": round(lat[int(0.99 * (len(lat) - 1))] * 1000, 1)}))
"""


def journald_floor(h, rate: float, seconds: float) -> dict:
    import subprocess

    unit = unique_unit("floor")
    count = int(rate * seconds)
    import shlex

    proc = subprocess.Popen(h.ssh_argv(shlex.join(["python3", "-c", FLOOR, unit, str(count)])),
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    start_writer(h, unit, rate, count)
    out, _ = proc.communicate(timeout=seconds + 60)
    return {"rate_per_host": rate, **json.loads(out.strip().splitlines()[-1])}


async def run(cluster, seconds: float, fleet: int) -> list[dict]:
    one = cluster.hosts[:1]
    return [await scenario(one, 100, seconds),
            await scenario(one, 5000, seconds),
            await scenario(cluster.hosts[:fleet], 200, seconds)]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=10.0, help="length of each scenario")
    p.add_argument("--hosts", type=int, default=16, help="hosts of the fleet scenario")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    if os.geteuid() != 0:
        print("live_bench: needs root (systemd-nspawn container hosts)", file=sys.stderr)
        return 2
    import logging

    logging.getLogger("asyncssh").setLevel(logging.CRITICAL)
    cluster = nspawn.Cluster(rootfs.build())
    try:
        t = time.monotonic()
        cluster.start(a.hosts)
        boot = time.monotonic() - t
        # the simulator unit runs on every host too; stop it so that only the writer counts
        for h in cluster.hosts:
            h.ssh("systemctl stop mtptui-sim", check=False)
        results = asyncio.run(run(cluster, a.seconds, a.hosts))
        floors = [journald_floor(cluster.hosts[0], r, a.seconds) for r in (100, 5000)]
    finally:
        cluster.stop()
    if a.json:
        print(json.dumps({"boot_s": round(boot, 1), "scenarios": results,
                          "journald_floor": floors}, indent=1))
        return 0
    print(f"{a.hosts} container hosts booted in {boot:.1f}s; {a.seconds:g}s per scenario\n")
    print(f"{'scenario':<22} {'lines':>7} {'recv':>7} {'lost':>5} {'dup':>4} "
          f"{'p50 ms':>7} {'p99 ms':>7} {'max ms':>7}")
    ok = True
    for r in results:
        name = f"{r['hosts']} x {r['rate_per_host']:g} lines/s"
        total = r["hosts"] * r["lines_per_host"]
        print(f"{name:<22} {total:>7} {r['received']:>7} {r['lost']:>5} {r['doubled']:>4} "
              f"{r['p50_ms']:>7} {r['p99_ms']:>7} {r['max_ms']:>7}")
        ok &= r["lost"] == 0 and r["doubled"] == 0 and r["p99_ms"] <= 250
    print("\njournald's own floor (plain journalctl -f on the host, no SSH, no mtptui):")
    for f in floors:
        print(f"{'1 x ' + format(f['rate_per_host'], 'g') + ' lines/s':<22} {f['n']:>7} "
              f"{'':>7} {'':>5} {'':>4} {f['p50_ms']:>7} {f['p99_ms']:>7}")
    print(f"\ntargets (p99 <= 250 ms, no drops): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
