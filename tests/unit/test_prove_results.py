"""The benchmark's results for people and programs: deltas against off, the best marked, the
bars, CSV and JSON files in the data directory."""

from __future__ import annotations

import csv
import io
import json

from mtptui.prove import results


def row(profile, c, tok, errors=0, accept=None, requests=8):
    return {"profile": profile, "concurrency": c, "requests": requests, "output_tok_s": tok,
            "req_s": None if tok is None else tok / 64, "ttft_p50_ms": 10.0, "ttft_p99_ms": 20.0, "itl_p50_ms": 8.0,
            "itl_p99_ms": 9.5, "errors": errors, "accept_len": accept, "accept_rate": None if accept is None else 0.8}


REPORT = {"host": "gpu1", "unit": "sglang.service", "started": "2026-11-30T12:00:00Z", "restored": True,
          "results": [row("off", 1, 100.0), row("mtp1", 1, 150.0, accept=1.8), row("mtp3", 1, 180.0, accept=2.7),
                      row("off", 8, 700.0), row("mtp1", 8, 760.0, accept=1.8), row("mtp3", 8, 900.0, errors=2, accept=2.6),
                      row("broken", 8, None, requests=0)]}


def test_deltas_against_off_and_the_best_without_errors():
    at1, at8 = results.at(REPORT, 1), results.at(REPORT, 8)
    assert results.best(at1) == "mtp3"
    assert results.best(at8) == "mtp1"  # mtp3 is faster but lost requests
    assert results.delta_pct(at1[2], at1) == 80.0 and results.delta_pct(at1[0], at1) is None
    cells = results.table_rows(REPORT, 8)
    assert [c[:4] for c in cells] == [("", "off", "700.0", "-"), ("★", "mtp1", "760.0", "+8.6%"),
                                      ("", "mtp3", "900.0", "+28.6%"), ("", "broken", "-", "-")]
    assert cells[3][9] == "not run" and cells[0][10] == "-" and cells[1][10] == "1.80"


def test_the_text_has_a_table_per_concurrency_and_the_bars_mark_the_best():
    text = results.table_text(REPORT)
    assert text.count("concurrency ") == 2 and "restored: yes" in text
    bars = results.bars(REPORT, width=60)
    assert "concurrency 1: output tokens/s" in bars and "mtp3 ★" in bars and "\x1b[" not in bars


def test_csv_and_json_are_saved_in_the_data_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    written = results.save(REPORT, str(tmp_path / "r.json"), None)
    assert [p.name for p in written] == ["gpu1-20261130-120000.json", "gpu1-20261130-120000.csv", "r.json"]
    assert written[0].parent == tmp_path / "data" / "mtptui" / "bench"
    assert json.loads(written[2].read_text()) == REPORT
    rows = list(csv.DictReader(io.StringIO(written[1].read_text())))
    assert len(rows) == 7 and rows[0]["host"] == "gpu1" and rows[6]["output_tok_s"] == ""
    assert list(rows[0])[3:] == list(results.COLUMNS)
