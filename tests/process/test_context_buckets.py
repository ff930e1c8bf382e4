"""Where speculation stops paying: a hand-made log whose spec-on run is faster than the spec-off
run at short contexts and slower past 32k tokens per running request. The context buckets must
find both signs with the exact means, mark the buckets below the baseline, and name the first
bucket from which speculation no longer pays; the dashboard, a parallel read and both paths of
summary (compiled and Python) must say the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from bucketlog import assert_readers_agree, summary_json, table_after, write_two_epochs

from mtptui.core.compare import BucketRow, bucket_cells, epoch_rows, stops_paying_from
from mtptui.core.loadmatch import CONTEXT, Buckets

CONTEXT_LABELS = [label for label, _ in CONTEXT.buckets]

# (running, tokens in use): a mean context per running request in each bucket
SHORT, MID, LONG, LONGER, LONGEST = (2, 4000), (4, 40000), (2, 40000), (3, 144000), (1, 100000)
# spec off (`#token`): 300 tok/s at every context (290 and 310), 20 lines each; two idle lines
OFF = [(*at, 290.0 + 20 * (i % 2), None) for at in (SHORT, MID, LONG, LONGER, LONGEST) for i in range(20)]
OFF += [(0, 500, 5.0, None)] * 2
# spec on (a hybrid pool: `#full token`): +50 % under 4k, +10 % at 16-32k, -10 % at 32-64k and
# -20 % past 64k; at 4-16k only 5 lines (too few to compare)
ON = [(*SHORT, 450.0, 2.75)] * 20 + [(*MID, 400.0, 2.5)] * 5 + [(*LONG, 330.0, 2.0)] * 20
ON += [(*LONGER, 270.0, 1.5)] * 20 + [(*LONGEST, 240.0, 1.25)] * 12


@pytest.fixture
def log(tmp_path):
    return write_two_epochs(tmp_path / "context.log", OFF, ON, on_pool="#full token")


def _bucket(context: str, decode: int, gen: float, accept: float | None, base=None, below=False) -> dict:
    return {"context": context, "decode": decode, "gen_throughput": gen, "accept_len": accept,
            "vs_previous": base, "vs_baseline": base, "below_baseline": below}


def test_the_buckets_find_where_speculation_stops_paying(log):
    off, on = summary_json(log)["epochs"]
    assert off["label"] == "spec off" and on["label"] == "EAGLE"
    assert off["by_context"] == [_bucket(label, 20, 300.0, None) for label in CONTEXT_LABELS]
    assert off["stops_paying_from"] is None  # no speculation: nothing to stop paying
    assert on["by_context"] == [
        _bucket("<4k", 20, 450.0, 2.75, pytest.approx(0.5)),
        _bucket("4-16k", 5, 400.0, 2.5),  # too few lines: no change claimed, not marked
        _bucket("16-32k", 20, 330.0, 2.0, pytest.approx(0.1)),
        _bucket("32-64k", 20, 270.0, 1.5, pytest.approx(-0.1), below=True),
        _bucket("64k+", 12, 240.0, 1.25, pytest.approx(-0.2), below=True)]
    assert on["stops_paying_from"] == "32-64k"
    # the mean over the epoch hides it: spec on looks faster overall
    assert on["vs_baseline"]["change"] > 0


def test_the_dashboard_and_a_parallel_read_give_the_same_buckets(log, monkeypatch):
    assert_readers_agree(log, monkeypatch)


def test_the_python_path_gives_the_same_buckets(log):
    """MTPTUI_PURE=1 leaves the compiled lane and its helpers unused."""
    pure = subprocess.run([sys.executable, "-m", "mtptui", "summary", "--json", log], capture_output=True,
                          text=True, env={**os.environ, "MTPTUI_PURE": "1"})
    assert pure.returncode == 0, pure.stderr
    assert json.loads(pure.stdout) == summary_json(log)


def test_the_table_marks_the_buckets_below_the_baseline(log):
    lines = table_after(log, "epochs by context")
    rows = [ln.split() for ln in lines[:10]]
    assert rows[5] == ["-", "2", "<4k", "20", "2.75", "450.0", "+50%", "+50%"]
    assert rows[6] == ["-", "2", "4-16k", "5", "2.50", "400.0", "n<10", "n<10"]
    assert rows[8] == ["-", "2", "32-64k", "20", "1.50", "270.0", "-10%", "-10%", "below"]
    assert rows[9] == ["-", "2", "64k+", "12", "1.25", "240.0", "-20%", "-20%", "below"]
    assert lines[10].split(": ")[-1] == "speculation stops paying from 32-64k tokens per request"


def test_cells_of_a_context_bucket(log):
    rows = epoch_rows(summary_json(log)["epochs"])
    assert [bucket_cells(b) for b in rows[1].by_context][3] == ("32-64k", "20", "1.50", "270.0", "-10%", "-10%")
    assert [b.below_baseline for b in rows[1].by_context] == [False, False, False, True, True]


def _row(label: str, change: float | None) -> BucketRow:
    return BucketRow("context", label, 20, 100.0, 2.0, change, change, change is not None and change < 0)


@pytest.mark.parametrize("changes, want", [
    ((0.5, 0.1, -0.1, -0.2), "c"),
    ((0.5, -0.1, 0.2, -0.1, -0.2), "d"),  # below at b, but it pays again at c: from d on
    ((0.5, -0.1, None, -0.2), "b"),  # a bucket that cannot be compared does not break the run
    ((-0.1, 0.1), None),  # it pays at the longest contexts compared
    ((-0.3, -0.1), "a"),
    ((None, None), None),
])
def test_stops_paying_from_the_first_bucket_of_the_last_run_below(changes, want):
    assert stops_paying_from([_row(chr(ord("a") + i), c) for i, c in enumerate(changes)]) == want


@pytest.mark.parametrize("context, bucket", [(float("nan"), None), (-1, None), (0, 0), (4095.5, 0), (4096, 1),
                                             (16383, 1), (16384, 2), (32768, 3), (65535.9, 3), (65536, 4),
                                             (1e9, 4)])
def test_bucket_edges(context, bucket):
    assert CONTEXT.bucket_of(context) == bucket


def test_the_key_is_tokens_per_running_request():
    """`#token` over `#running-req`; a hybrid pool's `#full token` where `#token` is absent; no
    bucket without a request running or without either token count."""
    nan = float("nan")
    b = Buckets(CONTEXT)
    b.add_columns([8000.0, nan, nan, 5000.0, 9000.0], [nan, 40000.0, nan, nan, 100.0],
                  [1.0, 2.0, 1.0, 0.0, 3.0], [10.0, 20.0, 30.0, 40.0, 50.0], [nan] * 5)
    assert b.to_json() == [{"context": "<4k", "decode": 1, "gen_throughput": 50.0, "accept_len": None},
                           {"context": "4-16k", "decode": 1, "gen_throughput": 10.0, "accept_len": None},
                           {"context": "16-32k", "decode": 1, "gen_throughput": 20.0, "accept_len": None}]
