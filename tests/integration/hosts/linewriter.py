"""Writes numbered SGLang decode-batch lines at a steady rate: the test hosts' traffic.

Each line carries `seq: N` (to prove nothing is lost or doubled) and `sent: T` (the wall clock
when it was written, for latency; the containers share the host's clock). Stdlib only: it runs
inside the containers.

    python3 linewriter.py --rate 200 [--count N] [--rank TP0]
"""

import argparse
import sys
import time


def line(seq: int, now: float, rank: str) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    return (f"[{stamp} {rank}] Decode batch, #running-req: {1 + seq % 8}, #token: {900 + seq % 500}, "
            f"token usage: 0.{10 + seq % 80:02d}, accept len: {1.5 + (seq % 10) / 20:.2f}, "
            f"accept rate: 0.{80 + seq % 19:02d}, cuda graph: True, "
            f"gen throughput (token/s): {200 + seq % 300}.50, #queue-req: {seq % 3}, "
            f"seq: {seq}, sent: {now:.6f}\n")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rate", type=float, default=10.0, help="lines per second")
    p.add_argument("--count", type=int, default=0, help="stop after N lines (0: never)")
    p.add_argument("--rank", default="TP0")
    a = p.parse_args()
    out = sys.stdout
    seq = 0
    start = time.time()
    tick = 0.01 if a.rate > 100 else 1.0 / a.rate
    while not a.count or seq < a.count:
        due = int((time.time() - start) * a.rate) + 1
        if a.count:
            due = min(due, a.count)
        if due > seq:
            now = time.time()
            out.write("".join(line(s, now, a.rank) for s in range(seq, due)))
            out.flush()
            seq = due
        time.sleep(tick)


if __name__ == "__main__":
    main()
