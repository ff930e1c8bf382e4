"""Every value of one metric over a whole input, for exact statistics in memory that stops growing.

Exact statistics (n, mean, p50, p90, min, max, last) need how often each value came, not the
values in order. Logs print every figure to a fixed number of decimals, so a metric can take only
so many values, and once a log has shown them, counting more lines takes no more memory. Values
come in columns (a fold: up to FOLD of them), which numpy reduces to counts per distinct value
kept in the smallest of three forms that serve:

- counted: value -> times seen (a Counter), while the values are few (accept len at two
  decimals has a few hundred, request counts fewer);
- dense: a count for every possible value from the least seen to the greatest, at the metric's
  decimals (throughput 0.00 .. 3000.00: 300,001 counts, a byte each until one passes 255), once
  that is at most ``DENSE_FREE`` counts or no more than the values themselves would take (8 bytes
  each);
- spilled: the values themselves, while a dense range would be larger, or for good when they are
  not decimals of at most ``MAX_DECIMALS`` places.

Whichever form, and however the parts of a parallel read were merged, the statistics are the same
for the same multiset of values: each form reads back as (distinct values, counts) in order
(_by_value), the mean from their exact sum (stats.exact_sum), the percentiles from the running
count.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import count
from typing import Any

import numpy as np

from mtptui.core.exact import ExactSum, exact_sum, rounded
from mtptui.core.stats import assemble, tidy
from mtptui.core.stats import describe as describe_values

MAX_DISTINCT = 4096  # counted while there are at most this many distinct values
MAX_DECIMALS = 6
# A set that outgrows the counted form (past MAX_DISTINCT values, some 400 KB as a Counter)
# turns dense when its range takes at most this many counts (2 MB at first, a byte each), however
# few its values: memory is then flat from early on (input throughput 0.00 .. 20000.00 fits),
# where values kept one by one would grow until they reach as much.
DENSE_FREE = 1 << 21
FOLD = 1 << 14  # fold() at least this often: the buffer holds what was appended since
FEW = 64  # a fold of at most this many values is counted in Python (_extend_few)
CHUNK = 1 << 16  # counts walked at a time where a whole range's copy would cost memory
COUNTED, DENSE, SPILLED = "counted", "dense", "spilled"
_WIDTHS = tuple((code, (1 << 8 * array(code).itemsize) - 1) for code in "BHIQ")  # counts' types
_LIMIT = dict(_WIDTHS)
# Sets fed alike (a metric on every rank of a flood) would all outgrow counting on the same tick,
# each change of form taking milliseconds: the screen would stall for most of a second. So each
# view's set (one with a tally) outgrows it at one of eight sizes from MAX_DISTINCT up, by the
# order sets were made.
_STAGGER = count()


def _dense_fits(bins: int, n: int) -> bool:
    """Whether counts for `bins` possible values (a byte each, at first) take no more than the
    n values themselves, or little anyway."""
    return bins <= max(8 * n, DENSE_FREE)


def _view(a: array) -> np.ndarray:
    """An array's items as numpy's, in place (let go before the array changes size)."""
    return np.frombuffer(a, a.typecode)


def _doubles(values: np.ndarray) -> array[float]:
    out = array("d")
    out.frombytes(values.astype(float).tobytes())
    return out


class ValueSet:
    """Append with ``buf.append`` (a C call, for the hot path) and call ``fold()`` at least every
    FOLD appends; or with ``append``, which folds by itself."""

    __slots__ = ("buf", "form", "counts", "dense", "lo", "decimals", "spill", "_sorted", "_next_try",
                 "last", "n", "least", "most", "_described", "tally", "_distinct")

    def __init__(self, tally: bool = False) -> None:
        self.buf: array[float] = array("d")
        self.form = COUNTED
        # Each form's own data, None in the other forms (_counts(), _dense(), _spill() read them)
        self.counts: Counter[float] | None = Counter()
        # dense: dense[i] is how often the value (lo + i) / 10**decimals came
        self.dense: array[int] | None = None
        self.lo = 0
        self.decimals = 0
        self.spill: array[float] | None = None
        self._sorted = True  # whether spill is in order
        self._next_try = 0  # the spill's length at which to try the dense form again; 0: never
        self.last: float | None = None
        self.n = 0
        self.least = self.most = math.nan  # the least and the greatest value so far
        # (n, describe()) of the last description: values are only ever added, so it holds
        # while n is the same
        self._described: tuple[int, dict[str, Any] | None] | None = None
        # the exact sum of every value so far, kept as they come, for a view that reads the mean
        # often (brief()); None: summed when asked (summary's sets, read once)
        self.tally: ExactSum | None = ExactSum() if tally else None
        # counted up to this many distinct values (staggered for a view's sets, see _STAGGER)
        self._distinct = MAX_DISTINCT + (MAX_DISTINCT // 8 * (next(_STAGGER) % 8) if tally else 0)

    def _counts(self) -> Counter[float]:
        """The counted form's counts."""
        counts = self.counts
        assert counts is not None, self.form
        return counts

    def _dense(self) -> array[int]:
        """The dense form's counts."""
        dense = self.dense
        assert dense is not None, self.form
        return dense

    def _spill(self) -> array[float]:
        """The spilled form's values."""
        spill = self.spill
        assert spill is not None, self.form
        return spill

    def _state(self) -> tuple[Any, ...]:
        return (self.form, self.counts, self.dense, self.lo, self.decimals, self.spill, self._next_try,
                self.last, self.n, self.least, self.most)

    def __getstate__(self) -> tuple[Any, ...]:
        # Sent from a parallel worker: a spill is sorted there, on the worker's core
        self.seal()
        return self._state()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self._load(state)
        self.buf = array("d")
        self._sorted = True
        self._described = None
        self.tally = None
        self._distinct = MAX_DISTINCT

    def _load(self, state: tuple[Any, ...]) -> None:
        (self.form, self.counts, self.dense, self.lo, self.decimals, self.spill, self._next_try,
         self.last, self.n, self.least, self.most) = state

    def _copy_from(self, other: ValueSet) -> None:
        self._load(other._state())
        self._sorted = other._sorted
        if self.counts is not None:
            self.counts = Counter(self.counts)
        if self.dense is not None:
            self.dense = array(self.dense.typecode, self.dense)
        if self.spill is not None:
            self.spill = array("d", self.spill)

    def seal(self) -> None:
        """Folds, and puts spilled values in order (describe() needs them so)."""
        self.fold()
        if not self._sorted:
            _view(self._spill()).sort()  # in place
            self._sorted = True

    def append(self, v: float) -> None:
        buf = self.buf
        buf.append(v)
        if len(buf) >= FOLD:
            self.fold()

    def fold(self) -> None:
        """Moves the buffered values into the set."""
        buf = self.buf
        if buf:
            self.extend(buf)
            del buf[:]  # in place: callers keep buf.append bound

    def extend(self, values: array[float] | np.ndarray) -> None:
        """Adds values in order; NaN stands for a value the log did not carry and is left out."""
        if len(values) <= FEW:
            self._extend_few([v for v in values if v == v])
            return
        column = np.asarray(values, float)  # an array's doubles in place
        nan = np.isnan(column)
        if nan.any():
            column = column[~nan]
        if not len(column):
            return
        self.last = float(column[-1])
        self.n += len(column)
        self._extend_range(float(column.min()), float(column.max()))
        if self.tally is not None:
            self.tally.add(column)
        self._add(*np.unique(column, return_counts=True))

    def _extend_few(self, vals: list[float]) -> None:
        """extend() of a handful of values (the dashboard folds a series' few new ones each
        tick): counted in Python, where numpy's calls cost several times the work; the same
        counts as extend() makes."""
        if not vals:
            return
        self.last = vals[-1]
        self.n += len(vals)
        self._extend_range(min(vals), max(vals))
        if self.tally is not None:
            self.tally.add_few(vals)
        counted = Counter(vals)
        if self.form == COUNTED:
            counts = self._counts()
            counts.update(counted)
            if len(counts) > self._distinct:
                self._outgrow_counts()
        elif not (self.form == DENSE and self._count_few(counted)):
            self._add(np.fromiter(counted, float, len(counted)), np.fromiter(counted.values(), np.int64, len(counted)))

    def _count_few(self, counted: Counter[float]) -> bool:
        """Counts a few distinct values in the dense form when each is a key of its range at its
        decimals and no count outgrows its type (else False, nothing changed: _add's way)."""
        dense, scale, lo = self._dense(), 10**self.decimals, self.lo
        top, at = _LIMIT[dense.typecode], []
        for v, c in counted.items():
            if abs(v) * scale >= 2.0**52:
                return False
            k = round(v * scale)  # half to even, as _at_scale's np.rint
            i = k - lo
            if k / scale != v or not 0 <= i < len(dense) or dense[i] + c > top:
                return False
            at.append((i, c))
        for i, c in at:
            dense[i] += c
        return True

    def _extend_range(self, least: float, most: float) -> None:
        if least < self.least or self.least != self.least:  # (NaN: none yet)
            self.least = least
        if most > self.most or self.most != self.most:
            self.most = most

    # -- changes of form -----------------------------------------------------------------------
    def _outgrow_counts(self) -> None:
        if not self._try_dense():
            self.spill = _doubles(np.repeat(*self._by_value()))
            self._sorted = True
            self.form, self.counts = SPILLED, None

    def _try_dense(self) -> bool:
        """Turns from counted or spilled to dense when every value is a decimal of at most
        MAX_DECIMALS places and their range is small enough; else says when to try again."""
        self._next_try = 0
        vals, cnts = self._by_value()
        found = _keys(vals, 0)
        if found is None:
            return False  # not decimals of a few places: spilled for good
        decimals, keys = found
        bins = int(keys[-1] - keys[0]) + 1
        if not _dense_fits(bins, self.n):
            self._next_try = max(2 * self.n, bins // 8)
            return False
        self.form, self.decimals, self.lo, self.dense = DENSE, decimals, int(keys[0]), array("B", bytes(bins))
        self._scatter(keys, cnts)
        self.counts = self.spill = None
        self._sorted = True
        return True

    def _to_spill(self) -> None:
        """From dense to spilled: for a value that is no decimal, or a range grown too wide (tried
        again when the values have doubled)."""
        self.spill, self._sorted, self._next_try = _doubles(np.repeat(*self._by_value())), True, 2 * self.n
        self.form, self.dense = SPILLED, None

    # -- adding counted values to each form ----------------------------------------------------
    def _add(self, vals: np.ndarray, cnts: np.ndarray) -> None:
        """Adds distinct values with their counts (n is already counted): a fold's, or a part's."""
        if self.form == COUNTED:
            counts = self._counts()
            counts.update(dict(zip(vals.tolist(), cnts.tolist())))
            if len(counts) > self._distinct:
                self._outgrow_counts()
        elif self.form == DENSE:
            self._add_dense(vals, cnts)
        else:
            self._add_spilled(np.repeat(vals, cnts))

    def _add_spilled(self, values: np.ndarray) -> None:
        spill = self._spill()
        spill.frombytes(values.tobytes())
        self._sorted = False
        if self._next_try and len(spill) >= self._next_try:
            self._try_dense()

    def _add_dense(self, vals: np.ndarray, cnts: np.ndarray) -> None:
        """Counts distinct values `cnts` times each in the dense form, or turns to the spilled
        form for values it cannot count."""
        keys = _at_scale(vals, 10**self.decimals)
        if keys is None:  # more decimals than so far, or none of a few
            found = _keys(vals, self.decimals + 1)
            keys = found[1] if found is not None and self._rescale(found[0]) else None
        if keys is None or not self._cover(int(keys.min()), int(keys.max())):
            self._to_spill()
            self._add_spilled(np.repeat(vals, cnts))
            return
        self._scatter(keys, cnts)

    def _rescale(self, decimals: int) -> bool:
        """Counts at more decimals: every count moves to the same value's new key."""
        f = 10 ** (decimals - self.decimals)
        old = self._dense()
        bins = (len(old) - 1) * f + 1
        if not _dense_fits(bins, self.n):
            return False
        new = array(old.typecode, bytes(bins * old.itemsize))
        new[::f] = old
        self.dense, self.lo, self.decimals = new, self.lo * f, decimals
        return True

    def _cover(self, lo: int, hi: int) -> bool:
        """Widens the dense range to hold keys lo..hi, when it stays small enough."""
        dense = self._dense()
        below = self.lo - lo
        above = hi - (self.lo + len(dense) - 1)
        if below <= 0 and above <= 0:
            return True
        if not _dense_fits(len(dense) + max(below, 0) + max(above, 0), self.n):
            return False
        size = dense.itemsize
        if below > 0:
            dense = self.dense = array(dense.typecode, bytes(below * size)) + dense
            self.lo = lo
        if above > 0:
            dense.frombytes(bytes(above * size))
        return True

    def _scatter(self, keys: np.ndarray, cnts: np.ndarray) -> None:
        """dense[key - lo] += count for distinct keys, widening the counts' type when one would
        overflow it."""
        at = keys - self.lo
        summed = _view(self._dense())[at] + cnts.astype(np.uint64)
        self.dense = _wide_enough(self._dense(), int(summed.max(initial=0)))
        _view(self.dense)[at] = summed

    # -- merging -------------------------------------------------------------------------------
    def merge(self, later: ValueSet) -> None:
        """Adds the values of a part that came after this one's (`later` is left as it is)."""
        self.fold()
        later.fold()
        if later.n == 0:
            return
        if self.tally is not None:
            if later.tally is None:
                self.tally = None  # its sum is not known: brief() sums when asked
            else:
                self.tally.merge(later.tally)
        if self.n == 0:
            self._copy_from(later)
            return
        n, last = self.n + later.n, later.last
        self._extend_range(later.least, later.most)
        if self.form == COUNTED and later.form != COUNTED:
            mine = self._by_value()  # few: added to a copy of the larger form
            self._copy_from(later)
            self.n = n
            self._add(*mine)
        else:
            self.n = n
            if self.form == SPILLED and later.form == SPILLED:
                self._add_spilled(_view(later._spill()))
            elif not (self.form == DENSE and later.form == DENSE and self._add_dense_counts(later)):
                self._add(*later._by_value())
        self.last = last

    def _add_dense_counts(self, other: ValueSet) -> bool:
        """Adds another dense set's counts range to range, when both count at the same decimals
        and the joined range is small enough."""
        theirs = other._dense()
        if other.decimals != self.decimals or not self._cover(other.lo, other.lo + len(theirs) - 1):
            return False
        at = slice(other.lo - self.lo, other.lo - self.lo + len(theirs))
        mine, add = _view(self._dense())[at], _view(theirs)
        top = max((int(np.add(mine[i:i + CHUNK], add[i:i + CHUNK], dtype=np.uint64).max())
                   for i in range(0, len(add), CHUNK)), default=0)  # a chunk at a time: no copy of a whole range
        self.dense = _wide_enough(self._dense(), top)
        mine = _view(self.dense)[at]
        np.add(mine, add, out=mine, casting="unsafe")  # every sum fits (top)
        return True

    # -- reading -------------------------------------------------------------------------------
    def _by_value(self) -> tuple[np.ndarray, np.ndarray]:
        """Every value, as (distinct values in order, how often each came)."""
        if self.form == COUNTED:
            counts = self._counts()
            vals = np.fromiter(counts, float, len(counts))
            order = np.argsort(vals, kind="stable")
            return vals[order], np.fromiter(counts.values(), np.int64, len(counts))[order]
        if self.form == DENSE:
            dense = _view(self._dense())
            keys = np.flatnonzero(dense)
            return (self.lo + keys) / 10**self.decimals, dense[keys]
        return np.unique(_view(self._spill()), return_counts=True)

    def __len__(self) -> int:
        return self.n + len(self.buf)

    def describe(self, percentiles: bool = True) -> dict[str, Any] | None:
        """{n, mean, p50, p90, min, max, last}, or None with no values (see core/stats.py).
        Without percentiles, for views that redraw often (the dashboard's panels) while values
        come: no sort, when the sum is kept as they come (a set that stopped growing is
        described once, in full, and kept)."""
        self.fold()
        n = self.n
        if not percentiles and n and self.tally is not None and (self._described is None or self._described[0] != n):
            return self._extremes()
        if self._described is None or self._described[0] != n:
            self._described = (n, self._describe() if n else None)
        result = self._described[1]
        return dict(result) if result is not None else None

    def brief(self) -> dict[str, Any] | None:
        """{n, mean} as describe() gives them, without the sort its percentiles need: for views
        that redraw often (the dashboard's epoch strip)."""
        self.fold()
        n = self.n
        if not n:
            return None
        described = self._described
        if described is not None and described[0] == n and described[1] is not None:
            return {"n": n, "mean": described[1]["mean"]}
        return {"n": n, "mean": tidy(self._total() / n)}

    def _total(self) -> float:
        """The sum of every value, exact, then correctly rounded."""
        if self.tally is not None:
            return self.tally.total()
        if self.form == SPILLED:
            return rounded(exact_sum(_view(self._spill())))
        return rounded(exact_sum(*self._by_value()))

    def _extremes(self) -> dict[str, Any]:
        """describe() without the percentiles, and without the sort they need."""
        return assemble(self.n, self._total(), self.least, self.most, self._last())

    def _last(self) -> float:
        """The last value added (there is one)."""
        last = self.last
        assert last is not None
        return last

    def _describe(self) -> dict[str, Any]:
        n = self.n
        if self.form == SPILLED:
            self.seal()
            s = self._spill()
            return assemble(n, self._total(), s[0], s[-1], self._last(), s.__getitem__)
        vals, cnts = self._by_value()
        ends = np.cumsum(cnts)  # the running count: the k-th value is the first whose end passes k
        total = self.tally.total() if self.tally is not None else rounded(exact_sum(vals, cnts))
        return assemble(n, total, float(vals[0]), float(vals[-1]), self._last(),
                        lambda k: float(vals[np.searchsorted(ends, k, "right")]))

    def same_values(self, other: ValueSet) -> bool:
        """Whether both hold the same values, added in the same order: a cheap check (no sort)
        that lets one description serve both (a series and its epoch, when the epoch is all of it)."""
        self.fold()
        other.fold()
        return self._state() == other._state()

    def share_description(self, other: ValueSet) -> None:
        """Lets `other` reuse this set's description when it holds the same values."""
        if self.same_values(other):
            other._described = (self.n, self.describe())


def _wide_enough(counts: array[int], top: int) -> array[int]:
    """`counts`, or a copy of a wider type when it cannot hold `top`."""
    if top <= _LIMIT[counts.typecode]:
        return counts
    code = next(code for code, limit in _WIDTHS if top <= limit)
    wide = array(code)
    wide.frombytes(_view(counts).astype(code).tobytes())
    return wide


def _at_scale(vals: np.ndarray, scale: int) -> np.ndarray | None:
    """Each value times scale (int64 keys), when every value is a whole number of 1/scale exactly
    (the float the log's text gave is the one its key gives back) below 2**52 at scale, else None."""
    if len(vals) and float(np.abs(vals).max()) * scale >= 2.0**52:
        return None
    keys = np.rint(vals * float(scale))  # half to even, as round()
    if not np.array_equal(keys / scale, vals):
        return None
    return keys.astype(np.int64)


def _keys(vals: np.ndarray, decimals: int) -> tuple[int, np.ndarray] | None:
    """(d, keys at 10**d) for the fewest decimals d (from `decimals` on) that the values have."""
    for d in range(decimals, MAX_DECIMALS + 1):
        keys = _at_scale(vals, 10**d)
        if keys is not None:
            return d, keys
    return None


NAN = math.nan


class Rows:
    """Several metrics of one series, a row per record, each row appended by one C-level call
    (absent fields become NaN), and handed to one ValueSet per metric in columns."""

    __slots__ = ("names", "metrics", "tally", "_sets", "buf", "nans", "limit")

    def __init__(self, names: tuple[str, ...], tally: bool = False, carried: tuple[str, ...] = ()) -> None:
        # carried: fields a row holds after the metrics, for the buffer's readers (an epoch's
        # buckets), kept in no value set
        self.names = names + carried
        self.metrics = names
        self.tally = tally
        # The value sets (`sets`), made when values first reach them: a short run's rows are
        # described from their buffer once it is over (figures()), and so make none. A view's
        # (tally) are made at once, so that they outgrow counting in the order rows were made.
        self._sets: dict[str, ValueSet] | None = self._make_sets() if tally else None
        self.buf = array("d")
        self.nans = (NAN,) * len(self.names)
        self.limit = FOLD * len(self.names)

    def _make_sets(self) -> dict[str, ValueSet]:
        return {n: ValueSet(self.tally) for n in self.metrics}

    @property
    def sets(self) -> dict[str, ValueSet]:
        """A value set per metric, in the order of the metrics."""
        sets = self._sets
        if sets is None:
            sets = self._sets = self._make_sets()
        return sets

    def add(self, fields: dict) -> None:
        buf = self.buf
        buf.extend(map(fields.get, self.names, self.nans))
        if len(buf) >= self.limit:
            self.fold()

    def add_columns(self, columns: dict[str, array]) -> None:
        """Rows given as columns of equal length (arrays of doubles; NaN: absent), for the metrics
        these rows have: buffered as add() buffers them, interleaved in C."""
        names = self.names
        k = len(names)
        n = len(columns[names[0]])
        block = array("d", [NAN]) * (n * k)
        for i, name in enumerate(names):
            block[i::k] = columns[name]
        self.buf.extend(block)
        if len(self.buf) >= self.limit:
            self.fold()

    def add_rows(self, rows: array, names: tuple[str, ...]) -> None:
        """Rows of other fields (`names`, each of these rows' among them), one after another:
        buffered as add() buffers them, the fields these rows have taken out in C."""
        if names == self.names:  # these rows' own fields (an epoch's rows, as its series hands them over)
            buf = self.buf
            buf.extend(rows)
            if len(buf) >= self.limit:
                self.fold()
            return
        k = len(names)
        self.add_columns({name: rows[names.index(name)::k] for name in self.names})

    def fold(self, also: Rows | None = None) -> None:
        """Hands the buffered rows to the value sets (and to `also`'s, for the metrics it has)."""
        buf = self.buf
        if not buf:
            return
        k = len(self.names)
        names = self.names
        # `also` takes the rows into its buffer (one interleave in C), when each of its fields is
        # one of these rows': an epoch of a few rows is then described from them once, never
        # counted in value sets (figures())
        buffered = also is not None and all(name in names for name in also.names)
        if buffered:
            assert also is not None
            also.add_columns({name: buf[names.index(name)::k] for name in also.names})
        for i, (name, values) in enumerate(self.sets.items()):  # the metrics lead the row, in order
            column = buf[i::k]
            values.extend(column)
            if also is not None and not buffered and name in also.sets:
                also.sets[name].extend(column)
        del buf[:]

    def merge(self, later: Rows) -> None:
        self.fold()
        later.fold()
        if later._sets is None:
            return  # no values
        for name, values in later._sets.items():
            self.sets[name].merge(values)

    def describe(self, percentiles: bool = True) -> dict[str, dict | None]:
        self.fold()
        if self._sets is None:
            return dict.fromkeys(self.metrics)  # no values
        return {name: values.describe(percentiles) for name, values in self._sets.items()}

    def brief(self) -> dict[str, dict | None]:
        self.fold()
        if self._sets is None:
            return dict.fromkeys(self.metrics)
        return {name: values.brief() for name, values in self._sets.items()}

    def figures(self) -> list[float]:
        """describe() as doubles, STAT_KEYS for each metric (NaNs: no values), what a run that is
        over keeps (epochs.Figures). Rows whose values all still wait in their buffer (a short
        run's) are described from it, a column at a time, no value set made."""
        sets = self._sets
        if self.buf and (sets is None or not any(v.n for v in sets.values())):
            k = len(self.names)
            buf = self.buf
            return _figures(describe_values([v for v in buf[i::k] if v == v]) for i in range(len(self.metrics)))
        return _figures(self.describe().values())

    def _pairs(self, other: Rows) -> Iterator[tuple[ValueSet, ValueSet]]:
        """(this set, other's set) for each metric both rows have, both folded."""
        self.fold()
        other.fold()
        if other._sets is None:
            return  # no values to pair
        for name, values in self.sets.items():
            theirs = other._sets.get(name)
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
        for values in (self._sets or {}).values():
            values.seal()

    def __getstate__(self) -> tuple[Any, ...]:
        self.fold()
        return self.names, self.sets

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        names, self._sets = state
        self.names = names
        self.metrics = tuple(self._sets)
        self.tally = False  # an unpickled set keeps no tally (ValueSet.__setstate__)
        self.buf = array("d")
        self.nans = (NAN,) * len(names)
        self.limit = FOLD * len(names)


STAT_KEYS = ("n", "mean", "p50", "p90", "min", "max", "last")  # a metric's figures, in this order
_NO_FIGURES = (NAN,) * len(STAT_KEYS)


def _figures(described: Iterable[dict | None]) -> list[float]:
    """Statistics dicts (or None) as doubles: STAT_KEYS each (None: NaNs)."""
    out: list[float] = []
    for d in described:
        out.extend(_NO_FIGURES if d is None else (d["n"], d["mean"], d["p50"], d["p90"], d["min"], d["max"], d["last"]))
    return out
