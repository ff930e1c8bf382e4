"""The compare screen's numbers and `summary`'s epochs come from one routine: the dashboard's store
keeps each epoch's values as `summary` does, so the same log gives the same epochs, to the bit."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_summary_epochs import _toggle_log

from mtptui.core import parallel
from mtptui.core.compare import epoch_rows, percent
from mtptui.core.ingest import Ingest
from mtptui.core.store import Store
from mtptui.sources.file import open_lines

TOGGLE = str(Path(__file__).resolve().parents[2] / "sample_logs" / "mtp-toggle-restarts.log")


def store_of(path: str, capacity: int = 4096) -> Store:
    store = Store(capacity=capacity, clock=lambda: 0.0)
    Ingest(store).feed_many(open_lines(path))
    return store


def summary_epochs(path: str) -> list[dict]:
    s, counts = parallel.summarise([path], jobs=1)
    return s.to_json(counts.to_json())["epochs"]


def store_epochs(store: Store) -> list[dict]:
    return [e.to_json() for h in store.epochs for e in store.epochs[h]]


def test_the_stores_epochs_are_summarys_on_the_toggle_sample():
    # A ring capacity far below the log's length: the epochs must not forget what the rings do.
    store = store_of(TOGGLE, capacity=16)
    want = summary_epochs(TOGGLE)
    assert [e["label"] for e in want] == ["spec off", "EAGLE steps=3 topk=1 draft=4", "EAGLE steps=1 topk=1 draft=2"]
    assert store_epochs(store) == want


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_stores_epochs_are_summarys_through_crash_loops_and_vllm_lines(tmp_path, seed):
    log = tmp_path / "toggle.log"
    _toggle_log(log, restarts=25, seed=seed)
    assert store_epochs(store_of(str(log))) == summary_epochs(str(log))


def test_rows_sum_ranks_and_compare_with_the_first_epoch():
    rows = epoch_rows(summary_epochs(TOGGLE))
    off, mtp3, mtp1 = rows
    assert off.accept_len is None and off.vs_first is None
    assert mtp3.accept_len == pytest.approx(2.72, abs=0.005)
    assert mtp3.gen_sum == pytest.approx(sum(mtp3.gen_per_rank.values()))
    assert mtp3.vs_first == pytest.approx(mtp3.gen_sum / off.gen_sum - 1)
    assert mtp1.vs_before == pytest.approx(mtp1.gen_mean / mtp3.gen_mean - 1)
    assert percent(mtp3.vs_first) == "+39%" and percent(None) == "-"
