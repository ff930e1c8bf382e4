"""Epochs in `summary`: restarts split the run, each part labelled with its speculation settings,
and a file read in parallel parts gives exactly what a sequential read gives."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mtptui.sources import parallel
from mtptui.core.compare import DELTA_MIN_BATCHES
from logsynth import toggle_log

DATA = Path(__file__).resolve().parents[1] / "unit" / "data" / "toggle-epochs.log"


def summary(*args):
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_restart_opens_an_epoch_with_the_new_settings():
    doc = json.loads(summary("--json", str(DATA)))
    epochs = doc["epochs"]
    assert [e["label"] for e in epochs] == ["spec off", "EAGLE steps=3 topk=1 draft=4"]
    off, on = epochs
    assert off["ranks"]["TP0"]["gen_throughput"]["mean"] == pytest.approx((1000 + 1100) / 2)
    assert off["ranks"]["TP0"]["accept_len"] is None
    assert on["ranks"]["TP0"]["accept_len"]["mean"] == pytest.approx((2.80 + 2.90) / 2)
    assert on["ranks"]["TP0"]["gen_throughput"]["mean"] == pytest.approx(1950)
    assert off["end"] == on["start"]
    assert on["host_totals"]["gen_throughput"] == pytest.approx(1950)
    # Two decode lines a run are load noise, not the settings' effect: no change is claimed.
    assert on["host_totals"]["min_batches"] == 2 and not on["host_totals"]["comparable"]
    assert on["vs_previous"] is None and on["vs_baseline"] is None
    table = summary(str(DATA))
    assert "+86%" not in table and f"n<{DELTA_MIN_BATCHES}" in table  # 1950 against 1050 tok/s, 2 lines each


def test_the_table_shows_the_change_against_the_run_before_and_the_spec_off_run():
    toggle = Path(__file__).resolve().parents[2] / "sample_logs" / "mtp-toggle-restarts.log"
    table = summary(str(toggle)).splitlines()
    rows = [ln.split() for ln in table[table.index(next(ln for ln in table if "vs spec off" in ln)) + 1:][:3]]
    # host # date time settings... decode acc-len host-tok/s vs-prev vs-spec-off
    assert [r[-5:] for r in rows] == [["157", "-", "1613.4", "-", "base"], ["83", "2.72", "2235.1", "+39%", "+39%"],
                                      ["116", "1.87", "2086.0", "-7%", "+29%"]]




@pytest.mark.parametrize("jobs", [2, 3, 7])
def test_parallel_parts_equal_a_sequential_read(tmp_path, monkeypatch, jobs):
    log = tmp_path / "toggle.log"
    toggle_log(log, restarts=30, seed=jobs)
    seq, seq_counts = parallel.summarise([str(log)], jobs=1)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    par, par_counts = parallel.summarise([str(log)], jobs=jobs)
    assert par.to_json(par_counts.to_json()) == seq.to_json(seq_counts.to_json())
    assert len(seq.epochs.all()) >= 10
