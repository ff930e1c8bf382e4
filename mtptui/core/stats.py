"""Statistics of a metric: n, mean, p50, p90, min, max, last. The one place that computes them,
for a plain list of values (the dashboard's windows) and for counted values (valueset.py); and
how sure a comparison of two rates is (the benchmark's change against `off`): a bootstrap
interval over requests with a fixed seed, and the requests it would take to separate them.

Percentiles interpolate linearly between the two nearest ranks (numpy's default, and
``statistics.quantiles(method="inclusive")``). The mean is the exact sum of the values, correctly
rounded (``math.fsum``), over n, rounded to 9 places: whichever way a sum was kept (all values,
value x count, a running ExactSum: integers, see exact_sum), it is the same double, so every mean of
the same values agrees to the bit.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence

import numpy as np

FIXED = 80  # a value a log prints (at most 6 decimals, below 2**32) is a whole number of 2**-FIXED
UNIT = 1074  # any finite double is a whole number of 2**-UNIT: exact sums are kept as such integers
_CHUNK = 1 << 16


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


# --- exact sums: integers ----------------------------------------------------------------------------
# A value a log prints is a whole number of 2**-80 of at most 112 bits: four limbs of 28 bits,
# each an exact double (np.trunc of the value scaled by a power of two), whose sums over a chunk
# of values are exact in doubles, and times counts in int64. Any other finite double is summed as
# a Python integer (as_integer_ratio), a rare slow way.

def _limbs(values: np.ndarray) -> tuple[np.ndarray | None, list[np.ndarray]]:
    """The values' limbs (most significant first; 0 for a value that is not a whole number of
    2**-80 below 2**32), and which values those are not (None: none)."""
    small = np.abs(values) < 2.0**32
    u = np.where(small, values, 0.0) * 2.0**FIXED
    odd: np.ndarray | None = ~small | (u != np.trunc(u))
    if odd is not None and odd.any():
        u[odd] = 0.0
    else:
        odd = None
    limbs = []
    for shift in (84, 56, 28):
        limb = np.trunc(u * 2.0**-shift)
        u = u - limb * 2.0**shift
        limbs.append(limb)
    return odd, [*limbs, u]


def _units(limb_sums: Iterable[float | int], odd: Iterable[float] = (), counts: Iterable[int] = ()) -> int:
    """The exact sum, in units of 2**-UNIT, of limb sums (most significant first) and of other
    finite values (times their counts)."""
    fixed = 0
    for s in limb_sums:
        fixed = (fixed << 28) + int(s)
    total = fixed << (UNIT - FIXED)
    for v, c in zip(odd, counts):
        p, q = v.as_integer_ratio()  # q: a power of two, at most 2**UNIT
        total += p * c << (UNIT + 1 - q.bit_length())
    return total


def exact_sum(values: np.ndarray, counts: np.ndarray | None = None) -> int:
    """The exact sum of finite doubles (each times its count), in units of 2**-UNIT."""
    if len(values) > _CHUNK:  # a chunk at a time: the limbs of many values would take memory
        return sum(exact_sum(values[i:i + _CHUNK], None if counts is None else counts[i:i + _CHUNK])
                   for i in range(0, len(values), _CHUNK))
    odd, limbs = _limbs(values)
    if counts is None:  # at most _CHUNK limbs of 28 bits: their sum is exact in doubles
        sums = [limb.sum() for limb in limbs]
    elif counts.sum(dtype=float) < 2.0**34:  # each limb times its count, summed, fits in int64
        times = counts.astype(np.int64)
        sums = [int(limb.astype(np.int64) @ times) for limb in limbs]
    else:  # too many to sum in int64
        sums = [sum(map(int.__mul__, limb.astype(np.int64).tolist(), counts.tolist())) for limb in limbs]
    if odd is None:
        return _units(sums)
    return _units(sums, values[odd].tolist(), [1] * int(odd.sum()) if counts is None else counts[odd].tolist())


def exact_sums(values: np.ndarray, groups: np.ndarray, k: int) -> list[int]:
    """exact_sum() of the values of each group 0..k-1 (groups: each value's)."""
    if len(values) > _CHUNK:
        parts = [exact_sums(values[i:i + _CHUNK], groups[i:i + _CHUNK], k) for i in range(0, len(values), _CHUNK)]
        return [sum(p[g] for p in parts) for g in range(k)]
    odd, limbs = _limbs(values)
    sums = [np.bincount(groups, limb, k) for limb in limbs]
    out = [_units(s[g] for s in sums) for g in range(k)]
    if odd is not None:
        for g, v in zip(groups[odd].tolist(), values[odd].tolist()):
            out[g] += _units((), (v,), (1,))
    return out


def rounded(units: int) -> float:
    """The double nearest a sum in units of 2**-UNIT, ties to even (what math.fsum gives)."""
    return units / (1 << UNIT)  # int / int is correctly rounded


class ExactSum:
    """n values and their exact sum (in units of 2**-UNIT), so that a mean does not depend on the
    order or the parts values came in; values that are no finite number add to `special`
    (infinite, or NaN), which is then the total."""

    __slots__ = ("n", "units", "special")

    def __init__(self) -> None:
        self.n = 0
        self.units = 0
        self.special = 0.0

    def add(self, values: np.ndarray) -> None:
        finite = np.isfinite(values)
        if not finite.all():
            self.special += float(values[~finite].sum())
            self.units += exact_sum(values[finite])
        else:
            self.units += exact_sum(values)
        self.n += len(values)

    @classmethod
    def of(cls, units: int, n: int, special: float = 0.0) -> ExactSum:
        """n values whose exact sum is `units` (and `special`)."""
        out = cls()
        out.units, out.n, out.special = units, n, special
        return out

    def merge(self, other: ExactSum) -> None:
        self.units += other.units
        self.n += other.n
        self.special += other.special

    def total(self) -> float:
        return self.special if self.special else rounded(self.units)

    def mean(self) -> float | None:
        return tidy(self.total() / self.n) if self.n else None


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
