"""A log of many runs: each run that is over keeps its figures and lets its value sets go
(Epoch.freeze), so that 10,000 runs cost what 10 do, and `summary` says to the bit what it said
when every run kept every value; the parts of a file read in parallel (summary, open) too."""

from __future__ import annotations

import json

import random
import time
from pathlib import Path

import pytest

from mtptui.core.epochs import EpochTracker
from mtptui.sources.opener import open_store
from mtptui.sources.parallel import summarise

T0 = 1773072000


def many_runs_log(path: Path, runs: int, seed: int = 5) -> None:
    """`runs` runs of a host under systemd, speculation off and on in turn (so each compares with
    a baseline), 4 ranks of decode lines at varied load and context, a prefill now and then, and
    a second host of one long run beside it."""
    rnd = random.Random(seed)
    lines = []
    t = T0

    def stamp(at: int) -> str:
        return time.strftime("%b %d %H:%M:%S", time.gmtime(at))

    def iso(at: int) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at))

    for r in range(runs):
        lines.append(f"{stamp(t)} gpu-a systemd[1]: Started sglang.service - SGLang server.")
        on = r % 2 == 1
        algo, steps = ("'EAGLE'", 3) if on else ("None", None)
        lines.append(f"{stamp(t)} gpu-a python3[42]: [{iso(t)}] server_args=ServerArgs(model_path='m', "
                     f"speculative_algorithm={algo}, speculative_num_steps={steps})")
        for _ in range(rnd.randrange(20, 50)):
            t += 1
            for host in ("gpu-a", "gpu-b"):
                rank = f"TP{rnd.randrange(4)}"
                acc = f"accept len: {1 + rnd.random() * 3:.2f}, accept rate: {rnd.random():.2f}, " if on or host == "gpu-b" else ""
                if rnd.random() < 0.15:
                    lines.append(f"{stamp(t)} {host} python3[42]: [{iso(t)} {rank}] Prefill batch, #new-seq: 1, "
                                 f"#new-token: {rnd.randrange(8192)}, #cached-token: 0, token usage: 0.10, "
                                 f"#running-req: 3, #queue-req: 0, input throughput (token/s): {rnd.random() * 9000:.2f}")
                    continue
                lines.append(f"{stamp(t)} {host} python3[42]: [{iso(t)} {rank}] Decode batch, #running-req: "
                             f"{rnd.choice([3, 12] * 4 + [1, 40, 80])}, #token: {rnd.randrange(400000)}, token usage: 0.20, "
                             f"{acc}cuda graph: True, gen throughput (token/s): {rnd.random() * 3000:.2f}, "
                             f"#queue-req: {rnd.randrange(4)}")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def unfrozen(monkeypatch):
    """Turns freezing off: every epoch keeps its value sets, as before runs were frozen."""
    def apply() -> None:
        monkeypatch.setattr(EpochTracker, "_close", lambda self, e, first: None)
    return apply


def doc(path: Path, jobs: int) -> dict:
    summary, counts = summarise([str(path)], jobs=jobs)
    return summary.to_json(counts.to_json())


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("runs") / "many.log"
    many_runs_log(path, 300)
    return path


def test_a_log_of_300_runs_gives_the_figures_it_gave_with_every_value_kept(log, unfrozen):
    folded = doc(log, 1)
    unfrozen()
    kept = doc(log, 1)
    assert len(folded["epochs"]) == 301  # gpu-a's 300 runs, gpu-b's one
    compared = [e for e in folded["epochs"] if e["vs_baseline"] is not None]
    assert len(compared) > 50 and any(b["vs_baseline"] is not None for e in compared for b in e["by_load"])
    assert folded == kept


def test_open_of_one_part_gives_the_epochs_it_gave_with_every_value_kept(log, unfrozen):
    folded = store_epochs(log, 1)
    unfrozen()
    assert folded == store_epochs(log, 1)


def store_epochs(log: Path, jobs: int) -> list[dict]:
    """Every epoch of the store `open` makes, as the compare screen and the strip read it."""
    store = open_store([str(log)], jobs=jobs).store
    return [e.to_json() for eps in store.epochs.values() for e in eps] + \
           [e.to_json(brief=True) for eps in store.epochs.values() for e in eps]


def value_sets_held(path: Path, jobs: int = 1) -> tuple[int, int]:
    """(value sets the summary's epochs hold, epochs)."""
    summary, _ = summarise([str(path)], jobs=jobs)
    epochs = summary.epochs.all()
    return sum(len(rows.sets) for e in epochs for rows in e.per_rank.values()), len(epochs)


def test_a_run_that_is_over_holds_no_value_sets(tmp_path):
    few, many = tmp_path / "few.log", tmp_path / "many.log"
    many_runs_log(few, 10)
    many_runs_log(many, 300)
    held_few, n_few = value_sets_held(few)
    held_many, n_many = value_sets_held(many)
    assert (n_few, n_many) == (11, 301)
    # gpu-a's first run (a part of a file read apart may go on in it) and its last, gpu-b's one:
    # 3 metrics on each of 4 ranks each
    assert held_few == held_many == 3 * 4 * 3


def test_a_summary_of_many_runs_is_freed_without_the_cycle_collector(log, capsys):
    """`summary` of 10,000 runs makes some 200,000 objects; held in a cycle, the cycle collector
    would pass over them all at exit (0.2 s). Nothing the command made is left to it."""
    import gc

    from mtptui.commands.summary import main
    from mtptui.core.epochs import Epoch
    from mtptui.core.summary import Summary

    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for argv in (["--json", str(log)], ["--jobs", "2", "--json", str(log)], [str(log)]):
            assert main(argv) == 0
            assert capsys.readouterr().out
            gc.collect()
            left = [o for o in gc.garbage if isinstance(o, (Epoch, Summary, EpochTracker))]
            gc.garbage.clear()
            assert left == [], argv
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()


def test_runs_frozen_in_batches_or_one_by_one_give_the_document_kept_whole(tmp_path, monkeypatch, unfrozen):
    """Runs that are over are frozen FREEZE_AT at a time, their figures made from their rows
    together (core/figures.py): the document is the one they give frozen one at a time, and the
    one they give never frozen (every value kept in its rows and value sets), to the bit. The log
    has runs that go other ways too: runs longer than a fold (their rows in value sets on the
    way), and a rank first seen in a later run."""
    from mtptui.core import epochs, valueset

    path = tmp_path / "runs.log"
    many_runs_log(path, 120, seed=11)
    lines = []
    for i, line in enumerate(path.read_text().splitlines()):
        lines.append(line)
        if i % 997 == 500 and "gpu-a" in line and "Decode batch" in line:  # a rank not seen before
            lines.append(line.replace(" TP", " TP1", 1))
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(valueset, "FOLD", 64)  # the rows a series holds before its value sets take them
    batched = doc(path, 1)
    monkeypatch.setattr(epochs, "FREEZE_AT", 1)
    one_by_one = doc(path, 1)
    unfrozen()
    kept = doc(path, 1)
    assert len(batched["epochs"]) == 121
    assert json.dumps(batched) == json.dumps(one_by_one) == json.dumps(kept)
