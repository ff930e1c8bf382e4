"""Parser speed per line prefix: SGLang's default (the fast path) and the other shapes real logs
carry, each read by one LineParser in this process (as `summary` reads: records only).

Prints lines/s per shape (of this process's CPU time: the VM is shared, and time spent waiting
for a core is not the parser's) and each one's ratio to the default prefix in journald's `short`
envelope, next to the machine-speed reference. Usage: python bench/prefix_bench.py [--lines N]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import loop_ms  # noqa: E402

from mtptui.core.parse import LineParser  # noqa: E402

T0 = 1773072000  # 2026-03-09 16:00:00 UTC


def _body(rnd: random.Random, kind: str) -> str:
    if kind == "D":
        al = 1.5 + rnd.random() * 2
        return (f"Decode batch, #running-req: {rnd.randrange(1, 64)}, #token: {rnd.randrange(100000)}, "
                f"token usage: {rnd.random():.2f}, accept len: {al:.2f}, accept rate: {(al - 1) / 3:.2f}, "
                f"cuda graph: True, gen throughput (token/s): {rnd.random() * 3000:.2f}, #queue-req: {rnd.randrange(5)}")
    return (f"Prefill batch, #new-seq: 1, #new-token: {rnd.randrange(8192)}, #cached-token: {rnd.randrange(4096)}, "
            f"token usage: {rnd.random():.2f}, #running-req: {rnd.randrange(64)}, #queue-req: 0, #pending-token: 0, "
            f"cuda graph: False, input throughput (token/s): {rnd.random() * 20000:.2f}")


def _stamp(t: int, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    return time.strftime(fmt, time.gmtime(t))


# shape -> line(t, rank number, ms, body)
SHAPES = {
    "default, journald short": lambda t, r, ms, b: (
        f"{_stamp(t, '%b %d %H:%M:%S')} gpu-h1 python3[4242]: [{_stamp(t)} TP{r}] {b}"),
    "default, raw": lambda t, r, ms, b: f"[{_stamp(t)} TP{r}] {b}",
    "default, journald short-iso": lambda t, r, ms, b: (
        f"{_stamp(t, '%Y-%m-%dT%H:%M:%S')}+0000 gpu-h1 python3[4242]: [{_stamp(t)} TP{r}] {b}"),
    "Ray actor pid": lambda t, r, ms, b: f"(SGLangEngine pid=4182{r}) [{_stamp(t)} TP0] {b}",
    "Ray actor pid, ip": lambda t, r, ms, b: f"(SGLangEngine pid=111711, ip=10.15.36.{r}) [{_stamp(t)} TP0] {b}",
    "time-only stamp, journald short": lambda t, r, ms, b: (
        f"{_stamp(t, '%b %d %H:%M:%S')} gpu-h1 python3[4242]: [{_stamp(t, '%H:%M:%S')} TP{r}] {b}"),
    "logging asctime,ms [LEVEL] name:": lambda t, r, ms, b: (
        f"{_stamp(t)},{ms:03d} [INFO] sglang.srt.managers.scheduler_metrics_mixin: {b}"),
    "asctime LEVEL pid [file:line]": lambda t, r, ms, b: (
        f"{_stamp(t)} INFO 151972 [scheduler_metrics_mixin.py:287] {b}"),
    "rank in [DP TP EP file:line]": lambda t, r, ms, b: (
        f"{_stamp(t)} INFO 151972 [DP{r} TP{r} EP{r} scheduler_metrics_mixin.py:222] {b}"),
    "[gpu=N]": lambda t, r, ms, b: f"[gpu={r}] {b}",
    "no prefix": lambda t, r, ms, b: b,
    "Kubernetes CRI": lambda t, r, ms, b: (
        f"{_stamp(t, '%Y-%m-%dT%H:%M:%S')}.{ms:03d}456789Z stdout F [{_stamp(t)} TP{r}] {b}"),
    "syslog <PRI>": lambda t, r, ms, b: f"<14>{_stamp(t, '%b %d %H:%M:%S')} gpu-h1 sglang[77]: [{_stamp(t)} TP{r}] {b}",
}


def lines_of(shape, n: int, seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    make = SHAPES[shape]
    out = []
    for i in range(n):
        kind = "D" if rnd.random() < 0.82 else "P"
        out.append(make(T0 + i // 200, rnd.randrange(4), rnd.randrange(1000), _body(rnd, kind)) + "\n")
    return out


def rate(lines: list[str], runs: int) -> tuple[float, float]:
    """(lines/s, the share of lines read as batches)."""
    best = float("inf")
    for _ in range(runs):
        p = LineParser()
        p.keep_lines = False
        parse = p.parse
        t = time.process_time()
        for raw in lines:
            parse(raw)
        best = min(best, time.process_time() - t)
    p = LineParser()
    read = sum(p.parse(raw).outcome == "batch" for raw in lines)
    return len(lines) / best, read / len(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3, help="best of N")
    ap.add_argument("--only", default="", help="shapes whose name starts with this")
    args = ap.parse_args()
    print(f"machine: reference loop {loop_ms():.0f} ms before (lower is faster)")
    base = None
    for shape in SHAPES:
        if not shape.startswith(args.only):
            continue
        r, read = rate(lines_of(shape, args.lines), args.runs)
        base = base or r
        print(f"{shape:34s} {r:>11,.0f} lines/s  {r / base:5.2f}x  {read:4.0%} read as batches")
    print(f"machine: reference loop {loop_ms():.0f} ms after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
