"""How each run ended (issue 19): restarted by mtptui, restarted by systemd (Restart=), stopped,
crashed with its first error (OOM, NCCL, a traceback's exception, a watchdog timeout) or still
running; a crash loop is one line with its count. On the sample logs and on crash loops the
simulator makes."""

import itertools

import pytest

from mtptui.core.epochs import CRASHED, MTPTUI, RUNNING, Epoch, EpochTracker, crash_loops
from mtptui.core.ingest import Ingest
from mtptui.core.records import Event
from mtptui.core.summary import Summary
from mtptui.sim import scenario
from mtptui.sim.scenario import Run



def summary_of(lines) -> dict:
    s = Summary()
    ingest = Ingest(s)
    ingest.feed_many(list(lines))
    return s.to_json(ingest.counts.to_json())








@pytest.mark.parametrize("fault,kind,text", [
    ("nccl@5", "nccl", "Watchdog caught collective operation timeout"),
    ("crash@5", "error", "RuntimeError: CUDA error: an illegal memory access was encountered"),
])
def test_a_crash_loop_the_simulator_makes_is_one_line(fault, kind, text):
    qwen = ["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4"]
    runs = [Run(qwen + ["--sim-load", "light", "--sim-fault", fault], serve=0, end="die") for _ in range(4)]
    lines = [ln.text for ln in scenario.render_runs(runs, startup_seconds=5.0, salt="crashloop-" + fault)]
    doc = summary_of(lines)
    ended = [e["ended"] for e in doc["epochs"]]
    assert [e["how"] for e in ended] == [CRASHED] * 4, ended
    assert all(e["error"]["kind"] == kind and text in e["error"]["text"] for e in ended), ended
    (loop,) = doc["crash_loops"]
    assert loop["count"] == 4 and loop["error"]["kind"] == kind


def _ev(kind, ts, text="", **data):
    return Event(kind=kind, ts=ts, host="h", text=text, data=data)


def test_restarted_by_mtptui_names_its_profile():
    t = EpochTracker()
    for ev in [_ev("started", 0), _ev("spec_config", 1, algorithm=None), _ev("ready", 10),
               _ev("restart_requested", 50, profile="mtp3"),
               _ev("stopping", 51), _ev("stopped", 52), _ev("started", 53)]:
        t.add_event(ev, ev.ts)
    first, second = t.epochs["h"]
    assert first.ending(last=False) == {"how": MTPTUI, "profile": "mtp3", "text": "restarted by mtptui (profile mtp3)"}
    assert second.ending(last=True)["how"] == RUNNING


def test_an_error_the_server_got_over_is_no_crash():
    t = EpochTracker()
    for ev in [_ev("started", 0), _ev("error", 5, "Health check failed. ..."), _ev("ready", 10)]:
        t.add_event(ev, ev.ts)
    assert t.epochs["h"][0].ending(last=True)["how"] == RUNNING


def test_a_crash_loop_needs_the_same_error_within_minutes():
    def epoch(i, start, text):
        return {"host": "h", "index": i, "start": start, "end": start + 30,
                "ended": {"how": CRASHED, "error": {"kind": "oom", "ts": start, "text": text}}}
    same = [epoch(i, 60.0 * i, f"GPU {i} out of memory, 1.{i} GiB free") for i in range(3)]
    assert crash_loops(same)[0]["count"] == 3  # numbers aside, the same error
    assert crash_loops(same[:2]) == []
    apart = [epoch(i, 3600.0 * i, "out of memory") for i in range(3)]
    assert crash_loops(apart) == []
    other = same[:2] + [epoch(2, 120, "another error")]
    assert crash_loops(other) == []


def test_the_table_of_a_crash_loops_runs_is_made_in_one_pass_as_from_the_whole_document(monkeypatch):
    """The table's sections of runs (the epochs, their buckets, how each ended) come from one pass
    over the runs, the later sections waiting in spools (here on disk from the first byte): the
    same lines as from the whole document, each run listed, the loop in one line."""
    from mtptui.commands import summary as command

    monkeypatch.setattr(command, "SPOOL_BYTES", 1)
    qwen = ["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4"]
    runs = [Run(qwen + ["--sim-load", "light", "--sim-fault", "oom@8"], serve=0, end="die") for _ in range(6)]
    runs.append(Run(qwen + ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
                          "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--sim-load", "light"],
                    serve=20))
    lines = [ln.text for ln in scenario.render_runs(runs, startup_seconds=5.0, salt="table-loop")]
    s = Summary()
    ingest = Ingest(s)
    ingest.feed_many(lines)
    counts = ingest.counts.to_json()
    streamed = list(command.table_lines(s.document(counts)))
    assert streamed == list(command.table_lines(s.to_json(counts)))
    runs_at = streamed.index("runs (how each ended):")
    ended = streamed[runs_at + 1:streamed.index("", runs_at)]
    assert len(ended) == 2 and "crash loop: 6 runs crashed with OOM" in ended[0] and ended[1].endswith("stopped")
    assert any(line.startswith("epochs at the same load") for line in streamed)
    epochs_at = next(i for i, line in enumerate(streamed) if line.startswith("epochs (runs between restarts"))
    assert [line.split()[1] for line in streamed[epochs_at + 2:epochs_at + 9]] == [str(i) for i in range(1, 8)]


def test_a_run_that_may_not_have_crashed_never_ends_crashed():
    """crash_loops() reads the ending of the runs that may_have_crashed says may have, alone: every
    other ending, over every mix of what a run can note, is no crash."""
    troubles = [None, _ev("oom", 5, "CUDA out of memory"), _ev("error", 5, "Traceback", exception="RuntimeError: x"),
                _ev("nccl", 5, "Watchdog caught collective operation timeout")]
    seen = set()
    for trouble, ready, failed, auto, stop, requested, last in itertools.product(
            troubles, (False, True), (None, "sglang.service: Failed with result 'exit-code'."),
            (False, True), (False, True), (False, True), (False, True)):
        e = Epoch(index=1, host="h", start=0.0, trouble=trouble, ready_after_trouble=ready, failed=failed,
                  auto_restart=auto, stop=stop, restart_requested=requested)
        how = e.ending(last)["how"]
        seen.add((e.may_have_crashed, how == CRASHED))
        assert e.may_have_crashed or how != CRASHED, (trouble, ready, failed, auto, stop, requested)
    assert seen == {(False, False), (True, False), (True, True)}  # the look is not trivially true
