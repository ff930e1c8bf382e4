"""A log of many runs read in parts, each in a forked reader (sources/parallel.py): the runs frozen
in each part (Epoch.freeze) and when the parts are joined give the figures of one reader that kept
every value, for `summary` and for `open`."""

from __future__ import annotations

from pathlib import Path

from mtptui.sources import parallel
from test_many_runs import doc, log, many_runs_log, store_epochs, unfrozen, value_sets_held  # noqa: F401 (fixtures shared with the unit tier)


def test_the_parts_of_a_file_read_apart_give_the_same_figures(log, monkeypatch, unfrozen):
    whole = doc(log, 1)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)  # this small file in 4 parts
    parts = doc(log, 4)
    unfrozen()
    assert parts == whole == doc(log, 4)


def test_open_gives_the_epochs_it_gave_with_every_value_kept(log, monkeypatch, unfrozen):
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    folded = store_epochs(log, 3)
    single = store_epochs(log, 1)
    unfrozen()
    assert folded == single == store_epochs(log, 3)


def test_the_parts_hold_no_value_sets_of_runs_that_are_over(tmp_path: Path, monkeypatch):
    path = tmp_path / "many.log"
    many_runs_log(path, 300)
    one = value_sets_held(path)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    assert value_sets_held(path, jobs=3) == one
