"""How fast this machine runs Python right now, to read the other figures by.

Shared VMs vary from minute to minute (neighbours, CPU frequency): the same benchmark gives
figures 1.5x apart an hour later. A fixed pure-Python loop timed next to a benchmark says
which kind of minute it was: compare figures only with similar loop times.
"""

from __future__ import annotations

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


def line(label: str = "machine speed") -> str:
    return f"{label}: reference loop {loop_ms():.0f} ms (lower is faster; compare runs with similar values)"


if __name__ == "__main__":
    print(line())
