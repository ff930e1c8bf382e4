"""Every value of one metric over a whole input, kept exactly and compactly, for `summary`.

Logged metrics repeat: accept len has a few hundred distinct values at two decimals, request
counts a few hundred more. So values are counted (value -> times seen), which takes almost no
memory however long the log. A metric with many distinct values (throughput at two decimals)
would make the count table larger than the values themselves; past ``MAX_DISTINCT`` it keeps
a plain array of doubles instead. Either way the statistics are exact, and the same for the same
multiset of values, whichever way it was kept or merged (parallel parts give what one reader gives).
"""

from __future__ import annotations

import itertools
import math
from array import array
from bisect import bisect_right
from collections import Counter

from mtptui.core import compiled

MAX_DISTINCT = 20_000
FOLD = 1 << 14  # fold() at least this often: the buffer holds what was appended since


class ValueSet:
    """Append with ``buf.append`` (a C call, for the hot path) and call ``fold()`` at least every
    FOLD appends; or with ``append``, which folds by itself."""

    __slots__ = ("buf", "counts", "spill", "last", "n", "_sorted", "_cut", "_described", "tally")

    def __init__(self, tally: bool = False) -> None:
        self.buf = array("d")
        self.counts: Counter = Counter()
        self.spill: array | None = None  # all values, once there are too many distinct ones
        self._sorted = True  # whether spill is in order
        # When not None: spill[:_cut] and spill[_cut:] are each in order (two parts joined),
        # which is enough for the statistics without sorting the whole
        self._cut: int | None = None
        self.last: float | None = None
        self.n = 0
        # (n, describe()) of the last description: values are only ever added, so it holds
        # while n is the same
        self._described: tuple[int, dict | None] | None = None
        # [num, den]: the exact sum of every value so far, kept as they come, for a view that
        # reads the mean often (brief()); None: summed when asked (summary's sets, read once)
        self.tally: list[int] | None = [0, 1] if tally else None

    def __getstate__(self) -> tuple:
        # Sent from a parallel worker: sorted there, on the worker's core, the parent's final
        # sort of the joined parts only merges sorted runs (Timsort does that in one pass).
        self.seal()
        return self.counts, self.spill, self.last, self.n

    def __setstate__(self, state: tuple) -> None:
        self.counts, self.spill, self.last, self.n = state
        self.tally = None
        self.buf = array("d")
        self._sorted = True
        self._cut = None
        self._described = None

    def seal(self) -> None:
        """Folds, and puts the spilled values in order (describe() needs them so)."""
        self.fold()
        if not self._sorted:
            if compiled.sort_values is not None:
                compiled.sort_values(self.spill)
            else:
                self.spill = array("d", sorted(self.spill))
            self._sorted = True
            self._cut = None

    def append(self, v: float) -> None:
        buf = self.buf
        buf.append(v)
        if len(buf) >= FOLD:
            self.fold()

    def fold(self) -> None:
        """Moves the buffered values into the counts (or the spill array)."""
        buf = self.buf
        if buf:
            self.extend(buf)
            del buf[:]  # in place: callers keep buf.append bound

    def extend(self, values: array) -> None:
        """Adds values in order; NaN stands for a value the log did not carry and is left out."""
        total = sum(values)
        if total != total:  # some NaN (or inf - inf): keep what is a number
            values = array("d", [v for v in values if v == v])
            if not values:
                return
        self.last = values[-1]
        self.n += len(values)
        if self.tally is not None:
            _add_exact(self.tally, Counter(values))
        if self.spill is not None:
            self.spill.extend(values)
            self._sorted = False
            self._cut = None
        else:
            if compiled.count_values is not None:
                compiled.count_values(values, self.counts)  # the same, one dict update per distinct value
            else:
                self.counts.update(values)  # counted in C
            if len(self.counts) > MAX_DISTINCT:
                self._to_spill()

    def _to_spill(self) -> None:
        self.spill = array("d", self.counts.elements())  # each value its count of times, in the counts' order
        self._sorted = False
        self._cut = None
        self.counts = Counter()

    def merge(self, later: ValueSet) -> None:
        """Adds the values of a part that came after this one's."""
        self.fold()
        later.fold()
        if later.n == 0:
            return
        if self.tally is not None:
            if later.tally is None:
                self.tally = None  # its sum is not known: brief() sums when asked
            else:
                _add_ratio(self.tally, *later.tally)
        self.n += later.n
        self.last = later.last
        if self.spill is None and later.spill is None:
            self.counts.update(later.counts)
            if len(self.counts) > MAX_DISTINCT:
                self._to_spill()
            return
        if self.spill is None:
            self._to_spill()
        two_runs = (self._sorted and len(self.spill) > 0 and later.spill is not None and later._sorted
                    and len(later.spill) > 0 and not later.counts)
        cut = len(self.spill)
        if later.spill is not None:
            self.spill.extend(later.spill)
        for v, c in later.counts.items():
            self.spill.extend(itertools.repeat(v, c))
        self._sorted = False
        self._cut = cut if two_runs else None

    def __len__(self) -> int:
        return self.n + len(self.buf)

    def describe(self) -> dict | None:
        """{n, mean, p50, p90, min, max, last}, or None with no values. The mean is the sum of all
        values, exactly or correctly rounded, over n; percentiles interpolate linearly between
        the two nearest ranks, as ``statistics.quantiles(method="inclusive")``."""
        self.fold()
        n = self.n
        if self._described is None or self._described[0] != n:
            if self._cut is None:
                self.seal()
            self._described = (n, self._describe(n) if n else None)
        result = self._described[1]
        return dict(result) if result is not None else None

    def brief(self) -> dict | None:
        """{n, mean} as describe() gives them, without the sort its percentiles need: for views
        that redraw often (the dashboard's epoch strip)."""
        self.fold()
        n = self.n
        if not n:
            return None
        if self._described is not None and self._described[0] == n:
            return {"n": n, "mean": self._described[1]["mean"]}
        if self.tally is not None:
            total = self.tally[0] / self.tally[1]  # int / int is correctly rounded, as fsum
        else:
            total = math.fsum(self.spill) if self.spill is not None else _exact_sum(self.counts)
        return {"n": n, "mean": _tidy(total / n)}

    def same_values(self, other: ValueSet) -> bool:
        """Whether both hold the same values, added in the same order: a cheap check (no sort)
        that lets one description serve both (a series and its epoch, when the epoch is all of it)."""
        self.fold()
        other.fold()
        return (self.n == other.n and self.last == other.last and self.counts == other.counts
                and self.spill == other.spill)

    def share_description(self, other: ValueSet) -> None:
        """Lets `other` reuse this set's description when it holds the same values."""
        if self.same_values(other):
            other._described = (self.n, self.describe())

    def _describe(self, n: int) -> dict:
        if self.spill is not None and self._cut is not None:
            a, b = self.spill[:self._cut], self.spill[self._cut:]
            total = math.fsum(self.spill)  # exact whatever the order

            def kth(k: int) -> float:
                return _kth_of_two(a, b, k)

            lo, hi = min(a[0], b[0]), max(a[-1], b[-1])
        elif self.spill is not None:
            ordered = self.spill
            total = math.fsum(ordered)

            def kth(k: int) -> float:
                return ordered[k]

            lo, hi = ordered[0], ordered[-1]
        else:
            keys = sorted(self.counts)
            cum = list(itertools.accumulate(self.counts[k] for k in keys))
            total = _exact_sum(self.counts)

            def kth(k: int) -> float:
                return keys[bisect_right(cum, k)]

            lo, hi = keys[0], keys[-1]
        return {"n": n, "mean": _tidy(total / n), "p50": _tidy(_quantile(kth, n, 0.5)),
                "p90": _tidy(_quantile(kth, n, 0.9)), "min": lo, "max": hi, "last": self.last}


def _kth_of_two(a: array, b: array, k: int) -> float:
    """The k-th smallest (from 0) of two ordered arrays taken together, by a binary search for
    how many of the k + 1 smallest come from `a` (no merge: the parts of a parallel read arrive
    ordered, and joining them costs more than the statistics)."""
    lo, hi = max(0, k + 1 - len(b)), min(k + 1, len(a))
    while lo < hi:
        i = (lo + hi) // 2  # i from a, k + 1 - i from b
        if b[k - i] > a[i]:
            lo = i + 1  # b's last taken is larger than a's next: take more from a
        else:
            hi = i
    j = k + 1 - lo
    if lo == 0:
        return b[j - 1]
    if j == 0:
        return a[lo - 1]
    return max(a[lo - 1], b[j - 1])


def _exact_sum(counts: Counter) -> float:
    """The sum of value x count over the distinct values, correctly rounded (as math.fsum over
    every repeat would give, walking only the distinct ones). A finite double is an integer over
    a power of two, so the sum is kept exactly as one integer over the largest such power."""
    tally = [0, 1]
    _add_exact(tally, counts)
    return tally[0] / tally[1]  # int / int is correctly rounded


def _add_exact(tally: list[int], counts: Counter) -> None:
    """Adds value x count of each distinct value to the exact sum [num, den] (den a power of 2)."""
    num, den = tally
    for v, c in counts.items():
        p, q = v.as_integer_ratio()
        if q > den:
            num *= q // den
            den = q
        num += p * c * (den // q)
    tally[0], tally[1] = num, den


def _add_ratio(tally: list[int], num: int, den: int) -> None:
    """Adds the exact sum num / den (den a power of 2) to `tally`."""
    if den > tally[1]:
        tally[0] *= den // tally[1]
        tally[1] = den
    tally[0] += num * (tally[1] // den)


def _quantile(kth, n: int, q: float) -> float:
    pos = (n - 1) * q
    lo = math.floor(pos)
    a = kth(lo)
    if lo + 1 >= n:
        return a
    return a + (kth(lo + 1) - a) * (pos - lo)


def _tidy(x: float) -> float:
    # Logged values have at most a few decimals; 9 places drop float noise such as 2.8899999999999997.
    return round(x, 9)


NAN = math.nan


class Rows:
    """Several metrics of one series, a row per record, each row appended by one C-level call
    (absent fields become NaN), and handed to one ValueSet per metric in columns."""

    __slots__ = ("names", "sets", "buf", "nans", "limit")

    def __init__(self, names: tuple[str, ...], tally: bool = False, carried: tuple[str, ...] = ()) -> None:
        # carried: fields a row holds after the metrics, for the buffer's readers (an epoch's
        # buckets), kept in no value set
        self.names = names + carried
        self.sets = {n: ValueSet(tally) for n in names}
        self.buf = array("d")
        self.nans = (NAN,) * len(self.names)
        self.limit = FOLD * len(self.names)

    def add(self, fields: dict) -> None:
        buf = self.buf
        buf.extend(map(fields.get, self.names, self.nans))
        if len(buf) >= self.limit:
            self.fold()

    def fold(self, also: Rows | None = None) -> None:
        """Hands the buffered rows to the value sets (and to `also`'s, for the metrics it has)."""
        buf = self.buf
        if not buf:
            return
        k = len(self.names)
        for i, (name, values) in enumerate(self.sets.items()):  # the metrics lead the row, in order
            column = buf[i::k]
            values.extend(column)
            if also is not None and name in also.sets:
                also.sets[name].extend(column)
        del buf[:]

    def merge(self, later: Rows) -> None:
        self.fold()
        later.fold()
        for name, values in later.sets.items():
            self.sets[name].merge(values)

    def describe(self) -> dict[str, dict | None]:
        self.fold()
        return {name: values.describe() for name, values in self.sets.items()}

    def brief(self) -> dict[str, dict | None]:
        self.fold()
        return {name: values.brief() for name, values in self.sets.items()}

    def _pairs(self, other: Rows):
        """(this set, other's set) for each metric both rows have, both folded."""
        self.fold()
        other.fold()
        for name, values in self.sets.items():
            theirs = other.sets.get(name)
            if theirs is not None:
                yield values, theirs

    def add_copy(self, other: Rows) -> None:
        """Adds the values `other` holds for the metrics these rows have (other is unchanged)."""
        for mine, theirs in self._pairs(other):
            mine.merge(theirs)

    def share_descriptions(self, other: Rows) -> None:
        """Lets `other`'s value sets reuse these sets' descriptions where they hold the same values."""
        for mine, theirs in self._pairs(other):
            mine.share_description(theirs)

    def seal(self) -> None:
        self.fold()
        for values in self.sets.values():
            values.seal()

    def __getstate__(self) -> tuple:
        self.fold()
        return self.names, self.sets

    def __setstate__(self, state: tuple) -> None:
        names, self.sets = state
        self.names = names
        self.buf = array("d")
        self.nans = (NAN,) * len(names)
        self.limit = FOLD * len(names)
