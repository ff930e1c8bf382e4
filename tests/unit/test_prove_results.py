"""The benchmark's results for people and programs: deltas against off with their intervals, the
best marked only where it is separated from the runner-up, the bars, CSV and JSON files in the
data directory."""

from __future__ import annotations

import csv
import io
import json
import random

from mtptui.core import stats
from mtptui.prove import results


def measured(tok, n, spread=0.02, seed=0):
    """n requests of 64 tokens whose times scatter by `spread` around 64 / tok seconds."""
    rng = random.Random(seed)
    return {"tokens": [64] * n, "seconds": [64 / tok * max(0.2, rng.gauss(1, spread)) for _ in range(n)]}


def row(profile, c, tok, errors=0, accept=None, requests=8, spread=0.02, seed=0):
    return {"profile": profile, "concurrency": c, "requests": requests, "output_tok_s": tok,
            "req_s": None if tok is None else tok / 64, "ttft_p50_ms": 10.0, "ttft_p99_ms": 20.0, "ttft_max_ms": 31.0,
            "itl_p50_ms": 8.0, "itl_p99_ms": 9.5, "itl_max_ms": 12.25, "errors": errors, "accept_len": accept,
            "accept_rate": None if accept is None else 0.8,
            "per_request": measured(tok, requests - errors, spread, seed) if tok else {"tokens": [], "seconds": []}}


REPORT = {"host": "gpu1", "unit": "sglang.service", "started": "2026-11-30T12:00:00Z", "restored": True,
          "results": [row("off", 1, 100.0), row("mtp1", 1, 150.0, accept=1.8, seed=1), row("mtp3", 1, 180.0, accept=2.7, seed=2),
                      row("off", 8, 700.0), row("mtp1", 8, 760.0, accept=1.8, seed=1),
                      row("mtp3", 8, 900.0, errors=2, accept=2.6, seed=2), row("broken", 8, None, requests=0)]}


def test_deltas_against_off_with_intervals_and_the_best_without_errors():
    at1, at8 = results.at(REPORT, 1), results.at(REPORT, 8)
    assert results.best(at1) == "mtp3"
    assert results.best(at8) == "mtp1"  # mtp3 is faster but lost requests
    assert results.delta_pct(at1[2], at1) == 80.0 and results.delta_pct(at1[0], at1) is None
    cells = results.table_rows(REPORT, 8)
    assert [c[:4] for c in cells] == [("", "off", "700.0", "-"), ("★", "mtp1", "760.0", "+8.6%"),
                                      ("", "mtp3", "900.0", "+28.6%"), ("", "broken", "-", "-")]
    lo, hi = cells[1][4].split(" to ")
    assert 0 < float(lo.strip("+%")) < 8.6 < float(hi.strip("+%"))  # around the change, above 0
    assert cells[3][12] == "not run" and cells[0][13] == "-" and cells[1][13] == "1.80"
    assert cells[0][8] == "31" and cells[0][11] == "12.2"  # max shown beside p99


def test_a_first_profile_that_failed_leaves_the_heading_its_requests():
    # the engine tier's bench: off refused by vLLM and rolled back (0 requests), ngram3 measured
    report = dict(REPORT, results=[row("off", 2, None, requests=0), row("ngram3", 2, 78.7, accept=3.84, requests=4)])
    assert "concurrency 2, 4 requests" in results.table_text(report)


def test_a_winner_is_starred_only_when_its_interval_clears_the_runner_up():
    # the same 5% gap: with 6 requests each, requests scattering by 10%, not separated; with 400, separated
    few = [row("off", 1, 100.0, requests=6, spread=0.1), row("mtp1", 1, 200.0, requests=6, spread=0.1, seed=1),
           row("mtp3", 1, 210.0, requests=6, spread=0.1, seed=2)]
    many = [row("off", 1, 100.0, requests=400, spread=0.1), row("mtp1", 1, 200.0, requests=400, spread=0.1, seed=1),
            row("mtp3", 1, 210.0, requests=400, spread=0.1, seed=2)]
    v = results.verdict(few)
    assert (v["leader"], v["runner_up"], v["separated"]) == ("mtp3", "mtp1", False)
    assert v["change_lo_pct"] < 0 < v["change_pct"] == 5.0 < v["change_hi_pct"] and v["more_requests"] > 6
    assert results.best(few) is None and all(c[0] == "" for c in results.table_rows({"results": few}, 1))
    line = results.verdict_line(v)
    assert line.startswith("not separated: mtp3 ahead of mtp1: +5.0%") and f"about {v['more_requests']} more" in line
    w = results.verdict(many)
    assert w["separated"] and w["more_requests"] is None and 0 < w["change_lo_pct"] < 5.0 < w["change_hi_pct"]
    assert results.best(many) == "mtp3" and results.verdict_line(w).startswith("★ mtp3 ahead of mtp1: +5.0% (+")
    # both against off: well clear, either way
    assert all(r["change_lo_pct"] > 50 for r in results.with_intervals(few)[1:])


def test_the_interval_is_a_seeded_bootstrap_and_the_requests_needed_follow_its_width():
    a = list(zip([64] * 30, measured(105.0, 30, 0.1, 1)["seconds"]))
    b = list(zip([64] * 30, measured(100.0, 30, 0.1, 2)["seconds"]))
    assert stats.ratio_interval(a, b) == stats.ratio_interval(a, b)  # a fixed seed
    lo, hi = stats.ratio_interval(a, b)
    assert lo < stats.rate(a) / stats.rate(b) < hi
    assert stats.ratio_interval(a[:4], b) is None  # too few for a bootstrap to say
    tiny = results.verdict([row("off", 1, 100.0, requests=3), row("mtp1", 1, 150.0, requests=3, seed=1)])
    assert not tiny["separated"] and "too few requests for an interval (5 or more each)" in results.verdict_line(tiny)
    # ln(1.05 / 0.99) / ln(1.05) = 1.206: 30 requests become 44
    assert stats.requests_needed(30, 1.05, 0.99) == 44 and stats.requests_needed(30, 0.98, 0.9) is None


def test_small_figures_keep_their_digits():
    r = {**row("off", 8, 700.0), "itl_p50_ms": 0.01, "accept_rate": 0.004}
    cells = results.table_rows({"results": [r]}, 8)[0]
    assert cells[9] == "0.010" and cells[14] == "0.0040"


def test_the_text_has_a_table_and_a_verdict_per_concurrency_and_the_bars_mark_the_best():
    text = results.table_text(REPORT)
    assert text.count("concurrency ") == 2 and "restored: yes" in text
    assert "★ mtp3 ahead of mtp1" in text and "95% interval" in text
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
    assert list(rows[0])[3:] == [*results.COLUMNS, *results.CSV_ACCEPTANCE]
    assert rows[0]["req_accept_p50"] == ""  # not reported: empty, never 1.0
    assert rows[0]["change_pct"] == "" and float(rows[1]["change_pct"]) == 50.0
    assert float(rows[1]["change_lo_pct"]) < 50.0 < float(rows[1]["change_hi_pct"])


def test_acceptance_per_request_beside_the_log_in_the_table_and_csv():
    acc = {"requests": 16, "p10": 1.438, "p50": 2.133, "p90": 3.124,
           "by_category": {"chat": {"requests": 8, "p10": 1.39, "p50": 1.506, "p90": 1.6},
                           "code": {"requests": 8, "p10": 2.67, "p50": 2.978, "p90": 3.25}}}
    report = {**REPORT, "results": [{**r, results.ACCEPTANCE: acc} if r["profile"] == "mtp3" else r
                                    for r in REPORT["results"]]}
    text = results.table_text(report)
    lines = [ln for ln in text.splitlines() if ln.strip().startswith("mtp3  p10")]
    assert len(lines) == sum(r["profile"] == "mtp3" for r in REPORT["results"])
    assert "p10 1.44  p50 2.13  p90 3.12" in lines[0] and "chat 1.51 (8)  code 2.98 (8)" in lines[0]
    assert "(log " in lines[0] and "accept len per request" in text
    assert "accept len per request" not in results.table_text(REPORT)
    rows = list(csv.DictReader(io.StringIO(results.to_csv(report))))
    mtp3 = [x for x in rows if x["profile"] == "mtp3"]
    assert mtp3 and all(float(x["req_accept_p50"]) == 2.133 and float(x["req_accept_p90"]) == 3.124 for x in mtp3)
