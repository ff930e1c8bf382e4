"""The alert thresholds: the [thresholds] table of the config, with the defaults core/alerts.py
judges by when the config says nothing."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Thresholds:
    accept_rate_min: float = 0.35
    accept_rate_hold_s: float = 30.0
    accept_len_one_max: float = 1.10  # accept len at or below this counts as "nothing accepted"
    accept_len_one_hold_s: float = 30.0
    fallback_min_batches: int = 3  # decode lines without accept len before a fallback is called
    fallback_hold_s: float = 10.0
    graph_off_hold_s: float = 15.0
    queue_growth_min: float = 10.0  # requests more waiting at the end of the span than at its start
    queue_hold_s: float = 60.0
    rank_diverge_pct: float = 25.0
    rank_diverge_hold_s: float = 60.0
    rank_diverge_parts: int = 4  # the hold is cut in this many parts; the rank must differ in each
    rank_diverge_min_accept_len: float = 0.3  # and by at least this much accept len ...
    rank_diverge_min_req_tok_s: float = 5.0  # ... or this much gen tok/s per running request
    throughput_drop_pct: float = 30.0
    throughput_hold_s: float = 60.0
    baseline_min_s: float = 120.0  # an epoch needs this much history before it is a baseline
    stale_s: float = 30.0  # a rank with no batch line for this long is shown STALE
    coverage: float = 0.7  # the samples in a span must cover this fraction of it
