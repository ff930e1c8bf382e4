"""Exact sums as integers, over columns (numpy): the sum of a metric's values, or of each bucket's,
kept as a whole number of 2**-UNIT (any finite double is one), so that its double (rounded(): the
nearest, ties to even, what math.fsum gives) and so every mean does not depend on the order or the
parts the values came in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from mtptui.core.stats import tidied, tidy

FIXED = 80  # a value a log prints (at most 6 decimals, below 2**32) is a whole number of 2**-FIXED
UNIT = 1074  # any finite double is a whole number of 2**-UNIT: exact sums are kept as such integers
_CHUNK = 1 << 16

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

    def add_few(self, values: list[float]) -> None:
        """add() of a handful of values (a dashboard tick's): in Python, where numpy's calls
        would cost more than the sum."""
        finite = [v for v in values if math.isfinite(v)]
        if len(finite) < len(values):
            self.special += sum(v for v in values if not math.isfinite(v))
        self.units += _units((), finite, [1] * len(finite))
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


def means(values: np.ndarray, ids: np.ndarray, g: int) -> np.ndarray:
    """tidy(math.fsum(v) / len(v)) of the values v of each of g groups (ids: each value's group,
    in any order), to the bit; NaN for a group without values. Each group is summed in numpy,
    with a bound on that sum's error (n ulps of the sum of magnitudes, twice over, whatever the
    order of the additions): the exact sum lies within it, and so, rounding being monotone, does
    fsum's, and tidy of fsum's over n lies between tidy of the bounds' over n. Where those two
    are one double, it is the mean; elsewhere (a mean a hair from a tie of the 9th place, a value
    not finite) the group's ExactSum gives it, as a value set's mean is given."""
    n = np.bincount(ids, minlength=g)
    has = n > 0
    k = n[has]
    with np.errstate(all="ignore"):
        total = np.bincount(ids, weights=values, minlength=g)[has] + 0.0  # fsum's zero is +0.0
        bound = np.bincount(ids, weights=np.abs(values), minlength=g)[has] * k * 2.0**-51 + 2.0**-1000
        mean = tidied(total / k)
        sure = tidied((total - bound) / k) == tidied((total + bound) / k)
    out = np.full(g, np.nan)
    out[has] = mean
    if not sure.all():
        doubt = np.zeros(g, dtype=bool)
        doubt[np.flatnonzero(has)[~sure]] = True
        doubt = doubt[ids]
        kept, of = values[doubt], ids[doubt]
        order = np.argsort(of, kind="stable")
        kept, of = kept[order], of[order]
        groups, starts = np.unique(of, return_index=True)
        for i, a, b in zip(groups.tolist(), starts.tolist(), [*starts[1:].tolist(), len(kept)]):
            exact = ExactSum()
            exact.add(kept[a:b])
            out[i] = exact.mean()
    return out
