"""A run that is over keeps its figures (core/figures.py): made for many runs in one pass of numpy,
they are the figures its rows and buckets gave while it ran (stats.describe's, ExactSum's), to the
bit, however its values came (its rows' buffer, value sets, lines one by one), and they cross
processes as they are. Against a plain reference too: stats.describe of each rank's values and
math.fsum over each bucket's lines, written here without the code under test."""

from __future__ import annotations

import json
import math
import pickle
import struct
from array import array
from bisect import bisect_right

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.core import epochs as epochs_mod
from mtptui.core.epochs import EPOCH_METRICS, Epoch, EpochTracker, freeze_runs, rank_key
from mtptui.core.stats import tidied
from mtptui.core.loadmatch import MATCH_FIELDS, SCALES
from mtptui.core.stats import describe, tidy
from mtptui.core.valueset import FOLD

np = pytest.importorskip("numpy")

_value = st.one_of(st.just(math.nan), st.integers(0, 300_000).map(lambda k: k / 100),
                   st.floats(min_value=-1e6, max_value=1e6), st.sampled_from([0.0, -0.0, 1.0 / 1024, 2.5e-9]))
_line = st.fixed_dictionaries({
    "accept_len": _value, "accept_rate": _value, "gen_throughput": _value,
    "running_req": st.one_of(st.just(math.nan), st.integers(0, 80).map(float)),
    "num_token": st.one_of(st.just(math.nan), st.integers(0, 200_000).map(float)),
    "full_token": st.one_of(st.just(math.nan), st.integers(0, 200_000).map(float)),
})
_ranks = st.sampled_from(["TP0", "TP1", "TP10", "TP2", "", "DP1 TP1"])
# a run: its lines, each of a rank
_run = st.lists(st.tuples(_ranks, _line), max_size=60)


def _same(a: object, b: object) -> bool:
    """The same numbers (NaN is NaN; 0.0 is -0.0, as a sort may put them either way), the same keys
    in the same order, the same types (an int n stays an int)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return type(a) is type(b) and a == b


def _epoch(index: int, lines: list, tally: bool, way: str) -> Epoch:
    """A run fed as summary feeds it (its rows taken as its series hands them over: `taken`), or
    its rows in its ranks' and buckets' buffers (`buffer`), or with its values in value sets and
    sums (`folded`), or line by line as the dashboard feeds it (`lines`)."""
    e = Epoch(index, "h", float(index), tally=tally)
    names = EPOCH_METRICS + tuple(f for f in MATCH_FIELDS if f not in EPOCH_METRICS)
    for rank, fields in lines:
        if way == "lines":
            e.rows(rank).add(fields)
            for b in e.matched:
                b.add(fields)
        elif way == "taken":  # as summary hands a run its rows (Epoch.take_rows)
            e.take_rows(rank, memoryview(array("d", [fields.get(n, math.nan) for n in names])), names)
        else:
            row = array("d", [fields.get(n, math.nan) for n in names])
            e.rows(rank, names[len(EPOCH_METRICS):]).add_rows(row, names)
            for b in e.matched:
                b.add_rows(row, names)
    if way == "folded":
        for rows in e.per_rank.values():
            rows.fold()
        for b in e.matched:
            b.fold()
    return e


def _reference(lines: list) -> dict:
    """The ranks and buckets of a run's lines, from scratch: stats.describe of each rank's values,
    and per bucket its lines and the exact sums over their count (math.fsum), stats.tidy'd."""
    ranks: dict = {}
    for rank, fields in lines:
        ranks.setdefault(rank, []).append(fields)
    out: dict = {"ranks": {r: {m: describe([f[m] for f in rows if f[m] == f[m]]) for m in EPOCH_METRICS}
                           for r, rows in sorted(ranks.items(), key=lambda kv: rank_key(kv[0]))}}
    for scale in SCALES:
        cells: dict = {}
        for _, f in lines:
            if scale.name == "running":
                key = f["running_req"]
            else:
                tokens = f["num_token"] if f["num_token"] == f["num_token"] else f["full_token"]
                key = tokens / f["running_req"] if f["running_req"] >= 1 else math.nan
            if not key >= scale.buckets[0][1]:
                continue
            label = scale.buckets[bisect_right(scale.bounds, key) - 1][0]
            cell = cells.setdefault(label, ([], [], []))
            cell[0].append(1)
            if f["gen_throughput"] == f["gen_throughput"]:
                cell[1].append(f["gen_throughput"])
            if f["accept_len"] == f["accept_len"]:
                cell[2].append(f["accept_len"])
        out[scale.json_key] = [{scale.name: label, "decode": len(cells[label][0]),
                                "gen_throughput": tidy(math.fsum(cells[label][1]) / len(cells[label][1]))
                                if cells[label][1] else None,
                                "accept_len": tidy(math.fsum(cells[label][2]) / len(cells[label][2]))
                                if cells[label][2] else None}
                               for label, _ in scale.buckets if label in cells]
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(_run, min_size=1, max_size=6), st.booleans(), st.sampled_from(["taken", "buffer", "folded", "lines"]))
def test_runs_frozen_together_read_as_they_did_and_as_their_values_say(runs, tally, way):
    eps = [_epoch(i, lines, tally, way) for i, lines in enumerate(runs)]
    before = [(e.to_json(), e.to_json(brief=True)) for e in (_epoch(i, lines, tally, way) for i, lines in enumerate(runs))]
    freeze_runs(eps)
    for e, (whole, brief), lines in zip(eps, before, runs):
        assert e.frozen and not e.per_rank and e.matched == ()
        assert _same(e.to_json(), whole) and _same(e.to_json(brief=True), brief)
        want = _reference(lines)
        assert _same({k: whole[k] for k in want}, want)


def test_a_long_run_among_short_ones_is_described_as_alone():
    """The runs frozen together are sorted as one table of rows of like length, but a run far
    longer than the others is sorted by itself (no table as wide as it for every run)."""
    runs = [[("TP0", {"accept_len": float(i % 7), "accept_rate": math.nan, "gen_throughput": float(i % 13),
                      "running_req": 3.0, "num_token": 100.0, "full_token": math.nan})
             for i in range(n)] for n in (3, 5000, 4, 1)]
    eps = [_epoch(i, lines, False, "taken") for i, lines in enumerate(runs)]
    before = [_epoch(i, lines, False, "taken").to_json() for i, lines in enumerate(runs)]
    freeze_runs(eps)
    assert all(_same(e.to_json(), b) for e, b in zip(eps, before))


def test_a_value_that_is_no_finite_number_gives_what_python_gives():
    lines = [("TP0", {"accept_len": v, "accept_rate": 0.5, "gen_throughput": v, "running_req": 2.0,
                      "num_token": 10.0, "full_token": math.nan}) for v in (1.0, math.inf, 3.0)]
    e = _epoch(0, lines, False, "taken")
    freeze_runs([e])
    got = e.to_json()
    assert got["ranks"]["TP0"]["gen_throughput"]["mean"] == math.inf
    want = _reference(lines)
    assert _same({k: got[k] for k in want}, want)


def test_the_tracker_freezes_runs_that_are_over_in_batches(monkeypatch):
    """A run over waits for the batch (it reads as a run that goes on meanwhile), and all of them
    are frozen before the runs are read (all()) or sent (pickled)."""
    monkeypatch.setattr(epochs_mod, "FREEZE_AT", 3)
    from mtptui.core.records import Event

    tracker = EpochTracker()
    for i in range(8):
        tracker.add_event(Event("started", float(i), "h", "Started"), float(i))
        e = tracker.current("h")
        assert e is not None
        e.records = 1
        e.rows("TP0", ()).add({"accept_len": 2.0 + i, "gen_throughput": 100.0 * i})
    eps = tracker.epochs["h"]
    assert [e.frozen for e in eps] == [False] + [True] * 6 + [False], "runs 1-6 in two batches; the first waits"
    tracker.add_event(Event("started", 9.0, "h", "Started"), 9.0)
    assert not eps[7].frozen, "a batch not full yet"
    sent = pickle.loads(pickle.dumps(tracker))
    assert eps[7].frozen, "sent as its figures"
    assert [e.to_json() for e in sent.epochs["h"]] == [e.to_json() for e in eps]
    assert sent.epochs["h"][3].figures == eps[3].figures


def test_runs_of_the_same_ranks_share_one_tuple_of_them():
    eps = [_epoch(i, [("TP1", {"accept_len": 1.0}), ("TP0", {"accept_len": 2.0})], False, "lines") for i in range(3)]
    freeze_runs(eps)
    assert eps[0].figures.ranks == ("TP0", "TP1")
    assert all(e.figures.ranks is eps[0].figures.ranks for e in eps)


def test_a_rank_with_more_rows_than_a_fold_is_described_from_its_value_sets():
    lines = [("TP0", {"accept_len": (i % 500) / 100, "accept_rate": math.nan, "gen_throughput": float(i % 3000),
                      "running_req": float(i % 70), "num_token": float(i), "full_token": math.nan})
             for i in range(FOLD + 10)]
    e = _epoch(0, lines, False, "taken")
    before = _epoch(0, lines, False, "taken").to_json()
    freeze_runs([e])
    assert _same(e.to_json(), before)
    want = _reference(lines)
    assert _same({k: before[k] for k in want}, want)


def _bits(u: int) -> float:
    return struct.unpack("d", struct.pack("Q", u))[0]


_doubles = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-5e6, max_value=5e6),
    st.integers(-2**40, 2**40).map(lambda k: k / 1024),  # exact ties of 9 places (j / 1024, j odd)
    st.integers(-4 * 10**15, 4 * 10**15).map(lambda k: (k + 0.5) / 1e9),  # a hair beside a tie
    st.tuples(st.integers(-10**8, 10**8), st.integers(0, 12)).map(lambda kd: kd[0] / 10**kd[1]),
    st.integers(0, 2**64 - 1).map(_bits),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_doubles, min_size=1, max_size=50))
def test_tidied_is_tidy_of_each_value_to_the_bit(values):
    got = tidied(np.array(values, dtype=np.float64)).tolist()
    assert json.dumps(got) == json.dumps([tidy(x) for x in values])  # to the bit: floats by their repr


_finite = st.one_of(
    st.floats(min_value=-1e12, max_value=1e12),
    st.integers(-2**40, 2**40).map(lambda k: k / 1024),  # means that are ties of the 9th place
    st.tuples(st.integers(-10**8, 10**8), st.integers(0, 12)).map(lambda kd: kd[0] / 10**kd[1]),
    st.sampled_from([0.0, -0.0, 5e-324, 1e300, -1e300, 2.0**-1074 * 3]),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(_finite, max_size=30), min_size=1, max_size=8), st.randoms(use_true_random=False))
def test_means_are_fsums_over_n_tidied_to_the_bit(groups, rnd):
    """Whatever the order of the values among the groups (a bucket's lines come as they came),
    and with groups that have none (NaN)."""
    from mtptui.core.exact import means as _means

    pairs = [(v, i) for i, g in enumerate(groups) for v in g]
    rnd.shuffle(pairs)
    values = np.array([v for v, _ in pairs], dtype=np.float64)
    ids = np.array([i for _, i in pairs], dtype=np.intp)
    got = _means(values, ids, len(groups)).tolist()
    assert json.dumps(got) == json.dumps([tidy(math.fsum(g) / len(g)) if g else math.nan for g in groups])


def test_a_mean_on_a_tie_of_the_9th_place_is_summed_by_fsum():
    from mtptui.core.exact import means as _means

    groups = [[1 / 1024], [3 / 1024, 3 / 1024], [0.1] * 10, [1e16, 1.0, -1e16]]
    values = np.array([v for g in groups for v in g])
    got = _means(values, np.repeat(np.arange(len(groups)), [len(g) for g in groups]), len(groups)).tolist()
    assert got == [tidy(math.fsum(g) / len(g)) for g in groups]
    assert got[3] == tidy(1 / 3), "the exact sum (1.0), not numpy's"
