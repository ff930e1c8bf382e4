"""How fast this machine runs Python right now, to read the other figures by.

Shared VMs vary from minute to minute (neighbours, CPU frequency): the same benchmark gives
figures 1.5x apart an hour later. A fixed pure-Python loop timed next to a benchmark says
which kind of minute it was: compare figures only with similar loop times. The same loop on both
cores at once says what a second process costs the first: on this project's 2-vCPU VMs it has
run 1.0x to 1.6x slower than alone, minute by minute, so work split over two processes gains
less than 2x, and by an amount that varies (2026-12-06: 78 ms alone, 110-126 ms two at once).
"""

from __future__ import annotations

import multiprocessing
import time


def loop_ms(rounds: int = 5) -> float:
    """Best of `rounds` timings of the same 2,000,000-step loop, in ms (lower is faster)."""
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        x = 0
        for i in range(2_000_000):
            x += i
        best = min(best, time.perf_counter() - t)
    return best * 1000


def pair_loop_ms(rounds: int = 5) -> float:
    """loop_ms() run on two cores at once: the slower of the two."""
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return max(pool.map(loop_ms, [rounds, rounds]))


def speed() -> str:
    """The reference loop alone and on two cores at once, as the benchmarks print it."""
    return f"{loop_ms():.0f} ms, {pair_loop_ms():.0f} ms on two cores at once"


def line(label: str = "machine speed") -> str:
    return f"{label}: reference loop {speed()} (lower is faster; compare runs with similar values)"


if __name__ == "__main__":
    print(line())
