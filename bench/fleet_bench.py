"""Fleet benchmark: `mtptui fleet` over 1,000 hosts x 8 ranks in a real Prometheus (Debian's
package), and `mtptui export` following 16 hosts x 200 lines/s. Prints figures; asserts nothing.

1. fleet: synthetic history (the last 5 minutes, a sample every 30 s) of 500 SGLang hosts
   (`sglang:*`, one target each) and 500 hosts behind 50 `mtptui export`s (`mtptui_*`), 8 ranks
   each, a few collapsed, is written as OpenMetrics and turned into TSDB blocks with
   `promtool tsdb create-blocks-from openmetrics`; Prometheus serves them (no scraping). Timed:
   a refresh (the fleet's queries, assembled and flagged in the reader process, and the table's rows made: what the view
   does every few seconds, off its loop), folded and with every host's ranks shown, and keys in the fleet view (Textual's run_test, every
   host's ranks expanded: 9,000 rows): from the key posted to its frame drawn, the messages it
   caused handled; then again with a refresh a second (its worker thread shares the interpreter with
   the keys, and each ends in the table's rows replaced). Pilot's own press-and-pause adds at least 60 ms of idle waits
   (wait_for_idle three times), which no user sees: it is printed apart, as "pilot round trip".
2. export: `mtptui export --file` (a child process) following 16 log files written at 200 lines/s
   each by this script... as 16 hosts: one exporter per file would not be one process, so it runs
   the exporter's state in-process on 16 hosts' lines, paced at 16 x 200 lines/s, measuring CPU
   time per wall second and RSS over the run; then an hour of lines (16 x 200 x 3600) fed as fast
   as they parse, RSS sampled as it goes (flat: nothing is kept per line).

Targets (issue 12): refresh <= 500 ms, keys p99 <= 100 ms; export CPU <= 25 % of a core, memory flat.

Usage: python bench/fleet_bench.py [--skip-fleet] [--skip-export] [--export-seconds S] [--hour-lines N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

from machine import line as machine_line  # noqa: E402
from rich.cells import cell_len  # noqa: E402

from mtptui.fleet.reader import ReaderProcess, load  # noqa: E402
from mtptui.config import load_config  # noqa: E402
from mtptui.fleet.outliers import Limits  # noqa: E402
from mtptui.fleet.prom import Prometheus  # noqa: E402
from mtptui.fleet.table import ViewState, host_key, refreshed  # noqa: E402
from mtptui.tui.gcpace import GcPacer  # noqa: E402

HOSTS, RANKS, EXPORTERS = 1000, 8, 50
STEP, STEPS = 30, 10  # seconds between samples, samples per series
MODEL = "Qwen/Qwen3-8B"
SETTINGS = 'algorithm="EAGLE",steps="3",topk="1",draft_tokens="4",settings="EAGLE steps=3 topk=1 draft=4"'


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q / 100 * len(values)))]


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


# --- 1. the fleet ------------------------------------------------------------------------------

def openmetrics(path: Path, now: float) -> int:
    """Writes the fleet's history; returns the number of series."""
    times = [now - 10 - STEP * (STEPS - 1 - i) for i in range(STEPS)]
    families: dict[str, list[tuple[str, list[float]]]] = {}

    def add(name: str, labels: str, values: list[float]) -> None:
        families.setdefault(name, []).append((labels, values))

    for h in range(HOSTS):
        collapsed = h % 97 == 5  # about ten hosts whose acceptance collapsed
        accept = [1.02 if collapsed else 2.9 + (h % 7) * 0.04] * STEPS
        counter = [float(i * 40) for i in range(STEPS)]
        if h < HOSTS // 2:
            inst = f'instance="10.1.{h // 250}.{h % 250}:30000",job="sglang",model_name="{MODEL}"'
            add("up", f'instance="10.1.{h // 250}.{h % 250}:30000",job="sglang"', [1.0] * STEPS)
            for r in range(RANKS):
                lab = f'{inst},engine_type="unified",tp_rank="{r}",pp_rank="0"'
                add("sglang:spec_accept_length", lab, accept)
                add("sglang:spec_accept_rate", lab, [(a - 1) / 3 for a in accept])
                add("sglang:gen_throughput", lab, [1400.0 + r] * STEPS)
                add("sglang:num_running_reqs", lab, [12.0] * STEPS)
                add("sglang:num_queue_reqs", lab, [1.0] * STEPS)
                add("sglang:cuda_graph_passes_total", f'{lab},mode="decode_cuda_graph"', counter)
        else:
            inst = f'instance="exporter-{h % EXPORTERS}:9464",job="mtptui",host="gpu-{h:04d}"'
            add("mtptui_spec_info", f"{inst},{SETTINGS}", [1.0] * STEPS)
            add("mtptui_source_connected", inst, [1.0] * STEPS)
            for r in range(RANKS):
                lab = f'{inst},rank="TP{r}"'
                add("mtptui_spec_accept_length", lab, accept)
                add("mtptui_spec_accept_ratio", lab, [(a - 1) / 3 for a in accept])
                add("mtptui_gen_throughput_tokens_per_second", lab, [1400.0 + r] * STEPS)
                add("mtptui_running_requests", lab, [12.0] * STEPS)
                add("mtptui_queued_requests", lab, [1.0] * STEPS)
                add("mtptui_decode_batches_total", lab, counter)
                add("mtptui_decode_batches_without_cuda_graph_total", lab, [0.0] * STEPS)
    for e in range(EXPORTERS):
        add("up", f'instance="exporter-{e}:9464",job="mtptui"', [1.0] * STEPS)
    n = 0
    with path.open("w") as f:
        for name, series in families.items():
            f.write(f"# TYPE {name} unknown\n")
            for labels, values in series:
                n += 1
                f.writelines(f"{name}{{{labels}}} {v} {t:.3f}\n" for v, t in zip(values, times))
        f.write("# EOF\n")
    return n


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process (Prometheus' share of a refresh)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_prometheus(work: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    (work / "prometheus.yml").write_text('{"scrape_configs": []}')
    proc = subprocess.Popen(["prometheus", f"--config.file={work / 'prometheus.yml'}",
                             f"--storage.tsdb.path={work / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                             "--log.level=warn"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    end = time.monotonic() + 120
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("prometheus did not become ready")


KEYS = ["down"] * 60 + ["s", "S"] * 5 + ["pagedown"] * 10 + ["e", "e", "space", "space"]


async def press(pilot, key: str) -> float:
    """Seconds from the key posted to its frame drawn (the key's messages, and those they post,
    handled; then the screen's update, which a timer would run next)."""
    from textual import events

    app = pilot.app
    t = time.perf_counter()
    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(app)
    app._driver.send_message(event)
    for _ in range(3):
        await pilot._wait_for_screen()
    app.screen._on_timer_update()
    return time.perf_counter() - t


async def keys(hosts, fetch, keys: list[str], interval: float, label: str, trips: bool) -> None:
    """Keys on the table with every host's ranks expanded; refreshes every `interval` s meanwhile."""
    from mtptui.tui.fleet_app import FleetApp
    from mtptui.tui.widgets.fleet_table import FleetTable

    loads = []

    def counted():
        loads.append(1)
        return fetch()

    app = FleetApp(counted, config=load_config("/dev/null"), hosts=hosts, interval=interval, title="bench")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        expand = await press(pilot, "e")  # every host's ranks
        await pilot.pause()
        table = app.query_one(FleetTable)
        rows = table.row_count
        took: dict[str, list[float]] = {}
        for key in keys:
            took.setdefault(key, []).append(await press(pilot, key))
            if trips:
                await pilot.pause()
            else:  # a key every 100 ms, as a user's: Pilot's pause would wait for the refresh's thread
                await asyncio.sleep(0.1)
        round_trips = []
        for key in (["down"] * 20 + ["s", "S"]) if trips else []:
            t = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            round_trips.append(time.perf_counter() - t)
    every = [x for v in took.values() for x in v]
    print(f"  {label} ({len(every)} presses, {rows:,} rows, {len(loads)} refreshes meanwhile): p50 "
          f"{statistics.median(every) * 1e3:.0f} ms, p99 {pct(every, 99) * 1e3:.0f} ms, max {max(every) * 1e3:.0f} ms; "
          "by key (median/max ms): "
          + ", ".join(f"{k} {statistics.median(v) * 1e3:.0f}/{max(v) * 1e3:.0f}" for k, v in took.items())
          + f"; e (expand all) first {expand * 1e3:.0f}")
    if round_trips:
        print(f"  pilot round trip (press + pause, its idle waits included): p50 "
              f"{statistics.median(round_trips) * 1e3:.0f} ms, max {max(round_trips) * 1e3:.0f} ms")


def refreshes(reader: ReaderProcess, pid: int, states: dict[str, ViewState], n: int = 10) -> list:
    """Times refreshes as `mtptui fleet` makes them: the fleet read by the reader process (the
    queries, the hosts assembled and flagged, sent back) and, in the view's thread, the rows shown
    in a state and the columns' widths; n in each state, the states in turns (so that both see
    the machine alike), after 3 to warm up. Prints the figures."""
    times: dict[str, list] = {k: [] for k in states}
    parts: dict[str, list] = {k: [] for k in states}
    cpu: dict[str, list] = {k: [] for k in states}
    child = reader._proc.pid
    for i in range(3 + n):
        for label, state in states.items():
            c0, r0, p0 = time.process_time(), cpu_seconds(child), cpu_seconds(pid)
            t0 = time.perf_counter()
            hosts = reader()
            t1 = time.perf_counter()
            refreshed(hosts, state, cell_len)
            t2 = time.perf_counter()
            if i >= 3:
                times[label].append(t2 - t0)
                parts[label].append((t1 - t0, t2 - t1))
                cpu[label].append((time.process_time() - c0, cpu_seconds(child) - r0, cpu_seconds(pid) - p0))
    flagged = sum(bool(h.flags) for h in hosts)
    for label in states:
        mid = sorted(parts[label])[n // 2]
        view, read, prom = (statistics.mean(c[j] for c in cpu[label]) for j in (0, 1, 2))
        print(f"  {label} ({len(hosts):,} hosts, {sum(len(h.ranks) for h in hosts):,} ranks, {flagged} flagged): "
              f"median {statistics.median(times[label]) * 1e3:.0f} ms, max {max(times[label]) * 1e3:.0f} ms "
              f"(a middle one: read and flagged {mid[0] * 1e3:.0f}, rows {mid[1] * 1e3:.0f} ms); CPU a refresh: "
              f"Prometheus {prom * 1e3:.0f} ms, the reader process {read * 1e3:.0f} ms, the view's {view * 1e3:.0f} ms")
    return hosts


def bench_fleet() -> None:
    if not shutil.which("promtool") or not shutil.which("prometheus"):
        print("fleet: skipped (prometheus and promtool missing: apt-get install prometheus)")
        return
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        work = Path(tmp)
        t = time.perf_counter()
        n = openmetrics(work / "fleet.om", time.time())
        size = (work / "fleet.om").stat().st_size
        print(f"fleet: {HOSTS:,} hosts x {RANKS} ranks, {n:,} series x {STEPS} samples "
              f"({size / 1e6:.0f} MB of OpenMetrics in {time.perf_counter() - t:.1f} s)")
        t = time.perf_counter()
        subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(work / "fleet.om"),
                        str(work / "data")], check=True, stdout=subprocess.DEVNULL)
        print(f"  promtool create-blocks-from openmetrics: {time.perf_counter() - t:.1f} s")
        (work / "fleet.om").unlink()
        proc, url = start_prometheus(work)
        try:
            prom = Prometheus(url)
            fetch = partial(load, prom, None, Limits())
            hosts = fetch()  # the first, warming Prometheus' caches
            GcPacer().start()  # the collector's settings of the fleet view, whose worker refreshes
            reader = ReaderProcess(fetch)  # as `mtptui fleet` reads its refreshes
            reader.start()
            try:
                hosts = refreshes(reader, proc.pid, {
                    "refresh": ViewState(),
                    "refresh, every host expanded": ViewState(expanded={host_key(h) for h in hosts})})
                asyncio.run(keys(hosts, reader, KEYS, 3600, "keys", True))
                # Again with a refresh a second (5 s by default): its thread waits for the reader
                # process and makes the rows, beside the keys.
                asyncio.run(keys(hosts, reader, (["down"] * 30 + ["s", "S"] * 3) * 3, 1.0,
                                 "keys, a refresh a second", False))
            finally:
                reader.close()
        finally:
            proc.terminate()
            proc.wait(30)


# --- 2. export ---------------------------------------------------------------------------------

def bench_export(seconds: float, hour_lines: int) -> None:
    from mtptui.export.collector import ExportCollector
    from mtptui.export.state import ExportState
    from mtptui.sim import scenario

    names = [f"gpu{i:02d}" for i in range(16)]
    lines = scenario.generate_lines(20000, envelope="short-iso")
    state = ExportState(names)
    collector = ExportCollector(state, stale_after=30)
    rate, tick = 200, 0.05  # lines/s per host, a chunk per host every 50 ms as a stream delivers them
    per_tick = int(rate * tick)
    i, t0 = 0, time.monotonic()
    cpu0 = time.process_time()
    rss = [rss_mb()]
    k = 0
    while time.monotonic() - t0 < seconds:
        for h in names:
            chunk = [lines[(i + j) % len(lines)] for j in range(per_tick)]
            state.lines(chunk, h)
        i += per_tick
        k += 1
        if k % int(1 / tick) == 0:  # a scrape a second
            list(collector.collect())
            rss.append(rss_mb())
        time.sleep(max(0.0, t0 + k * tick - time.monotonic()))
    wall, cpu = time.monotonic() - t0, time.process_time() - cpu0
    print(f"export: 16 hosts x {rate} lines/s for {wall:.0f} s, a scrape a second: CPU {cpu / wall * 100:.1f} % "
          f"of one core; RSS {rss[0]:.0f} -> {rss[-1]:.0f} MB (max {max(rss):.0f})")
    # An hour of those lines as fast as they parse: RSS must stay flat.
    t, fed, marks = time.perf_counter(), 0, []
    chunk = 1000
    while fed < hour_lines:
        state.lines(lines[fed % (len(lines) - chunk):][:chunk], names[(fed // chunk) % 16])
        fed += chunk
        if fed % (hour_lines // 10) < chunk:
            list(collector.collect())
            marks.append(rss_mb())
    took = time.perf_counter() - t
    print(f"  an hour of lines ({hour_lines:,}) in {took:.0f} s ({hour_lines / took:,.0f} lines/s): RSS at each "
          f"tenth {', '.join(f'{m:.0f}' for m in marks)} MB; peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--skip-fleet", action="store_true")
    p.add_argument("--skip-export", action="store_true")
    p.add_argument("--export-seconds", type=float, default=30.0)
    p.add_argument("--hour-lines", type=int, default=16 * 200 * 3600)
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    print(machine_line())
    if not a.skip_fleet:
        bench_fleet()
    if not a.skip_export:
        bench_export(a.export_seconds, a.hour_lines)
    print(machine_line("machine speed after"))


if __name__ == "__main__":
    main()
