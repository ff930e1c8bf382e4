"""Bounded columnar ring buffers: a time column and one value column per metric.

Memory stays flat however long a session runs: each column holds at most ``capacity`` doubles.
A value the log did not carry is stored as NaN and skipped by every reader, so absent never
turns into zero.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator

NAN = math.nan


def present(times: array, values: array) -> tuple[array, array]:
    """The samples that carry the value (absent ones are NaN). Most columns have none absent:
    one C-level sum tells (it is NaN if any value is), instead of a test per value."""
    total = sum(values)
    if total == total:
        return times, values
    keep = [i for i, v in enumerate(values) if v == v]
    return array("d", [times[i] for i in keep]), array("d", [values[i] for i in keep])


class Ring:
    """Time-ordered samples of several columns, oldest overwritten first."""

    __slots__ = ("capacity", "columns", "_t", "_cols", "_col_list", "_nans", "_start", "_len")

    def __init__(self, columns: Iterable[str], capacity: int = 4096) -> None:
        self.capacity = capacity
        self.columns = tuple(columns)
        self._t = array("d", bytes(8 * capacity))
        self._cols = {c: array("d", [NAN]) * capacity for c in self.columns}
        self._col_list = list(self._cols.values())
        self._nans = (NAN,) * len(self.columns)
        self._start = 0  # physical index of the oldest sample
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def append(self, ts: float, values: dict) -> int:
        """Adds one sample; returns its physical slot. Missing columns become NaN. Values are
        numbers (bools count as 1/0), never None: a field the log did not carry is left out."""
        cap = self.capacity
        if self._len < cap:
            i = (self._start + self._len) % cap
            self._len += 1
        else:
            i = self._start
            self._start = (self._start + 1) % cap
        self._t[i] = ts
        for col, v in zip(self._col_list, map(values.get, self.columns, self._nans)):
            col[i] = v
        return i

    def extend(self, times: array, columns: dict[str, array]) -> None:
        """Appends samples in bulk (times in order, one array per column of the same length; a
        column not given is absent). Only the newest `capacity` can stay, so only they are copied."""
        n = len(times)
        cap = self.capacity
        skip = max(0, n - cap)
        k = skip
        while k < n:
            if self._len < cap:
                i = (self._start + self._len) % cap
            else:
                i = self._start
            run = min(n - k, cap - i)  # free or oldest slots from i on, up to the end of storage
            self._t[i:i + run] = times[k:k + run]
            for name, col in self._cols.items():
                given = columns.get(name)
                col[i:i + run] = given[k:k + run] if given is not None else array("d", [NAN]) * run
            grow = min(run, cap - self._len)
            self._len += grow
            self._start = (self._start + run - grow) % cap
            k += run

    def set(self, slot: int, column: str, value: float) -> None:
        self._cols[column][slot] = value

    def get(self, slot: int, column: str) -> float:
        return self._cols[column][slot]

    def last_slot(self) -> int | None:
        if not self._len:
            return None
        return (self._start + self._len - 1) % self.capacity

    def times(self) -> list[float]:
        a, b = self._span(0, self._len)
        return self._t[a[0]:a[1]].tolist() + self._t[b[0]:b[1]].tolist()

    def _span(self, lo: int, hi: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """Logical [lo, hi) as at most two physical slices, in time order."""
        cap = self.capacity
        a = (self._start + lo) % cap if cap else 0
        n = hi - lo
        if a + n <= cap:
            return (a, a + n), (0, 0)
        return (a, cap), (0, a + n - cap)

    def _bounds(self, t0: float | None, t1: float | None) -> tuple[int, int]:
        """Logical [lo, hi) of samples with t0 <= t <= t1, by binary search over the ring.

        The ring is at most two sorted physical runs, [start, cap) then [0, start); each is
        searched with the C bisect on the array itself (a dashboard reads many windows per tick).
        """
        n, s, cap, t = self._len, self._start, self.capacity, self._t
        if s + n <= cap:  # one run: [s, s + n)
            lo = 0 if t0 is None else bisect_left(t, t0, s, s + n) - s
            hi = n if t1 is None else bisect_right(t, t1, s, s + n) - s
            return lo, max(lo, hi)
        first = cap - s  # samples in [s, cap); the rest are [0, n - first)
        last_of_first = t[cap - 1]

        def find(x: float, right: bool) -> int:
            search = bisect_right if right else bisect_left
            if x < last_of_first or (not right and x == last_of_first):
                return search(t, x, s, cap) - s
            return first + search(t, x, 0, n - first)

        lo = 0 if t0 is None else find(t0, False)
        hi = n if t1 is None else find(t1, True)
        return lo, max(lo, hi)

    def window(self, column: str, t0: float | None = None, t1: float | None = None) -> tuple[list[float], list[float]]:
        """(times, values) in [t0, t1], NaN samples left out."""
        times, columns = self.raw_windows((column,), t0, t1)
        ts, vs = present(times, columns[column])
        return ts.tolist(), vs.tolist()

    def raw_windows(self, columns: Iterable[str], t0: float | None = None,
                    t1: float | None = None) -> tuple[array, dict[str, array]]:
        """(times, column -> values) in [t0, t1] as arrays, NaN (absent) values kept: for readers
        that find and drop them cheaper themselves (a sum is NaN when any value is)."""
        lo, hi = self._bounds(t0, t1)
        if lo >= hi:
            return array("d"), {c: array("d") for c in columns}
        (a0, a1), (b0, b1) = self._span(lo, hi)

        def take(col: array) -> array:
            return col[a0:a1] + col[b0:b1] if b1 else col[a0:a1]

        return take(self._t), {c: take(self._cols[c]) for c in columns}

    def first_time(self) -> float | None:
        return self._t[self._start] if self._len else None

    def last_time(self) -> float | None:
        slot = self.last_slot()
        return None if slot is None else self._t[slot]


OVERVIEW_BUCKETS = 512  # at most this many spans of time per series, however long the log
_N, _SUM, _MIN, _MAX, _LAST = range(5)  # per column of a span


class Overview:
    """A series over its whole span at a coarse grain, in memory that does not grow: per span of
    time, the mean time of its samples and per column their count, sum, least, greatest and last
    value. A span is `width` seconds, a power of two, aligned to multiples of it, so overviews of
    consecutive parts of a log add up span by span; when the spans would outnumber
    OVERVIEW_BUCKETS, the width doubles and pairs of spans join."""

    __slots__ = ("columns", "width", "spans")

    def __init__(self, columns: Iterable[str]) -> None:
        self.columns = tuple(columns)
        self.width = 1.0
        # span index -> [time sum, samples, then _N.._LAST for each column]
        self.spans: dict[int, list[float]] = {}

    def add(self, times: array, columns: dict[str, array]) -> None:
        """Samples in time order, in bulk: one bisect and a few slices per span they cover."""
        n = len(times)
        if not n:
            return
        self._fit(times[0], times[-1])
        w = self.width
        cols = [columns.get(c) for c in self.columns]
        lo = 0
        while lo < n:
            key = math.floor(times[lo] / w)
            hi = max(lo + 1, bisect_left(times, (key + 1) * w, lo, n))
            span = self.spans.get(key)
            if span is None:
                span = self.spans[key] = [0.0, 0] + [0, 0.0, math.inf, -math.inf, NAN] * len(cols)
            span[0] += math.fsum(times[lo:hi])
            span[1] += hi - lo
            for j, col in enumerate(cols):
                if col is None:
                    continue
                _, vs = present(times[lo:hi], col[lo:hi])
                if vs:
                    _join(span, 2 + 5 * j, len(vs), math.fsum(vs), min(vs), max(vs), vs[-1])
            lo = hi
        self._shrink()

    def _fit(self, first: float, last: float) -> None:
        if self.spans:
            first = min(first, min(self.spans) * self.width)
            last = max(last, (max(self.spans) + 1) * self.width)
        while (last - first) / self.width > OVERVIEW_BUCKETS:
            self._coarsen()

    def _coarsen(self) -> None:
        joined: dict[int, list[float]] = {}
        for key in sorted(self.spans):  # in time order: the later span's last value wins
            span = self.spans[key]
            mine = joined.get(key >> 1)
            if mine is None:
                joined[key >> 1] = span
            else:
                _add_span(mine, span)
        self.spans = joined
        self.width *= 2

    def _shrink(self) -> None:
        while len(self.spans) > OVERVIEW_BUCKETS:
            self._coarsen()

    def merge(self, later: Overview) -> None:
        """Adds the spans of an overview of what came after (of the same columns)."""
        while self.width < later.width:
            self._coarsen()
        while later.width < self.width:
            later._coarsen()
        for key in sorted(later.spans):
            span = later.spans[key]
            mine = self.spans.get(key)
            if mine is None:
                self.spans[key] = span
            else:
                _add_span(mine, span)
        if self.spans:
            self._fit(min(self.spans) * self.width, (max(self.spans) + 1) * self.width)
        self._shrink()

    def _spans(self, column: str, t0: float | None, t1: float | None) -> Iterator[tuple[float, list[float]]]:
        """(mean time, the column's part of the span) of the spans in [t0, t1] with values."""
        j = 2 + 5 * self.columns.index(column)
        for key in sorted(self.spans):
            span = self.spans[key]
            if span[j + _N]:
                t = span[0] / span[1]
                if (t0 is None or t >= t0) and (t1 is None or t <= t1):
                    yield t, span[j:j + 5]

    def points(self, column: str, t0: float | None = None, t1: float | None = None) -> tuple[list[float], list[float]]:
        """(mean time, mean value) of each span in [t0, t1] where the column has values, in order."""
        ts, vs = [], []
        for t, part in self._spans(column, t0, t1):
            ts.append(t)
            vs.append(part[_SUM] / part[_N])
        return ts, vs

    def totals(self, column: str, t0: float | None = None, t1: float | None = None) -> tuple | None:
        """(n, sum, least, greatest, last, time of the last span) of the column's values in the
        spans in [t0, t1] (at the spans' grain), or None."""
        out = None
        for t, part in self._spans(column, t0, t1):
            if out is None:
                out = [0, 0.0, math.inf, -math.inf, NAN, t]
            _join(out, 0, *part)
            out[5] = t
        return None if out is None else tuple(out)


def _join(acc: list[float], i: int, n: float, total: float, lo: float, hi: float, last: float) -> None:
    acc[i + _N] += n
    acc[i + _SUM] += total
    acc[i + _MIN] = min(acc[i + _MIN], lo)
    acc[i + _MAX] = max(acc[i + _MAX], hi)
    acc[i + _LAST] = last


def _add_span(mine: list[float], later: list[float]) -> None:
    mine[0] += later[0]
    mine[1] += later[1]
    for i in range(2, len(mine), 5):
        if later[i + _N]:
            _join(mine, i, *later[i:i + 5])
