"""ValueSet keeps statistics exact whichever way its values were kept (counted or spilled) and
however the parts of a parallel read were joined: the same as statistics over the plain list."""

import math
import pickle
import statistics
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.core import valueset
from mtptui.core.valueset import MAX_DISTINCT, ValueSet, _kth_of_two

_values = st.lists(st.one_of(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
                             st.integers(min_value=0, max_value=20).map(float)), min_size=1, max_size=300)


def expected(values: list[float]) -> dict:
    q = statistics.quantiles(values, n=10, method="inclusive") if len(values) > 1 else [values[0]] * 9
    return {"n": len(values), "mean": round(math.fsum(values) / len(values), 9),
            "p50": round(statistics.median(values), 9), "p90": round(q[8], 9),
            "min": min(values), "max": max(values), "last": values[-1]}


def close(got: dict, want: dict) -> bool:
    return all(math.isclose(got[k], want[k], rel_tol=1e-12, abs_tol=1e-9) for k in want)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=60),
       st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=60), st.data())
def test_kth_of_two_ordered_arrays(a, b, data):
    a, b = sorted(a), sorted(b)
    k = data.draw(st.integers(0, len(a) + len(b) - 1))
    assert _kth_of_two(array("d", a), array("d", b), k) == sorted(a + b)[k]


@settings(max_examples=300, deadline=None)
@given(_values, st.data(), st.sampled_from([4, 50, MAX_DISTINCT]))
def test_parts_joined_describe_as_one(values, data, limit):
    """Cut anywhere, each part sent as a worker sends it (pickled, so ordered), joined in order;
    with a small limit of distinct values, parts spill (to ordered runs) or count, or mix."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(values)), max_size=3)))
    bounds = [0, *cuts, len(values)]
    saved = valueset.MAX_DISTINCT
    valueset.MAX_DISTINCT = limit
    try:
        total = None
        for a, b in zip(bounds, bounds[1:]):
            part = ValueSet()
            for v in values[a:b]:
                part.append(v)
            part = pickle.loads(pickle.dumps(part))
            if total is None:
                total = part
            else:
                total.merge(part)
        assert close(total.describe(), expected(values))
    finally:
        valueset.MAX_DISTINCT = saved


def test_many_distinct_values_spill_and_still_agree():
    values = [i * 0.37 % 1000 for i in range(MAX_DISTINCT * 3)]
    one = ValueSet()
    for v in values:
        one.append(v)
    assert one.spill is not None
    half = len(values) // 2
    a, b = ValueSet(), ValueSet()
    for v in values[:half]:
        a.append(v)
    for v in values[half:]:
        b.append(v)
    a = pickle.loads(pickle.dumps(a))
    a.merge(pickle.loads(pickle.dumps(b)))
    assert a._cut == half  # joined as two ordered runs, described without a sort
    assert a.describe() == one.describe()
    assert close(one.describe(), expected(values))


@settings(max_examples=300, deadline=None)
@given(_values, st.data(), st.sampled_from([4, 50, MAX_DISTINCT]))
def test_brief_gives_describes_n_and_mean_to_the_bit(values, data, limit):
    """brief() (the epoch strip's n and mean, from sums kept as values come, or summed when asked)
    equals describe()'s, however the values came in and were joined."""
    cut = data.draw(st.integers(0, len(values)))
    saved = valueset.MAX_DISTINCT
    valueset.MAX_DISTINCT = limit
    try:
        for tally in (True, False):
            first, later = ValueSet(tally), ValueSet(tally)
            for v in values[:cut]:
                first.append(v)
            for v in values[cut:]:
                later.append(v)
            first.merge(later)
            brief = first.brief()
            assert brief["n"] == len(values)
            described = ValueSet()
            described.extend(array("d", values))
            assert brief == {k: described.describe()[k] for k in ("n", "mean")}
    finally:
        valueset.MAX_DISTINCT = saved
    assert ValueSet(True).brief() is None
