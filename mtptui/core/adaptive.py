"""What an engine's adaptive speculation did (issue 46 item 2): the draft steps it used over time,
and whether throughput fell as the load crossed a threshold of its per-batch-size schedule.

The steps in use, as each engine says them (none prints its controller's decision on its decode
line: SGLang 0.5.23's Decode batch line has accept len and rate only, scheduler_components/
metrics_reporter.py):
- SGLang's `sglang:spec_num_steps` gauge (0.5.17+, observability/metrics_collector.py; with
  --speculative-adaptive the tier its controller picked), read off /metrics (latency.Scrape).
- vLLM's drafted tokens per draft. Its /metrics counters give them exactly between two scrapes:
  `vllm:spec_decode_num_draft_tokens` over `vllm:spec_decode_num_drafts`. Its SpecDecoding line
  (0.32.0 v1/spec_decode/metrics.py SpecDecodingLogging.log) prints `Drafted: N tokens` but not the
  drafts: they are the accepted tokens over the per-position rates' sum (each rate is accepted at
  that position over the drafts; their sum is `Mean acceptance length` - 1, at 3 decimals each
  rather than 2), so an interval that accepted nothing says no K. With a Dynamic SD schedule the
  figure is the mean K of the interval's steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mtptui.core.epochs import adaptive_words
from mtptui.core.latency import VLLM_DRAFT_TOKENS, VLLM_DRAFTS, Scrape

# Throughput below the range before by more than this share (noise between decode lines is a few
# percent; vllm #49548's collapse went from 232 to 24-157 tok/s) ...
FELL_SHARE = 0.15
MIN_LINES = 3  # ... each range's mean over at least this many decode lines


def adapts(spec: dict | None) -> bool:
    """The settings ask the engine to adapt its steps, and its documented fallbacks leave it on
    (epochs.adaptive_words says OFF otherwise)."""
    words = adaptive_words(spec or {})
    return words is not None and "(OFF:" not in words


def drafts_per_step(fields: dict) -> float | None:
    """K in use over a vLLM SpecDecoding line's interval: drafted tokens per draft (module doc)."""
    drafted, accepted = fields.get("drafted_tokens"), fields.get("accepted_tokens")
    rates = fields.get("per_position_accept_rate")
    if not isinstance(drafted, (int, float)) or not isinstance(accepted, (int, float)) or accepted <= 0:
        return None
    share: float | None = float(sum(rates)) if isinstance(rates, (list, tuple)) and rates else None
    if not share:
        mean = fields.get("accept_len")
        share = mean - 1 if isinstance(mean, (int, float)) and mean > 1 else None
    if not share:
        return None
    drafts = accepted / share
    return drafted / drafts if drafts > 0 else None


def steps_between(old: Scrape | None, new: Scrape) -> float | None:
    """The steps in use at `new` from /metrics: SGLang's gauge, else vLLM's draft tokens per draft
    since `old` (None without drafts between them, or across a restart)."""
    if new.num_steps is not None:
        return new.num_steps
    if old is None:
        return None
    drafts = new.counters.get(VLLM_DRAFTS, 0.0) - old.counters.get(VLLM_DRAFTS, 0.0)
    tokens = new.counters.get(VLLM_DRAFT_TOKENS, 0.0) - old.counters.get(VLLM_DRAFT_TOKENS, 0.0)
    return tokens / drafts if drafts > 0 and tokens >= 0 else None


@dataclass(frozen=True)
class Fell:
    """Throughput lower in a schedule's range than in the one below it."""

    edge: int  # the first batch size of the higher range
    below: tuple[int, int, int]  # (start, end, K) of each range
    above: tuple[int, int, int]
    tok_s_below: float  # mean gen tok/s of the decode lines in each
    tok_s_above: float
    lines: tuple[int, int]

    def words(self) -> str:
        (a0, a1, ka), (b0, b1, kb) = self.below, self.above
        return (f"gen tok/s {self.tok_s_below:.0f} at {a0}-{a1} running (K {ka}), {self.tok_s_above:.0f} "
                f"at {b0}-{b1} (K {kb})")


def fell_across(schedule: Sequence[Sequence[int]] | None, running: Sequence[float],
                gen: Sequence[float]) -> Fell | None:
    """The lowest edge of the schedule where mean gen throughput of the decode lines in the range
    above is under that of the range below by more than FELL_SHARE (each with MIN_LINES lines);
    `running` and `gen`: the lines' #running-req and gen tok/s, NaN where a line has none."""
    if not schedule or len(schedule) < 2:
        return None
    rows = sorted((int(a), int(b), int(k)) for a, b, k in schedule)
    sums = [[0.0, 0] for _ in rows]
    for r, g in zip(running, gen):
        if math.isnan(r) or math.isnan(g) or r < 1:
            continue
        for i, (a, b, _) in enumerate(rows):
            if a <= r <= b:
                sums[i][0] += g
                sums[i][1] += 1
                break
    for i in range(1, len(rows)):
        (s0, n0), (s1, n1) = sums[i - 1], sums[i]
        if n0 >= MIN_LINES and n1 >= MIN_LINES and s1 / n1 < s0 / n0 * (1 - FELL_SHARE):
            return Fell(rows[i][0], rows[i - 1], rows[i], s0 / n0, s1 / n1, (int(n0), int(n1)))
    return None
