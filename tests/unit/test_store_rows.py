"""A row of the store's buffers is as wide as its columns, however many there are (issue 44).

`_NANS = (nan,) * 8` once filled a line's missing values: a ninth column made rows one short and
every later value slid a column left, silently. Rows are made by store._row now, from the column
list; these tests fail the day a row's width and its columns' differ."""

from __future__ import annotations

import math

import pytest

from mtptui.core import store
from mtptui.core.records import DECODE, PREFILL, SGLANG, BatchStats


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 20])
def test_a_row_has_one_value_per_column(n):
    columns = tuple(f"c{i}" for i in range(n))
    assert list(store._row({}, columns)) == pytest.approx([math.nan] * n, nan_ok=True)
    given = {"c0": 1.5, f"c{max(n - 1, 0)}": 2.5, "other": 9.0}
    row = list(store._row(given, columns))
    assert len(row) == n
    assert [v for v in row if not math.isnan(v)] == [given[c] for c in columns if c in given]


def _rec(kind: str, fields: dict) -> BatchStats:
    return BatchStats(kind, 1.0, "h", "TP0", SGLANG, fields)


def _widths(series: store.RankSeries) -> tuple[int, int]:
    """Rows in each buffer, asserting each buffer holds whole rows of its lane's columns."""
    d, p = len(series.lane_decode), len(series.lane_prefill)
    assert d % len(store.LANE_DECODE) == 0 and p % len(store.LANE_PREFILL) == 0
    return d // len(store.LANE_DECODE), p // len(store.LANE_PREFILL)


@pytest.mark.parametrize("fields", [{}, {"accept_len": 2.0}, "every"])
def test_the_python_paths_rows_are_as_wide_as_the_lanes_columns(fields):
    columns = (*store.DECODE_COLUMNS, *store.CARRIED, *store.PREFILL_COLUMNS)
    given = {c: float(i) for i, c in enumerate(columns)} if fields == "every" else fields
    s = store.RankSeries("h", "TP0", SGLANG, 16)
    s.add_row(_rec(DECODE, given), 1.0)
    s.add_row(_rec(PREFILL, given), 2.0)
    s.add_row(_rec(DECODE, given), 3.0)
    assert _widths(s) == (2, 1)
    first = list(s.lane_decode[: len(store.LANE_DECODE)])
    assert first[0] == 1.0  # the time, then each column's value where the line had it
    for name, value in zip(store.LANE_DECODE[1:], first[1:]):
        want = given.get(name)
        assert (math.isnan(value) and want is None) or value == want, name


def test_a_column_added_widens_every_row(monkeypatch):
    """Nine more carried columns (more than the eight NaNs that _NANS had): each row takes them, NaN
    where a line lacked them, the value where it had one."""
    carried = (*store.CARRIED, *(f"new_{c}" for c in "abcdefghi"))
    monkeypatch.setattr(store, "CARRIED", carried)
    monkeypatch.setattr(store, "LANE_DECODE", (store.TIME, *store.DECODE_COLUMNS, *carried))
    assert len(store.CARRIED) > 8
    s = store.RankSeries("h", "TP0", SGLANG, 16)
    s.add_row(_rec(DECODE, {"accept_len": 1.5, "new_i": 7.0}), 1.0)
    s.add_row(_rec(DECODE, {}), 2.0)
    assert _widths(s) == (2, 0)
    row = s.lane_decode[: len(store.LANE_DECODE)]
    assert row[store.LANE_DECODE.index("new_i")] == 7.0 and math.isnan(row[store.LANE_DECODE.index("new_a")])
    assert s.lane_decode[len(store.LANE_DECODE)] == 2.0  # the second row starts where the first ended
