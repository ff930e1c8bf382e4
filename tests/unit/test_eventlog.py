"""Summary's events wait on disk past the first few, come back in input order however the input
was read (one reader, parallel parts, several files), and `summary --json` writes each as orjson
writes its dict (Event.to_json), which reads back as that dict."""

import json
import pickle
import tempfile
from pathlib import Path

import orjson

from mtptui.core import eventlog
from mtptui.sources import parallel
from mtptui.core.eventlog import EventLog
from mtptui.core.records import Event

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def events(n: int, start: int = 0) -> list[Event]:
    return [Event("retract", f"h{i % 3}", 1773072000.0 + i, f"KV cache pool is full #{i} \"q\"\n",
                  rank="TP1" if i % 2 else "", data={"i": i} if i % 5 == 0 else {})
            for i in range(start, start + n)]


def texts(evs: list[Event]) -> list[bytes]:
    return [orjson.dumps(e.to_json()) for e in evs]


def test_events_written_to_disk_read_back_as_their_dicts_as_json_reads_them(monkeypatch):
    """Each a line of JSON (newlines in a text escaped), that json.loads reads as the event's dict,
    whether written with the others past HELD or held in memory; the file is lines of them."""
    monkeypatch.setattr(eventlog, "HELD", 10)
    evs = events(35)
    evs[3].data = {"levels": (1, 2.5), 7: "a key that is no string", "é": "\u2028\n\x00\"", "big": 2**62, "f": 1e16}
    log = EventLog()
    for e in evs:
        log.append(e)
    lines = list(log.json_texts())
    assert all(b"\n" not in line for line in lines)
    assert [json.loads(line) for line in lines] == [json.loads(json.dumps(e.to_json())) for e in evs]
    assert lines[3].startswith(b"{") and json.loads(lines[3])["data"]["7"] == "a key that is no string"
    segment = log._segments[0]
    segment.seek(0)
    assert segment.read().split(b"\n")[:3] == lines[:3]


def test_events_past_the_held_ones_go_to_a_file_and_come_back_in_order(monkeypatch):
    monkeypatch.setattr(eventlog, "HELD", 10)
    monkeypatch.setattr(eventlog, "RECENT", 2)
    log = EventLog()
    evs = events(35)
    for e in evs:
        log.append(e)
    assert len(log._held) == 3 and log._segments, "32 went to disk, the newest stay"
    assert list(log.json_texts()) == texts(evs)
    assert list(log) == [e.to_json() for e in evs]
    assert list(log.json_texts()) == texts(evs), "read twice, the same"


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
    assert list(a.json_texts()) == texts(first + second + third)


def test_a_workers_log_crosses_back_by_the_file_it_was_given(monkeypatch):
    """Pickled (as a worker's result is), only the count travels; the events are in the file."""
    monkeypatch.setattr(eventlog, "HELD", 4)
    spool = tempfile.TemporaryFile()
    log = EventLog(spool)
    evs = events(10)
    for e in evs:
        log.append(e)
    back = pickle.loads(pickle.dumps(log))
    assert len(back) == 10 and list(back.json_texts()) == []
    back.adopt(spool)
    assert list(back.json_texts()) == texts(evs)


def test_a_log_that_writes_its_own_files_does_not_cross_processes():
    log = EventLog()
    log.append(events(1)[0])
    try:
        pickle.dumps(log)
    except TypeError:
        return
    raise AssertionError("its events would be lost")








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
    assert list(log.json_texts()) == texts(evs)
