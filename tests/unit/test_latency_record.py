"""Scrapes in a record (sources/record.py: MTPTUI_METRICS entries) and summary's latency section:
written beside the lines, found again with the epoch the dashboard gave them, and each epoch's
figures recomputed as the dashboard had them (core/latency.by_epoch)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

from prometheus_client import CollectorRegistry, Histogram, generate_latest

from mtptui.commands import summary as summary_cmd
from mtptui.core import latency
from mtptui.sim import metrics as sim_metrics
from mtptui.sources.record import RecordWriter, recorded_scrapes


def _scrape(t: float, itl: list[float]) -> latency.Scrape:
    reg = CollectorRegistry()
    h = Histogram("sglang:inter_token_latency_seconds", "h", ["model_name"], buckets=sim_metrics.ITL_BUCKETS,
                  registry=reg)
    for x in itl:
        h.labels("m").observe(x)
    return latency.parse(generate_latest(reg).decode(), t)


def test_scrapes_round_trip_through_a_record_and_by_epoch_is_the_dashboards(tmp_path):
    path = tmp_path / "r.jsonl"
    w = RecordWriter(str(path))
    w.metrics("gpu1", latency.to_json(_scrape(0.5, [])), 0.5)  # before any entry: not written
    w.write(['{"MESSAGE":"hello","__REALTIME_TIMESTAMP":"1000000"}'], "gpu1")
    live = latency.HostLatency()
    # epoch 10 on the first server; it restarts (counts begin again) into epoch 20
    for t, epoch, obs in ((11.0, 10.0, [0.009] * 50), (16.0, 10.0, [0.009] * 80), (21.0, 20.0, [0.05] * 5),
                          (26.0, 20.0, [0.05] * 30)):
        s = _scrape(t, obs)
        live.add(s, epoch)
        w.metrics("gpu1", dict(latency.to_json(s), epoch=epoch), t)
    w.close()
    found = recorded_scrapes(str(path))
    assert list(found) == ["gpu1"] and [e for _, e in found["gpu1"]] == [10.0, 10.0, 20.0, 20.0]
    again = latency.by_epoch(found["gpu1"], [])
    assert again == live.epochs
    assert again[10.0]["itl"]["n"] == 80 and again[20.0]["itl"]["n"] == 30  # the restart: from its start
    assert 0.04 < again[20.0]["itl"]["p50"] <= 0.06


def test_a_record_without_scrapes_and_a_damaged_entry(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"MESSAGE":"x"}\n{"MTPTUI_METRICS":"{not json","_HOSTNAME":"h"}\n')
    assert recorded_scrapes(str(path)) == {}
    assert recorded_scrapes(str(tmp_path / "missing")) == {}


def test_summary_table_says_each_epochs_latency():
    lines = summary_cmd.latency_lines([{"host": "gpu1", "epoch": 1, "itl": {"p50": 0.012, "p90": 0.014, "p99": 0.015},
                                        "ttft": None}])
    assert lines[-1] == "  gpu1         #2   ITL 12ms / 14ms / 15ms"


def test_summary_json_of_a_record_without_scrapes_has_no_latency(tmp_path):
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "sample_logs" / "dp-attention-8.log"
    out = io.StringIO()
    with redirect_stdout(out):
        assert summary_cmd.main(["--json", str(sample)]) == 0
    assert "latency" not in json.loads(out.getvalue())


def test_the_scan_finds_every_scrape_across_its_chunks(tmp_path, monkeypatch):
    from mtptui.sources import record

    path = tmp_path / "r.jsonl"
    with open(path, "w") as f:
        for i in range(200):
            f.write(json.dumps({"MESSAGE": "x" * i}) + "\n")
            s = latency.Scrape(float(i), {}, {}, {}, 2.0)
            f.write(json.dumps({"MTPTUI_METRICS": json.dumps(dict(latency.to_json(s), epoch=1.0)), "_HOSTNAME": "h"}) + "\n")
    monkeypatch.setattr(record, "SCAN_CHUNK", 97)  # lines longer than a chunk, cut anywhere
    got = recorded_scrapes(str(path))
    assert [s.t for s, _ in got["h"]] == [float(i) for i in range(200)]


def test_only_a_json_record_is_searched_for_its_own_entries(tmp_path):
    """A plain log can quote an entry (a line that prints one), but only `record`'s journald JSON
    holds mtptui's entries: any other file is not read for them at all."""
    entry = json.dumps({"MTPTUI_METRICS": json.dumps({"t": 1.0, "epoch": 5.0}), "_HOSTNAME": "h"})
    rec = tmp_path / "r.jsonl"
    rec.write_text(entry + "\n")
    found = recorded_scrapes(str(rec))
    assert [(s.t, e) for s, e in found["h"]] == [(1.0, 5.0)]
    plain = tmp_path / "server.log"
    plain.write_text("Dec 02 10:00:00 h sglang[1]: " + entry + "\n" + entry + "\n")
    assert recorded_scrapes(str(plain)) == {}
