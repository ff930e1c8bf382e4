"""ValueSet keeps statistics exact whichever form holds its values (counted, dense, spilled) and
however the parts of a parallel read were joined: the same as statistics over the plain list.
And its memory stops growing once the values a log can print have all been seen."""

import math
import pickle
import random
import statistics
from array import array
from collections import Counter
from contextlib import contextmanager
from fractions import Fraction

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.core import valueset
from mtptui.core.stats import describe
from mtptui.core.exact import UNIT, exact_sum, rounded
from mtptui.core.valueset import COUNTED, DENSE, SPILLED, ValueSet

_any = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
# what logs print: a fixed number of decimals (0 to 3 here), over ranges narrow and wide
_decimal = st.builds(lambda k, d: k / 10**d, st.integers(-10**7, 10**7), st.integers(0, 3))
_values = st.lists(st.one_of(_any, st.integers(0, 20).map(float), _decimal, _decimal), min_size=1,
                   max_size=300)
_decimals = st.lists(st.one_of(_decimal, st.integers(0, 300).map(lambda k: k / 100)), min_size=1,
                     max_size=300)


def expected(values: list[float]) -> dict:
    q = statistics.quantiles(values, n=10, method="inclusive") if len(values) > 1 else [values[0]] * 9
    return {"n": len(values), "mean": round(math.fsum(values) / len(values), 9),
            "p50": round(statistics.median(values), 9), "p90": round(q[8], 9),
            "min": min(values), "max": max(values), "last": values[-1]}


def close(got: dict, want: dict) -> bool:
    return all(math.isclose(got[k], want[k], rel_tol=1e-12, abs_tol=1e-9) for k in want)


@contextmanager
def limits():
    """Forms change after a few values, and sets are walked a few values at a time, so that
    short examples go through every form and every chunk boundary."""
    saved = valueset.MAX_DISTINCT, valueset.DENSE_FREE, valueset.CHUNK
    valueset.MAX_DISTINCT, valueset.DENSE_FREE, valueset.CHUNK = 4, 64, 5
    try:
        yield
    finally:
        valueset.MAX_DISTINCT, valueset.DENSE_FREE, valueset.CHUNK = saved


@pytest.fixture
def small_limits():
    with limits():
        yield


def filled(values) -> ValueSet:
    s = ValueSet()
    for v in values:
        s.append(v)
    s.fold()
    return s


@settings(max_examples=300, deadline=None)
@given(st.one_of(_values, _decimals), st.data())
def test_parts_joined_describe_as_one(values, data):
    """Cut anywhere, each part sent as a worker sends it (pickled), joined in order: whatever
    form each part took, the result is what describe() gives for the plain list, exactly."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(values)), max_size=3)))
    bounds = [0, *cuts, len(values)]
    total = None
    with limits():
        for a, b in zip(bounds, bounds[1:]):
            part = pickle.loads(pickle.dumps(filled(values[a:b])))
            if total is None:
                total = part
            else:
                total.merge(part)
        assert total.describe() == describe(values)
    assert close(total.describe(), expected(values))


@settings(max_examples=200, deadline=None)
@given(_decimals, _decimals)
def test_merge_leaves_the_later_part_as_it_was(first, second):
    """add_copy merges a series' values into its epoch while the series goes on counting."""
    with limits():
        a, b = filled(first), filled(second)
        before = b.describe()
        a.merge(b)
        for v in first:
            b.append(v)
        assert a.describe() == describe(first + second)
        assert b.describe() == describe(second + first)
        assert before == describe(second)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.one_of(_any, _decimal), st.one_of(st.integers(1, 1 << 27), st.integers(1, 1 << 60))),
                min_size=1, max_size=50))
def test_exact_sum_is_the_sum_of_every_repeat(pairs):
    counts: dict[float, int] = {}
    for v, c in pairs:
        counts[v] = counts.get(v, 0) + c
    vals, cnts = list(counts), list(counts.values())
    # the exact sum, as a fraction; correctly rounded by int / int
    exact = sum(Fraction(v) * c for v, c in zip(vals, cnts))
    got = exact_sum(np.array(vals), np.array(cnts, dtype=np.uint64))
    assert Fraction(got, 1 << UNIT) == exact
    assert rounded(got) == exact.numerator / exact.denominator


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_any, _decimal, st.floats(min_value=-1e300, max_value=1e300),
                          st.sampled_from([0.0, -0.0, 5e-324, 2.0**32, 2.0**32 - 2.0**-20, 0.1, 1e-7])), max_size=80))
def test_exact_sum_of_values_is_math_fsum(values):
    """Each once: the same double as math.fsum, from integers (limbs of 2**-80 for what a log
    prints, Python integers for any other double)."""
    got = exact_sum(np.array(values, dtype=float))
    assert Fraction(got, 1 << UNIT) == sum(map(Fraction, values), Fraction(0))
    assert rounded(got) == math.fsum(values)


def bench_like(n: int, seed: int = 1) -> array:
    """Throughput as SGLang prints it: two decimals, 0 to 3000 (k / 100 is the float that the
    text `k/100` with two decimals reads as)."""
    rnd = random.Random(seed)
    return array("d", [rnd.randrange(300_001) / 100 for _ in range(n)])


def test_memory_stops_growing_once_the_range_is_seen():
    """Ten times the values of the same range take the same memory: a count per possible value,
    not the values."""
    small, big = bench_like(100_000), bench_like(1_000_000, seed=2)
    a, b = ValueSet(), ValueSet()
    a.extend(small)
    b.extend(big)
    assert a.form == b.form == DENSE
    assert a.decimals == b.decimals == 2
    assert len(b.dense) <= 300_001 and b.dense.itemsize == 1  # no count passed 255
    assert len(b.dense) * b.dense.itemsize <= 1.01 * len(a.dense) * a.dense.itemsize
    assert b.describe() == describe(big)


def test_low_cardinality_stays_counted_and_wide_counts_widen():
    """Accept len: a few hundred values, counted; a count past 255 in a dense set widens it."""
    s = filled([float(f"{1 + (i % 300) / 100:.2f}") for i in range(100_000)])
    assert s.form == COUNTED and len(s.counts) == 300
    values = bench_like(200_000) + array("d", [1500.0] * 1000)
    d = filled(values)
    assert d.form == DENSE and d.dense.typecode != "B"
    assert d.describe() == describe(values)


def test_values_that_are_not_short_decimals_are_kept_as_values(small_limits):
    values = [i / 7 for i in range(1000)]  # 1/7 has no short decimal form
    s = filled(values)
    assert s.form == SPILLED and s._next_try == 0
    assert s.describe() == describe(values)


def test_more_decimals_later_rescale_the_counts():
    values = [k / 10 for k in range(5000)] * 3 + [50.25, 0.5, 99.75]
    s = filled(values)
    assert s.form == DENSE and s.decimals == 2
    assert s.describe() == describe(values)


def test_a_wild_value_spills_then_counts_come_back(small_limits):
    """One value far out would make the dense range huge: the set keeps values until they
    outnumber the range, then counts again."""
    values = [k / 100 for k in range(200)] + [1000.0]
    s = filled(values)
    assert s.form == SPILLED and s._next_try > 0
    more = [k / 100 for k in range(200)] * 70  # 14,000 values: 8 bytes each pass 100,001 counts
    for v in more:
        s.append(v)
    s = pickle.loads(pickle.dumps(s))
    assert s.form == DENSE
    assert s.describe() == describe(values + more)


def test_nan_is_no_value():
    s = ValueSet()
    s.extend(array("d", [1.0, math.nan, 2.0, math.nan]))
    assert s.describe() == describe([1.0, 2.0])


@settings(max_examples=300, deadline=None)
@given(st.one_of(_values, _decimals), st.data())
def test_brief_gives_describes_n_and_mean_to_the_bit(values, data):
    """brief() (the epoch strip's n and mean, from sums kept as values come, or summed when asked)
    equals describe()'s, however the values came in and were joined, in whatever form."""
    cut = data.draw(st.integers(0, len(values)))
    with limits():
        for tally in (True, False):
            first, later = ValueSet(tally), ValueSet(tally)
            for v in values[:cut]:
                first.append(v)
            for v in values[cut:]:
                later.append(v)
            first.merge(later)
            brief = first.brief()
            assert brief["n"] == len(values)
            assert brief == {k: describe(values)[k] for k in ("n", "mean")}
    assert ValueSet(True).brief() is None


# ---- each form's numpy work against a plain reference --------------------------------------------

_doubles = st.lists(st.one_of(st.floats(), st.sampled_from([0.0, -0.0, 1.5, -1.5])), max_size=300)


@settings(max_examples=300, deadline=None)
@given(_doubles, _doubles)
def test_a_fold_is_counted_as_counter_counts_it(first, then):
    """The counted form: each fold reduced to counts per distinct value (np.unique), the NaNs of
    lines that lacked a value left out."""
    s = ValueSet()
    for values in (first, then):
        s.extend(array("d", values))
    assert s.form == COUNTED
    assert s.counts == Counter(v for v in first + then if v == v)
    assert s.n == sum(s.counts.values())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=False), st.integers(-10**6, 10**6).map(lambda k: k / 1000)), max_size=300))
def test_every_form_reads_back_in_order_as_sorted_does(values):
    """Whatever form the values took (few of each kept to the smallest sizes), they read back as
    sorted() orders them; a spill is sorted in place."""
    with limits():
        s = filled(values)
        vals, cnts = s._by_value()
        assert np.repeat(vals, cnts).tolist() == sorted(values)
        if s.form == SPILLED:
            s.seal()
            assert list(s.spill) == sorted(values)


def test_a_long_spill_of_every_sign_and_size_is_sorted():
    values = [math.ldexp((-1) ** i * (i % 977), (i * 37) % 200 - 100) for i in range(50_000)] + [-0.0, 0.0] * 50
    s = filled(values)
    assert s.form == SPILLED
    s.seal()
    assert list(s.spill) == sorted(values)
    assert s.describe() == describe(values)


_counts = st.lists(st.integers(0, 300), max_size=80)


def _dense(counts: list[int], code: str, lo: int, decimals: int) -> ValueSet:
    s = ValueSet()
    s.form, s.decimals, s.lo, s.counts = DENSE, decimals, lo, None
    s.dense = array(code, [min(c, valueset._LIMIT[code]) for c in counts] or [1])
    s.n, s.last = sum(s.dense), 0.0
    return s


@settings(max_examples=300, deadline=None)
@given(mine=_counts, theirs=_counts, at=st.integers(0, 20), mine_code=st.sampled_from("BHIQ"),
       theirs_code=st.sampled_from("BHIQ"), lo=st.integers(-10**6, 10**6), decimals=st.integers(0, 6),
       chunk=st.sampled_from([1, 7, valueset.CHUNK]))
def test_dense_counts_merge_range_to_range(mine, theirs, at, mine_code, theirs_code, lo, decimals, chunk):
    """Two dense sets' counts added key to key (a chunk at a time), the sum's type widened only
    when a sum outgrows it (counts past 255 in bytes here), and read back as (values, counts)."""
    a, b = _dense(mine, mine_code, lo, decimals), _dense(theirs, theirs_code, lo + at, decimals)
    want: Counter[int] = Counter()
    for s in (a, b):
        for i, c in enumerate(s.dense):
            want[s.lo + i] += c
    top = max(c for k, c in want.items() if lo + at <= k < lo + at + len(b.dense))
    code = (mine_code if not b.n or (a.n and top <= valueset._LIMIT[mine_code]) else
            theirs_code if not a.n else  # an empty set takes a copy
            next(code for code, limit in valueset._WIDTHS if top <= limit))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(valueset, "CHUNK", chunk)
        a.merge(b)
    assert a.form == DENSE and a.n == sum(want.values())
    assert a.dense.typecode == code
    vals, cnts = a._by_value()
    assert list(zip(vals.tolist(), cnts.tolist())) == [(k / 10**decimals, c) for k, c in sorted(want.items()) if c]


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.one_of(st.integers(0, 400).map(lambda k: k / 100), st.just(math.nan)), min_size=1,
                       max_size=300),
       repeat=st.integers(0, 300), decimals=st.integers(2, 4), code=st.sampled_from("BH"))
def test_dense_sets_count_and_describe_as_the_plain_list(values, repeat, decimals, code):
    """Values counted into a dense set (each key's count widened past its type's top, as 300
    repeats of one value outgrow a byte), the NaNs of lines that lacked them left out, then
    described: as stats.describe describes the plain list."""
    span = 10**decimals
    values = values + [1.0] * repeat
    s = _dense([0] * (4 * span + 1), code, -span, decimals)
    s.n = 0
    s.extend(array("d", values))
    s.extend(array("d", values[: len(values) // 2]))
    plain = [v for v in values + values[: len(values) // 2] if v == v]
    counted = Counter(plain)
    assert s.form == DENSE and s.n == len(plain)
    assert valueset._LIMIT[s.dense.typecode] >= max(counted.values(), default=0)
    assert s.dense.typecode == code or max(counted.values()) > valueset._LIMIT[code]
    assert s.describe() == (describe(plain) if plain else None)


def _keys_plainly(values: list[float], scale: int) -> list[int] | None:
    """Each value times scale, rounded half to even, when its key over scale gives the value back."""
    if not values:
        return []
    if max(map(abs, values)) * scale >= 2.0**52:
        return None
    keys = [round(v * float(scale)) for v in values]
    return keys if [k / scale for k in keys] == values else None


@settings(max_examples=500, deadline=None)
@given(values=st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
                                  st.integers(-10**9, 10**9).map(lambda k: k / 100),
                                  st.sampled_from([0.0, -0.0, 0.005, 2.5, -2.5, 1e15, 4503599627370496.0])),
                       max_size=40),
       decimals=st.integers(0, 6))
def test_values_turn_into_dense_keys_as_round_does(values, decimals):
    got = valueset._at_scale(np.array(values, dtype=float), 10**decimals)
    assert (None if got is None else got.tolist()) == _keys_plainly(values, 10**decimals)


def _state(s: ValueSet) -> tuple:
    """Everything a set holds that a reader sees: its form and counts (as numbers), its n, range,
    last value, exact sum, and what it describes."""
    counts = sorted(s._by_value()[0].tolist()), sorted(s._by_value()[1].tolist())
    tally = None if s.tally is None else (s.tally.n, s.tally.units, s.tally.special)
    return s.form, counts, s.n, s.least, s.most, s.last, tally, s.describe()


_few = st.one_of(  # a dashboard's values (short decimals, often repeated), or anything
    st.lists(st.one_of(st.integers(0, 40).map(lambda k: k / 4), st.integers(0, 3000).map(lambda k: k / 100)),
             max_size=valueset.FEW),
    st.lists(st.one_of(_decimal, _any, st.just(math.nan), st.sampled_from([0.0, -0.0, 2.0**60, 1e-7])),
             max_size=valueset.FEW))


@settings(max_examples=400, deadline=None)
@given(st.lists(_few, min_size=1, max_size=12),
       st.booleans(), st.booleans())
def test_a_few_values_at_a_time_are_counted_as_numpy_counts_them(batches, tally, small):
    """The dashboard folds a handful of values each tick, counted in Python (_extend_few): the
    same set, whatever its form, as numpy's way (FEW 0) makes of the same batches."""
    def fed(few: int) -> tuple:
        saved = valueset.FEW
        valueset.FEW = few
        try:
            with limits() if small else contextmanager(lambda: (yield))():
                s = ValueSet(tally=tally)
                for b in batches:
                    s.extend(array("d", b))
                return _state(s)
        finally:
            valueset.FEW = saved

    def numbers(x):  # as numbers: NaN is NaN, and 0.0 is -0.0 (numpy's min of the two may be either)
        if isinstance(x, (tuple, list)):
            return [numbers(y) for y in x]
        if isinstance(x, dict):
            return {k: numbers(v) for k, v in x.items()}
        return "nan" if isinstance(x, float) and x != x else x

    assert numbers(fed(valueset.FEW)) == numbers(fed(0))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.one_of(st.integers(-200, 6000).map(lambda k: k / 100), st.integers(0, 40).map(lambda k: k / 4),
                                   st.just(0.125), st.just(1e9)), max_size=valueset.FEW), min_size=1, max_size=8))
def test_a_few_values_into_a_dense_set_are_counted_as_numpy_counts_them(batches):
    """A dense set (a long live session's gen throughput): a few values a tick in its range, at
    more decimals, past its range, or past its counts' type, as numpy's way counts them."""
    def fed(few: int) -> tuple:
        saved = valueset.FEW
        valueset.FEW = few
        try:
            s = ValueSet()
            s.extend(array("d", [k / 100 for k in range(5000)]))
            assert s.form == DENSE
            s.dense = array("B", [253] * len(s.dense))  # near a byte's top: 3 more outgrow it
            s.n = 253 * len(s.dense)
            for b in batches:
                s.extend(array("d", b))
            return _state(s)
        finally:
            valueset.FEW = saved

    assert fed(valueset.FEW) == fed(0)
