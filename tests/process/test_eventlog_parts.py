"""Events read by forked readers of a file's parts: every one listed, in order; the JSON written reads as the document.

The process tier: these start child processes (tests/unit starts none)."""

import io
import json
from pathlib import Path
from mtptui.commands.summary import render_table, table_lines, write_json
from mtptui.core import eventlog
from mtptui.sources import parallel
from test_eventlog import SAMPLES  # noqa: F401 (fixtures and builders shared with the unit tier)


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


def test_written_json_reads_as_the_document(tmp_path, monkeypatch):
    monkeypatch.setattr(eventlog, "HELD", 100)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    path = str(event_heavy_log(tmp_path / "events.log"))
    for inputs in ([path], [str(SAMPLES / "mtp-toggle-restarts.log"), str(SAMPLES / "vllm-eagle.log")]):
        s, counts = parallel.summarise(inputs, jobs=2)
        doc = s.document(counts.to_json())
        out = io.StringIO()
        write_json(doc, out)
        whole = s.to_json(counts.to_json())
        text = out.getvalue()
        assert text.endswith("}\n") and text.count("\n") == 1
        assert json.loads(text) == json.loads(json.dumps(whole))  # tuples as lists, keys as strings
        assert "\n".join(table_lines(doc)) == render_table(whole)
