"""loadmatch's buckets over columns (numpy: context_keys, split, exact sums per bucket) against a
plain Python reference: each line's key, its bucket by bisect, and each bucket's mean from
math.fsum; and ExactSum, the exact sum they keep, against math.fsum however its values came."""

from __future__ import annotations

import math
from bisect import bisect_right

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.core.loadmatch import LOAD, SCALES, Buckets, context_keys
from mtptui.core.exact import ExactSum

_key_parts = st.one_of(st.floats(min_value=-10, max_value=2e5), st.sampled_from(
    [math.nan, 0.0, 1.0, 4096.0, 16384.0, 65536.0, 1e308, math.inf]))
_bucket_values = st.one_of(st.floats(min_value=0, max_value=1e4), st.integers(0, 10**6).map(lambda k: k / 100),
                           st.sampled_from([math.nan, math.inf]))
_columns = st.lists(st.tuples(_key_parts, _key_parts, _key_parts, _bucket_values, _bucket_values), max_size=80)


def _key(scale, t: float, f: float, r: float) -> float:
    if scale is LOAD:
        return r
    return (t if t == t else f) / r if r >= 1 else math.nan


def _reference(scale, rows) -> list[dict]:
    """Buckets.to_json() of these lines, line by line in plain Python."""
    bounds = [lo for _, lo in scale.buckets]
    lines = [0] * len(bounds)
    gens: list[list[float]] = [[] for _ in bounds]
    accepts: list[list[float]] = [[] for _ in bounds]
    for t, f, r, g, a in rows:
        key = _key(scale, t, f, r)
        if not key >= bounds[0]:
            continue
        b = bisect_right(bounds, key) - 1
        lines[b] += 1
        if g == g:
            gens[b].append(g)
        if a == a:
            accepts[b].append(a)

    def mean(values: list[float]) -> float | None:
        return round(math.fsum(values) / len(values), 9) if values else None

    return [{scale.name: label, "decode": lines[i], "gen_throughput": mean(gens[i]), "accept_len": mean(accepts[i])}
            for i, (label, _) in enumerate(scale.buckets) if lines[i]]


@settings(max_examples=300, deadline=None)
@given(_columns, st.lists(st.integers(0, 80), max_size=3))
def test_buckets_fill_as_the_plain_loop_fills_them(rows, cuts):
    """Lines sorted into buckets of load and of context, however they were cut into parts."""
    bounds = [0, *sorted(cuts), len(rows)]
    for scale in SCALES:
        whole = Buckets(scale)
        for a, b in zip(bounds, bounds[1:]):
            part = Buckets(scale)
            columns = [list(c) for c in zip(*rows[a:b])] or [[]] * 5
            tokens, full, running, gen, accept = columns
            keys = {"num_token": tokens, "full_token": full, "running_req": running}
            part.add_columns(*(keys[f] for f in scale.fields), gen, accept)
            whole.merge(part)
        assert whole.to_json() == _reference(scale, rows)


@settings(max_examples=300, deadline=None)
@given(_columns)
def test_context_keys_are_tokens_per_running_request(rows):
    tokens, full, running = ([r[i] for r in rows] for i in range(3))
    got = context_keys(tokens, full, running).tolist()
    want = [_key(None, t, f, r) for t, f, r, _, _ in rows]
    assert len(got) == len(want) and all(a == b or (a != a and b != b) for a, b in zip(got, want))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.one_of(st.floats(min_value=-1e300, max_value=1e300),
                                   st.integers(-10**8, 10**8).map(lambda k: k / 100),
                                   st.sampled_from([0.0, -0.0, 1e16, -1e16, 0.1, 5e-324])), max_size=60), max_size=6))
def test_an_exact_sum_is_math_fsum_however_its_values_came(batches):
    """The exact sums of buckets and of a view's value sets: added a batch at a time, or merged
    from a sum per batch, the total is math.fsum of every value and the mean its tidy quotient."""
    values = [v for batch in batches for v in batch]
    added, merged = ExactSum(), ExactSum()
    for batch in batches:
        added.add(np.array(batch, dtype=float))
        one = ExactSum()
        one.add(np.array(batch, dtype=float))
        merged.merge(one)
    for total in (added, merged):
        assert total.n == len(values)
        assert total.total() == math.fsum(values)
        assert total.mean() == (round(math.fsum(values) / len(values), 9) if values else None)


def test_an_infinite_value_makes_its_sum_infinite_or_nan():
    total = ExactSum()
    total.add(np.array([1.0, math.inf]))
    assert total.total() == math.inf and total.mean() == math.inf
    total.add(np.array([-math.inf]))
    assert math.isnan(total.total())


def test_many_lines_are_summed_a_chunk_at_a_time_exactly():
    """More lines than a chunk of exact_sums (65,536): each bucket's sum still math.fsum's."""
    rnd = np.random.default_rng(44)
    gen = np.round(rnd.uniform(0, 3000, 200_000), 2)
    gen[::1000] = 1e-30  # no whole number of 2**-80: summed as Python integers
    running = rnd.integers(1, 100, 200_000).astype(float)
    b = Buckets(LOAD)
    b.add_columns(running, gen, np.full(200_000, math.nan))
    bounds = [lo for _, lo in LOAD.buckets]
    want = [[] for _ in bounds]
    for r, g in zip(running.tolist(), gen.tolist()):
        want[bisect_right(bounds, r) - 1].append(g)
    assert [s.total() for s in b.gen] == [math.fsum(w) for w in want]
    assert b.decode == [len(w) for w in want]
