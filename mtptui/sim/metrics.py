"""SGLang's scheduler metrics (`--enable-metrics`), as its /metrics serves them, per version.

Read from SGLang's sources, 0.4.9 to 0.5.12 (`srt/metrics/collector.py`, later
`srt/observability/metrics_collector.py`, and the scheduler's metrics mixin):

- The gauges are set by `log_stats(self.stats)` when a Prefill or Decode line is logged, and,
  while the scheduler is idle, every 30 s after the last update (`gen_throughput` 0 then). The
  stats object persists, so a prefill update keeps the last decode's throughput and acceptance.
  A server without speculation exports `spec_accept_length` (and `spec_accept_rate`) as 0.
- Which schedulers export: the ones that log batch lines; with `--enable-metrics-for-all-schedulers`
  every TP rank (0.5.4-0.5.8 they then also log the lines; 0.5.10+ only export).
- Labels: `model_name`, `engine_type` (0.4.9 has only these two, so DP groups collapse into one
  series, the most recent: the gauges are `multiprocess_mode="mostrecent"`); 0.5.x adds `tp_rank`,
  `pp_rank`, 0.5.8+ `moe_ep_rank`, and `dp_rank` when DP is in use.
- `spec_accept_rate` exists from 0.5.4; 0.5.12 rewrote both speculation HELP texts.
- `cuda_graph_passes_total{mode}` (0.5.8+): a counter per decode step on every TP rank
  (`decode_cuda_graph` / `decode_none`); 0.5.10+ also counts prefills on the exporting ranks.
- Served through prometheus_client's MultiProcessCollector: a family appears once some scheduler
  has set it, and a multiprocess counter has no `_created` sample.

The text is written here by hand (the simulator is standard-library only), in the Prometheus text
format 0.0.4 with its escaping.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mtptui.sim.formats import Pool, moe_ep_rank

if TYPE_CHECKING:
    from mtptui.sim.engine import Rank
    from mtptui.sim.flags import Config

GAUGES = ("num_running_reqs", "num_used_tokens", "token_usage", "gen_throughput", "num_queue_reqs",
          "spec_accept_length", "spec_accept_rate")
IDLE_EVERY = 30.0  # seconds: an idle scheduler's metrics refresh (`last_log_time + 30`)

_HELP = {
    "num_running_reqs": "The number of running requests.",
    "num_used_tokens": "The number of used tokens.",
    "token_usage": "The token usage.",
    "gen_throughput": "The generation throughput (token/s).",
    "num_queue_reqs": "The number of requests in the waiting queue.",
    "spec_accept_length": "The average acceptance length of speculative decoding.",
    "spec_accept_rate": "The average acceptance rate of speculative decoding "
                        "(`accepted tokens / total draft tokens` in batch).",
    "cuda_graph_passes_total": "Total number of forward passes categorized by CUDA graph.",
}
_HELP_0_5_12 = {
    "spec_accept_length": "Mean acceptance length of speculative decoding "
                          "(accepted drafts + bonus token per forward).",
    "spec_accept_rate": "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).",
}


def help_text(v: tuple, name: str) -> str:
    if v >= (0, 5, 12) and name in _HELP_0_5_12:
        return _HELP_0_5_12[name]
    return _HELP[name]


def gauges(v: tuple) -> tuple[str, ...]:
    return GAUGES if v >= (0, 5, 4) else tuple(g for g in GAUGES if g != "spec_accept_rate")


def labels(cfg: Config, rank: Rank) -> tuple[tuple[str, str], ...]:
    """The scheduler collector's labels for one rank, in SGLang's order."""
    a, v = cfg.args, cfg.v
    out = [("model_name", str(a["served_model_name"])), ("engine_type", "unified")]
    if v < (0, 5, 0):
        return tuple(out)
    out += [("tp_rank", str(rank.tp_rank)), ("pp_rank", "0")]
    if v >= (0, 5, 8):
        out.append(("moe_ep_rank", str(moe_ep_rank(rank.tp_rank, a["tp_size"], a["ep_size"]))))
    if rank.dp_rank is not None:
        out.append(("dp_rank", str(rank.dp_rank)))
    return tuple(out)


def token_usage(v: tuple, pool: Pool, *, prefill: bool = False) -> float:
    """`stats.token_usage` for a pool: the fuller of the hybrid pools (mamba counts from 0.5.12),
    rounded to 2 places in 0.5.12+ and in 0.4.9's prefill update."""
    use = pool.used / pool.total if pool.total else 0.0
    if pool.kind == "swa" and v >= (0, 5, 0):
        use = max(use, pool.swa_used / pool.swa_total)
    elif pool.kind == "mamba" and v >= (0, 5, 12):
        use = max(use, pool.mamba_num / pool.mamba_total)
    if v >= (0, 5, 12) or (prefill and v < (0, 5, 0)):
        use = round(use, 2)
    return use


@dataclass
class SchedulerMetrics:
    """One logging scheduler group's metric state. Updates carry the time of the line they go
    with (a decode step's line is due when the step ends) and take effect from then on."""

    cfg: Config
    ranks: list[Rank]  # the ranks that export
    t_update: float  # when the stats were last set (the collector's creation at first)
    stats: dict[str, dict] = field(default_factory=dict)  # rank label -> gauge -> value
    passes: dict[tuple[str, str], int] = field(default_factory=dict)  # (rank label, mode) -> count
    _due: deque = field(default_factory=deque)  # (t, rank label or None for all, values)

    @classmethod
    def for_group(cls, cfg: Config, members: list[Rank], printing: list[str], t_start: float) -> SchedulerMetrics:
        if cfg.v >= (0, 5, 10):
            ranks = members if cfg.args.get("enable_metrics_for_all_schedulers") else members[:1]
        else:
            ranks = [r for r in members if r.label in printing]
        return cls(cfg, ranks, t_start)

    # -- updates from the engine ---------------------------------------------------------------
    def prefill(self, t: float, *, running: int, queue: int, pool: Pool) -> None:
        v = self.cfg.v
        self._due.append((t, None, {"num_running_reqs": running, "num_queue_reqs": queue,
                                    "num_used_tokens": pool.used,
                                    "token_usage": token_usage(v, pool, prefill=True)}))
        if v >= (0, 5, 10):
            for r in self.ranks:
                self._count(r.label, "prefill_none")  # the simulator's prefills never use graphs

    def decode(self, t: float, *, running: int, queue: int, pool: Pool, gen: dict[str, float],
               default_gen: float, accept_len: float | None, accept_rate: float | None) -> None:
        base = {"num_running_reqs": running, "num_queue_reqs": queue, "num_used_tokens": pool.used,
                "token_usage": token_usage(self.cfg.v, pool),
                "spec_accept_length": accept_len or 0.0, "spec_accept_rate": accept_rate or 0.0}
        for r in self.ranks:
            self._due.append((t, r.label, dict(base, gen_throughput=gen.get(r.label, default_gen))))

    def decode_step(self, members: list[Rank], graph: bool) -> None:
        """0.5.8+: every TP rank of the group counts each decode forward pass."""
        if self.cfg.v < (0, 5, 8):
            return
        mode = "decode_cuda_graph" if graph else "decode_none"
        for r in members:
            self._count(r.label, mode)

    def _count(self, label: str, mode: str) -> None:
        self.passes[(label, mode)] = self.passes.get((label, mode), 0) + 1

    # -- reading -------------------------------------------------------------------------------
    def catch_up(self, now: float, *, idle: bool, queue: int, pool: Pool) -> None:
        """Applies the updates due by `now`, then the idle refreshes an idle scheduler makes."""
        while self._due and self._due[0][0] <= now:
            t, label, values = self._due.popleft()
            for r in self.ranks:
                if label is None or r.label == label:
                    self.stats.setdefault(r.label, _fresh(self.cfg.v)).update(values)
            self.t_update = t
        if idle and not self._due and now >= self.t_update + IDLE_EVERY:
            values = {"num_running_reqs": 0, "num_queue_reqs": queue, "num_used_tokens": pool.used,
                      "token_usage": token_usage(self.cfg.v, pool), "gen_throughput": 0.0}
            for r in self.ranks:
                self.stats.setdefault(r.label, _fresh(self.cfg.v)).update(values)
            self.t_update += IDLE_EVERY * math.floor((now - self.t_update) / IDLE_EVERY)


def _fresh(v: tuple) -> dict:
    return {g: 0.0 for g in gauges(v)}


def exposition(cfg: Config, groups: list[SchedulerMetrics], layout_ranks: list[Rank]) -> str:
    """The /metrics body: the scheduler families that some scheduler has set."""
    v = cfg.v
    by_label = {r.label: r for r in layout_ranks}
    out: list[str] = []
    for name in gauges(v):
        samples: dict[tuple, tuple[float, float]] = {}  # labels -> (update time, value)
        for m in groups:
            for label, st in m.stats.items():
                key = labels(cfg, by_label[label])
                prev = samples.get(key)
                if prev is None or m.t_update >= prev[0]:  # "mostrecent" across processes
                    samples[key] = (m.t_update, st[name])
        _family(out, f"sglang:{name}", "gauge", help_text(v, name),
                [(key, val) for key, (_, val) in samples.items()])
    counts: list[tuple[tuple, float]] = []
    for m in groups:
        for (label, mode), n in sorted(m.passes.items()):
            counts.append((labels(cfg, by_label[label]) + (("mode", mode),), n))
    _family(out, "sglang:cuda_graph_passes_total", "counter", help_text(v, "cuda_graph_passes_total"), counts)
    return "".join(out)


def _family(out: list[str], name: str, kind: str, help_: str, samples: list[tuple[tuple, float]]) -> None:
    if not samples:
        return
    out.append(f"# HELP {name} {escape_help(help_)}\n# TYPE {name} {kind}\n")
    for key, val in samples:
        lab = ",".join(f'{k}="{escape_label(str(x))}"' for k, x in key)
        out.append(f"{name}{{{lab}}} {number(val)}\n")


def escape_help(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\n", "\\n")


def escape_label(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def number(x: float) -> str:
    """A sample value as prometheus_client writes it (Go's float syntax)."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(x)


# -- the request latency histograms --------------------------------------------------------------
# The tokenizer's (one per server, labelled model_name, and engine_type from 0.5.0) and the
# scheduler's queue time (its labels, 0.5.2+). Default buckets as SGLang 0.5.12 sets them
# (`TokenizerMetricsCollector`, `SchedulerMetricsCollector.queue_time`); a bucket's bound is
# inclusive (`le`), as prometheus_client's.
TTFT_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
E2E_BUCKETS = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200,
               1800, 2400)
ITL_BUCKETS = (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060,
               0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000)
QUEUE_BUCKETS = (0.0, 0.001, 0.005, 0.010, 0.050, 0.100, 0.200, 0.500, 1, 2, 3, 4, 5, 10, 15, 20, 30,
                 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600)
_LAT_HELP = {
    "ttft": "Histogram of time to first token in seconds.",
    "itl": "Histogram of inter-token latency in seconds.",
    "e2e": "Histogram of End-to-end request latency in seconds",
    "queue": "Histogram of queueing time in seconds.",
}
_BUCKETS = {"ttft": TTFT_BUCKETS, "itl": ITL_BUCKETS, "e2e": E2E_BUCKETS, "queue": QUEUE_BUCKETS}


def latency_names(v: tuple) -> dict[str, str]:
    """Each latency histogram's name in SGLang v (queue time from 0.5.2)."""
    out = {"ttft": "sglang:time_to_first_token_seconds",
           "itl": "sglang:inter_token_latency_seconds" if v >= (0, 4, 5) else "sglang:time_per_output_token_seconds",
           "e2e": "sglang:e2e_request_latency_seconds"}
    if v >= (0, 5, 2):
        out["queue"] = "sglang:queue_time_seconds" if v >= (0, 5, 3) else "sglang:queue_time_s"
    return out


@dataclass
class Hist:
    bounds: tuple
    counts: list  # per bucket, then +Inf (not cumulative)
    total: float = 0.0

    @classmethod
    def of(cls, bounds: tuple) -> Hist:
        return cls(bounds, [0] * (len(bounds) + 1))

    def observe(self, x: float, n: int = 1) -> None:
        self.counts[bisect.bisect_left(self.bounds, x)] += n
        self.total += x * n


@dataclass
class LatencyMetrics:
    """The server's latency histograms; observations carry the simulated time they happen at and
    count from then on (the engine runs a little ahead of the clock)."""

    cfg: Config
    hists: dict[tuple, Hist] = field(default_factory=dict)  # (figure, labels) -> histogram
    _due: deque = field(default_factory=deque)  # (t, figure, labels, value, n)

    def tokenizer_labels(self) -> tuple[tuple[str, str], ...]:
        out = [("model_name", str(self.cfg.args["served_model_name"]))]
        if self.cfg.v >= (0, 5, 0):
            out.append(("engine_type", "unified"))
        return tuple(out)

    def observe(self, t: float, fig: str, value: float, n: int = 1, key: tuple | None = None) -> None:
        if n > 0 and (fig != "queue" or "queue" in latency_names(self.cfg.v)):
            self._due.append((t, fig, key if key is not None else self.tokenizer_labels(), value, n))

    def catch_up(self, now: float) -> None:
        while self._due and self._due[0][0] <= now:
            _, fig, key, value, n = self._due.popleft()
            h = self.hists.get((fig, key))
            if h is None:
                h = self.hists[(fig, key)] = Hist.of(_BUCKETS[fig])
            h.observe(value, n)


def latency_exposition(lat: LatencyMetrics) -> str:
    """The histograms as prometheus_client writes them: cumulative buckets, +Inf, _count, _sum."""
    names = latency_names(lat.cfg.v)
    out: list[str] = []
    for fig, name in names.items():
        series = [(key, h) for (f, key), h in sorted(lat.hists.items()) if f == fig]
        if not series:
            continue
        out.append(f"# HELP {name} {escape_help(_LAT_HELP[fig])}\n# TYPE {name} histogram\n")
        for key, h in series:
            lab = ",".join(f'{k}="{escape_label(str(x))}"' for k, x in key)
            run = 0
            for bound, c in zip((*h.bounds, math.inf), h.counts):
                run += c
                out.append(f'{name}_bucket{{{lab},le="{number(bound)}"}} {number(run)}\n')
            out.append(f"{name}_count{{{lab}}} {number(run)}\n{name}_sum{{{lab}}} {number(h.total)}\n")
    return "".join(out)
