"""Memory that stops growing: the dashboard's epochs and `summary`'s series count each metric's
values per possible value (at the decimals the log prints), so once a log has shown a metric's
range, more lines take no more memory, and every statistic stays exact."""

import random

from mtptui.core.records import DECODE, PREFILL, SGLANG, BatchStats
from mtptui.core.stats import describe
from mtptui.core.store import Store
from mtptui.core.summary import Summary

T0 = 1773072000.0


def records(n: int, seed: int, start: float = T0):
    """Decode and prefill records of two ranks as SGLang prints them: two decimals."""
    rnd = random.Random(seed)
    for i in range(n):
        rank = f"TP{i % 2}"
        if i % 5:
            yield BatchStats(DECODE, start + i / 100, "h1", rank, SGLANG, {
                "accept_len": rnd.randrange(100, 400) / 100, "accept_rate": rnd.randrange(101) / 100,
                "gen_throughput": rnd.randrange(300_001) / 100, "running_req": rnd.randrange(64),
                "queue_req": rnd.randrange(4), "graph": True})
        else:
            yield BatchStats(PREFILL, start + i / 100, "h1", rank, SGLANG,
                             {"input_throughput": rnd.randrange(2_000_001) / 100})


def footprint(sets) -> int:
    """Bytes the value sets hold in their counts or values (what grows with a log, if anything)."""
    total = 0
    for v in sets:
        v.fold()
        total += (len(v.dense) * v.dense.itemsize if v.dense is not None else
                  len(v.spill) * 8 if v.spill is not None else len(v.counts) * 100)
    return total


def epoch_sets(store: Store):
    rows = [rows for e in store.epochs["h1"] for rows in e.per_rank.values()]
    for r in rows:
        r.fold()
    return [v for r in rows for v in r.sets.values()]


def summary_sets(s: Summary):
    s.fold()
    rows = [r for ser in s.series.values() for r in (ser.decode, ser.prefill)]
    for r in rows:
        r.fold()
    return [v for r in rows for v in r.sets.values()]


def test_the_dashboards_epochs_stop_growing():
    store = Store()
    values = []
    for rec in records(60_000, 1):
        store.add_batch(rec)
        if rec.rank == "TP0" and "gen_throughput" in rec.fields:
            values.append(rec.fields["gen_throughput"])
    first = footprint(epoch_sets(store))
    for rec in records(240_000, 2, start=T0 + 1000):
        store.add_batch(rec)
        if rec.rank == "TP0" and "gen_throughput" in rec.fields:
            values.append(rec.fields["gen_throughput"])
    # the same but for the few values at the ends of the range not seen in the first lines
    assert footprint(epoch_sets(store)) <= first * 1.001, "five times the lines, the same memory"
    assert store.epochs["h1"][0].stats("gen_throughput", "TP0") == describe(values)


def test_summarys_series_stop_growing():
    s = Summary()
    inputs = []
    for seed, n, start in ((3, 60_000, T0), (4, 240_000, T0 + 1000)):
        for rec in records(n, seed, start):
            s.add_batch(rec)
            if rec.rank == "TP1" and rec.kind == PREFILL:
                inputs.append(rec.fields["input_throughput"])
        if seed == 3:
            first = footprint(summary_sets(s))
    assert footprint(summary_sets(s)) <= first * 1.001, "five times the lines, the same memory"
    got = s.series[("h1", "TP1", SGLANG)].prefill.sets["input_throughput"]
    assert got.form == "dense" and got.describe() == describe(inputs)
