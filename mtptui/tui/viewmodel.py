"""What the screen shows, computed from the store for a time window; plain data, no Textual.

Kept apart from the widgets so that tests can hold the numbers on screen against
`mtptui summary --json` for the same input, and so that the widgets only format.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import accumulate, repeat
from operator import sub

from mtptui.printable import printable
from mtptui.config.thresholds import Thresholds
from mtptui.core.adaptive import Fell, adapts, fell_across
from mtptui.core.compare import EpochRow, epoch_rows
from mtptui.core.epochs import Epoch, spec_settings
from mtptui.core.series import present
from mtptui.core.stats import assemble, describe
from mtptui.core.store import RankSeries, Store
from mtptui.core.valueset import Rows


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
# A rank after its server (re)started, before its first decode line of the new run: loading (no
# ready line yet), waiting (ready, no request decoded yet), or down (stopped or failed since).
LOADING, WAITING, DOWN = "loading", "waiting", "down"
NOT_DECODING = (LOADING, WAITING, DOWN)
SPARK_POINTS = 240  # time cells a sparkline is computed in; a panel draws them at its own width
# What a metric can be: (lowest, highest or None). Accept len is 1.00 when nothing is accepted
# and at most num_steps + 1 (the cap comes from server_args); fractions end at 1.
BOUNDS: dict[str, tuple[float, float | None]] = {
    "accept_len": (1.0, None), "accept_rate": (0.0, 1.0), "token_usage": (0.0, 1.0),
    "gen_throughput": (0.0, None), "running_req": (0.0, None), "queue_req": (0.0, None),
}


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
    """A host's name as the screen shows it: a journal's _HOSTNAME is outside text (printable.py)."""
    return printable(host) if host else "server log"


def duration_text(seconds: float | None) -> str:
    """`2m 04s`, `1h 05m`; `-` for None."""
    if seconds is None:
        return "-"
    s = int(round(seconds))
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


def plural(n: int, word: str) -> str:
    """`1 line`, `2 lines`, `1,234 lines`."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def gap_limit(ts) -> float:
    """The longest silence between two samples still drawn as one stretch: 5x the usual interval
    (the median of the last 512) and at least 10 s. Longer is a gap: drawn empty, never joined."""
    tail = ts[-513:]
    if len(tail) < 2:
        return 10.0
    gaps = sorted(b - a for a, b in zip(tail, tail[1:]))
    return max(10.0, 5 * gaps[len(gaps) // 2])


def spark_cells(ts, vs, t0: float, t1: float, n: int, limit: float, cuts: list[int] | None = None
                ) -> list[float | None]:
    """`n` cells of equal time over [t0, t1]: each the mean of its samples. A cell without one
    holds the sample before it (lines come every few seconds, cells are shorter), unless the next
    sample is more than `limit` after that one, or there is none yet and the cell is more than
    `limit` after it: a restart, a silence, an idle server. Before the first sample nothing is
    known. Such cells are None, drawn empty. Sums are running sums (C loops, every frame).
    `cuts`: cell_cuts(ts, t0, t1, n), when several metrics share the times."""
    if n <= 0:
        return []
    count = len(ts)
    if not count or t1 <= t0:
        return [None] * n
    if cuts is None:
        cuts = cell_cuts(ts, t0, t1, n)
    sums = [0.0, *accumulate(vs)]
    start, width = t0, (t1 - t0) / n
    out: list[float | None] = []
    for k in range(n):
        a, b = cuts[k], cuts[k + 1]
        if b > a:
            out.append((sums[b] - sums[a]) / (b - a))
        elif a and (ts[a] - ts[a - 1] <= limit if a < count else start + k * width - ts[a - 1] <= limit):
            out.append(vs[a - 1])  # ts[a - 1]: the sample before the cell; ts[a]: the next one
        else:
            out.append(None)
    return out


def cell_cuts(ts, t0: float, t1: float, n: int) -> list[int]:
    """The index of the first sample of each of n equal cells over [t0, t1], then len(ts)."""
    width = (t1 - t0) / n
    return [bisect_left(ts, t0 + k * width) for k in range(n)] + [len(ts)]


def metric_range(metric: str, seen_max: float | None, accept_cap: int | None = None) -> tuple[float, float]:
    """The value range a metric is drawn on: from what it can be at least (accept len 1, else 0)
    to what it can be at most (accept len: num_steps + 1; fractions: 1) or, for counts and
    throughput, the most seen. A change that means something (spec on or off, a step more) moves
    a bar; noise of a few percent does not."""
    lo, hi = BOUNDS.get(metric, (0.0, None))
    if metric == "accept_len":
        hi = float(max(accept_cap or 0, 2))
    if hi is None:
        hi = seen_max if seen_max is not None and seen_max > lo else lo + 1.0
    elif seen_max is not None and seen_max > hi:
        hi = seen_max  # beyond what the settings allow (they changed in the window): never cut
    return lo, hi


def host_scales(views: list[PanelView], accept_cap: int | None) -> dict[str, tuple[float, float]]:
    """metric -> (lo, hi) for every panel of a host alike, so panels compare at a glance."""
    out = {}
    for m in MAIN_METRICS + SMALL_METRICS:
        seen = [stats["max"] for v in views if (stats := v.metrics[m].stats)]
        out[m] = metric_range(m, max(seen) if seen else None, accept_cap)
    return out


def accept_len_cap(store: Store, host: str | None, t0: float | None, t1: float | None) -> int | None:
    """The highest accept len possible in [t0, t1]: num_steps + 1 of the epochs there."""
    caps = []
    for e in store.epochs.get(host) or []:
        if (t1 is None or e.start <= t1) and (t0 is None or e.end is None or e.end > t0):
            steps = e.spec.get("num_steps")
            if isinstance(steps, int):
                caps.append(steps + 1)
    return max(caps) if caps else None


@dataclass
class MetricView:
    metric: str
    stats: dict | None  # describe() without percentiles: n, mean, min, max, last
    spark: list[float | None] = field(default_factory=list)  # SPARK_POINTS time cells; None: no data

    @property
    def now(self) -> float | None:
        return None if self.stats is None else self.stats["last"]


@dataclass(frozen=True)
class RunState:
    """The epoch at the playhead, as far as the panels and the epoch strip need it."""
    epoch: Epoch | None
    number: int  # 1-based
    count: int  # the host's epochs
    fresh: bool  # it began with the server's (re)start (not where the log happened to begin)
    ready_at: float | None  # its ready line, at or before the playhead
    down: str | None  # "stopped" or "failed": how the run ended, at or before the playhead
    down_at: float | None = None


def after(t: float) -> float:
    """The first time after t: an epoch's window starts here. Stamps have whole seconds, and the
    run before logs up to its stop, in the second the new run starts; the new process logs its
    first batch seconds later, after loading."""
    return math.nextafter(t, math.inf)


def shown_epoch(store: Store, host: str | None, t1: float | None) -> Epoch | None:
    """The epoch at the playhead, from just after its start (see after()): at the very second of
    a restart, the run before is still the one that logged. The first one before any."""
    cur = None
    for e in store.epochs.get(host) or []:
        if cur is not None and t1 is not None and e.start >= t1:
            break
        cur = e
    return cur


def run_state(store: Store, host: str | None, t1: float | None) -> RunState:
    epochs = store.epochs.get(host) or []
    cur = shown_epoch(store, host, t1)
    if cur is None:
        return RunState(None, 0, len(epochs), False, None, None)
    ready = down = down_at = None
    for ts, kind in cur.lifecycle:
        if t1 is not None and ts > t1:
            break
        if kind == "ready":
            ready = ready if ready is not None else ts
        elif down is None or kind == "failed":
            down, down_at = ("failed" if kind == "failed" else "stopped"), ts
    return RunState(cur, cur.index + 1, len(epochs), cur.reason != "first seen" or bool(cur.spec), ready,
                    down, down_at)


@dataclass
class PanelView:
    host: str | None
    rank: str
    spec: str  # SPEC_ON / SPEC_OFF / SPEC_UNKNOWN from the newest decode line; or LOADING, WAITING, DOWN
    spec_configured: bool
    graph_off_now: bool  # the newest decode line ran without graphs
    graph_off: int  # decode batches in the window without graphs
    decode_batches: int  # decode batches in the window
    stale_s: float | None  # seconds since the last batch, when over the threshold
    max_accept_len: int | None  # num_steps + 1, from server_args
    metrics: dict[str, MetricView]
    truncated: bool  # the window reaches past the ring buffer's oldest sample
    now: dict[str, float | None] = field(default_factory=dict)  # the newest decode line's values
    state_s: float | None = None  # LOADING, WAITING, DOWN: seconds since the run began or went down
    down: str | None = None  # DOWN: "stopped" or "failed"
    # metric -> (lo, hi) its sparkline is drawn on: the same for every panel of a host (host_scales)
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)
    scope: str = ""  # what min/mean/max cover: `epoch 3` or `window 5m`
    # where the engine adapts its steps (adaptive.adapts): the steps in use over the window, drawn
    # beside the batch size on steps_scale; None where it does not adapt (no such column)
    steps: MetricView | None = None
    steps_scale: tuple[float, float] | None = None
    fell: Fell | None = None  # throughput fell past an edge of the schedule, in the window


def exact_rows(series: RankSeries, t0: float | None, t1: float | None, run: RunState | None,
               epoch_scope: bool) -> Rows | dict[str, dict | None] | None:
    """The value sets that hold exactly the rank's lines in [t0, t1], where there are such: all
    its lines (the window "all" over the whole span, at or past its last line), or all of the
    epoch's (the epoch at the playhead, its whole span in the window, at or past its end). For
    numbers over more than the ring buffer holds: `summary`'s numbers, not the newest samples'."""
    if t1 is None or series.last_batch_ts is None:
        return None
    if not epoch_scope:
        return series.whole if t0 is None and t1 >= series.last_batch_ts else None
    e = run.epoch if run is not None else None
    if e is None or (t0 is not None and t0 > after(e.start)):
        return None
    end = e.end if e.end is not None else series.last_batch_ts
    if t1 < end:
        return None
    # a run that is over keeps its figures, described already (Epoch.freeze)
    return e.described(series.rank) if e.frozen else e.per_rank.get(series.rank)


@dataclass
class _Window:
    """What a panel reads of one rank's window: its decode rows there, where its sparklines span
    (a to b, in cells cut once for every metric sharing the window's times), and whether the ring
    has lost the window's start (the overview then gives what came before `first`)."""

    times: array[float]
    columns: dict[str, array[float]]
    a: float | None
    b: float | None
    limit: float  # the gap past which a sparkline breaks
    shared: list[int] | None  # cell_cuts of the window's times, or None where there is no span
    first: float | None  # the ring's oldest time
    truncated: bool


def _window(series: RankSeries, t0: float | None, t1: float | None, spark_from: float | None,
            spark_points: int) -> _Window:
    times, columns = series.decode.raw_windows(PANEL_COLUMNS, t0, t1)
    a = t0 if t0 is not None else (spark_from if spark_from is not None else (times[0] if times else None))
    b = t1 if t1 is not None else (times[-1] if times else None)
    limit = gap_limit(times)
    shared = cell_cuts(times, a, b, spark_points) if a is not None and b is not None and b > a else None
    first = series.decode.first_time()
    truncated = bool(len(series.decode) >= series.decode.capacity and first is not None
                     and (t0 is None or t0 < first))
    if truncated:  # the overview's spans draw the part of the window before the ring
        limit = max(limit, 2 * series.overview.width)
    return _Window(times, columns, a, b, limit, shared, first, truncated)


def _sparkline(series: RankSeries, w: _Window, m: str, ts: array[float], vs: array[float],
               spark_points: int) -> list[float | None]:
    """One metric's sparkline over the window: the overview's points before the ring, if it lost them."""
    if w.shared is None or w.a is None or w.b is None:
        return [None] * spark_points
    sts: Sequence[float] = ts
    svs: Sequence[float] = vs
    cuts = w.shared if ts is w.times else None
    if w.truncated and w.first is not None:
        early_t, early_v = series.overview.points(m, w.a, w.first)
        keep = sum(1 for t in early_t if t < w.first)
        if keep:
            sts, svs, cuts = early_t[:keep] + list(ts), early_v[:keep] + list(vs), None
    return spark_cells(sts, svs, w.a, w.b, spark_points, w.limit, cuts)


def _metric_views(series: RankSeries, w: _Window, t0: float | None, spark_points: int,
                  exact: Rows | dict[str, dict | None] | None) -> tuple[dict[str, MetricView], dict[str, float]]:
    """Each panel metric's figures and sparkline over the window, and the time of its newest value."""
    metrics: dict[str, MetricView] = {}
    last_t: dict[str, float] = {}
    for m in MAIN_METRICS + SMALL_METRICS:
        ts, vs = present(w.times, w.columns[m])
        spark = _sparkline(series, w, m, ts, vs, spark_points)
        # no percentiles: a panel does not show them, and they need a sort, every frame
        stats = describe(vs, percentiles=False)
        early = series.overview.totals(m, t0, w.first) if w.truncated and exact is None else None
        if early is not None:
            # Before the ring: the overview's spans (figures at their grain; `exact` has better)
            n, total, lo, hi, last, at = early
            if stats is not None:
                n, total, lo, hi = n + stats["n"], total + math.fsum(vs), min(lo, stats["min"]), max(hi, stats["max"])
                last = stats["last"]
            stats = assemble(n, total, lo, hi, last)
            if not ts:
                last_t[m] = at
        metrics[m] = MetricView(m, stats, spark)
        if ts:
            last_t[m] = ts[-1]
    return metrics, last_t


def _spec_state(last_t: dict[str, float], newest: float | None, now: dict[str, float | None],
                began: float | None) -> str:
    """Speculation as the newest decode line shows it: on where it carried accept len or rate.
    An idle line (nothing running: vLLM logs one as traffic stops, with no SpecDecoding line where
    nothing was drafted in its interval) shows neither: the run's last accept len decides, and
    without one it is unknown, not off."""
    if newest is None:
        return SPEC_UNKNOWN
    seen = max(last_t.get("accept_len", -math.inf), last_t.get("accept_rate", -math.inf))
    if seen == newest:
        return SPEC_ON
    if now.get("running_req") == 0:
        return SPEC_ON if seen > (began if began is not None else -math.inf) else SPEC_UNKNOWN
    return SPEC_OFF


def _stale_s(series: RankSeries, t1: float | None, th: Thresholds) -> float | None:
    """Seconds since the rank's last batch at t1, where that is over the threshold."""
    last = _last_time_at_or_before(series, t1)
    if t1 is not None and last is not None and t1 - last > th.stale_s:
        return t1 - last
    return None


def _not_decoding(view: PanelView, run: RunState | None, newest: float | None, t1: float | None) -> None:
    """A run that is not decoding (yet, or any more): no figure is "now", whatever the window holds
    from the run before, and silence is the state (loading, waiting, down), not staleness."""
    if run is None or run.epoch is None or not run.fresh:
        return
    began = run.epoch.start
    if run.down is None and newest is not None and newest > began:
        return
    view.spec = DOWN if run.down is not None else (WAITING if run.ready_at is not None else LOADING)
    view.down = run.down
    since = run.down_at if run.down is not None else began
    view.state_s = None if t1 is None or since is None else max(0.0, t1 - since)
    view.now = dict.fromkeys(view.now)
    view.graph_off_now = False
    view.stale_s = None


def panel_view(series: RankSeries, t0: float | None, t1: float | None, *, spec: dict | None,
               th: Thresholds, run: RunState | None = None, spark_from: float | None = None,
               spark_points: int = SPARK_POINTS, exact: Rows | dict[str, dict | None] | None = None,
               host_steps: Sequence[tuple[float, float]] | None = None) -> PanelView:
    """One rank over [t0, t1]. `run`: the epoch at t1, for the state before its first decode
    line; `spark_from`: where the sparklines begin when t0 is None (the window "all"); `exact`:
    the value sets of exactly its lines in [t0, t1] (exact_rows), for figures over more than
    the ring buffer holds; `host_steps`: (time, steps in use) from the host's /metrics."""
    w = _window(series, t0, t1, spark_from, spark_points)
    metrics, last_t = _metric_views(series, w, t0, spark_points, exact)
    g_ts, g_vs = present(w.times, w.columns["graph"])
    newest, now = _newest(metrics, last_t, g_ts)
    graph_off_now = bool(g_ts) and g_ts[-1] == newest and g_vs[-1] == 0.0
    graph_off, n_decode = _batch_counts(series, w, t0, exact, metrics, g_ts, g_vs)
    truncated = w.truncated
    if truncated and exact is not None:
        # More than the ring holds: the figures from the value sets of every line there.
        for m, st in (exact.describe(percentiles=False) if isinstance(exact, Rows) else exact).items():
            if m in metrics:
                metrics[m].stats = st
        truncated = False  # the figures cover the window; the sparklines draw it from the overview
    began = run.epoch.start if run is not None and run.epoch is not None else None
    steps = (spec or {}).get("num_steps")
    view = PanelView(series.host, series.rank, _spec_state(last_t, newest, now, began),
                     bool(spec and spec.get("algorithm")),
                     graph_off_now, graph_off, n_decode, _stale_s(series, t1, th),
                     steps + 1 if isinstance(steps, int) else None, metrics, truncated, now)
    if adapts(spec):
        _controller(view, series, w, spec or {}, host_steps, spark_points)
    _not_decoding(view, run, newest, t1)
    return view


def _newest(metrics: dict[str, MetricView], last_t: dict[str, float],
            g_ts: Sequence[float]) -> tuple[float | None, dict[str, float | None]]:
    """The time of the newest decode line, and each metric's "now": its value on that line. The
    newest line decides the badges and the "now" column: a value from an older line (before a
    restart, say) is not "now"."""
    cands = [t for t in ([g_ts[-1]] if g_ts else []) + [last_t.get(m) for m in MAIN_METRICS + SMALL_METRICS]
             if t is not None]
    newest = max(cands) if cands else None
    now = {m: (got["last"] if (got := metrics[m].stats) and last_t.get(m) == newest else None)
           for m in MAIN_METRICS + SMALL_METRICS}
    return newest, now


def _batch_counts(series: RankSeries, w: _Window, t0: float | None, exact: Rows | dict[str, dict | None] | None,
                  metrics: dict[str, MetricView], g_ts: Sequence[float], g_vs: Sequence[float]) -> tuple[int, int]:
    """How many decode batches the window holds, and how many of them ran without CUDA graphs:
    the ring's, with the overview's before it where the ring lost them; the run's own counts where
    the window is the whole run and more than the ring holds."""
    if w.truncated and exact is not None and exact is series.whole:
        return series.graph_off, series.decode_batches
    graph_off = g_vs.count(0.0)
    n_decode = max([len(g_ts)] + [got["n"] for m in ("running_req", "gen_throughput")
                                  if (got := metrics[m].stats)])
    early = series.overview.totals("graph", t0, w.first) if w.truncated else None
    if early is not None:  # the batches before the ring, and those without graphs, from the overview
        n_early, on_early = early[0], early[1]
        graph_off += round(n_early - on_early)
        n_decode += n_early
    return graph_off, n_decode


def _controller(view: PanelView, series: RankSeries, w: _Window, spec: dict,
                host_steps: Sequence[tuple[float, float]] | None, spark_points: int) -> None:
    """What the engine's controller did in the window (core/adaptive.py): the steps in use, from
    the rank's own vLLM SpecDecoding lines where it has them, else the host's /metrics; and a
    fall of throughput past an edge of its schedule, from the window's decode lines."""
    lo = w.a if w.a is not None else -math.inf
    hi = w.b if w.b is not None else math.inf
    if series.steps:
        samples: Sequence[tuple[float, float]] = series.steps
    elif series.switches:  # each decode line ran at the tier of the last switch before it
        samples = _held(series.switches, w.times, spec.get("num_steps"))
    else:
        samples = host_steps or ()
    kept = [(t, k) for t, k in samples if lo <= t <= hi]
    ts, vs = [t for t, _ in kept], [k for _, k in kept]
    spark: list[float | None] = (spark_cells(ts, vs, w.a, w.b, spark_points, gap_limit(ts))
             if w.a is not None and w.b is not None and w.b > w.a else [None] * spark_points)
    view.steps = MetricView("steps", describe(vs, percentiles=False), spark)
    top = [k for _, _, k in spec.get("schedule") or ()] + [spec.get("num_steps") or 0] + vs
    view.steps_scale = (0.0, float(max(max(top), 1)))
    view.fell = fell_across(spec.get("schedule"), w.columns["running_req"], w.columns["gen_throughput"])


def steps_now(v: PanelView) -> float | None:
    """The steps in use now: the last figure in the window, while the rank decodes (not idle: no
    request running at its newest line, nor loading, waiting or down)."""
    if v.steps is None or v.spec in NOT_DECODING or v.now.get("running_req") == 0:
        return None
    return v.steps.now


def _held(switches: Sequence[tuple[float, float]], times: Sequence[float], start: object) -> list[tuple[float, float]]:
    """(time, steps) at each of `times`: those of the last switch at or before it, else `start`
    (the configured steps the controller starts from) where that is a number."""
    at = [t for t, _ in switches]
    out = []
    for t in times:
        i = bisect_right(at, t)
        k = switches[i - 1][1] if i else (float(start) if isinstance(start, (int, float)) else None)
        if k is not None:
            out.append((t, k))
    return out


def _last_time_at_or_before(s: RankSeries, t1: float | None) -> float | None:
    best = None
    for ring in (s.decode, s.prefill):
        last = ring.last_time()
        if last is None:
            continue
        cand: float | None
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
        e = shown_epoch(store, host, t)
        if e is not None and e.spec:
            return e.spec
    return store.spec.get(host) or {}


def spec_short(spec: dict, server: str | None = None) -> str:
    """`spec NEXTN steps=3 topk=1 draft=4`, `spec off`, or `spec ?` before any server_args; where
    the settings were read off the host instead of the log, which witness (`(ExecStart)`); and the
    server's version when it is known (`· SGLang 0.5.23`)."""
    if not spec:
        text = "spec ? (no server_args seen)"
    elif not spec.get("algorithm"):
        text = f"spec off ({spec.get('witness') or 'server_args'})"
    else:
        text = "spec " + spec_settings(spec) + (f" ({spec['witness']})" if spec.get("witness") else "")
    return f"{text} · {server}" if server else text


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
        first = s.decode.first_time()
        if (len(s.decode) >= s.decode.capacity and first is not None and (t0 is None or t0 < first)
                and metric in s.overview.columns):
            # The window reaches past the ring: the overview's spans draw the time before it.
            before = s.overview.points(metric, t0, first)
            keep = [i for i, t in enumerate(before[0]) if t < first]
            ts = [before[0][i] for i in keep] + ts
            vs = [before[1][i] for i in keep] + vs
        if ts:
            out[s.rank] = bucket_by_time(ts, vs, points)
    return out


def bucket_by_time(ts: list[float], vs: list[float], points: int) -> tuple[list[float], list[float]]:
    """At most `points` points: the samples cut into equal spans of time, each span's mean time
    and mean value (empty spans left out). For drawing, from running sums, as spark_cells()."""
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


def host_epoch_rows(store: Store, host: str | None) -> list[EpochRow]:
    """The host's epochs as `summary` gives them (core/compare.py), from n and mean only."""
    return epoch_rows([e.to_json(brief=True) for e in store.epochs.get(host) or []])


@dataclass
class StripView:
    """The epoch strip: the run at the playhead, its figures and its change against the others."""
    run: RunState
    row: EpochRow | None  # the epoch's numbers, as summary's epochs give them
    state: str | None  # LOADING, WAITING or DOWN while no rank decodes in this run
    state_s: float | None  # seconds in that state
    age: float | None  # how long the epoch has run at the playhead (its length, once ended)
    ended: bool  # the playhead is past its end


def strip_view(run: RunState, rows: list[EpochRow], views: list[PanelView], t1: float | None) -> StripView:
    e = run.epoch
    if e is None:
        return StripView(run, None, None, None, None, False)
    row = next((r for r in rows if r.index == e.index), None)
    ended = e.end is not None and t1 is not None and t1 >= e.end
    end = e.end if ended else t1
    state = state_s = None
    if run.fresh and (not views or all(v.spec in NOT_DECODING for v in views)):
        state = DOWN if run.down is not None else (WAITING if run.ready_at is not None else LOADING)
        since = run.down_at if run.down is not None else e.start
        state_s = None if t1 is None or since is None else max(0.0, t1 - since)
        if state != DOWN:
            row = None  # what it logged later (a seek back) is not yet at the playhead
    return StripView(run, row, state, state_s, None if end is None else max(0.0, end - e.start), ended)
