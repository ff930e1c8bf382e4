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


class Ring:
    """Time-ordered samples of several columns, oldest overwritten first."""

    __slots__ = ("capacity", "columns", "_t", "_cols", "_start", "_len")

    def __init__(self, columns: Iterable[str], capacity: int = 4096) -> None:
        self.capacity = capacity
        self.columns = tuple(columns)
        self._t = array("d", bytes(8 * capacity))
        self._cols = {c: array("d", [NAN]) * capacity for c in self.columns}
        self._start = 0  # physical index of the oldest sample
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def append(self, ts: float, values: dict) -> int:
        """Adds one sample; returns its physical slot. Missing columns become NaN."""
        cap = self.capacity
        if self._len < cap:
            i = (self._start + self._len) % cap
            self._len += 1
        else:
            i = self._start
            self._start = (self._start + 1) % cap
        self._t[i] = ts
        for c, col in self._cols.items():
            v = values.get(c)
            col[i] = NAN if v is None else float(v)
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
        return [self._t[self._slot(k)] for k in range(self._len)]

    def _bounds(self, t0: float | None, t1: float | None) -> tuple[int, int]:
        """Logical [lo, hi) of samples with t0 <= t <= t1, by binary search over the ring."""
        n = self._len
        t, s, cap = self._t, self._start, self.capacity

        class _View:
            def __len__(self) -> int:
                return n

            def __getitem__(self, k: int) -> float:
                return t[(s + k) % cap]

        view = _View()
        lo = 0 if t0 is None else bisect_left(view, t0)
        hi = n if t1 is None else bisect_right(view, t1)
        return lo, max(lo, hi)

    def window(self, column: str, t0: float | None = None, t1: float | None = None) -> tuple[list[float], list[float]]:
        """(times, values) in [t0, t1], NaN samples left out."""
        lo, hi = self._bounds(t0, t1)
        col, tcol = self._cols[column], self._t
        ts: list[float] = []
        vs: list[float] = []
        for k in range(lo, hi):
            i = self._slot(k)
            v = col[i]
            if v == v:  # not NaN
                ts.append(tcol[i])
                vs.append(v)
        return ts, vs

    def first_time(self) -> float | None:
        return self._t[self._start] if self._len else None

    def last_time(self) -> float | None:
        slot = self.last_slot()
        return None if slot is None else self._t[slot]
