"""Alerts that hold before they fire: conditions read from the store over a span of log time.

Each rule looks at the samples in ``[now - hold, now]`` and fires only when the condition is true
for the whole span (and the samples cover most of it), so one noisy batch line never raises an
alert and an alert clears as soon as the data no longer supports it. Being a function of the
store and the time, the same log always gives the same alerts, whether live, replayed, or seeked.

Rules (thresholds in ``Thresholds``; mtptui.config builds them from ``[thresholds]``):
- spec_fallback: speculation configured in ``server_args`` but decode lines carry no accept len
- accept_rate_low: accept rate below ``accept_rate_min`` for ``accept_rate_hold_s``
- accept_len_one: accept len at about 1.00 (no draft token accepted)
- graph_off: decode batches run without CUDA graphs
- queue_growing: the waiting queue grows over ``queue_hold_s``
- rank_diverging: one rank's accept len or throughput far from the other ranks'
- throughput_down: gen throughput below the epoch's own baseline
Pure: no Textual, no clock; the caller passes the log time to judge at.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from mtptui.core.store import Epoch, RankSeries, Store, spec_label

ERROR = "error"
WARNING = "warning"


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
    rank_diverge_hold_s: float = 30.0
    throughput_drop_pct: float = 30.0
    throughput_hold_s: float = 60.0
    baseline_min_s: float = 120.0  # an epoch needs this much history before it is a baseline
    stale_s: float = 30.0  # a rank with no batch line for this long is shown STALE
    coverage: float = 0.7  # the samples in a span must cover this fraction of it


@dataclass(frozen=True)
class Alert:
    kind: str
    host: str | None
    rank: str  # "" for a host-wide alert
    severity: str
    title: str  # short, for the alert bar
    detail: str  # what it means and what to check
    since: float | None = None  # log time the condition began to hold (read from the data)

    @property
    def key(self) -> tuple:
        return (self.kind, self.host, self.rank)


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


def _rank(s: RankSeries) -> str:
    return s.rank or "the only rank"


def evaluate(store: Store, host: str | None, now: float, th: Thresholds | None = None) -> list[Alert]:
    """Every alert that holds for `host` at log time `now`, errors first."""
    th = th or Thresholds()
    out: list[Alert] = []
    ranks = store.ranks(host)
    epoch = epoch_at(store, host, now)
    out += _spec_fallback(host, ranks, epoch, now, th)
    for s in ranks:
        out += _rank_rules(host, s, now, th)
    out += _rank_diverging(host, ranks, now, th)
    out += _throughput_down(host, ranks, epoch, now, th)
    out.sort(key=lambda a: (a.severity != ERROR, a.kind, a.rank))
    return out


def _spec_fallback(host, ranks, epoch, now, th) -> list[Alert]:
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
            silent.append(_rank(s))
            first.append(dts[0])
    if not silent:
        return []
    return [Alert("spec_fallback", host, "", ERROR,
                  f"SPEC configured ({spec_label(epoch.spec)}) but no accept len on {', '.join(silent)}",
                  "server_args asks for speculative decoding, yet the decode lines carry no accept "
                  "len: the server runs without it (a silent fallback). Check the startup log for "
                  "a draft model or speculation error.", since=min(first))]


def _rank_rules(host, s: RankSeries, now: float, th: Thresholds) -> list[Alert]:
    out = []
    r = _rank(s)
    t0 = now - th.accept_rate_hold_s
    ts, vs = s.decode.window("accept_rate", t0, now)
    if _covered(ts, t0, now, th) and max(vs) < th.accept_rate_min:
        out.append(Alert("accept_rate_low", host, s.rank, WARNING,
                         f"accept rate < {th.accept_rate_min:.2f} on {r} for {th.accept_rate_hold_s:.0f}s",
                         f"accept rate stayed between {min(vs):.2f} and {max(vs):.2f}: the draft is "
                         "rarely right. Check the draft model matches the target, and the workload.",
                         since=_run_start(s, "accept_rate", now, lambda v: v < th.accept_rate_min)))
    t0 = now - th.accept_len_one_hold_s
    ts, vs = s.decode.window("accept_len", t0, now)
    if _covered(ts, t0, now, th) and max(vs) <= th.accept_len_one_max:
        out.append(Alert("accept_len_one", host, s.rank, ERROR,
                         f"accept len {max(vs):.2f} on {r}: nothing accepted",
                         "accept len 1.00 means every draft token is rejected (only the bonus token "
                         "counts): speculation costs time and gains nothing. A wrong draft model, or "
                         "an EAGLE3 draft run with --speculative-algorithm EAGLE.",
                         since=_run_start(s, "accept_len", now, lambda v: v <= th.accept_len_one_max)))
    t0 = now - th.graph_off_hold_s
    ts, vs = s.decode.window("graph", t0, now)
    if _covered(ts, t0, now, th) and max(vs) == 0.0:
        out.append(Alert("graph_off", host, s.rank, WARNING,
                         f"CUDA graphs off in decode on {r}",
                         "decode batches log `cuda graph: False`: decode runs eagerly and slower. "
                         "Check --disable-cuda-graph and whether the batch exceeds --cuda-graph-max-bs.",
                         since=_run_start(s, "graph", now, lambda v: v == 0.0)))
    t0 = now - th.queue_hold_s
    ts, vs = s.decode.window("queue_req", t0, now)
    if _covered(ts, t0, now, th) and len(vs) >= 4:
        third = max(1, len(vs) // 3)
        first = sum(vs[:third]) / third
        last = sum(vs[-third:]) / third
        if last - first >= th.queue_growth_min and vs[-1] >= vs[0]:
            out.append(Alert("queue_growing", host, s.rank, WARNING,
                             f"queue growing on {r}: {vs[0]:.0f} -> {vs[-1]:.0f} in {th.queue_hold_s:.0f}s",
                             "more requests wait each minute: the server cannot keep up with the load.",
                             since=ts[0]))
    return out


def _run_start(s: RankSeries, metric: str, now: float, holds, lookback: float = 3600.0) -> float | None:
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


def _rank_diverging(host, ranks, now, th) -> list[Alert]:
    if len(ranks) < 2:
        return []
    out = []
    t0 = now - th.rank_diverge_hold_s
    for metric, name, fmt in (("accept_len", "accept len", "{:.2f}"), ("gen_throughput", "gen throughput", "{:.0f}")):
        means = {s.rank: m for s in ranks if (m := _span_mean(s, metric, t0, now, th)) is not None}
        if len(means) < 2:
            continue
        for rank, m in means.items():
            others = sorted(v for k, v in means.items() if k != rank)
            med = _median(others)
            if med <= 0:
                continue
            dev = (m - med) / med * 100
            if abs(dev) > th.rank_diverge_pct:
                out.append(Alert("rank_diverging", host, rank, WARNING,
                                 f"{rank or 'rank'} {name} {fmt.format(m)} vs {fmt.format(med)} on the others ({dev:+.0f}%)",
                                 f"over the last {th.rank_diverge_hold_s:.0f}s this rank's {name} is "
                                 f"{abs(dev):.0f}% {'above' if dev > 0 else 'below'} the other ranks'. "
                                 "Uneven load, a slow GPU, or a rank with another configuration.",
                                 since=t0))
    return out


def _median(v: list[float]) -> float:
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def _throughput_down(host, ranks, epoch, now, th) -> list[Alert]:
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
    return [Alert("throughput_down", host, "", WARNING,
                  f"gen throughput {r:.0f} tok/s, {100 * (1 - r / b):.0f}% below this epoch's {b:.0f}",
                  f"the mean over the last {th.throughput_hold_s:.0f}s per rank is below the mean since "
                  "the server started. Less load, longer outputs, or a slower decode (graphs, acceptance).",
                  since=t_split)]


def stale(s: RankSeries, now: float, th: Thresholds, last_ts: float | None = None) -> bool:
    """No batch line for stale_s before `now` (last_ts: the rank's newest batch at or before now)."""
    last = last_ts if last_ts is not None else s.last_batch_ts
    return last is not None and now - last > th.stale_s


@dataclass
class Fired:
    alert: Alert
    at: float  # log time when it was first seen to hold
    cleared: float | None = None


@dataclass
class AlertTracker:
    """Turns the alerts holding at each tick into a history of fired/cleared ones for the timeline."""

    maxlen: int = 500
    active: dict[tuple, Fired] = field(default_factory=dict)
    history: deque = field(default_factory=lambda: deque(maxlen=500))
    _last_now: float | None = None

    def update(self, host, alerts: list[Alert], now: float) -> list[Alert]:
        """Alerts of `host` holding at `now`; returns those that just fired."""
        if self._last_now is not None and now < self._last_now:
            # A seek backwards: what fired "later" has not happened yet.
            self.active.clear()
            self.history = deque((f for f in self.history if f.at <= now), maxlen=self.maxlen)
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
                self.active[a.key] = Fired(a, self.active[a.key].at)
        for k in [k for k in self.active if k[1] == host and k not in keys]:
            f = self.active.pop(k)
            for h in self.history:
                if h.alert.key == k and h.cleared is None:
                    h.cleared = now
        return new

    def for_host(self, host) -> list[Fired]:
        return [f for k, f in self.active.items() if k[1] == host]
