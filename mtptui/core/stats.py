"""Window statistics: n, mean, p50, p90, min, max, last.

Percentiles interpolate linearly between the two nearest ranks (numpy's default, and
``statistics.quantiles(method="inclusive")``). The mean is ``math.fsum(values) / n``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

STAT_KEYS = ("n", "mean", "p50", "p90", "min", "max", "last")


def percentile(sorted_values: Sequence[float], q: float) -> float:
    n = len(sorted_values)
    if n == 1:
        return sorted_values[0]
    pos = (n - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def describe(values: Sequence[float]) -> dict | None:
    """The S object of `summary --json`; None when there are no values. `values` in time order."""
    n = len(values)
    if n == 0:
        return None
    s = sorted(values)
    return {
        "n": n,
        "mean": _tidy(math.fsum(values) / n),
        "p50": _tidy(percentile(s, 0.5)),
        "p90": _tidy(percentile(s, 0.9)),
        "min": s[0],
        "max": s[-1],
        "last": values[-1],
    }


def _tidy(x: float) -> float:
    # Logged values have at most a few decimals; 9 places drop float noise such as 2.8899999999999997.
    return round(x, 9)
