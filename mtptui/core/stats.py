"""Statistics of a metric: n, mean, p50, p90, min, max, last. The one place that defines them,
for a plain list of values (the dashboard's windows) and for counted values (valueset.py), with
the forms of tidy and quantile over many groups at once (tidied, quantiles) that the figures of
runs that are over are made with (figures.py; their means: exact.means); and
how sure a comparison of two rates is (the benchmark's change against `off`): a bootstrap
interval over requests with a fixed seed, and the requests it would take to separate them.

Percentiles interpolate linearly between the two nearest ranks (numpy's default, and
``statistics.quantiles(method="inclusive")``). The mean is the exact sum of the values, correctly
rounded (``math.fsum``, or exact.py's integers), over n, rounded to 9 places: whichever way a sum was
kept (all values, value x count, a running ExactSum), it is the same double, so every mean of the
same values agrees to the bit.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where arrays are read: `record` on a host runs without it
    import numpy as np


def tidy(x: float) -> float:
    # Logged values have at most a few decimals; 9 places drop float noise such as 2.8899999999999997.
    return round(x, 9)


def tidied(values: np.ndarray) -> np.ndarray:
    """tidy() of each value (round(x, 9), to the bit), over an array: the nearest integer to
    x * 10**9 over 10**9 is round's double (a correctly rounded quotient of the right integer)
    wherever that product is not so near a half that its own rounding could tip it; the values
    where it is (or that are not finite, or too great for it) go through tidy() one by one."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        product = values * 1e9
        whole = np.rint(product)
        out = whole / 1e9
        near = ~(np.abs(np.abs(product - whole) - 0.5) > 4 * np.spacing(np.abs(product)))
    if near.any():
        out[near] = [tidy(x) for x in values[near].tolist()]
    return out


def quantile(kth: Callable[[int], float], n: int, q: float) -> float:
    """The q-quantile of n values, given the k-th smallest (from 0) of them."""
    pos = (n - 1) * q
    lo = math.floor(pos)
    a = kth(lo)
    if lo + 1 >= n:
        return a
    return a + (kth(lo + 1) - a) * (pos - lo)


def quantiles(ordered: np.ndarray, starts: np.ndarray, n: np.ndarray, q: float) -> np.ndarray:
    """quantile() of each of many groups at once: their values in order one group after another
    (ordered), each group's first place (starts) and count (n, above 0)."""
    import numpy as np

    pos = (n - 1) * q
    lo = np.floor(pos)
    at = starts + lo.astype(np.intp)
    a = ordered[at]
    b = ordered[np.minimum(at + 1, starts + n - 1)]
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, where `a` is taken (as quantile() takes it)
        out: np.ndarray = np.where(lo + 1 >= n, a, a + (b - a) * (pos - lo))
    return out


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


# --- how sure a comparison is ---------------------------------------------------------------------

RESAMPLES = 2000  # bootstrap resamples: the 2.5% and 97.5% points move by well under a percent
LEVEL = 0.95
SEED = 0  # fixed: the same requests give the same interval, run after run
MIN_REQUESTS = 5  # fewer on a side: no interval (a bootstrap of so few has few distinct resamples and understates the spread)


def rate(pairs: Sequence[tuple[float, float]]) -> float | None:
    """Σ amount / Σ time of (amount, time) pairs (one a request: output tokens, seconds); None
    without time."""
    time = math.fsum(t for _, t in pairs)
    return math.fsum(a for a, _ in pairs) / time if time > 0 else None


def ratio_interval(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]], *,
                   level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float] | None:
    """The bootstrap percentile interval of rate(a) / rate(b): a's and b's requests each drawn
    again with replacement, as many as each had, `resamples` times (a fixed seed), and the
    ratio's (1 - level) / 2 and (1 + level) / 2 quantiles taken. None with fewer than
    MIN_REQUESTS requests on either side."""
    if len(a) < MIN_REQUESTS or len(b) < MIN_REQUESTS or not rate(a) or not rate(b):
        return None
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        ra, rb = rate(rng.choices(a, k=len(a))), rate(rng.choices(b, k=len(b)))
        if ra is not None and rb:
            ratios.append(ra / rb)
    ratios.sort()
    if not ratios:
        return None
    return (quantile(ratios.__getitem__, len(ratios), (1 - level) / 2),
            quantile(ratios.__getitem__, len(ratios), (1 + level) / 2))


def requests_needed(n: int, ratio: float, lo: float) -> int | None:
    """How many requests in all (on each side) would make an interval whose lower end is `lo`
    around a measured `ratio` (above 1) clear 1, if the ratio stayed as measured: the interval's
    width on a log scale shrinks as 1/√n, so n·(ln(ratio / lo) / ln ratio)². None where the ratio
    is not above 1 (no difference measured: no number of requests can be promised)."""
    if ratio <= 1 or lo <= 0:
        return None
    if lo > 1:
        return n
    return math.ceil(n * (math.log(ratio / lo) / math.log(ratio)) ** 2)


def bucket_quantile(bounds: Sequence[float], cumulative: Sequence[float], q: float) -> float | None:
    """The q-quantile of a Prometheus histogram as `histogram_quantile` computes it: the bucket
    where the rank q·count falls, linearly between its lower and upper bound (the first bucket's
    lower bound 0 when its upper is above 0). `bounds` are the finite upper bounds, ascending;
    `cumulative` the counts of each bucket and then of +Inf. A rank in the +Inf bucket gives the
    greatest finite bound (nothing is known above it); None without observations."""
    if len(cumulative) != len(bounds) + 1 or not bounds:
        return None
    total = cumulative[-1]
    if not total > 0:
        return None
    rank = q * total
    b = next(i for i, c in enumerate(cumulative) if c >= rank)
    if b == len(bounds):
        return bounds[-1]
    upper = bounds[b]
    if b == 0:
        if upper <= 0:
            return upper
        lower, below = 0.0, 0.0
    else:
        lower, below = bounds[b - 1], cumulative[b - 1]
    inside = cumulative[b] - below
    return upper if inside <= 0 else lower + (upper - lower) * (rank - below) / inside
