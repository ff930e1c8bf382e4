"""Parse benchmark: `mtptui summary --json` on a 1,000,000-line mixed log against `grep -c`.

Writes the log (journald `short` envelope; 70% Decode, 15% Prefill, 15% other lines) once under
bench/out/, then times both commands in the same run and prints lines/s, their ratio, and the
summary's peak RSS. Usage: python bench/parse_bench.py [--lines N] [--keep]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from machine import loop_ms  # noqa: E402

OTHER = [
    "INFO:     127.0.0.1:51234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "Cache not flushed because there are pending requests. #queue-req: 2, #running-req: 12",
    "Load weight begin. avail mem=77.12 GB",
    "KV Cache is allocated. #tokens: 1234567, K size: 20.11 GB, V size: 20.11 GB",
    "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_tokens_gained: 512, #new_token_ratio: 0.7000 -> 0.8000",
]


def write_log(path: Path, n: int, seed: int = 7) -> None:
    rnd = random.Random(seed)
    t0 = 1773072000  # 2026-03-09 16:00:00 UTC
    with open(path, "w") as f:
        for i in range(n):
            t = t0 + i // 200
            ss = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
            env = time.strftime("%b %d %H:%M:%S", time.gmtime(t)) + " gpu-h1 python3[4242]: "
            rank = f"TP{rnd.randrange(4)}"
            r = rnd.random()
            if r < 0.70:
                al = 1.5 + rnd.random() * 2
                msg = (f"[{ss} {rank}] Decode batch, #running-req: {rnd.randrange(1, 64)}, #token: {rnd.randrange(100000)}, "
                       f"token usage: {rnd.random():.2f}, accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, "
                       f"cuda graph: True, gen throughput (token/s): {rnd.random() * 3000:.2f}, #queue-req: {rnd.randrange(5)}")
            elif r < 0.85:
                msg = (f"[{ss} {rank}] Prefill batch, #new-seq: 1, #new-token: {rnd.randrange(8192)}, #cached-token: {rnd.randrange(4096)}, "
                       f"token usage: {rnd.random():.2f}, #running-req: {rnd.randrange(64)}, #queue-req: 0, #pending-token: 0, "
                       f"cuda graph: False, input throughput (token/s): {rnd.random() * 20000:.2f}")
            else:
                msg = f"[{ss}] " + rnd.choice(OTHER)
            f.write(env + msg + "\n")


def _tree_rss_kb(pid: int) -> int:
    """Memory of a process and all its descendants (summary forks workers), as the sum of their
    proportional set sizes: forked workers share the parent's pages, and plain RSS would count
    those once per process."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def timed(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and the peak memory (KiB) of the command's whole process tree, sampled every
    50 ms (reading smaps costs kernel time, taken from the run being measured). Output goes to
    a pipe: GNU grep stops at the first match when its output is /dev/null, which would make the
    comparison meaningless."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    peak = 0
    reader = threading.Thread(target=proc.stdout.read, daemon=True)
    reader.start()
    while proc.poll() is None:
        peak = max(peak, _tree_rss_kb(proc.pid))
        time.sleep(0.05)
    dt = time.perf_counter() - t
    reader.join()
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} exited {proc.returncode}")
    return dt, peak


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5, help="best of N runs of each command (a shared VM varies run to run)")
    args = ap.parse_args()
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    log = out / f"mixed-{args.lines}.log"
    if not log.exists():
        t = time.perf_counter()
        write_log(log, args.lines)
        print(f"wrote {log} ({log.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s")
    mtptui = [sys.executable, "-m", "mtptui", "summary", "--json", str(log)]
    grep = ["grep", "-c", "Decode batch", str(log)]
    before = f"{loop_ms():.0f} ms"
    runs = [(timed(mtptui), timed(grep)) for _ in range(args.runs)]
    (s_dt, s_rss), _ = min(runs, key=lambda r: r[0][0])
    g_dt = min(r[1][0] for r in runs)
    print(f"lines:            {args.lines}")
    print(f"machine:          {before} before, {loop_ms():.0f} ms after (reference loop, lower is faster)")
    print(f"mtptui summary:   {s_dt:.2f} s  {args.lines / s_dt:,.0f} lines/s  (best of {args.runs})")
    print(f"grep -c:          {g_dt:.3f} s  {args.lines / g_dt:,.0f} lines/s")
    print(f"ratio:            summary takes {s_dt / g_dt:.0f}x grep's time")
    print(f"peak memory:      {s_rss / 1024:.0f} MB (sum of PSS over the process tree)")
    target_ok = args.lines / s_dt >= 300_000 and s_rss / 1024 < 150
    print(f"targets (>=300,000 lines/s, <150 MB): {'met' if target_ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
