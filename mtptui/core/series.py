"""Bounded columnar ring buffers: a time column and one value column per metric.

Memory stays flat however long a session runs: each column holds at most ``capacity`` doubles.
A value the log did not carry is stored as NaN and skipped by every reader, so absent never
turns into zero.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable

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

    def set(self, slot: int, column: str, value: float) -> None:
        self._cols[column][slot] = value

    def get(self, slot: int, column: str) -> float:
        return self._cols[column][slot]

    def last_slot(self) -> int | None:
        if not self._len:
            return None
        return (self._start + self._len - 1) % self.capacity

    # Logical index k (0 = oldest) -> physical slot
    def _slot(self, k: int) -> int:
        return (self._start + k) % self.capacity

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
