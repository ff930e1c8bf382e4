"""The compare screen's numbers and `summary`'s epochs come from one routine: the dashboard's store
keeps each epoch's values as `summary` does, so the same log gives the same epochs, to the bit."""

from __future__ import annotations

from pathlib import Path

import pytest
from logsynth import toggle_log

from mtptui.sources import parallel
from mtptui.core.compare import DELTA_MIN_BATCHES, dp_group, epoch_rows, percent, with_comparison
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
    """As `summary --json` gives them: each with its host totals and changes."""
    return with_comparison([e.to_json() for h in store.epochs for e in store.epochs[h]])


def test_the_stores_epochs_are_summarys_on_the_toggle_sample():
    # A ring capacity far below the log's length: the epochs must not forget what the rings do.
    store = store_of(TOGGLE, capacity=16)
    want = summary_epochs(TOGGLE)
    assert [e["label"] for e in want] == ["spec off", "EAGLE steps=3 topk=1 draft=4", "EAGLE steps=1 topk=1 draft=2"]
    assert store_epochs(store) == want


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_stores_epochs_are_summarys_through_crash_loops_and_vllm_lines(tmp_path, seed):
    log = tmp_path / "toggle.log"
    toggle_log(log, restarts=25, seed=seed)
    assert store_epochs(store_of(str(log))) == summary_epochs(str(log))


def test_rows_total_the_host_and_compare_with_the_previous_and_the_spec_off_run():
    rows = epoch_rows(summary_epochs(TOGGLE))
    off, mtp3, mtp1 = rows
    assert off.accept_len is None and off.spec_off and off.vs_previous is None and off.vs_baseline is None
    assert mtp3.accept_len == pytest.approx(2.72, abs=0.005)
    # One TP group (only TP0 logs): the host total is that group's mean.
    assert mtp3.gen_per_dp == {"": mtp3.gen_per_rank["TP0"]} and mtp3.gen_total == mtp3.gen_per_rank["TP0"]
    assert mtp3.vs_previous.index == 0 and mtp3.vs_baseline.index == 0
    assert mtp3.vs_previous.change == pytest.approx(mtp3.gen_total / off.gen_total - 1)
    assert mtp1.vs_previous.index == 1 and mtp1.vs_previous.change == pytest.approx(mtp1.gen_total / mtp3.gen_total - 1)
    assert mtp1.vs_baseline.index == 0 and mtp1.vs_baseline.change == pytest.approx(mtp1.gen_total / off.gen_total - 1)
    assert [percent(r.vs_previous and r.vs_previous.change) for r in rows] == ["-", "+39%", "-7%"]
    assert [percent(r.vs_baseline and r.vs_baseline.change) for r in rows] == ["-", "+39%", "+29%"]
    assert percent(None) == "-"


@pytest.mark.parametrize("rank, group", [
    ("DP3 TP3 EP3", "DP3"), ("DP1 TP0", "DP1"), ("DP0 PP1 TP0", "DP0"), ("TP0", ""), ("TP3", ""),
    ("PP1 TP0", ""), ("", ""), ("Engine 001", "Engine 001"), ("DP-1 TP0", "DP-1"),
    ("pid=41820 TP0", "pid=41820"), ("pid=41820 TP3", "pid=41820"), ("pid=111711@10.15.36.1 TP0", "pid=111711@10.15.36.1"),
    ("pid=41820 DP1 TP1", "pid=41820 DP1"), ("pid=41820", "pid=41820")])
def test_dp_group_of_rank_labels(rank, group):
    assert dp_group(rank) == group


def _epoch(index: int, label: str, ranks: dict[str, tuple[int, float]], al: float | None = None) -> dict:
    """An epoch as Epoch.to_json(brief=True) gives it: rank -> (n, mean gen throughput)."""
    return {"host": "h", "index": index, "start": 100.0 * index, "end": None, "reason": "restart (systemd)",
            "label": label, "spec": {}, "decode_batches": sum(n for n, _ in ranks.values()),
            "ranks": {r: {"gen_throughput": {"n": n, "mean": m},
                          "accept_len": None if al is None else {"n": n, "mean": al}, "accept_rate": None}
                      for r, (n, m) in ranks.items()}}


def test_tp_ranks_of_one_dp_group_count_once_and_dp_groups_add_up():
    n = DELTA_MIN_BATCHES
    # Every TP rank logs (--enable-metrics-for-all-schedulers): one stream, counted once.
    tp = epoch_rows([_epoch(0, "spec off", {"TP0": (n, 1000.0), "TP1": (n, 1000.0), "TP2": (n, 1000.0)})])[0]
    assert tp.gen_total == 1000.0 and tp.min_batches == 3 * n
    # DP attention: each DP rank is its own stream; the host serves their sum.
    dp = epoch_rows([_epoch(0, "spec off", {f"DP{i} TP{i} EP{i}": (n, 500.0 + i) for i in range(4)})])[0]
    assert dp.gen_total == pytest.approx(2006.0) and len(dp.gen_per_dp) == 4 and dp.min_batches == n


def test_a_change_needs_enough_lines_in_both_epochs_and_skips_short_runs():
    n = DELTA_MIN_BATCHES
    rows = epoch_rows([
        _epoch(0, "spec off", {"TP0": (n, 1000.0)}),
        _epoch(1, "EAGLE steps=3 topk=1 draft=4", {"TP0": (n - 1, 3000.0)}, al=2.5),  # too short: no change
        _epoch(2, "settings unknown", {}),  # a crash during load: no lines at all
        _epoch(3, "EAGLE steps=3 topk=1 draft=4", {"TP0": (n, 1500.0)}, al=2.5),
        _epoch(4, "spec off", {"TP0": (n, 1200.0)}),
        _epoch(5, "EAGLE steps=1 topk=1 draft=2", {"DP0 TP0": (n, 900.0), "DP1 TP1": (n - 1, 900.0)}, al=1.8),
    ])
    assert [r.comparable for r in rows] == [True, False, False, True, True, False]
    assert rows[1].vs_previous is None and rows[1].vs_baseline is None
    # The previous comparable run is epoch 0, not the short one or the empty one.
    assert rows[3].vs_previous.index == 0 and rows[3].vs_previous.change == pytest.approx(0.5)
    assert rows[4].vs_previous.index == 3 and rows[4].vs_baseline.index == 0
    assert rows[4].vs_baseline.change == pytest.approx(0.2)
    assert rows[5].vs_previous is None  # one DP group has too few lines
    # The strip says why epoch 3 is not compared with the run just before it.
    assert rows[3].short_before == (1, n - 1) and rows[4].short_before is None
    assert not rows[2].spec_off  # unknown settings and no lines: not a baseline


def test_summary_json_of_every_sample_only_gains_keys():
    """The comparison adds keys to each epoch; nothing that was there changes."""
    for path in sorted(Path(TOGGLE).parent.glob("*.log")):
        s, counts = parallel.summarise([str(path)], jobs=1)
        s.fold()
        plain = [e.to_json() for e in s.epochs.all()]
        doc = s.to_json(counts.to_json())
        assert len(doc["epochs"]) == len(plain)
        for before, after in zip(plain, doc["epochs"]):
            buckets = ("by_load", "by_context")
            assert {k: after[k] for k in before if k not in buckets} == {k: v for k, v in before.items()
                                                                         if k not in buckets}
            assert set(after) - set(before) == {"host_totals", "vs_previous", "vs_baseline", "stops_paying_from"}
            # each bucket gains its changes (a context bucket also its mark)
            for key, gained in zip(buckets, ({"vs_previous", "vs_baseline"},
                                             {"vs_previous", "vs_baseline", "below_baseline"})):
                assert [{k: b[k] for k in a} for a, b in zip(before[key], after[key])] == before[key]
                assert all(set(b) - set(a) == gained for a, b in zip(before[key], after[key]))
