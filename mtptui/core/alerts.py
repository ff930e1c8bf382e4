"""Alerts that hold before they fire: conditions read from the store over a span of log time.

Each rule looks at the samples in ``[now - hold, now]`` and fires only when the condition is true
for the whole span (and the samples cover most of it), so one noisy batch line never raises an
alert and an alert clears as soon as the data no longer supports it. Being a function of the
store and the time, the same log always gives the same alerts, whether live, replayed, or seeked.

A condition is one alert per host, naming the ranks it holds on ("accept len ≈ 1.0 on all 8
ranks"): a host-wide collapse is one line, not one per rank.

Rules (thresholds in ``Thresholds``; mtptui.config builds them from ``[thresholds]``):
- spec_fallback: speculation configured in ``server_args`` but decode lines carry no accept len
- accept_rate_low: accept rate below ``accept_rate_min`` for ``accept_rate_hold_s``
- accept_len_one: accept len at about 1.00 (no draft token accepted)
- graph_off: decode batches run without CUDA graphs
- queue_growing: the waiting queue grows all through ``queue_hold_s`` (a burst that drains is not)
- accept_len_diverging, throughput_diverging: a rank's accept len or gen tok/s per running
  request away from the other ranks' in every part of ``rank_diverge_hold_s``, by a share and an
  amount (load that swings from rank to rank is not)
- throughput_down: gen throughput below the epoch's own baseline
- crashed: a server or engine process of the running epoch died unasked (a `crash` event), until
  a new run begins: the figures above it are a dead server's last
Pure: no Textual, no clock; the caller passes the log time to judge at.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mtptui.config.thresholds import Thresholds
from mtptui.core.epochs import short_rank_labels, spec_label

if TYPE_CHECKING:  # the dashboard's store: `summary` reads no store and need not load it
    from mtptui.core.store import Epoch, RankSeries, Store

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Alert:
    kind: str
    host: str | None
    severity: str
    title: str  # short, for the alert bar: names the ranks
    detail: str  # what it means and what to check
    since: float | None = None  # log time the condition began to hold (read from the data)
    ranks: tuple[str, ...] = ()  # the ranks it holds on; () for the host as a whole

    @property
    def key(self) -> tuple:
        """One alert per kind and host: ranks joining or leaving change its title, not its identity."""
        return (self.kind, self.host)


# A word or two per kind, for a rank's badge (the alert bar has the whole title).
BADGE = {"spec_fallback": "no accept len", "accept_rate_low": "accept rate low", "accept_len_one": "accept len 1",
         "graph_off": "graphs off", "queue_growing": "queue growing", "accept_len_diverging": "accept len apart",
         "throughput_diverging": "slower per request", "throughput_down": "throughput down"}


def by_rank(alerts: list[Alert]) -> dict[str, list[Alert]]:
    """rank -> the alerts that hold on it (errors first, as `evaluate` orders them)."""
    out: dict[str, list[Alert]] = {}
    for a in alerts:
        for r in a.ranks:
            out.setdefault(r, []).append(a)
    return out


def epoch_at(store: Store, host: str | None, t: float) -> Epoch | None:
    """The epoch that was running at log time t (the first one if t is before all of them)."""
    epochs = store.epochs.get(host) or []
    found = epochs[0] if epochs else None
    for e in epochs:
        if e.start <= t:
            found = e
        else:
            break
    return found


def _covered(ts: list[float], t0: float, t1: float, th: Thresholds) -> bool:
    return len(ts) >= 2 and (ts[-1] - ts[0]) >= th.coverage * (t1 - t0)


def _decode_times(s: RankSeries, t0: float | None, t1: float | None) -> list[float]:
    for col in ("running_req", "gen_throughput", "queue_req"):
        ts, _ = s.decode.window(col, t0, t1)
        if ts:
            return ts
    return []


def where(ranks: list[str], every: list[str]) -> str:
    """` on all 8 ranks`, ` on DP3`, ` on DP0, DP3 (2 of 8 ranks)`, ` on 7 of 8 ranks (all but
    DP3)`; '' for the one rank of a server that logs none. Short names (DP3 for DP3 TP3 EP3)."""
    n, k = len(every), len(ranks)
    if n == 1 and ranks == [""]:
        return ""
    short = short_rank_labels(every)
    names = [short[r] for r in ranks]
    if k == n and n > 1:
        return f" on all {n} ranks"
    if k == 1:
        return f" on {names[0]}"
    if n - k <= 3 < k:
        return f" on {k} of {n} ranks (all but {', '.join(short[r] for r in every if r not in ranks)})"
    return f" on {', '.join(names)} ({k} of {n} ranks)"


@dataclass(frozen=True)
class _Hit:
    """A per-rank rule holding on one rank: the rank, since when, and its values in the span."""
    rank: str
    since: float | None
    lo: float
    hi: float
    first: float = 0.0
    last: float = 0.0


def evaluate(store: Store, host: str | None, now: float, th: Thresholds | None = None) -> list[Alert]:
    """Every alert that holds for `host` at log time `now`, errors first."""
    th = th or Thresholds()
    out: list[Alert] = []
    ranks = store.ranks(host)
    every = [s.rank for s in ranks]
    epoch = epoch_at(store, host, now)
    out += _spec_fallback(host, ranks, epoch, now, th)
    for kind, rule in RANK_RULES.items():
        hits = [h for s in ranks if (h := rule(s, now, th)) is not None]
        if hits:
            out.append(_grouped(kind, host, hits, every, th))
    out += _rank_diverging(host, ranks, now, th)
    out += _throughput_down(host, ranks, epoch, now, th)
    out += _crashed(host, epoch, now)
    out.sort(key=lambda a: (a.severity != ERROR, a.kind))
    return out


def _crashed(host: str | None, epoch: Epoch | None, now: float) -> list[Alert]:
    """The run at `now` had a process die unasked (Epoch.crash, its first), at or before `now`:
    one event is the whole evidence, so no hold (a dead server logs nothing more to hold over)."""
    crash = epoch.crash if epoch is not None else None
    if crash is None or crash.ts is None or crash.ts > now:
        return []
    return [Alert("crashed", host, ERROR, f"server process died: {crash.text[:120]}",
                  "a server or engine process ended without being asked; the events pane (e) has its first "
                  "error, and the run's figures stop here until the server starts again",
                  crash.ts)]


def _spec_fallback(host: str | None, ranks: list[RankSeries], epoch: Epoch | None, now: float,
                   th: Thresholds) -> list[Alert]:
    if epoch is None or not epoch.spec.get("algorithm"):
        return []
    silent = []
    first = []
    for s in ranks:
        dts = _decode_times(s, epoch.start, now)
        if len(dts) < th.fallback_min_batches or now - dts[0] < th.fallback_hold_s:
            continue
        acc, _ = s.decode.window("accept_len", epoch.start, now)
        rate, _ = s.decode.window("accept_rate", epoch.start, now)
        if not acc and not rate:
            silent.append(s.rank)
            first.append(dts[0])
    if not silent:
        return []
    return [Alert("spec_fallback", host, ERROR,
                  f"SPEC configured ({spec_label(epoch.spec)}) but no accept len{where(silent, [s.rank for s in ranks])}",
                  "server_args asks for speculative decoding, yet the decode lines carry no accept "
                  "len: the server runs without it (a silent fallback). Check the startup log for "
                  "a draft model or speculation error.", since=min(first), ranks=tuple(silent))]


def _accept_rate_low(s: RankSeries, now: float, th: Thresholds) -> _Hit | None:
    t0 = now - th.accept_rate_hold_s
    ts, vs = s.decode.window("accept_rate", t0, now)
    if _covered(ts, t0, now, th) and max(vs) < th.accept_rate_min:
        return _Hit(s.rank, _run_start(s, "accept_rate", now, lambda v: v < th.accept_rate_min), min(vs), max(vs))
    return None


def _accept_len_one(s: RankSeries, now: float, th: Thresholds) -> _Hit | None:
    t0 = now - th.accept_len_one_hold_s
    ts, vs = s.decode.window("accept_len", t0, now)
    if _covered(ts, t0, now, th) and max(vs) <= th.accept_len_one_max:
        return _Hit(s.rank, _run_start(s, "accept_len", now, lambda v: v <= th.accept_len_one_max), min(vs), max(vs))
    return None


def _graph_off(s: RankSeries, now: float, th: Thresholds) -> _Hit | None:
    t0 = now - th.graph_off_hold_s
    ts, vs = s.decode.window("graph", t0, now)
    if _covered(ts, t0, now, th) and max(vs) == 0.0:
        return _Hit(s.rank, _run_start(s, "graph", now, lambda v: v == 0.0), 0.0, 0.0)
    return None


def _queue_growing(s: RankSeries, now: float, th: Thresholds) -> _Hit | None:
    """The queue's mean rises from each quarter of the span to the next and ends higher by
    queue_growth_min: it keeps growing. A burst that fills the queue and drains again within
    the span does not."""
    t0 = now - th.queue_hold_s
    ts, vs = s.decode.window("queue_req", t0, now)
    if not _covered(ts, t0, now, th):
        return None
    parts: list[list[float]] = [[] for _ in range(QUEUE_PARTS)]
    for t, v in zip(ts, vs):
        parts[min(QUEUE_PARTS - 1, int((t - t0) / th.queue_hold_s * QUEUE_PARTS))].append(v)
    if not all(parts):
        return None
    means = [math.fsum(p) / len(p) for p in parts]
    if all(a < b for a, b in zip(means, means[1:])) and vs[-1] - vs[0] >= th.queue_growth_min:
        return _Hit(s.rank, ts[0], min(vs), max(vs), vs[0], vs[-1])
    return None


QUEUE_PARTS = 4
RANK_RULES = {"accept_rate_low": _accept_rate_low, "accept_len_one": _accept_len_one,
              "graph_off": _graph_off, "queue_growing": _queue_growing}


def _grouped(kind: str, host: str | None, hits: list[_Hit], every: list[str], th: Thresholds) -> Alert:
    """One alert for the ranks a per-rank rule holds on."""
    ranks = [h.rank for h in hits]
    on = where(ranks, every)
    lo, hi = min(h.lo for h in hits), max(h.hi for h in hits)
    since = min((h.since for h in hits if h.since is not None), default=None)
    if kind == "accept_rate_low":
        return Alert(kind, host, WARNING, f"accept rate < {th.accept_rate_min:.2f}{on}",
                     f"accept rate stayed between {lo:.2f} and {hi:.2f} for {th.accept_rate_hold_s:.0f}s: "
                     "the draft is rarely right. Check the draft model matches the target, and the workload.",
                     since, tuple(ranks))
    if kind == "accept_len_one":
        return Alert(kind, host, ERROR, f"accept len ≈ 1.0{on}: nothing accepted",
                     f"accept len between {lo:.2f} and {hi:.2f} for {th.accept_len_one_hold_s:.0f}s: every "
                     "draft token is rejected (only the bonus token counts), so speculation costs time "
                     "and gains nothing. A wrong draft model, or an EAGLE3 draft run with "
                     "--speculative-algorithm EAGLE.", since, tuple(ranks))
    if kind == "graph_off":
        return Alert(kind, host, WARNING, f"CUDA graphs off in decode{on}",
                     "decode batches log `cuda graph: False`: decode runs eagerly and slower. Check "
                     "--disable-cuda-graph and whether the batch exceeds --cuda-graph-max-bs.",
                     since, tuple(ranks))
    first, last = sum(h.first for h in hits), sum(h.last for h in hits)
    return Alert(kind, host, WARNING, f"queue growing{on}: {first:.0f} -> {last:.0f} waiting",
                 f"over the last {th.queue_hold_s:.0f}s more requests wait each third of the time "
                 f"({first:.0f} -> {last:.0f} in all): the server cannot keep up with the load.",
                 since, tuple(ranks))


def _run_start(s: RankSeries, metric: str, now: float, holds: Callable[[float], bool], lookback: float = 3600.0) -> float | None:
    """The time of the oldest sample of the run, ending at `now`, whose values all satisfy `holds`."""
    ts, vs = s.decode.window(metric, now - lookback, now)
    start = None
    for t, v in zip(reversed(ts), reversed(vs)):
        if not holds(v):
            break
        start = t
    return start


def _span_mean(s: RankSeries, metric: str, t0: float, t1: float, th: Thresholds) -> float | None:
    ts, vs = s.decode.window(metric, t0, t1)
    if not _covered(ts, t0, t1, th):
        return None
    return math.fsum(vs) / len(vs)


def _per_request_mean(s: RankSeries, t0: float, t1: float, th: Thresholds) -> float | None:
    """Mean gen throughput per running request: how fast this rank decodes each request, which
    moves little with its load (raw throughput follows the number of requests)."""
    times, cols = s.decode.raw_windows(("gen_throughput", "running_req"), t0, t1)
    ts, vs = [], []
    for t, g, r in zip(times, cols["gen_throughput"], cols["running_req"]):
        if g == g and r == r and r > 0:  # NaN: the line did not carry it
            ts.append(t)
            vs.append(g / r)
    return math.fsum(vs) / len(vs) if _covered(ts, t0, t1, th) else None


# kind: (what is compared, its mean over a span, number format, the Thresholds field of its
# minimum effect). Throughput is compared per running request: DP groups get their bursts at
# different times, and a rank with twice the requests generates about twice the tokens.
DIVERGE = {
    "accept_len_diverging": ("accept len", lambda s, a, b, th: _span_mean(s, "accept_len", a, b, th), "{:.2f}",
                             "rank_diverge_min_accept_len"),
    "throughput_diverging": ("tok/s per request", _per_request_mean, "{:.1f}", "rank_diverge_min_req_tok_s"),
}


def _rank_diverging(host: str | None, ranks: list[RankSeries], now: float, th: Thresholds) -> list[Alert]:
    """A rank whose mean differs from the other ranks' median, the same way, in every part of
    the hold, by more than the share and the minimum amount: a difference that lasts, not load
    passing from rank to rank."""
    if len(ranks) < 2:
        return []
    n_parts = max(1, int(th.rank_diverge_parts))
    t_start = now - th.rank_diverge_hold_s
    step = th.rank_diverge_hold_s / n_parts
    parts = [(a, a + step) for a in (t_start + i * step for i in range(n_parts))]
    every = [s.rank for s in ranks]
    out = []
    for kind, (name, mean, fmt, min_field) in DIVERGE.items():
        alive = _diverging(ranks, mean, parts, th, getattr(th, min_field))
        if not alive:
            continue
        # The figures shown are over the whole hold: the flagged ranks' means, against the
        # median of the others (of all, where every rank is flagged).
        name_long = "gen throughput per running request" if kind == "throughput_diverging" else name
        flagged = [r for r in every if r in alive]
        means = {s.rank: m for s in ranks if (m := mean(s, t_start, now, th)) is not None}
        rest = sorted(v for k, v in means.items() if k not in alive) or sorted(means.values())
        med = _median(rest)
        shown = ", ".join(f"{fmt.format(means[r])} ({(means[r] - med) / med * 100:+.0f}%)" for r in flagged)
        out.append(Alert(kind, host, WARNING,
                         f"{name}{where(flagged, every)}: {shown}, others {fmt.format(med)}",
                         f"in each {step:.0f}s of the last {th.rank_diverge_hold_s:.0f}s the {name_long} of "
                         f"{'this rank' if len(flagged) == 1 else 'these ranks'} stayed over "
                         f"{th.rank_diverge_pct:.0f}% away from the other ranks'. A slow GPU or link, a "
                         "rank with another configuration, or a draft that suits its requests less.",
                         since=t_start, ranks=tuple(flagged)))
    return out


def _diverging(ranks: list[RankSeries], mean: Callable[[RankSeries, float, float, Thresholds], float | None],
               parts: list[tuple[float, float]], th: Thresholds, min_effect: float) -> set[str]:
    """The ranks whose mean over each part differs from the other ranks' median of that part by
    more than rank_diverge_pct and min_effect, on the same side in every part. A rank is dropped
    at its first part that does not: judging stops once none is left."""
    above: dict[str, bool] = {}  # rank -> the side it differs on, while it differs in every part
    alive = {s.rank for s in ranks}
    for a, b in parts:
        means = {s.rank: m for s in ranks if (m := mean(s, a, b, th)) is not None}
        for r in list(alive):
            m = means.get(r)
            others = sorted(v for k, v in means.items() if k != r)
            med = _median(others) if others else 0.0
            if (m is None or med <= 0 or abs(m - med) / med * 100 <= th.rank_diverge_pct
                    or abs(m - med) < min_effect or above.setdefault(r, m > med) != (m > med)):
                alive.discard(r)
        if not alive:
            break
    return alive


def _median(v: list[float]) -> float:
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def _throughput_down(host: str | None, ranks: list[RankSeries], epoch: Epoch | None, now: float,
                     th: Thresholds) -> list[Alert]:
    if epoch is None or not ranks:
        return []
    t_split = now - th.throughput_hold_s
    if t_split - epoch.start < th.baseline_min_s:
        return []
    recent, base = [], []
    for s in ranks:
        m = _span_mean(s, "gen_throughput", t_split, now, th)
        b_ts, b_vs = s.decode.window("gen_throughput", epoch.start, t_split)
        if m is None or not b_ts or b_ts[-1] - b_ts[0] < th.baseline_min_s * th.coverage:
            continue
        recent.append(m)
        base.append(math.fsum(b_vs) / len(b_vs))
    if not recent:
        return []
    r, b = sum(recent) / len(recent), sum(base) / len(base)
    if b <= 0 or r >= b * (1 - th.throughput_drop_pct / 100):
        return []
    return [Alert("throughput_down", host, WARNING,
                  f"gen throughput {r:.0f} tok/s, {100 * (1 - r / b):.0f}% below this epoch's {b:.0f}",
                  f"the mean over the last {th.throughput_hold_s:.0f}s per rank is below the mean since "
                  "the server started. Less load, longer outputs, or a slower decode (graphs, acceptance).",
                  since=t_split)]


@dataclass
class Fired:
    alert: Alert  # as it fired
    at: float  # log time when it was first seen to hold
    cleared: float | None = None
    last: Alert | None = None  # as it held last (ranks may have joined or left since)

@dataclass
class AlertTracker:
    """Turns the alerts holding at each tick into a history of fired/cleared ones for the timeline."""

    maxlen: int = 500
    active: dict[tuple, Fired] = field(default_factory=dict)
    history: deque[Fired] = field(default_factory=lambda: deque(maxlen=500))
    _last_now: float | None = None

    def update(self, host: str | None, alerts: list[Alert], now: float) -> list[Alert]:
        """Alerts of `host` holding at `now`; returns those that just fired."""
        if self._last_now is not None and now < self._last_now:
            # A seek backwards (or a live playhead that steps back within a log second): what
            # fired or cleared "later" has not happened yet; what fired before still holds.
            self.history = deque((f for f in self.history if f.at <= now), maxlen=self.maxlen)
            for f in self.history:
                if f.cleared is not None and f.cleared > now:
                    f.cleared = None
            self.active = {f.alert.key: f for f in self.history if f.cleared is None}
        self._last_now = now
        new = []
        keys = set()
        for a in alerts:
            keys.add(a.key)
            if a.key not in self.active:
                f = Fired(a, a.since if a.since is not None and a.since <= now else now)
                self.active[a.key] = f
                self.history.append(f)
                new.append(a)
            else:
                self.active[a.key].last = a
        for k in [k for k in self.active if k[1] == host and k not in keys]:
            self.active.pop(k).cleared = now  # the same Fired as in the history
        return new
