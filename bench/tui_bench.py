"""Dashboard benchmark: the real app, headless (Textual's run_test), under load. Prints figures;
asserts nothing (timings never fail tests).

1. replay: the 1,000,000-line benchmark log (bench/out/mixed-1000000.log, written by
   parse_bench.py's generator when missing) replayed at full speed: wall time to the last line
   parsed and drawn, lines/s, redraws per second, RSS after it (and the peak).
   A key is pressed every 2 s meanwhile to sample keypress-to-screen latency during the replay.
2. live: a synthetic live source of 8 hosts x 4 ranks pushing 50,000 lines/s (chunks every 20 ms)
   for --live-seconds, as journald JSON through the journal source's decoding (sources/journal.py's
   Entries, as `journalctl -f -o json` arrives from a host; --live-raw: the bare messages), while
   keys are pressed every 200 ms: lines parsed per second, backlog, drops, redraw rate, and
   keypress-to-screen latency (key posted -> first frame composed after the key's redraw)
   p50/p95/p99/max.
3. open: `mtptui open` of the same 1,000,000-line log (the file read at once, in parallel parts):
   wall time from the process's start to the whole file on screen, against `mtptui summary --json`
   of the same file (its wall time, a process too), and the ratio (issue 13: at most 1.5x).
4. soak (--soak-lines N, alone): an N-line log replayed at full speed, RSS at each million lines
   and at the end: the dashboard's memory must stay flat (issue 13: at most 1.2x the RSS after
   1,000,000 when 10,000,000 are read).

Targets: redraw <= 10 Hz; 50,000 lines/s sustained with keypress p99 <= 100 ms and the panels'
numbers redrawn at >= 4 Hz meanwhile; 1,000,000 lines replayed in <= 15 s, opened in <= 1.5x
summary's time; RSS <= 300 MB after 1,000,000 lines.

Usage: python bench/tui_bench.py [--replay-lines N] [--live-seconds S] [--rate R] [--skip-replay]
       [--skip-live] [--skip-open] [--live-raw] | --soak-lines N
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
os.environ.setdefault("MTPTUI_ALLOW_NO_TTY", "1")

from mtptui.sources.replay import MAX_SPEED, ReplayClock, ReplaySource  # noqa: E402
from mtptui.tui.launch import build_app  # noqa: E402

SIZE = (160, 48)
KEYS = ["m", "w", "1", "m", "2", "1", "tab", "w", "shift+tab", "2"]
# A key holds the parser for its frame (input first), so keys during the timed replay cost it
# time: one every 2 s samples the latency without making the replay figure about the keys.
KEY_EVERY_REPLAY_S = 2.0


def rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MB."""
    cur = peak = 0.0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    return cur, peak


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, round(q * (len(s) - 1))))
    return s[k]


class FrameClock:
    """Times of composed frames, and of key redraws, to pair a key with the frame that shows it."""

    def __init__(self, app) -> None:
        self.frames: list[float] = []
        orig = app._display

        def display(screen, renderable):
            if renderable is not None:
                self.frames.append(time.perf_counter())
            return orig(screen, renderable)

        app._display = display

    def first_after(self, t: float) -> float | None:
        for f in reversed(self.frames):
            if f < t:
                break
        later = [f for f in self.frames if f >= t]
        return later[0] if later else None


async def press_and_time(app, pilot, frames: FrameClock, key: str, timeout: float = 2.0) -> float | None:
    """Posts a key as the terminal driver would and returns seconds until a frame shows it."""
    screen = app.screen
    done: list[float] = []
    orig = screen.redraw_now

    def redraw_now():
        orig()
        done.append(time.perf_counter())

    screen.redraw_now = redraw_now
    t0 = time.perf_counter()
    app.simulate_key(key)
    try:
        deadline = t0 + timeout
        while time.perf_counter() < deadline:
            await asyncio.sleep(0.002)
            if done:
                f = frames.first_after(done[0])
                if f is not None:
                    return f - t0
        return None
    finally:
        screen.redraw_now = orig


# -- 1. replay ---------------------------------------------------------------------------------
def bench_log(lines: int) -> Path:
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    path = out / f"mixed-{lines}.log"
    if not path.exists():
        from parse_bench import write_log

        print(f"writing {path} ...", flush=True)
        write_log(path, lines)
    return path


async def replay(lines: int) -> dict:
    path = bench_log(lines)
    clock = ReplayClock(MAX_SPEED)
    app = build_app([ReplaySource(str(path), clock)], title="bench replay", window="5m")
    async with app.run_test(size=SIZE) as pilot:
        frames = FrameClock(app)
        t0 = time.perf_counter()
        lat = []
        next_key = t0 + 1.0
        k = 0
        while not (clock.ended and app.dash.feed.pending == 0):
            await asyncio.sleep(0.01)
            if time.perf_counter() >= next_key:
                d = await press_and_time(app, pilot, frames, KEYS[k % len(KEYS)])
                if d is not None:
                    lat.append(d)
                k += 1
                next_key = time.perf_counter() + KEY_EVERY_REPLAY_S
            if time.perf_counter() - t0 > 600:
                raise SystemExit("replay did not finish in 10 minutes")
        t_parsed = time.perf_counter() - t0
        app.screen.redraw_now()
        await pilot.pause()
        t_drawn = time.perf_counter() - t0
        c = app.dash.feed.counts
        cur, peak = rss_mb()
        n_frames = len(frames.frames)
        return {
            "lines": c.read, "dropped": c.dropped, "seconds_parsed": t_parsed, "seconds_drawn": t_drawn,
            "lines_per_s": c.read / t_parsed, "redraws": app.screen.redraws,
            "redraw_hz": app.screen.tick_redraws / t_drawn, "frames_hz": n_frames / t_drawn,
            "rss_mb": cur, "peak_rss_mb": peak, "key_latencies": lat,
        }


async def soak(lines: int) -> list[tuple[int, float]]:
    """(lines read, RSS MB) at each million of a full-speed replay of an N-line log, and at its end."""
    path = bench_log(lines)
    clock = ReplayClock(MAX_SPEED)
    app = build_app([ReplaySource(str(path), clock)], title="bench soak", window="5m")
    marks: list[tuple[int, float]] = []
    async with app.run_test(size=SIZE):
        feed = app.dash.feed
        next_mark = 1_000_000
        while not (clock.ended and feed.pending == 0):
            await asyncio.sleep(0.05)
            parsed = feed.counts.read - feed.pending
            if parsed >= next_mark:
                marks.append((parsed, rss_mb()[0]))
                print(f"  {parsed:>12,} lines  RSS {marks[-1][1]:.0f} MB", flush=True)
                next_mark += 1_000_000
        marks.append((feed.counts.read, rss_mb()[0]))
    return marks


# -- 3. open -----------------------------------------------------------------------------------
async def open_file(path: str) -> dict:
    """In a process of its own (started by the parent): the file opened, until it is on screen."""
    from mtptui.tui.opening import Opening

    app = build_app([], title="bench open", window="all", opening=Opening([path]))
    async with app.run_test(size=SIZE):
        frames = FrameClock(app)
        opening = app.dash.opening
        while not opening.done:
            await asyncio.sleep(0.005)
        done = time.perf_counter()
        while not frames.frames or frames.frames[-1] < done:  # its first frame after the read
            await asyncio.sleep(0.005)
        shown = time.time()
        return {"shown": shown, "read_s": opening.seconds, "lines": app.dash.feed.counts.read,
                "rss_mb": rss_mb()[0]}


def bench_open(lines: int) -> None:
    import json
    import subprocess

    path = str(bench_log(lines))
    mtptui = [sys.executable, "-m", "mtptui"]
    t0 = time.time()
    subprocess.run(mtptui + ["summary", "--json", path], stdout=subprocess.DEVNULL, check=True)
    summary_s = time.time() - t0
    t0 = time.time()
    out = subprocess.run([sys.executable, __file__, "--open-only", path], capture_output=True, text=True,
                         check=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    open_s = r["shown"] - t0
    print(f"open {r['lines']:,} lines: on screen {open_s:.2f} s after the command started (the read "
          f"{r['read_s']:.2f} s), summary --json {summary_s:.2f} s: {open_s / summary_s:.2f}x summary; "
          f"RSS {r['rss_mb']:.0f} MB")


# -- 2. live -----------------------------------------------------------------------------------
# journalctl -o json's line for one entry (compact, its fields in journalctl's order): what a live host
# sends; the message has no quote or backslash, so it goes in as it is
_ENTRY = ('{"__CURSOR":"s=5f3c0e9a1b2d4c6e8f0a1b2c3d4e5f60;i=%x;b=9a8b7c6d5e4f30211203948576abcdef;m=%x;t=%x;'
          'x=%012x","__REALTIME_TIMESTAMP":"%d","__MONOTONIC_TIMESTAMP":"%d","_BOOT_ID":"9a8b7c6d5e4f30211203948576abcdef",'
          '"_TRANSPORT":"stdout","PRIORITY":"6","SYSLOG_FACILITY":"3","_UID":"0","_GID":"0",'
          '"_MACHINE_ID":"0123456789abcdef0123456789abcdef","_HOSTNAME":"%s","SYSLOG_IDENTIFIER":"python3","_PID":"4242",'
          '"_COMM":"python3","_STREAM_ID":"00112233445566778899aabbccddeeff","MESSAGE":"%s",'
          '"_SYSTEMD_UNIT":"sglang.service","_SYSTEMD_INVOCATION_ID":"aabbccddeeff00112233445566778899"}\n')


class SyntheticLive:
    """8 hosts x 4 ranks of SGLang decode/prefill lines, stamped with the wall clock. As journald JSON
    (the default): each host's entries go as bytes through the journal source's own decoding
    (sources/journal.py's Entries: split, decoded in bulk, the newest cursor noted) into the feed, as
    `journalctl -f -o json` output does on a live host; raw: the messages pushed as lines."""

    def __init__(self, rate: int, seconds: float, hosts: int = 8, ranks: int = 4, chunk_s: float = 0.02,
                 journald: bool = True) -> None:
        self.rate, self.seconds, self.hosts, self.ranks, self.chunk_s = rate, seconds, hosts, ranks, chunk_s
        self.journald = journald
        self.label = f"synthetic {hosts}x{ranks}" + (" journald json" if journald else " raw")
        self.pushed = 0
        self.cursors: dict[str, str | None] = {}  # the last cursor each host's Entries noted

    async def run(self, feed) -> None:
        import random

        from mtptui.sources.journal import Entries

        rnd = random.Random(3)
        per_chunk = max(1, int(self.rate * self.chunk_s))
        start = time.perf_counter()
        next_t = start
        k = 0
        seq = 0
        entries = {f"gpu-{h + 1}": Entries(f"gpu-{h + 1}") for h in range(self.hosts)}
        while time.perf_counter() - start < self.seconds:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
            host = f"gpu-{k % self.hosts + 1}"
            lines = []
            for i in range(per_chunk):
                r = i % self.ranks
                if i % 8 == 7:
                    lines.append(f"[{stamp} TP{r}] Prefill batch, #new-seq: 1, #new-token: {rnd.randrange(4096)}, "
                                 f"#cached-token: 0, token usage: 0.20, #running-req: 20, #queue-req: 0, "
                                 f"#pending-token: 0, cuda graph: False, input throughput (token/s): 9000.00")
                else:
                    al = 2.0 + rnd.random()
                    lines.append(f"[{stamp} TP{r}] Decode batch, #running-req: 20, #token: 40000, token usage: 0.20, "
                                 f"accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, cuda graph: True, "
                                 f"gen throughput (token/s): {1000 + 500 * rnd.random():.2f}, #queue-req: 0")
            if self.journald:
                us = int(time.time() * 1e6)
                mono = us - 1773000000000000
                data = "".join(_ENTRY % (seq + j, mono, us, (us * 2654435761 + j) & 0xFFFFFFFFFFFF, us, mono, host, msg)
                               for j, msg in enumerate(lines)).encode()
                seq += len(lines)
                source = entries[host]
                for at in range(0, len(data), 1 << 16):  # as the source reads its pipe: 64 KiB at a time
                    self.pushed += source.take(data[at:at + (1 << 16)], feed)
                self.cursors[host] = source.cursor
            else:
                feed.lines(lines, host)
                self.pushed += len(lines)
            k += 1
            next_t += self.chunk_s
            await asyncio.sleep(max(0.0, next_t - time.perf_counter()))


async def live(rate: int, seconds: float, journald: bool = True) -> dict:
    src = SyntheticLive(rate, seconds, journald=journald)
    app = build_app([src], title="bench live", window="1m")
    async with app.run_test(size=SIZE) as pilot:
        frames = FrameClock(app)
        dash = app.dash
        t0 = time.perf_counter()
        lat, backlog = [], []
        k = 0
        redraws0 = app.screen.tick_redraws
        data0 = app.screen.data_redraws
        while time.perf_counter() - t0 < seconds:
            await asyncio.sleep(0.2)
            backlog.append(dash.feed.pending)
            if time.perf_counter() - t0 > 2.0:  # after the first screenful settles
                d = await press_and_time(app, pilot, frames, KEYS[k % len(KEYS)])
                if d is not None:
                    lat.append(d)
                k += 1
        elapsed = time.perf_counter() - t0
        c = dash.feed.counts
        redraws = app.screen.tick_redraws - redraws0
        data = app.screen.data_redraws - data0
        n_frames = len(frames.frames)
        return {
            "pushed": src.pushed, "push_rate": src.pushed / elapsed, "parsed": c.read - dash.feed.pending,
            "parse_rate": (c.read - c.dropped) / elapsed, "dropped": c.dropped, "backlog_max": max(backlog),
            "backlog_end": dash.feed.pending, "redraw_hz": redraws / elapsed, "frames_hz": n_frames / elapsed,
            "data_hz": data / elapsed,
            "key_latencies": lat, "hosts": len(dash.hosts()), "rss_mb": rss_mb()[0], "label": src.label,
            "lane": dash.feed.ingest.sinks[0].lane is not None,
        }


def show_latency(lat: list[float]) -> str:
    ms = [x * 1000 for x in lat]
    if not ms:
        return "no key measured"
    return (f"{len(ms)} keys: p50 {pct(ms, .5):.0f} ms, p95 {pct(ms, .95):.0f} ms, p99 {pct(ms, .99):.0f} ms, "
            f"max {max(ms):.0f} ms, mean {statistics.fmean(ms):.0f} ms")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--replay-lines", type=int, default=1_000_000)
    p.add_argument("--live-seconds", type=float, default=20.0)
    p.add_argument("--rate", type=int, default=50_000, help="live lines per second (default 50000)")
    p.add_argument("--live-raw", action="store_true",
                   help="the live flood as raw lines, not journald JSON through the journal source's decoding")
    p.add_argument("--skip-replay", action="store_true")
    p.add_argument("--skip-live", action="store_true")
    p.add_argument("--skip-open", action="store_true")
    p.add_argument("--open-only", metavar="PATH", help=argparse.SUPPRESS)  # the open's own process
    p.add_argument("--soak-lines", type=int, metavar="N",
                   help="only the soak: replay an N-line log at full speed, RSS at each million and at the end")
    args = p.parse_args()
    if args.soak_lines:
        from machine import line

        print(line())
        marks = asyncio.run(soak(args.soak_lines))
        first = next((rss for n, rss in marks if n >= 1_000_000), None)
        n, rss = marks[-1]
        print(f"soak: RSS after {n:,} lines {rss:.0f} MB" +
              (f", after the first 1,000,000 {first:.0f} MB ({rss / first:.2f}x)" if first else ""))
        return 0
    if args.open_only:
        import json

        print(json.dumps(asyncio.run(open_file(args.open_only))))
        return 0
    if not args.skip_live and not args.skip_replay:
        # Each part in a fresh process: the app freezes what it built at start out of the garbage
        # collector's view, so a second app in the same process would measure the first's memory.
        import subprocess

        base = [sys.executable, __file__, "--replay-lines", str(args.replay_lines), "--live-seconds",
                str(args.live_seconds), "--rate", str(args.rate)] + (["--live-raw"] if args.live_raw else [])
        rc = subprocess.run(base + ["--skip-replay", "--skip-open"]).returncode
        rc = rc or subprocess.run(base + ["--skip-live", "--skip-open"]).returncode
        return rc or subprocess.run(base + ["--skip-live", "--skip-replay"]).returncode
    from machine import line

    print(f"cpus: {os.cpu_count()}, python {sys.version.split()[0]}, load avg {os.getloadavg()[0]:.2f}")
    print(line())
    if not args.skip_live:
        r = asyncio.run(live(args.rate, args.live_seconds, journald=not args.live_raw))
        print(f"live {args.rate:,} lines/s target, {r['label']} ({r['hosts']} hosts), {args.live_seconds:.0f} s, "
              f"{'the compiled lane' if r['lane'] else 'the Python path'}:")
        print(f"  pushed {r['push_rate']:,.0f} lines/s, parsed {r['parse_rate']:,.0f} lines/s, dropped {r['dropped']:,}, "
              f"backlog max {r['backlog_max']:,} end {r['backlog_end']:,} lines")
        print(f"  data redraws by the tick {r['redraw_hz']:.1f} Hz (frames composed, keys included, "
              f"{r['frames_hz']:.1f}/s), RSS {r['rss_mb']:.0f} MB")
        print(f"  keypress-to-screen: {show_latency(r['key_latencies'])}; the panels' numbers redrawn "
              f"{r['data_hz']:.1f} Hz meanwhile (by ticks and keys)")
    if not args.skip_replay:
        r = asyncio.run(replay(args.replay_lines))
        print(f"replay {r['lines']:,} lines at full speed:")
        print(f"  parsed in {r['seconds_parsed']:.1f} s ({r['lines_per_s']:,.0f} lines/s), drawn at "
              f"{r['seconds_drawn']:.1f} s, dropped {r['dropped']:,}")
        print(f"  data redraws by the tick {r['redraw_hz']:.1f} Hz (frames composed, keys included, "
              f"{r['frames_hz']:.1f}/s)")
        print(f"  RSS after: {r['rss_mb']:.0f} MB (peak {r['peak_rss_mb']:.0f} MB)")
        print(f"  keypress-to-screen during replay: {show_latency(r['key_latencies'])}")
    if not args.skip_open:
        bench_open(args.replay_lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
