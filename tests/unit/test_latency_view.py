"""The latency line and the compare screen's latency text (tui/latency_view.py): whole parts only,
ITL and TTFT first, at 80, 100 and 160 columns; changes against the previous and the spec-off epoch."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from mtptui.core import latency
from mtptui.tui.latency_view import epoch_latency_text, latency_line


def fig(p50, p90, p99, n=100):
    return {"n": n, "mean": p50, "p50": p50, "p90": p90, "p99": p99}


NOW = {"span_s": 60.0, "ttft": fig(0.0589, 0.17, 0.734), "itl": fig(0.012, 0.0144, 0.015),
       "e2e": fig(4.67, 9.19, 18.9), "queue": fig(0.0, 0.0, 0.401),
       "spec": {"accept_len": 2.5, "per_pos": [0.8, 0.5, 0.2]}}


@pytest.mark.parametrize("width", [78, 98, 158])
def test_the_line_keeps_whole_parts_in_order(width):
    line = latency_line(NOW, None, width)
    assert line is not None and len(line) <= width
    if width < 158:
        assert line.startswith("latency 1m  ITL p50 12ms p99 15ms  TTFT p50 59ms p99 734ms  E2E p50 4.67s")
    if width >= 98:
        assert line.endswith("  per pos 0.80 0.50 0.20")  # vLLM's per-position acceptance
    if width >= 158:
        assert "E2E p50 4.67s p99 18.9s  queue p99 401ms" in line
    # never a part cut: every part present is whole
    for part in line.split("  ")[1:]:
        assert part.split(" ")[-1][-1] in "s0123456789"
    assert latency_line({k: v for k, v in NOW.items() if k != "spec"}, None, 98).endswith("queue p99 401ms")


def test_no_figures_say_why_once_and_nothing_without_a_note():
    assert latency_line(None, None, 80) is None
    assert latency_line(None, latency.NO_METRICS, 200) == latency.NO_METRICS
    assert len(latency_line(None, latency.NO_METRICS, 40)) == 40


def _row(i, start, off):
    return SimpleNamespace(index=i, start=start, spec_off=off)


def test_the_compare_text_changes_against_prev_and_spec_off():
    rows = [_row(0, 1.0, True), _row(1, 2.0, False), _row(2, 3.0, False)]
    by = {1.0: {"itl": fig(0.020, 0, 0.030), "ttft": fig(0.05, 0, 0.1)},
          2.0: {"itl": fig(0.010, 0, 0.015), "ttft": fig(0.06, 0, 0.12)},
          3.0: {"itl": fig(0.012, 0, 0.015), "ttft": None}}
    text = epoch_latency_text(rows, 2, by)
    assert text == ("server latency: ITL p50 12ms (+20% vs prev #2, −40% vs off #1) "
                    "p99 15ms (+0% vs prev #2, −50% vs off #1)")
    assert epoch_latency_text(rows, 0, by) == "server latency: ITL p50 20ms p99 30ms · TTFT p50 50ms p99 100ms"
    assert epoch_latency_text(rows, 1, {}) is None
    assert epoch_latency_text(rows, 1, by).startswith("server latency: ITL p50 10ms (−50% vs off #1) p99")
