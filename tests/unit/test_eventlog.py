"""Summary's events wait on disk past the first few, come back in input order however the input
was read (one reader, parallel parts, several files), and `summary --json` writes them out byte
for byte as json.dumps of the whole document would."""

import io
import json
import pickle
import tempfile
from pathlib import Path

from mtptui.commands.summary import render_table, table_lines, write_json
from mtptui.core import eventlog
from mtptui.sources import parallel
from mtptui.core.eventlog import EventLog
from mtptui.core.records import Event

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def events(n: int, start: int = 0) -> list[Event]:
    return [Event("retract", f"h{i % 3}", 1773072000.0 + i, f"KV cache pool is full #{i} \"q\"\n",
                  rank="TP1" if i % 2 else "", data={"i": i} if i % 5 == 0 else {})
            for i in range(start, start + n)]


def texts(evs: list[Event]) -> list[str]:
    return [json.dumps(e.to_json()) for e in evs]


def test_events_past_the_held_ones_go_to_a_file_and_come_back_in_order(monkeypatch):
    monkeypatch.setattr(eventlog, "HELD", 10)
    monkeypatch.setattr(eventlog, "RECENT", 2)
    log = EventLog()
    evs = events(35)
    for e in evs:
        log.append(e)
    assert len(log._held) == 3 and log._segments, "32 went to disk, the newest stay"
    assert list(log.texts()) == texts(evs)
    assert list(log) == [e.to_json() for e in evs]
    assert list(log.texts()) == texts(evs), "read twice, the same"


def test_joined_logs_keep_input_order(monkeypatch):
    monkeypatch.setattr(eventlog, "HELD", 4)
    a, b = EventLog(), EventLog()
    first, second, third = events(9), events(6, 9), events(7, 15)
    for e in first:
        a.append(e)
    for e in second:
        b.append(e)
    a.extend(b)
    for e in third:
        a.append(e)
    assert len(a) == 22 and len(b) == 0
    assert list(a.texts()) == texts(first + second + third)


def test_a_workers_log_crosses_back_by_the_file_it_was_given(monkeypatch):
    """Pickled (as a worker's result is), only the count travels; the events are in the file."""
    monkeypatch.setattr(eventlog, "HELD", 4)
    spool = tempfile.TemporaryFile()
    log = EventLog(spool)
    evs = events(10)
    for e in evs:
        log.append(e)
    back = pickle.loads(pickle.dumps(log))
    assert len(back) == 10 and list(back.texts()) == []
    back.adopt(spool)
    assert list(back.texts()) == texts(evs)


def test_a_log_that_writes_its_own_files_does_not_cross_processes():
    log = EventLog()
    log.append(events(1)[0])
    try:
        pickle.dumps(log)
    except TypeError:
        return
    raise AssertionError("its events would be lost")


def event_heavy_log(path: Path) -> Path:
    """A log with more events than one part holds in memory, between batch lines."""
    lines = []
    for i in range(3000):
        t = f"2026-03-09 16:{i // 60 % 60:02d}:{i % 60:02d}"
        lines.append(f"[{t} TP{i % 2}] Decode batch, #running-req: {i % 50}, #token: 4000, token usage: 0.{i % 90 + 10}, "
                     f"accept len: {1 + i % 300 / 100:.2f}, accept rate: 0.{i % 90 + 10}, cuda graph: True, "
                     f"gen throughput (token/s): {i * 7.31 % 3000:.2f}, #queue-req: 0")
        lines.append(f"[{t}] KV cache pool is full. Retract requests. #retracted_reqs: {i}, "
                     f"#new_tokens_gained: 512, #new_token_ratio: 0.7000 -> 0.8000")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_parallel_parts_list_every_event_in_order(tmp_path, monkeypatch):
    monkeypatch.setattr(eventlog, "HELD", 100)  # the forked workers inherit it
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    path = str(event_heavy_log(tmp_path / "events.log"))
    docs = []
    for jobs in (1, 2, 3):
        s, counts = parallel.summarise([path], jobs=jobs)
        docs.append(s.to_json(counts.to_json()))
    assert [e["text"].split("#retracted_reqs: ")[1].split(",")[0] for e in docs[0]["events"]] == \
        [str(i) for i in range(3000)]
    assert docs[1] == docs[0] and docs[2] == docs[0]


def test_written_json_is_json_dumps_of_the_document(tmp_path, monkeypatch):
    monkeypatch.setattr(eventlog, "HELD", 100)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    path = str(event_heavy_log(tmp_path / "events.log"))
    for inputs in ([path], [str(SAMPLES / "mtp-toggle-restarts.log"), str(SAMPLES / "vllm-eagle.log")]):
        s, counts = parallel.summarise(inputs, jobs=2)
        doc = s.document(counts.to_json())
        out = io.StringIO()
        write_json(doc, out)
        whole = s.to_json(counts.to_json())
        assert out.getvalue() == json.dumps(whole) + "\n"
        assert "\n".join(table_lines(doc)) == render_table(whole)


def test_files_after_the_first_resolve_spec_lines_by_the_file_before(tmp_path):
    """A file that begins with a vLLM spec line (its throughput line ended the file before)
    reads as the two files joined."""
    lines = (SAMPLES / "vllm-eagle.log").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "SpecDecoding metrics" in line)
    a, b, whole = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "whole.log"
    a.write_text("".join(lines[:cut]))
    b.write_text("".join(lines[cut:]))
    whole.write_text("".join(lines))
    s, counts = parallel.summarise([str(a), str(b)], jobs=1)
    one, one_counts = parallel.summarise([str(whole)], jobs=1)
    doc = s.to_json(counts.to_json())
    assert [x["rank"] for x in doc["series"]] == ["Engine 000"], "no series of an unknown rank"
    assert doc == one.to_json(one_counts.to_json())


def test_the_newest_events_stay_in_memory_for_a_traceback_to_finish_them(monkeypatch):
    """A traceback's event takes its text from its exception line, a few lines on (LineParser's
    Block): the log writes it to disk only after RECENT newer events came."""
    monkeypatch.setattr(eventlog, "HELD", 10)
    log = EventLog()
    evs = events(10)
    for e in evs:
        log.append(e)
    evs[-1].text = "RuntimeError: CUDA error"  # its exception line came after the log reached HELD
    assert list(log.texts()) == texts(evs)
