"""Statistics of a metric: n, mean, p50, p90, min, max, last. The one place that computes them,
for a plain list of values (the dashboard's windows) and for counted values (valueset.py).

Percentiles interpolate linearly between the two nearest ranks (numpy's default, and
``statistics.quantiles(method="inclusive")``). The mean is the exact sum of the values, correctly
rounded (``math.fsum``), over n, rounded to 9 places.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

def tidy(x: float) -> float:
    # Logged values have at most a few decimals; 9 places drop float noise such as 2.8899999999999997.
    return round(x, 9)


def quantile(kth: Callable[[int], float], n: int, q: float) -> float:
    """The q-quantile of n values, given the k-th smallest (from 0) of them."""
    pos = (n - 1) * q
    lo = math.floor(pos)
    a = kth(lo)
    if lo + 1 >= n:
        return a
    return a + (kth(lo + 1) - a) * (pos - lo)


def assemble(n: int, total: float, lo: float, hi: float, last: float,
             kth: Callable[[int], float] | None = None) -> dict:
    """The statistics dict (the S object of `summary --json`) from n > 0 values' exact sum, least,
    greatest and last value; with `kth` (the k-th smallest, from 0) also p50 and p90."""
    out = {"n": n, "mean": tidy(total / n)}
    if kth is not None:
        out["p50"] = tidy(quantile(kth, n, 0.5))
        out["p90"] = tidy(quantile(kth, n, 0.9))
    out["min"], out["max"], out["last"] = lo, hi, last
    return out


def describe(values: Sequence[float], percentiles: bool = True) -> dict | None:
    """Statistics of values in time order; None when there are none. Without percentiles it
    takes one pass and no sort (what a panel shows, every frame)."""
    if not values:
        return None
    if not percentiles:
        return assemble(len(values), math.fsum(values), min(values), max(values), values[-1])
    s = sorted(values)
    return assemble(len(s), math.fsum(values), s[0], s[-1], values[-1], s.__getitem__)
