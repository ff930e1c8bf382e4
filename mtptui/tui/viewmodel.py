"""What the screen shows, computed from the store for a time window; plain data, no Textual.

Kept apart from the widgets so that tests can hold the numbers on screen against
`mtptui summary --json` for the same input, and so that the widgets only format.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import accumulate, repeat
from operator import sub

from mtptui.core.alerts import Thresholds, epoch_at
from mtptui.core.epochs import spec_settings
from mtptui.core.series import present
from mtptui.core.stats import describe
from mtptui.core.store import RankSeries, Store


@dataclass(frozen=True)
class MetricInfo:
    key: str
    label: str  # as in a panel row
    title: str  # as in the chart title, with unit
    fmt: str  # for the panel's numbers


METRICS: dict[str, MetricInfo] = {m.key: m for m in (
    MetricInfo("accept_len", "accept len", "accept len (tokens per step, 1.00 = nothing accepted)", "{:.2f}"),
    MetricInfo("accept_rate", "accept rate", "accept rate (fraction of draft tokens accepted)", "{:.2f}"),
    MetricInfo("gen_throughput", "gen tok/s", "gen throughput (tokens/s per rank)", "{:.0f}"),
    MetricInfo("running_req", "running", "running requests", "{:.0f}"),
    MetricInfo("queue_req", "queue", "queued requests", "{:.0f}"),
    MetricInfo("token_usage", "KV use", "KV cache usage (fraction)", "{:.2f}"),
)}
MAIN_METRICS = ("accept_len", "accept_rate", "gen_throughput")
SMALL_METRICS = ("running_req", "queue_req", "token_usage")
CHART_METRICS = tuple(METRICS)
PANEL_COLUMNS = MAIN_METRICS + SMALL_METRICS + ("graph",)  # all in the decode ring

SPEC_ON, SPEC_OFF, SPEC_UNKNOWN = "on", "off", "unknown"


def fmt_value(metric: str, v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return METRICS[metric].fmt.format(v)


def clock_text(ts: float | None, with_date: bool = False) -> str:
    """Log time as the log wrote it (zone-less stamps are read as UTC, so UTC shows them back)."""
    if ts is None or not math.isfinite(ts):
        return "--:--:--"
    dt = datetime.fromtimestamp(ts, timezone.utc)
    return dt.strftime("%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S")


def host_label(host: str | None) -> str:
    return host if host else "server log"


def rank_label(rank: str) -> str:
    return rank if rank else "rank (TP=1)"


def short_rank_labels(ranks: list[str]) -> dict[str, str]:
    """Shortest unambiguous names: `DP3 TP3 EP3` -> `DP3` when the DP token alone tells every
    rank apart (DP attention), else the full label."""
    if len(ranks) < 2:
        return {r: rank_label(r) for r in ranks}
    parts = [r.split() for r in ranks]
    n = min(len(p) for p in parts)
    for i in range(n):
        tokens = [p[i] for p in parts]
        if len(set(tokens)) == len(tokens):
            return dict(zip(ranks, tokens))
    return {r: rank_label(r) for r in ranks}


def downsample(values: list[float], n: int) -> list[float]:
    """At most n points, each the mean of a run of neighbours (sample order, not time). For
    drawing: means come from running sums (C loops over thousands of samples, per frame)."""
    if n <= 0:
        return []
    m = len(values)
    if m <= n:
        return list(values)
    sums = [0.0, *accumulate(values)]
    bounds = [i * m // n for i in range(n + 1)]
    return [(sums[b] - sums[a]) / (b - a) for a, b in zip(bounds, bounds[1:])]


@dataclass
class MetricView:
    metric: str
    stats: dict | None  # describe() without percentiles: n, mean, min, max, last
    spark: list[float] = field(default_factory=list)

    @property
    def now(self) -> float | None:
        return None if self.stats is None else self.stats["last"]


@dataclass
class PanelView:
    host: str | None
    rank: str
    spec: str  # SPEC_ON / SPEC_OFF / SPEC_UNKNOWN, from the newest decode line
    spec_configured: bool
    graph_off_now: bool  # the newest decode line ran without graphs
    graph_off: int  # decode batches in the window without graphs
    decode_batches: int  # decode batches in the window
    stale_s: float | None  # seconds since the last batch, when over the threshold
    max_accept_len: int | None  # num_steps + 1, from server_args
    metrics: dict[str, MetricView]
    truncated: bool  # the window reaches past the ring buffer's oldest sample
    now: dict[str, float | None] = field(default_factory=dict)  # the newest decode line's values


def panel_view(series: RankSeries, t0: float | None, t1: float | None, *, spec: dict | None,
               th: Thresholds, spark_points: int = 200) -> PanelView:
    metrics: dict[str, MetricView] = {}
    last_t: dict[str, float] = {}
    times, columns = series.decode.raw_windows(PANEL_COLUMNS, t0, t1)
    for m in MAIN_METRICS + SMALL_METRICS:
        ts, vs = present(times, columns[m])
        # no percentiles: a panel does not show them, and they need a sort, every frame
        metrics[m] = MetricView(m, describe(vs, percentiles=False), downsample(vs, spark_points))
        if ts:
            last_t[m] = ts[-1]
    g_ts, g_vs = present(times, columns["graph"])
    graph_off = g_vs.count(0.0)
    n_decode = max([len(g_ts)] + [metrics[m].stats["n"] for m in ("running_req", "gen_throughput")
                                  if metrics[m].stats])
    # The newest decode line decides the badges and the "now" column: a value from an older
    # line (before a restart, say) is not "now".
    cands = [t for t in ([g_ts[-1]] if g_ts else []) + [last_t.get(m) for m in MAIN_METRICS + SMALL_METRICS]
             if t is not None]
    newest = max(cands) if cands else None
    now = {m: (metrics[m].stats["last"] if metrics[m].stats and last_t.get(m) == newest else None)
           for m in MAIN_METRICS + SMALL_METRICS}
    if newest is None:
        state = SPEC_UNKNOWN
    elif last_t.get("accept_len") == newest or last_t.get("accept_rate") == newest:
        state = SPEC_ON
    else:
        state = SPEC_OFF
    graph_off_now = bool(g_ts) and g_ts[-1] == newest and g_vs[-1] == 0.0
    configured = bool(spec and spec.get("algorithm"))
    steps = (spec or {}).get("num_steps")
    stale_s = None
    last = _last_time_at_or_before(series, t1)
    if t1 is not None and last is not None and t1 - last > th.stale_s:
        stale_s = t1 - last
    first = series.decode.first_time()
    truncated = bool(len(series.decode) >= series.decode.capacity and first is not None
                     and (t0 is None or t0 < first))
    return PanelView(series.host, series.rank, state, configured, graph_off_now, graph_off, n_decode,
                     stale_s, steps + 1 if isinstance(steps, int) else None, metrics, truncated, now)


def _last_time_at_or_before(s: RankSeries, t1: float | None) -> float | None:
    best = None
    for ring in (s.decode, s.prefill):
        last = ring.last_time()
        if last is None:
            continue
        if t1 is None or last <= t1:
            cand = last
        else:
            ts = ring.times()
            import bisect

            i = bisect.bisect_right(ts, t1)
            cand = ts[i - 1] if i else None
        if cand is not None and (best is None or cand > best):
            best = cand
    return best


def spec_for(store: Store, host: str | None, t: float | None) -> dict:
    """The speculation settings in force at log time t (the epoch's), else the latest."""
    if t is not None:
        e = epoch_at(store, host, t)
        if e is not None and e.spec:
            return e.spec
    return store.spec.get(host) or {}


def spec_short(spec: dict) -> str:
    """`spec NEXTN steps=3 topk=1 draft=4`, `spec off`, or `spec ?` before any server_args."""
    if not spec:
        return "spec ? (no server_args seen)"
    if not spec.get("algorithm"):
        return "spec off (server_args)"
    return "spec " + spec_settings(spec)


def layout_text(spec: dict) -> str:
    """`TP 4 · DP 4 · model X · draft Y` from the server_args settings ('' before any)."""
    parts = []
    if spec.get("tp_size"):
        parts.append(f"TP {spec['tp_size']}")
    if spec.get("dp_size") and spec.get("dp_size") != 1:
        parts.append(f"DP {spec['dp_size']}")
    model = spec.get("model_path")
    if model:
        parts.append(f"model {model}")
    draft = spec.get("draft_model_path")
    if draft and draft != model:
        parts.append(f"draft {draft}")
    return " · ".join(parts)


def spec_text(spec: dict) -> str:
    """`NEXTN steps=3 topk=1 draft=4 · TP 4 · model X` from the server_args settings."""
    if not spec:
        return "speculation: settings not seen yet (no server_args line)"
    head = "speculation " + spec_settings(spec) if spec.get("algorithm") else "speculation not configured"
    return " · ".join(p for p in (head, layout_text(spec)) if p)


def chart_series(store: Store, host: str | None, metric: str, t0: float | None, t1: float | None,
                 points: int) -> dict[str, tuple[list[float], list[float]]]:
    """rank -> (times, values), each thinned to about `points` by time buckets (mean per bucket)."""
    out = {}
    for s in store.ranks(host):
        ts, vs = s.window(metric, t0, t1)
        if ts:
            out[s.rank] = bucket_by_time(ts, vs, points)
    return out


def bucket_by_time(ts: list[float], vs: list[float], points: int) -> tuple[list[float], list[float]]:
    """At most `points` points: the samples cut into equal spans of time, each span's mean time
    and mean value (empty spans left out). For drawing, from running sums, as downsample()."""
    n = len(ts)
    if n <= points or points <= 0:
        return ts, vs
    lo = ts[0]
    width = (ts[-1] - lo) / points or 1.0
    cuts = [0, *(bisect_left(ts, lo + k * width) for k in range(1, points)), n]
    t_sums = [0.0, *accumulate(map(sub, ts, repeat(lo, n)))]  # offsets: epoch seconds would lose digits
    v_sums = [0.0, *accumulate(vs)]
    out_t, out_v = [], []
    for a, b in zip(cuts, cuts[1:]):
        if b > a:
            out_t.append(lo + (t_sums[b] - t_sums[a]) / (b - a))
            out_v.append((v_sums[b] - v_sums[a]) / (b - a))
    return out_t, out_v
