"""Epochs compared at the same load: a hand-made log whose spec-on run is faster at one running
request and slower at thirty-two, served with a traffic mix that makes its mean look worse. The
buckets must find both signs, with the exact means, where the mean over the epoch finds neither."""

from __future__ import annotations

import math
import random

import pytest
from bucketlog import assert_readers_agree, summary_json, table_after, write_two_epochs

from mtptui.core.compare import DELTA_MIN_BATCHES, bucket_cells, epoch_rows
from mtptui.core.loadmatch import LOAD, Buckets

# (running requests, tokens in use, gen throughput, accept len); the tokens do not matter here
# spec off: 20 lines at 1 running (100 and 110 tok/s), 20 at 32 (1000), 3 at 3 running, 2 idle
OFF = [(1, 100, 100.0 + 10 * (i % 2), None) for i in range(20)] + [(32, 100, 1000.0, None)] * 20
OFF += [(3, 100, 300.0, None)] * 3 + [(0, 100, 5.0, None)] * 2
# spec on: 30 at 1 running (150 and 160: +48 %), 10 at 32 (900: -10 %), 9 at 100 (too few to compare)
ON = [(1, 100, 150.0 + 10 * (i % 2), 2.5 + 0.25 * (i % 2)) for i in range(30)] + [(32, 100, 900.0, 1.5)] * 10
ON += [(100, 100, 200.0, 1.25)] * 9


@pytest.fixture
def log(tmp_path):
    return write_two_epochs(tmp_path / "load.log", OFF, ON)


def test_buckets_find_the_sign_the_mean_hides(log):
    off, on = summary_json(log)["epochs"]
    assert off["label"] == "spec off" and on["label"] == "EAGLE"
    # The epochs' means: spec on looks 38 % slower, because it served mostly single requests.
    assert on["vs_baseline"]["change"] == pytest.approx((30 * 155 + 10 * 900 + 9 * 200) / 49 / (23010 / 45) - 1)
    assert on["vs_baseline"]["change"] < -0.3
    assert off["by_load"] == [
        {"running": "1", "decode": 20, "gen_throughput": 105.0, "accept_len": None, "vs_previous": None,
         "vs_baseline": None},
        {"running": "2-4", "decode": 3, "gen_throughput": 300.0, "accept_len": None, "vs_previous": None,
         "vs_baseline": None},
        {"running": "17-64", "decode": 20, "gen_throughput": 1000.0, "accept_len": None, "vs_previous": None,
         "vs_baseline": None}]  # the idle lines (0 running) fall in no bucket
    one, mid, high = on["by_load"]
    assert one == {"running": "1", "decode": 30, "gen_throughput": 155.0, "accept_len": 2.625,
                   "vs_previous": pytest.approx(155 / 105 - 1), "vs_baseline": pytest.approx(155 / 105 - 1)}
    assert mid["running"] == "17-64" and mid["gen_throughput"] == 900.0 and mid["accept_len"] == 1.5
    assert mid["vs_previous"] == pytest.approx(-0.1) and mid["vs_baseline"] == pytest.approx(-0.1)
    # 9 lines at 65+ running, and spec off never ran there: nothing claimed
    assert high == {"running": "65+", "decode": 9, "gen_throughput": 200.0, "accept_len": 1.25,
                    "vs_previous": None, "vs_baseline": None}


def test_a_bucket_needs_the_minimum_in_both_epochs(log):
    rows = epoch_rows(summary_json(log)["epochs"])
    assert DELTA_MIN_BATCHES == 10
    one = rows[1].by_load[0]
    assert bucket_cells(one) == ("1", "30", "2.62", "155.0", "+48%", "+48%")
    assert bucket_cells(rows[1].by_load[2]) == ("65+", "9", "1.25", "200.0", "n<10", "n<10")
    # 3 lines at 2-4 running: too few to be compared, whatever comes after
    assert bucket_cells(rows[0].by_load[1]) == ("2-4", "3", "-", "300.0", "n<10", "n<10")
    assert bucket_cells(rows[0].by_load[2])[4:] == ("-", "-")


def test_the_dashboard_and_a_parallel_read_give_the_same_buckets(log, monkeypatch):
    assert_readers_agree(log, monkeypatch)


def test_the_table_shows_the_buckets(log):
    rows = [ln.split() for ln in table_after(log, "epochs at the same load")[:6]]
    assert rows[3] == ["-", "2", "1", "30", "2.62", "155.0", "+48%", "+48%"]
    assert rows[4] == ["-", "2", "17-64", "10", "1.50", "900.0", "-10%", "-10%"]


@pytest.mark.parametrize("running, bucket", [(float("nan"), None), (0, None), (1, 0), (2, 1), (4, 1), (5, 2),
                                             (16, 2), (17, 3), (64, 3), (65, 4), (1000, 4)])
def test_bucket_edges(running, bucket):
    assert LOAD.bucket_of(running) == bucket


def test_a_buckets_mean_is_exact_whatever_the_parts():
    """Values whose float sum depends on the order: the mean is the correctly rounded sum over n,
    however the values were cut into folds and parts."""
    rnd = random.Random(7)
    values = [rnd.choice([1e16, -1e16, 0.1, 2.675, 1234.57]) for _ in range(400)]
    want = round(math.fsum(values) / len(values), 9)
    for cut in (1, 37, 400):
        whole = Buckets(LOAD)
        parts = [values[i:i + cut] for i in range(0, len(values), cut)]
        for part in parts:
            later = Buckets(LOAD)
            later.add_columns([3.0] * len(part), part, [float("nan")] * len(part))
            whole.merge(later)
        assert whole.to_json() == [{"running": "2-4", "decode": 400, "gen_throughput": want, "accept_len": None}]
