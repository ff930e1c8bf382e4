"""Ring.window and Ring.times against a plain reference, across wrap-around, NaN and ties.

The dashboard reads several windows per rank per tick, so the ring reads by array slices and C
bisects; these tests pin that the fast path returns exactly what a sample-by-sample scan would.
"""

from __future__ import annotations

import math
import random

from mtptui.core.series import Ring


def reference(samples: list[tuple[float, float]], t0, t1):
    ts, vs = [], []
    for t, v in samples:
        if (t0 is None or t >= t0) and (t1 is None or t <= t1) and not math.isnan(v):
            ts.append(t)
            vs.append(v)
    return ts, vs


def test_window_matches_a_scan_for_every_fill_and_bound():
    rnd = random.Random(5)
    for cap in (1, 2, 3, 7, 16):
        for total in range(0, 3 * cap + 2):
            ring = Ring(("v",), cap)
            kept: list[tuple[float, float]] = []
            t = 100.0
            for _ in range(total):
                t += rnd.choice((0.0, 0.5, 1.0, 2.0))  # ties on purpose
                v = math.nan if rnd.random() < 0.2 else rnd.random()
                ring.append(t, {"v": v})
                kept.append((t, v))
                kept = kept[-cap:]
            assert ring.times() == [x for x, _ in kept]
            times = [x for x, _ in kept]
            probes = [None, 0.0, 1e12] + times + [x + 0.25 for x in times] + [x - 0.25 for x in times]
            for t0 in probes:
                for t1 in probes:
                    assert ring.window("v", t0, t1) == reference(kept, t0, t1), (cap, total, t0, t1)


def test_missing_columns_are_nan_and_skipped():
    ring = Ring(("a", "b"), 4)
    for k in range(6):
        ring.append(float(k), {"a": k} if k % 2 else {"b": k})
    assert ring.window("a") == ([3.0, 5.0], [3.0, 5.0])
    assert ring.window("b", 3.0) == ([4.0], [4.0])
