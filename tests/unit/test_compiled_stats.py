"""A run's statistics: rows described (numpy's exact sums, stats.tidy) as stats.describe and
round(x, 9) give them; and `summary --json`'s epochs as EpochDocs.json_texts() writes them read as
the epochs' documents."""

from __future__ import annotations

import json
import math
import struct
from array import array
from collections import Counter

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.core.compare import iter_epoch_rows
from mtptui.core.exact import exact_sum, rounded
from mtptui.core.stats import describe, tidy
from mtptui.core.valueset import STAT_KEYS, Rows
from mtptui.sources.parallel import summarise
from test_many_runs import many_runs_log

def same_double(a: float, b: float) -> bool:
    return (a != a and b != b) or (a == b and math.copysign(1, a) == math.copysign(1, b))


def _halfway(k: int) -> float:
    """The double nearest k + 1/2 billionths: a tie, or a hair beside one, for round(x, 9)."""
    return (k + 0.5) / 1e9


_doubles = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-5e6, max_value=5e6),
    st.integers(-2**40, 2**40).map(lambda k: k / 1024),  # exact ties of 9 places (j / 1024, j odd)
    st.integers(-4 * 10**15, 4 * 10**15).map(_halfway),
    st.tuples(st.integers(-10**8, 10**8), st.integers(0, 9)).map(lambda kd: kd[0] / 10**kd[1]),
    st.integers(0, 2**64 - 1).map(lambda u: struct.unpack("d", struct.pack("Q", u))[0]),
    st.sampled_from([0.0, -0.0, 1e-4, 9.999999999999999e-05, 1e6, 999999.999999999, 4503599.0, 5e-324, 2.675]),
)


@settings(max_examples=3000, deadline=None)
@given(_doubles)
def test_tidy_is_pythons_round_to_9_places(x):
    assert same_double(tidy(x), round(x, 9))


_summed = st.one_of(
    st.integers(-10**7, 10**7).map(lambda k: k / 100),  # what a log prints: the sum in 128 bits
    st.floats(min_value=-1e4, max_value=1e4), st.floats(min_value=-2.0**33, max_value=2.0**33),
    st.integers(-2**60, 2**60).map(lambda k: k * 2.0**-80),  # multiples of the unit, and not
    st.integers(-2**60, 2**60).map(lambda k: (2 * k + 1) * 2.0**-81),
    st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.0**32, -(2.0**32), 2.0**32 - 2.0**-20, 1e300, -1e300, 2.0**-80,
                     2.0**-81, 2.0**-28, 1e-30]),
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(_summed, max_size=60), st.integers(0, 3))
def test_an_exact_sum_is_math_fsum_to_the_bit(values, repeat):
    """exact_sum (limbs of 2**-80 where a value fits, else Python integers) against math.fsum:
    values that fit, that do not (too small, too big, subnormal), that cancel, sums past a chunk
    of 65,536 values, and each distinct value with its count."""
    xs = values * (1 + repeat * 400)
    assert same_double(rounded(exact_sum(np.array(xs, dtype=float))), math.fsum(xs))
    counted = Counter(values)
    vals, cnts = np.array(list(counted), dtype=float), np.array(list(counted.values()), dtype=np.int64)
    assert same_double(rounded(exact_sum(vals, cnts * (1 + repeat * 400))), math.fsum(xs))


_values = st.one_of(
    st.just(math.nan), st.sampled_from([0.0, -0.0]),
    st.integers(-10**6, 10**6).map(lambda k: k / 100),  # what a log prints
    st.floats(min_value=-1e9, max_value=1e9),
    st.sampled_from([1e16, 1.0, 1e-16, -1e16, 2.0**53]),
)


def _figures(rows: array, k: int, m: int) -> list[float]:
    """The figures a run that is over keeps of rows of k fields (the first m of them metrics),
    described from the buffer where they still wait (Rows.figures)."""
    names = tuple(f"f{i}" for i in range(k))
    held = Rows(names[:m], carried=names[m:])
    held.buf.extend(rows)
    return held.figures()


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 6).flatmap(lambda k: st.tuples(st.just(k), st.integers(0, k),
                                                      st.lists(_values, max_size=40 * k))))
def test_columns_are_described_as_stats_describe_describes_them(km):
    k, m, values = km
    rows = array("d", values[:len(values) // k * k])
    got = _figures(rows, k, m)
    want = array("d")
    for i in range(m):
        d = describe([v for v in rows[i::k] if v == v])
        want.extend([math.nan] * 7 if d is None else [d[key] for key in STAT_KEYS])
    assert len(got) == len(want) and all(map(same_double, got, want))


def test_an_infinite_value_is_described_as_stats_describe_describes_it():
    want = describe([1.0, math.inf])
    assert all(map(same_double, _figures(array("d", [1.0, math.inf]), 1, 1), [want[key] for key in STAT_KEYS]))


@pytest.mark.parametrize("values", [[-0.0], [0.0, -0.0], [1.0, -1.0], [-0.0, -0.0, 2.5], [1e16, 1.0, -1e16], [1e-16, 1.0, 1e16]])
def test_a_sum_of_zero_and_one_to_round_half_even_are_fsums(values):
    want = describe(values)
    assert all(map(same_double, _figures(array("d", values), 1, 1), [want[key] for key in STAT_KEYS]))
    assert same_double(rounded(exact_sum(np.array(values))), math.fsum(values))


def test_rows_still_in_their_buffer_have_the_figures_their_value_sets_give():
    """A short run's rows, described from the buffer (Rows.figures: stats.describe of each
    column), as the value sets describe the same rows."""
    names = ("a", "b", "c")
    rows = Rows(names, carried=("x",))
    for i in range(50):
        rows.add({"a": i / 4, "b": (i * 7919 % 101) / 100, "x": 3.0, "c": math.nan if i % 3 else -0.5 * i})
    held = Rows(names)
    held.add_rows(rows.buf, rows.names)
    figures = rows.figures()
    assert rows._sets is None, "a short run's rows make no value sets"
    want = [x for d in held.describe().values() for x in (d[k] for k in STAT_KEYS)]
    assert figures == want


@pytest.fixture(scope="module")
def many_runs(tmp_path_factory):
    path = tmp_path_factory.mktemp("runs") / "many.log"
    many_runs_log(path, 120)
    return path


def test_the_epochs_json_reads_as_their_documents(many_runs):
    """EpochDocs.json_texts(): each run's JSON (orjson) reads as its document (EpochDocs'
    iteration: Epoch.to_json() compared), whose rows are those of the runs' brief forms."""
    summary, counts = summarise([str(many_runs)], jobs=1)
    epochs = summary.document(counts.to_json())["epochs"]
    assert len(epochs) == 121
    docs = list(epochs)
    assert [json.loads(t) for t in epochs.json_texts()] == [json.loads(json.dumps(e)) for e in docs]
    assert sum(r.vs_baseline is not None for _, r in epochs.rows()) > 50, "the runs compare with a baseline"
    # what a table and the advice read: the rows of the runs' brief forms
    briefs = [e.to_json(brief=True) for e in epochs._epochs]
    pairs = list(epochs.rows())
    assert [r for _, r in pairs] == [r for _, r in iter_epoch_rows(briefs)]
    assert [r for _, r in pairs] == [r for _, r in iter_epoch_rows(e.to_json() for e in epochs._epochs)]
    assert all(doc.items() >= {k: v for k, v in brief.items() if k not in ("ranks", "by_load", "by_context")}.items()
               for (doc, _), brief in zip(pairs, briefs))
    last = {e["host"]: (e, r) for e, r in iter_epoch_rows(briefs)}
    assert epochs.last_rows() == last


def test_tidy_leaves_an_int_an_int():
    """A window of counts (the dashboard's #running-req) has int percentiles: round(3, 9) is 3."""
    assert type(tidy(3)) is int and tidy(3) == 3
    assert type(describe([3])["p50"]) is int  # one value: its quantiles are that value
    assert tidy(2.8899999999999997) == 2.89
