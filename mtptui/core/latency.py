"""The server's own latency, from its /metrics: TTFT, inter-token latency, end-to-end latency and
queue time at p50/p90/p99 over a window, and the speculative counters, for SGLang and vLLM.

The histograms are cumulative since the server started, so a window's figures come from the
difference of two scrapes (what Prometheus' `rate(...[w])` feeds `histogram_quantile`), every
series of a family summed (DP ranks, vLLM's engines: the requests of the whole server). A bucket
that went down between the scrapes is a restarted server: the newer scrape then stands alone.

The names, read from the servers' sources (see tests/unit/test_latency.py for the versions):
- SGLang (`--enable-metrics`): `sglang:time_to_first_token_seconds`,
  `sglang:inter_token_latency_seconds` (0.4.5+; `sglang:time_per_output_token_seconds` before),
  `sglang:e2e_request_latency_seconds`, `sglang:queue_time_seconds` (0.5.3+; 0.5.2 named it
  `sglang:queue_time_s`), and the gauges `sglang:spec_accept_length` and (0.5.4+)
  `sglang:spec_accept_rate`: the last logged decode window's, not the scrapes' window; and
  (0.5.17+, observability/metrics_collector.py) `sglang:spec_num_steps` and
  `sglang:spec_num_draft_tokens`, the steps and draft tokens in use now: with
  --speculative-adaptive, the tier its controller picked.
- vLLM (V1, always served): `vllm:time_to_first_token_seconds`, `vllm:inter_token_latency_seconds`
  (0.10.2+; `vllm:time_per_output_token_seconds`, deprecated, served beside it), 
  `vllm:e2e_request_latency_seconds`, `vllm:request_queue_time_seconds`, and the counters
  `vllm:spec_decode_num_drafts`, `..._num_draft_tokens`, `..._num_accepted_tokens` and
  `..._num_accepted_tokens_per_pos{position}`: per-position acceptance is accepted at a position
  over the drafts.
- llama.cpp's server (`--metrics`) counts its drafts in vLLM's words under its own prefix,
  `llamacpp:spec_decode_num_drafts_total`, `..._num_draft_tokens_total`,
  `..._num_accepted_tokens_total` and `..._num_accepted_tokens_per_pos_total{position}`
  (tools/server/server-context.cpp): read as vLLM's are (LLAMACPP).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from mtptui.core.stats import bucket_quantile

QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
FIGURES = ("ttft", "itl", "e2e", "queue")
LABELS = {"ttft": "TTFT", "itl": "ITL", "e2e": "E2E", "queue": "queue"}
# each figure's family, as the text parser names it (no _bucket), preferred first
FAMILIES = {
    "ttft": ("sglang:time_to_first_token_seconds", "vllm:time_to_first_token_seconds"),
    "itl": ("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds",
            "vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
    "e2e": ("sglang:e2e_request_latency_seconds", "vllm:e2e_request_latency_seconds"),
    "queue": ("sglang:queue_time_seconds", "sglang:queue_time_s", "vllm:request_queue_time_seconds"),
}
SGLANG_ACCEPT = "sglang:spec_accept_length"
SGLANG_RATE = "sglang:spec_accept_rate"  # 0.5.4+
SGLANG_STEPS = "sglang:spec_num_steps"  # 0.5.17+: the steps in use now (adaptive: its tier)
SGLANG_DRAFTS = "sglang:spec_num_draft_tokens"  # 0.5.17+
VLLM_DRAFTS = "vllm:spec_decode_num_drafts"
VLLM_DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
VLLM_ACCEPTED = "vllm:spec_decode_num_accepted_tokens"
VLLM_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"
_COUNTERS = (VLLM_DRAFTS, VLLM_DRAFT_TOKENS, VLLM_ACCEPTED)
# llama.cpp's families (as the text parser names a counter: no _total) -> vLLM's of the same count
LLAMACPP = {"llamacpp:" + v.removeprefix("vllm:"): v for v in (*_COUNTERS, VLLM_PER_POS)}
# the requests the server runs and queues now, summed over its DP groups and engines
RUNNING = ("sglang:num_running_reqs", "vllm:num_requests_running")
WAITING = ("sglang:num_queue_reqs", "vllm:num_requests_waiting")
NO_METRICS = "no latency: the server serves no /metrics (start SGLang with --enable-metrics for latency)"


class NotExposition(ValueError):
    """The text is not a Prometheus exposition."""


@dataclass(frozen=True)
class Histogram:
    bounds: tuple[float, ...]  # finite upper bounds, ascending
    cumulative: tuple[float, ...]  # per bound, then +Inf
    total: float  # _sum

    @property
    def count(self) -> float:
        return self.cumulative[-1] if self.cumulative else 0.0

    def minus(self, old: Histogram | None) -> Histogram:
        if old is None or old.bounds != self.bounds or any(a < b for a, b in zip(self.cumulative, old.cumulative)):
            return self  # no earlier scrape, other buckets or a restart: since the start
        return Histogram(self.bounds, tuple(a - b for a, b in zip(self.cumulative, old.cumulative)),
                         self.total - old.total)


@dataclass(frozen=True)
class Scrape:
    """What one /metrics answer says, every series of a family summed."""

    t: float
    histograms: dict[str, Histogram] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    per_pos: dict[int, float] = field(default_factory=dict)
    accept_len: float | None = None  # SGLang's gauge, the mean of its positive samples
    accept_rate: float | None = None  # likewise
    running: float | None = None  # requests running now (None: the server exports no such gauge)
    waiting: float | None = None  # requests queued now
    num_steps: float | None = None  # SGLang's steps in use now (its gauge; the DP groups' mean), 0.5.17+
    num_draft_tokens: float | None = None  # and draft tokens

    @property
    def has_latency(self) -> bool:
        return any(name in self.histograms for names in FAMILIES.values() for name in names)


def families(text: str) -> list:
    """prometheus_client's families of an exposition; NotExposition when it is none."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        return list(text_string_to_metric_families(text))
    except (ValueError, TypeError, IndexError) as e:
        raise NotExposition(str(e) or "not a Prometheus exposition") from None


def _finite(v: float) -> bool:
    return not (math.isnan(v) or math.isinf(v))


def _histogram(fam: Any) -> Histogram | None:
    """A histogram family's buckets and sum, every series summed; None without its +Inf bucket."""
    buckets: dict[float, float] = {}
    total = 0.0
    for s in fam.samples:
        if s.name.endswith("_bucket") and "le" in s.labels:
            le = float(s.labels["le"])
            buckets[le] = buckets.get(le, 0.0) + s.value
        elif s.name.endswith("_sum"):
            total += s.value
    if math.inf not in buckets:
        return None
    bounds = tuple(sorted(b for b in buckets if b != math.inf))
    return Histogram(bounds, tuple(buckets[b] for b in bounds) + (buckets[math.inf],), total)


def _per_position(fam: Any, per_pos: dict[int, float]) -> None:
    """vLLM's accepted tokens per draft position, added into per_pos."""
    for s in fam.samples:
        if s.name.endswith("_total") and s.labels.get("position", "").isdigit():
            pos = int(s.labels["position"])
            per_pos[pos] = per_pos.get(pos, 0.0) + s.value


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def parse(text: str, t: float) -> Scrape:
    """The latency histograms and speculative counters in a /metrics text, read at t."""
    wanted = {name for names in FAMILIES.values() for name in names}
    hists: dict[str, Histogram] = {}
    counters: dict[str, float] = {}
    per_pos: dict[int, float] = {}
    # SGLang's, each sample that has one
    gauges: dict[str, list[float]] = {SGLANG_ACCEPT: [], SGLANG_RATE: [], SGLANG_STEPS: [], SGLANG_DRAFTS: []}
    load: dict[str, float] = {}
    for fam in families(text):
        fam.name = LLAMACPP.get(fam.name, fam.name)
        if fam.name in wanted and fam.type == "histogram":
            h = _histogram(fam)
            if h is not None:
                hists[fam.name] = h
        elif fam.name in _COUNTERS:
            counters[fam.name] = sum(s.value for s in fam.samples if s.name.endswith("_total"))
        elif fam.name == VLLM_PER_POS:
            _per_position(fam, per_pos)
        elif fam.name in gauges:
            gauges[fam.name] += [s.value for s in fam.samples if s.name == fam.name and s.value > 0 and _finite(s.value)]
        elif fam.name in RUNNING or fam.name in WAITING:
            which = "running" if fam.name in RUNNING else "waiting"
            load[which] = load.get(which, 0.0) + sum(s.value for s in fam.samples if _finite(s.value))
    return Scrape(t, hists, counters, per_pos, _mean(gauges[SGLANG_ACCEPT]), _mean(gauges[SGLANG_RATE]),
                  load.get("running"), load.get("waiting"), _mean(gauges[SGLANG_STEPS]), _mean(gauges[SGLANG_DRAFTS]))


def figures(h: Histogram) -> dict | None:
    """n, mean and the quantiles of a histogram (seconds), None without observations."""
    if not h.count > 0:
        return None
    out: dict = {"n": round(h.count), "mean": h.total / h.count}
    for key, q in QUANTILES:
        out[key] = bucket_quantile(h.bounds, h.cumulative, q)
    return out


def window(old: Scrape | None, new: Scrape) -> dict:
    """The latency dict between two scrapes (old None: since the server started): per figure its
    n, mean, p50, p90, p99 (seconds) or None, the seconds covered, and `spec` where the server
    counts speculation (accept_len, accept_rate, per_pos: per-position acceptance)."""
    out: dict = {"span_s": None if old is None else round(new.t - old.t, 3)}
    for fig, names in FAMILIES.items():
        name = next((n for n in names if n in new.histograms), None)
        out[fig] = None if name is None else figures(
            new.histograms[name].minus(old.histograms.get(name) if old else None))
    spec: dict = {}
    c = dict(new.counters)
    pos = dict(new.per_pos)
    if old is not None and all(c.get(k, 0.0) >= old.counters.get(k, 0.0) for k in _COUNTERS):
        c = {k: v - old.counters.get(k, 0.0) for k, v in c.items()}
        pos = {k: v - old.per_pos.get(k, 0.0) for k, v in pos.items()}
    drafts = c.get(VLLM_DRAFTS)
    if drafts:
        accepted = c.get(VLLM_ACCEPTED, 0.0)
        spec["accept_len"] = 1 + accepted / drafts
        if c.get(VLLM_DRAFT_TOKENS):
            spec["accept_rate"] = accepted / c[VLLM_DRAFT_TOKENS]
        if pos:
            spec["per_pos"] = [pos.get(i, 0.0) / drafts for i in range(max(pos) + 1)]
    elif new.accept_len is not None:  # SGLang's gauges: the last logged window's, not this one's
        spec["accept_len"] = new.accept_len
        if new.accept_rate is not None:
            spec["accept_rate"] = new.accept_rate
    if new.num_steps is not None:  # the tier in use at the window's end
        spec["num_steps"] = new.num_steps
        if new.num_draft_tokens is not None:
            spec["num_draft_tokens"] = new.num_draft_tokens
    if spec:
        out["spec"] = spec
    return out


class Scrapes:
    """A host's successive scrapes, kept for `window_s`; `latest()` is the window ending now."""

    def __init__(self, window_s: float = 60.0) -> None:
        self.window_s = window_s
        self._kept: list[Scrape] = []

    def add(self, s: Scrape) -> None:
        if self._kept and restarted(self._kept[-1], s):
            self._kept.clear()  # the server restarted: its counts begin again
        self._kept.append(s)
        while len(self._kept) > 2 and s.t - self._kept[1].t >= self.window_s:
            self._kept.pop(0)

    def latest(self) -> dict | None:
        if not self._kept:
            return None
        if len(self._kept) == 1:
            return window(None, self._kept[0])
        return window(self._kept[0], self._kept[-1])


def ms(seconds: float | None) -> str:
    """A latency for a panel, three significant digits at most: ms below a second, else seconds."""
    if seconds is None:
        return "–"
    v = seconds * 1000
    if v == 0:
        return "0ms"
    if v < 1000:
        return f"{v:.2f}ms" if v < 1 else f"{v:.1f}ms" if v < 10 else f"{v:.0f}ms"
    return f"{seconds:.2f}s" if seconds < 10 else f"{seconds:.1f}s" if seconds < 100 else f"{seconds:.0f}s"


# -- kept and recorded ---------------------------------------------------------------------------
REFRESH_GRACE_S = 30.0  # a server restarted under an epoch: its figures stand this long for the next epoch


def restarted(old: Scrape, new: Scrape) -> bool:
    """Some histogram's counts went down: the server began again between the scrapes."""
    return any(name in new.histograms and h.count > 0 and new.histograms[name].minus(h) is new.histograms[name]
               for name, h in old.histograms.items())


class HostLatency:
    """One host's scrapes: the recent window (`now()`), and each epoch's figures (`epochs`, by the
    epoch's start), from the scrape before the epoch began, or from the server's start when it
    restarted into it (toggling speculation restarts it: each run's latency is its own)."""

    def __init__(self, window_s: float = 60.0) -> None:
        self.recent = Scrapes(window_s)
        self.epochs: dict[float, dict] = {}
        self._base: dict[float, Scrape | None] = {}
        self._prev: Scrape | None = None
        self._fresh_at: float | None = None  # when a restart was seen under the epoch then current
        self.last: Scrape | None = None

    def add(self, s: Scrape, epoch: float | None) -> None:
        prev = self._prev
        reset = prev is not None and restarted(prev, s)
        self.recent.add(s)
        self._prev = self.last = s
        if epoch is None:
            return
        if epoch not in self._base:
            self._base[epoch] = None if (prev is None or reset or self._fresh_at is not None) else prev
            self._fresh_at = None
        elif reset or self._fresh_at is not None:
            # the server began again before its log's new epoch is read: the new counts wait for it
            self._fresh_at = s.t if self._fresh_at is None else self._fresh_at
            if s.t - self._fresh_at < REFRESH_GRACE_S:
                return
            self._base[epoch], self._fresh_at = None, None
        self.epochs[epoch] = window(self._base[epoch], s)

    def now(self) -> dict | None:
        return self.recent.latest()


def to_json(s: Scrape) -> dict:
    """A scrape as a record keeps it (what `from_json` reads back)."""
    return {"t": s.t, "h": {k: [list(h.bounds), list(h.cumulative), h.total] for k, h in s.histograms.items()},
            "c": s.counters, "pos": {str(k): v for k, v in s.per_pos.items()}, "accept_len": s.accept_len,
            "accept_rate": s.accept_rate, "num_steps": s.num_steps, "num_draft_tokens": s.num_draft_tokens}


def from_json(obj: dict) -> Scrape | None:
    """A recorded scrape, or None when the entry is not one (an older or a damaged record)."""
    try:
        hists = {str(k): Histogram(tuple(map(float, b)), tuple(map(float, c)), float(total))
                 for k, (b, c, total) in obj.get("h", {}).items()}
        acc, rate = obj.get("accept_len"), obj.get("accept_rate")
        steps, drafts = obj.get("num_steps"), obj.get("num_draft_tokens")
        return Scrape(float(obj["t"]), hists, {str(k): float(v) for k, v in obj.get("c", {}).items()},
                      {int(k): float(v) for k, v in obj.get("pos", {}).items()},
                      None if acc is None else float(acc), None if rate is None else float(rate),
                      num_steps=None if steps is None else float(steps),
                      num_draft_tokens=None if drafts is None else float(drafts))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def by_epoch(scrapes: list[tuple[Scrape, float | None]], starts: list[float]) -> dict[float, dict]:
    """Each epoch's figures from (scrape, the epoch start the dashboard gave it) in time order:
    what the dashboard computed live, again. A scrape recorded without its epoch belongs to the
    last epoch begun by its time."""
    host = HostLatency()
    starts = sorted(starts)
    for s, epoch in scrapes:
        if epoch is None:
            began = [e for e in starts if e <= s.t]
            epoch = began[-1] if began else None
        host.add(s, epoch)
    return host.epochs


def brief(w: dict | None) -> dict | None:
    """The figures `summary --json` and the compare screen carry: per figure n, mean, p50, p90,
    p99 in seconds (9 places), and the speculative counters."""
    if w is None:
        return None
    out: dict = {}
    for fig in FIGURES:
        f = w.get(fig)
        out[fig] = None if f is None else {k: (round(v, 9) if isinstance(v, float) else v) for k, v in f.items()}
    if "spec" in w:
        out["spec"] = w["spec"]
    return out


def window_at(scrapes: list[tuple[Scrape, float | None]], t: float | None, window_s: float = 60.0) -> dict | None:
    """What the dashboard showed at t, from recorded (scrape, epoch) in time order: the window of
    the scrapes up to t, kept as live (Scrapes)."""
    import bisect

    times = [s.t for s, _ in scrapes]
    end = len(scrapes) if t is None else bisect.bisect_right(times, t)
    if end == 0:
        return None
    kept = Scrapes(window_s)
    for s, _ in scrapes[bisect.bisect_left(times, times[end - 1] - 2 * window_s):end]:
        kept.add(s)
    return kept.latest()
