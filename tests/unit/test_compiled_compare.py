"""A run that is over, compared and written in C (frozen_row, ranks_json, epoch_json in core/_compiled.pyx): the
same row, the same state after it and the same JSON text, to the byte, as compare.Comparison.row of
its brief form and json.dumps of compare.compared() give, on generated runs of every shape; and
summary's events as json_lines writes them, json.dumps' lines."""

from __future__ import annotations

import json
import math
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.core import compiled
from mtptui.core.compare import BucketRow, Comparison, Delta, EpochRow, compared
from mtptui.core.epochs import EPOCH_METRICS, Epoch
from mtptui.core.loadmatch import SCALES, FrozenBuckets
from mtptui.core.summary import _encode, _encode_with
from mtptui.core.valueset import FrozenRows, Rows
from test_compiled import slots_of

C = compiled._compiled if compiled.BUILT else None
built = pytest.mark.skipif(C is None, reason="the compiled hot path was not built (no C compiler at install)")

_numbers = st.one_of(st.integers(0, 10**6).map(lambda k: k / 100), st.floats(min_value=1e-3, max_value=1e5),
                     st.just(0.0))
_means = st.one_of(st.just(math.nan), _numbers)
# a metric of a rank: absent (NaN n), or n and its mean
_metric = st.one_of(st.none(), st.tuples(st.integers(1, 40), _numbers))
_ranks = st.sampled_from(["TP0", "TP1", "TP2", "TP10", "", "DP0 TP0", "DP1 TP1", "DP1 TP3", "pid=41820 TP0",
                          "Engine 001", "PP1 TP0"])
_labels = st.sampled_from(["spec off", "settings unknown", "EAGLE steps=3 topk=1 draft=4", "NGRAM"])


def _frozen_rows(stats: list[tuple[int, float] | None]) -> FrozenRows:
    figures = array("d")
    for s in stats:
        figures.extend([math.nan] * 7 if s is None else [s[0], s[1], s[1], s[1], s[1], s[1], s[1]])
    rows = FrozenRows.__new__(FrozenRows)
    rows.__setstate__((EPOCH_METRICS, EPOCH_METRICS, figures.tobytes()))
    return rows


def _frozen_buckets(scale, buckets: list[tuple[int, float, float]], as_array: bool) -> FrozenBuckets:
    decode = [d for d, _, _ in buckets][:len(scale.buckets)]
    decode += [0] * (len(scale.buckets) - len(decode))
    means = [m for _, g, a in buckets for m in (g, a)][:2 * len(scale.buckets)]
    means += [math.nan] * (2 * len(scale.buckets) - len(means))
    frozen = FrozenBuckets.__new__(FrozenBuckets)
    frozen.__setstate__((scale.json_key, decode, array("d", means).tobytes() if as_array
                         else tuple(None if m != m else m for m in means)))
    return frozen


@st.composite
def _epochs(draw) -> list[Epoch]:
    out, counts = [], {}
    for _ in range(draw(st.integers(1, 12))):
        host = draw(st.sampled_from(["a", "b", None]))
        index = counts[host] = counts.get(host, -1) + 1
        e = Epoch(index, host, float(index), draw(st.one_of(st.none(), st.just(index + 0.5))))
        labels = draw(_labels)
        e.spec = {} if labels == "settings unknown" else {"algorithm": None if labels == "spec off" else labels}
        e.batches = draw(st.integers(0, 80))
        e.per_rank = {rank: _frozen_rows([draw(_metric) for _ in EPOCH_METRICS])
                      for rank in draw(st.lists(_ranks, max_size=5, unique=True))}
        bucket = st.tuples(st.sampled_from([0, 1, 9, 10, 30]), _means, _means)
        as_array = draw(st.booleans())
        e.matched = tuple(_frozen_buckets(s, draw(st.lists(bucket, max_size=5)), as_array) for s in SCALES)
        e.frozen = True
        out.append(e)
    return out


def _state(c: Comparison) -> tuple:
    return (c.previous, c.baseline, c.decoded, c.previous_bucket, c.baseline_bucket)


@built
@settings(max_examples=400, deadline=None)
@given(_epochs())
def test_a_run_that_is_over_has_the_row_of_its_brief_form(epochs):
    python, c = Comparison(), Comparison()
    for e in epochs:
        want = python.row(e.to_json(brief=True))
        got = C.frozen_row(c, e, e.label, e.ending(e.end is None))
        assert got == want
        assert _state(c) == _state(python)


@built
def test_a_run_not_over_is_left_to_python():
    e = Epoch(0, "a", 0.0)
    state = Comparison()
    assert C.frozen_row(state, e, e.label, e.ending(True)) is None
    assert _state(state) == ({}, {}, {}, {}, {})


_text = st.text(alphabet=st.sampled_from('aé"\\\n\x00\U0001f600 -~\x7f\x1f'), max_size=6)
_json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
              st.sampled_from([0, -1, 10, -10, 2**63 - 1, -2**63, 2**63, -2**63 - 1]),  # C's long long and past it
              _text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(_text, inner, max_size=3),
                            st.dictionaries(st.integers(0, 3), inner, max_size=2)),
    max_leaves=8)
_opt = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(0, 99).map(float))


@st.composite
def _rows(draw) -> EpochRow:
    def bucket(name: str) -> BucketRow:
        return BucketRow(name, draw(_text), draw(st.integers(0, 50)), draw(_opt), draw(_opt), draw(_opt), draw(_opt),
                         draw(st.booleans()))

    def delta() -> Delta | None:
        return draw(st.one_of(st.none(), st.builds(Delta, st.integers(0, 9), _text, _opt, _opt)))

    row = EpochRow(host=None, index=0, start=0.0, end=None, label="x", reason="y", decode_batches=0, spec_off=False,
                   accept_len=draw(_opt), accept_rate=draw(_opt), gen_per_rank={},
                   gen_mean=None, gen_per_dp=draw(st.dictionaries(_text, _opt, max_size=3)),
                   gen_total=draw(_opt), min_batches=draw(st.integers(0, 20)), vs_previous=delta(), vs_baseline=delta(),
                   stops_paying_from=draw(st.one_of(st.none(), _text)))
    row.matched = {"by_load": [bucket("running") for _ in range(draw(st.integers(0, 3)))],
                   "by_context": [bucket("context") for _ in range(draw(st.integers(0, 3)))]}
    return row


@built
@settings(max_examples=600, deadline=None)
@given(st.dictionaries(_text, _json_values, max_size=4), _rows(), st.booleans(),
       st.sampled_from(['{}', '{"TP0": null}']))
def test_an_epochs_text_is_json_dumps_of_it_compared(extra, row, outline, ranks):
    doc = {"host": "gpu-1", "index": 3, "ranks": None, **extra}
    if outline:
        doc.update({"by_load": None, "by_context": None})
    assert C.epoch_json(doc, row, ranks, _encode) == _encode_with(compared(doc, row), "ranks", ranks)
    assert json.loads(C.epoch_json(doc, row, ranks, _encode))["ranks"] == json.loads(ranks)


@built
def test_every_character_in_a_key_or_a_string_is_written_as_json_dumps_writes_it():
    # printable ASCII is copied as it is, the rest escaped: the boundaries (space, `~`, DEL) included
    chars = [chr(c) for c in range(0x300)] + ["\U0001f600", "\ud800"]
    values = [{c: c} for c in chars] + [{"k" + c * 3 + "k": "v" + c + "v"} for c in chars]
    want = "".join(json.dumps(v) + "\n" for v in values).encode()
    assert C.json_lines(values, _encode) == want


class _Level(int):  # an int of a kind json writes by its own rules: left to json's encoder
    pass


@built
@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(_json_values, st.dictionaries(_text, st.builds(_Level, st.integers(-9, 9)), max_size=2)),
                max_size=5))
def test_events_are_written_as_json_dumps_writes_each_a_line(values):
    want = "".join(json.dumps(v) + "\n" for v in values).encode()
    assert C.json_lines(values, _encode) == want


@built
@settings(max_examples=200, deadline=None)
@given(_epochs())
def test_a_run_that_is_overs_ranks_are_written_as_json_dumps_writes_them(epochs):
    for e in epochs:
        assert C.ranks_json(e.per_rank) == json.dumps(e.to_json()["ranks"]) == e.ranks_json()


@built
def test_ranks_not_frozen_are_left_to_python():
    rows = Rows(EPOCH_METRICS)
    rows.add({"accept_len": 2.5})
    assert C.ranks_json({"TP0": rows}) is None


def _same_epoch(a: Epoch, b: Epoch) -> bool:
    names = [f for f in Epoch.__dataclass_fields__ if f not in ("per_rank", "matched")]
    return (type(a) is type(b) and all(getattr(a, n) == getattr(b, n) for n in names)
            and a.to_json() == b.to_json() and list(a.per_rank) == list(b.per_rank)
            and [type(r) for r in a.per_rank.values()] == [type(r) for r in b.per_rank.values()]
            and all(x.stats.tobytes() == y.stats.tobytes()  # NaN: a metric without values
                    for x, y in zip(a.per_rank.values(), b.per_rank.values()) if hasattr(x, "stats"))
            and ranks_texts(a) == ranks_texts(b)
            and all(_as_kept(x) for x in (*b.per_rank.values(), *b.matched)))


def _as_kept(x: object) -> bool:
    """Frozen figures thawed in C have every slot as FrozenRows.kept and FrozenBuckets.kept set them."""
    if type(x) is FrozenRows:
        return slots_of(x) == slots_of(FrozenRows.kept(x.names, x.metrics, x.stats))
    if type(x) is FrozenBuckets:
        return slots_of(x) == slots_of(FrozenBuckets.kept(x.scale, x.decode, x.means))
    return True  # an epoch not over, as it is


def ranks_texts(e: Epoch) -> str:
    return json.dumps(e.to_json(brief=True)) + e.ranks_json()


@built
@settings(max_examples=200, deadline=None)
@given(_epochs(), st.integers(0, 3))
def test_runs_that_are_over_cross_packed_as_they_were(epochs, open_ones):
    """A parallel reader's tracker, pickled (EpochTracker.__getstate__): its runs that are over
    packed in C, any other epoch (one still open) as it is; back as they were, in order."""
    import pickle

    from mtptui.core.epochs import EpochTracker

    for e in epochs[:open_ones]:  # epochs not over: their rows take values still
        e.frozen = False
        e.per_rank = {"TP0": Rows(EPOCH_METRICS)}
        e.per_rank["TP0"].add({"accept_len": 2.0, "gen_throughput": 10.0})
    tracker = EpochTracker()
    for e in epochs:
        tracker.epochs.setdefault(e.host, []).append(e)
    state = tracker.__getstate__()
    assert state.get("packed") is True
    back = pickle.loads(pickle.dumps(tracker, pickle.HIGHEST_PROTOCOL))
    assert list(back.epochs) == list(tracker.epochs)
    for host, eps in tracker.epochs.items():
        assert len(back.epochs[host]) == len(eps)
        assert all(_same_epoch(a, b) for a, b in zip(eps, back.epochs[host]))


@built
def test_only_a_slot_of_an_object_is_set_in_its_place():
    """What frozen_row and thaw_epochs make, they allocate and set by each slot's place in the
    object (_Slots): a field that is no slot of its own (one in a __dict__, a property, a
    read-only member), or a class made by a __new__ of its own, is refused when the places are
    taken, so that the kit does not load and Python makes them."""
    C._Slots(EpochRow, ("host", "ended"))  # slots of its own: taken
    C._Slots(FrozenRows, ("stats", "names"))  # one of its own, one of Rows'
    for cls, name in ((EpochRow, "comparable"), (EpochRow, "no_such_field"), (Comparison, "__slots__")):
        with pytest.raises(ImportError, match="is not a slot"):
            C._Slots(cls, (name,))
    with pytest.raises(ImportError):  # a read-only member of a class of C's
        C._Slots(slice, ("start",))

    class Open:  # no __slots__: its fields live in a dict
        def __init__(self) -> None:
            self.x = 1

    with pytest.raises(ImportError, match="is not a slot"):
        C._Slots(Open, ("x",))

    class Made:  # made by a __new__ of its own: not one to make by allocating it
        __slots__ = ("x",)

        def __new__(cls):
            return super().__new__(cls)

    with pytest.raises(ImportError, match="otherwise than by object.__new__"):
        C._Slots(Made, ("x",))
