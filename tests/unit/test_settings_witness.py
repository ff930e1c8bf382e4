"""The current run's settings read off the host (ExecStart, /server_info) where the log holds no
settings line of it: they label the run under way, never begin a run, never hide a settings line
the log did give, and the status bar says which witness they came from."""

from __future__ import annotations

from mtptui.core.parse.events import server_args
from mtptui.tui.controller import Dashboard
from mtptui.tui.viewmodel import spec_for, spec_short

DECODE = ("[2026-12-02 06:00:{s:02d} TP0] Decode batch, #running-req: 8, #token: 4096, token usage: 0.10, "
          "accept len: 2.41, accept rate: 0.80, cuda graph: True, gen throughput (token/s): 900.00, #queue-req: 0,")
ARGS = ("[2026-12-02 06:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, "
        "speculative_algorithm='EAGLE', speculative_num_steps=2, speculative_eagle_topk=1, "
        "speculative_num_draft_tokens=3)")
WITNESS = {"algorithm": "EAGLE", "num_steps": 3, "topk": 1, "num_draft_tokens": 4, "draft_model_path": None,
           "model_path": "Qwen/Qwen3-8B", "tp_size": 4, "dp_size": 1}


def dashboard(lines: list[str]) -> Dashboard:
    d = Dashboard([])
    d.feed.lines(lines, "gpu0")
    d.feed.drain()
    d.tick()
    return d


def test_a_run_without_its_settings_line_is_labelled_from_the_witness_in_place():
    d = dashboard([DECODE.format(s=s) for s in range(1, 6)])
    assert d.needs_settings("gpu0")
    assert spec_short(spec_for(d.store, "gpu0", None)) == "spec ? (no server_args seen)"
    d.note_settings("gpu0", WITNESS, "ExecStart")
    epochs = d.store.epochs["gpu0"]
    assert len(epochs) == 1 and epochs[0].label == "EAGLE steps=3 topk=1 draft=4"
    assert epochs[0].records == 5  # the batches read before stay in the run they belong to
    assert not d.needs_settings("gpu0")
    d.servers["gpu0"] = "SGLang 0.5.23"
    assert (spec_short(spec_for(d.store, "gpu0", None), d.servers.get("gpu0"))
            == "spec EAGLE steps=3 topk=1 draft=4 (ExecStart) · SGLang 0.5.23")
    ev = d.store.events[-1]
    assert ev.kind == "spec_witness" and ev.data["witness"] == "ExecStart"
    assert ev.ts == epochs[0].start


def test_a_settings_line_in_the_log_is_never_overwritten_by_a_witness():
    d = dashboard([ARGS, *(DECODE.format(s=s) for s in range(1, 4))])
    assert not d.needs_settings("gpu0")
    d.note_settings("gpu0", WITNESS, "ExecStart")
    assert [e.label for e in d.store.epochs["gpu0"]] == ["EAGLE steps=2 topk=1 draft=3"]
    assert not any(e.kind == "spec_witness" for e in d.store.events)


def test_off_from_a_witness_says_where_it_was_read():
    d = dashboard([DECODE.format(s=1)])
    d.note_settings("gpu0", {**WITNESS, "algorithm": None}, "/server_info")
    assert spec_short(spec_for(d.store, "gpu0", None)) == "spec off (/server_info)"
    assert spec_short(server_args(ARGS)) == "spec EAGLE steps=2 topk=1 draft=3"


def test_a_host_with_no_line_yet_gets_its_first_run_from_the_witness():
    d = dashboard([])
    d.note_settings("gpu0", WITNESS, "ExecStart")
    assert [e.label for e in d.store.epochs["gpu0"]] == ["EAGLE steps=3 topk=1 draft=4"]
