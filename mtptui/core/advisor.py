"""The advisor: what the data says to try next, each with its evidence and the key that tries it.

A near relative of the alerts (core/alerts.py), and built on their machinery: a rule reads the
store over a span of log time and holds only when its condition is true in every part of that
span (``Limits.hold_s``, minutes, cut in ``Limits.parts``), so one noisy line never gives advice and
advice goes as soon as the data stops supporting it. Where an alert already judges the same fact
(ranks diverging) the advisor asks that alert's rule, over its own longer hold, rather than judge
it again. Every piece of advice carries the numbers it stands on and the window they are over:
never advice without evidence on screen.

The rules are one table, ``RULES``: a name, the predicate over a span's facts (``Span``), and what
it tries (a binding id of config/keys.py, or a command). Pure: no Textual, no clock; the caller
passes the log time to judge at, and may pass ``step_name`` (control/profiles.py's `step`) to name
the profile that `[` would apply.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mtptui.config.keys import BY_ID
from mtptui.config.thresholds import Thresholds
from mtptui.core import alerts
from mtptui.core.alerts import Alert, epoch_at, where
from mtptui.core.compare import BucketRow, EpochRow, epoch_rows, iter_epoch_rows, stops_paying_from
from mtptui.core.epochs import spec_label
from mtptui.core.gpus import HELD, GpuSample
from mtptui.core.loadmatch import LOAD, Scale

if TYPE_CHECKING:  # the dashboard's store: `summary` reads no store and need not load it
    from mtptui.core.store import Store


@dataclass(frozen=True)
class Limits:
    hold_s: float = 120.0  # a rule holds only when true in every part of this much log time
    parts: int = 4
    accept_share_max: float = 0.5  # accept len at most this share of the draft tokens: steps wasted
    nothing_accepted: float = 1.1  # accept len at or below this: nothing accepted, so try it off
    slower_pct: float = 5.0  # speculation this much slower than spec off at the load served
    slow_context_share: float = 0.25  # ... or at contexts that hold this share of the epoch's lines
    kv_usage_min: float = 0.92  # token usage at or above this, with a retraction in each part
    coverage: float = 0.7  # the samples of a span must cover this share of it
    # GPUs idle while the queue grows: requests waiting (the host's #queue-req, the mean in every
    # part) while the GPUs run a kernel (nvidia-smi's utilization.gpu, amd-smi's gfx: the share of
    # time one ran, not of the GPU's capacity) under half the time. A GPU decoding a batch reads
    # high however small the batch, so under half with work waiting is the scheduler not handing it
    # over (a --max-running-requests or chunked prefill limit, or a stall); above half it may be
    # still, but the rule keeps quiet rather than guess. Four waiting is past the moment between a
    # request's arrival and its admission: a backlog.
    queue_min: float = 4.0
    gpu_util_max: float = 50.0
    # speculation pushing batches off CUDA graphs: at least this share of the span's decode lines
    # ran eager, every one of them at more #running-req than any line that ran on a graph
    graph_bs_share: float = 0.2
    # acceptance drifting down within one run (vllm #41838: until a restart): the run has gone on
    # this long, its accept len fell in each of `drift_parts` parts of it, by this much in all
    drift_min_s: float = 7200.0
    drift_parts: int = 4
    drift_pct: float = 8.0
    drift_noise: float = 0.01  # a part may sit this share above the one before and still count as falling


@dataclass(frozen=True)
class Advice:
    rule: str  # the RULES name
    host: str | None
    title: str  # what to try, in a few words with the key: "mtp3 accepts 1.31 of 4 ..."
    evidence: str  # the numbers it stands on, and over which window
    key: str | None  # the binding id of config/keys.py that tries it, None where a command does
    tries: str  # what the key does here ("mtp2", "speculation off"), or the command to run
    ranks: tuple[str, ...] = ()
    since: float | None = None

    def to_json(self) -> dict:
        return {"rule": self.rule, "host": self.host, "title": self.title, "evidence": self.evidence,
                "key": self.key, "keys": BY_ID[self.key].keys if self.key else None, "tries": self.tries,
                "ranks": list(self.ranks), "since": self.since}


@dataclass(frozen=True)
class Queue:
    """The host's queue over a span, summed over its ranks (DP ranks queue apart): the level a
    rule judges (the dashboard's mean; summary's median over an epoch) and how it moved, in words."""
    level: float
    words: str  # "12 → 40 requests (mean 20.4)"


@dataclass(frozen=True)
class Span:
    """A host's facts over [t0, t1] of log time: what the predicates read."""
    host: str | None
    t0: float
    t1: float
    every: tuple[str, ...]  # the host's ranks
    spec: dict  # the settings of the epoch at t1
    accept: dict[str, float]  # rank -> mean accept len, over ranks whose lines cover the span
    graph_off: tuple[str, ...]  # ranks whose decode lines all ran without CUDA graphs (covering the span)
    usage: dict[str, float]  # rank -> highest token usage
    retractions: int  # KV pool full: requests retracted, events over the whole hold (they come in bursts)
    load: str | None  # the LOAD bucket the span was served at (its mean #running-req)
    row: EpochRow | None  # the epoch at t1 as compare.py sets it against the others
    diverging: tuple[Alert, ...]  # the alerts' rank divergence over the whole hold
    window: str = ""  # the span in words, where not "the last 2m" (summary's: an epoch whole)
    queue: Queue | None = None  # the host's #queue-req, where its lines cover the span
    running: float | None = None  # and its #running-req, the mean
    gpu_util: float | None = None  # the host's GPUs' mean utilisation (%), where samples cover the span
    gpus: int = 0  # how many GPUs those samples are of
    graph_bs: GraphSplit | None = None  # decode lines on and off CUDA graphs by #running-req
    drift: Drift | None = None  # accept len over the epoch so far, part by part (the dashboard's only)
    # (these two are the epoch's, judged on the whole hold only)


@dataclass(frozen=True)
class GraphSplit:
    """A span's decode lines (every rank) by whether they ran on a CUDA graph, against their
    #running-req: SGLang replays a graph only for a batch of at most --cuda-graph-max-bs requests
    (the largest size captured; `can_run` in srt/model_executor/cuda_graph_runner.py, 0.5.10),
    and logs the rest `cuda graph: False`."""
    on_max: float  # the most requests a line of the epoch ran on a graph with
    off_min: float  # the fewest a line of the hold ran eager with
    off_peak: float  # ... and the most
    off: int  # the hold's lines that ran eager
    lines: int  # the hold's lines that said either way


@dataclass(frozen=True)
class Drift:
    """The mean accept len (every rank) in each equal part of an epoch up to the judged time."""
    start: float
    t1: float
    means: tuple[float, ...]
    running: tuple[float | None, float | None]  # the mean #running-req in the first part and the last


def _mean(v: list[float]) -> float | None:
    v = [x for x in v if x == x]
    return math.fsum(v) / len(v) if v else None


def _covered(ts: list[float], t0: float, t1: float, lim: Limits) -> bool:
    return len(ts) >= 2 and ts[-1] - ts[0] >= lim.coverage * (t1 - t0)


def retractions(store: Store, host: str | None, t0: float, t1: float) -> int:
    return sum(1 for e in store.events if e.host == host and e.kind == "retract" and e.ts is not None
               and t0 <= e.ts <= t1)


def _gpu_facts(samples: Sequence[GpuSample], t0: float, t1: float, lim: Limits) -> tuple[float | None, int]:
    """The mean utilisation over [t0, t1] of the GPUs that hold the server (HELD of their memory at
    some sample, or memory unread: a box's spare GPUs, empty and idle, would read the server's
    as idle), and how many; (None, 0) where their samples do not cover the span (no GPU readings:
    no advice on them)."""
    inside = [s for s in samples if t0 <= s.t <= t1 and s.util is not None]
    holding = {s.index for s in inside if s.mem_used is None or not s.mem_total or s.mem_used >= HELD * s.mem_total}
    inside = [s for s in inside if s.index in holding]
    if not _covered(sorted({s.t for s in inside}), t0, t1, lim):
        return None, 0
    return math.fsum(s.util for s in inside if s.util is not None) / len(inside), len({s.index for s in inside})


def graph_split(store: Store, host: str | None, start: float, t0: float, t1: float) -> GraphSplit | None:
    """The epoch's decode lines from `start` on graphs against the hold's [t0, t1] eager ones, by
    #running-req (every rank); None where the hold has no eager line or the epoch none on a graph
    (all eager is graph_off's)."""
    on: list[float] = []
    off: list[float] = []
    lines = 0
    for s in store.ranks(host):
        ts, cols = s.decode.raw_windows(("running_req", "graph"), start, t1)
        for t, r, g in zip(ts, cols["running_req"], cols["graph"]):
            if r != r or g != g:
                continue
            if g == 1.0:
                on.append(r)
            if t >= t0:
                lines += 1
                if g == 0.0:
                    off.append(r)
    if not on or not off:
        return None
    return GraphSplit(max(on), min(off), max(off), len(off), lines)


def accept_drift(store: Store, host: str | None, start: float, t1: float, lim: Limits) -> Drift | None:
    """Accept len over [start, t1] in lim.drift_parts equal parts, from each rank's overview of its
    whole span (the rings hold minutes, a drift takes hours); None where a part has none."""
    step = (t1 - start) / lim.drift_parts
    means: list[float] = []
    running: list[float | None] = []
    for i in range(lim.drift_parts):
        a, b = start + i * step, start + (i + 1) * step
        n = total = rn = rtotal = 0.0
        for s in store.ranks(host):
            got = s.overview.totals("accept_len", a, b)
            if got is not None:
                n, total = n + got[0], total + got[1]
            got = s.overview.totals("running_req", a, b)
            if got is not None:
                rn, rtotal = rn + got[0], rtotal + got[1]
        if not n:
            return None
        means.append(total / n)
        running.append(rtotal / rn if rn else None)
    return Drift(start, t1, tuple(means), (running[0], running[-1]))


def span_of(store: Store, host: str | None, t0: float, t1: float, lim: Limits, *, row: EpochRow | None = None,
            diverging: tuple[Alert, ...] = (), retracted: int = 0, gpus: Sequence[GpuSample] = ()) -> Span:
    ranks = store.ranks(host)
    epoch = epoch_at(store, host, t1)
    accept, usage, off = {}, {}, []
    running: list[float] = []
    queues: list[tuple[float, float, float]] = []
    run_means: list[float] = []
    for s in ranks:
        ts, vs = s.decode.window("accept_len", t0, t1)
        if _covered(ts, t0, t1, lim):
            accept[s.rank] = math.fsum(vs) / len(vs)
        ts, vs = s.decode.window("graph", t0, t1)
        if _covered(ts, t0, t1, lim) and max(vs) == 0.0:
            off.append(s.rank)
        _, vs = s.decode.window("token_usage", t0, t1)
        if vs:
            usage[s.rank] = max(vs)
        _, cols = s.decode.raw_windows(("running_req",), t0, t1)
        mine = [r for r in cols["running_req"] if r == r]
        running += mine
        ts, vs = s.decode.window("queue_req", t0, t1)
        q = [(t, v) for t, v in zip(ts, vs) if v == v]
        if _covered([t for t, _ in q], t0, t1, lim):
            queues.append((q[0][1], q[-1][1], math.fsum(v for _, v in q) / len(q)))
            if mine:
                run_means.append(math.fsum(mine) / len(mine))
    queue = None
    if queues:
        first, last, mean = (math.fsum(q[i] for q in queues) for i in range(3))
        queue = Queue(mean, f"{first:.0f} → {last:.0f} requests (mean {mean:.1f})")
    util, n_gpus = _gpu_facts(gpus, t0, t1, lim)
    return Span(host, t0, t1, tuple(s.rank for s in ranks), epoch.spec if epoch else {}, accept, tuple(off), usage,
                retracted, _label(LOAD, _mean(running)), row, diverging, queue=queue,
                running=math.fsum(run_means) if run_means else None, gpu_util=util, gpus=n_gpus)


def _label(scale: Scale, key: float | None) -> str | None:
    if key is None:
        return None
    i = scale.bucket_of(key)
    return None if i is None else scale.buckets[i][0]


# -- the rules ---------------------------------------------------------------------------------

StepName = Callable[[dict, int], str | None]  # (settings, -1) -> the profile one step down (0: the one they are), or None


def launch_settings(spec: dict) -> dict:
    """The settings as the server was likely started, for naming what `[` applies (it steps the
    unit's ExecStart): SGLang logs NEXTN as EAGLE, and an EAGLE run with no draft model was
    started as NEXTN."""
    if str(spec.get("algorithm") or "").upper() == "EAGLE" and not spec.get("draft_model_path"):
        return {**spec, "algorithm": "NEXTN"}
    return spec


def _window(sp: Span) -> str:
    return sp.window or f"the last {_dur(sp.t1 - sp.t0)}"


def _dur(s: float) -> str:
    m, sec = divmod(round(s), 60)
    return f"{sec}s" if not m else f"{m}m" if not sec else f"{m}m{sec:02d}s"


def _draft(spec: dict) -> int | None:
    n = spec.get("num_draft_tokens")
    if isinstance(n, int) and n > 1:
        return n
    steps = spec.get("num_steps")
    return steps + 1 if isinstance(steps, int) and steps > 0 else None


def accept_short(sp: Span, lim: Limits, name: StepName | None) -> Advice | None:
    """Accept len far below the draft length: the draft's last steps are mostly rejected."""
    draft = _draft(sp.spec)
    if not sp.spec.get("algorithm") or draft is None or not sp.accept:
        return None
    low = [r for r, a in sp.accept.items() if a <= lim.accept_share_max * draft]
    if len(low) * 2 <= len(sp.accept):  # most ranks: one rank apart is the divergence rule's
        return None
    acc = math.fsum(sp.accept[r] for r in low) / len(low)
    label = (name(sp.spec, 0) if name else None) or spec_label(sp.spec)  # mtp3, as the profiles name it
    steps = sp.spec.get("num_steps")
    off = acc <= lim.nothing_accepted or steps == 1
    if off:
        key, tries = "spec_toggle", "speculation off"
        why = "nothing past the first token is accepted" if acc <= lim.nothing_accepted else "one step that rarely pays"
    else:
        key = "spec_step_down"
        tries = (name(sp.spec, -1) if name else None) or "one draft step less"
        why = "each step past the first is mostly wasted"
    return Advice("accept_short", sp.host, f"{label} accepts {acc:.2f} of {draft}: {why}",
                  f"accept len {acc:.2f} of {draft} draft tokens (at most {lim.accept_share_max:.0%}) over "
                  f"{_window(sp)}{where(sorted(low, key=list(sp.every).index), list(sp.every))}",
                  key, tries, tuple(low), sp.t0)


def _slower(row: EpochRow | None, scale_key: str, label: str | None, lim: Limits) -> BucketRow | None:
    if row is None or row.spec_off or label is None:
        return None
    for b in row.matched.get(scale_key, ()):
        if b.label == label and b.vs_baseline is not None and b.vs_baseline < -lim.slower_pct / 100:
            return b
    return None


def spec_slower(sp: Span, lim: Limits, name: StepName | None) -> Advice | None:
    """Speculation slower than the last spec-off epoch at the load being served (the span's mean
    #running-req), or at the contexts where this epoch spends a good share of its lines (the
    store's rings keep no #token, so the context of the span itself is not known)."""
    row = sp.row
    b = _slower(row, LOAD.json_key, sp.load, lim)
    if b is not None and b.vs_baseline is not None:
        return Advice("spec_slower", sp.host, f"speculation {-b.vs_baseline:.0%} slower than spec off at "
                      f"{b.label} running requests",
                      f"{_window(sp)} served at {b.label} running requests; this epoch's {b.decode} lines there "
                      f"make {b.gen_throughput:.1f} tok/s, {b.vs_baseline:+.0%} against the last run without "
                      "speculation", "spec_toggle", "speculation off", (), sp.t0)
    if row is None or row.spec_off:
        return None
    below = [b for b in row.by_context if b.below_baseline and b.comparable]
    lines = sum(b.decode for b in row.by_context)
    if not below or sum(b.decode for b in below) < lim.slow_context_share * lines:
        return None
    changes = ", ".join(f"{b.vs_baseline:+.0%} at {b.label}" for b in below if b.vs_baseline is not None)
    n = sum(b.decode for b in below)
    return Advice("spec_slower", sp.host, f"speculation slower than spec off past {below[0].label} tokens/request",
                  f"{n} of this epoch's {lines} decode lines ran at contexts where speculation is slower than the "
                  f"last run without it ({changes} tokens per request)", "spec_toggle", "speculation off", (),
                  sp.t0)


def graph_off(sp: Span, lim: Limits, name: StepName | None) -> Advice | None:
    if not sp.graph_off or spec_graph_bs(sp, lim, name) is not None:
        return None  # (graphs that ran at smaller batches this epoch: spec_graph_bs says which size)
    return Advice("graph_off", sp.host, "CUDA graphs off: decode runs eagerly",
                  f"every decode line over {_window(sp)} logs `cuda graph: False`"
                  f"{where(list(sp.graph_off), list(sp.every))}",
                  None, "drop --disable-cuda-graph, or raise --cuda-graph-max-bs above #running-req "
                        "(a profile's extra_args, then `p`)", sp.graph_off, sp.t0)


def spec_graph_bs(sp: Span, lim: Limits, name: StepName | None) -> Advice | None:
    """Speculation on, and the bigger batches run eager: every line logged `cuda graph: False` had
    more #running-req than any that ran on a graph, so the captured sizes end below the load. A
    verify batch is each request's draft tokens, so speculation's graphs cost (1 + N) times a plain
    decode's buffers per request, and a capture sized in tokens (vLLM's) holds only max/(1 + N)
    sequences: the size to raise is the peak seen eager."""
    g = sp.graph_bs
    if not sp.spec.get("algorithm") or g is None or g.off_min <= g.on_max or g.off < lim.graph_bs_share * g.lines:
        return None
    draft = _draft(sp.spec)
    tokens = f" ({g.off_peak:.0f} × {draft} = {g.off_peak * draft:.0f} tokens per verify batch)" if draft else ""
    return Advice("spec_graph_bs", sp.host,
                  f"batches over {g.on_max:.0f} requests run without CUDA graphs under speculation",
                  f"{g.off} of {g.lines} decode lines over {_window(sp)} log `cuda graph: False`, each at "
                  f"{g.off_min:.0f}-{g.off_peak:.0f} running requests; every line at {g.on_max:.0f} or fewer "
                  "ran on a graph", None,
                  f"raise --cuda-graph-max-bs to {g.off_peak:.0f}{tokens}, or cap --max-running-requests at "
                  f"{g.on_max:.0f} (a profile's extra_args, then `p`)", (), sp.t0)


def accept_drift_down(sp: Span, lim: Limits, name: StepName | None) -> Advice | None:
    """Acceptance falling part after part of one long run, with no restart between (vllm #41838:
    it drifts down over hours until a restart brings it back)."""
    d = sp.drift
    if d is None or not sp.spec.get("algorithm") or d.t1 - d.start < lim.drift_min_s:
        return None
    m = d.means
    if any(b > a * (1 + lim.drift_noise) for a, b in zip(m, m[1:])) or m[-1] > m[0] * (1 - lim.drift_pct / 100):
        return None
    part = _dur((d.t1 - d.start) / len(m))
    lo, hi = d.running
    load = (f"; mean #running-req {lo:.0f} then {hi:.0f}" if lo is not None and hi is not None else "")
    return Advice("accept_drift", sp.host, f"accept len fell {1 - m[-1] / m[0]:.0%} over this run: a restart resets it",
                  f"accept len {m[0]:.2f} in the first {part} of this run ({_dur(d.t1 - d.start)} without a "
                  f"restart), then {', '.join(f'{v:.2f}' for v in m[1:])} in each {part} after{load}",
                  "restart", "restart the server with the same settings", (), d.start)


def spec_stops_paying(sp: Span, lim: Limits, name: StepName | None) -> Advice | None:
    """Speculation ahead of spec off at the lower loads of this epoch's buckets and behind it from
    some load up (DeepSeek MTP 1.63x at 1 QPS, 1.18x at 2: vllm #12755; EAGLE-3 slower past 4-8
    QPS: llm-d #2074): the concurrency above which it stops paying."""
    row = sp.row
    if row is None or row.spec_off:
        return None
    rows = [b for b in row.by_load if b.vs_baseline is not None]
    first = stops_paying_from(rows)  # the context scale's threshold, here by load
    if first is None:
        return None
    i = [b.label for b in rows].index(first)
    below, above = rows[:i], rows[i:]
    cut = lim.slower_pct / 100
    if not any(b.vs_baseline is not None and b.vs_baseline > cut for b in below):
        return None  # not clearly ahead below it (or slower at every load: spec_slower's)
    if not any(b.vs_baseline is not None and b.vs_baseline < -cut for b in above):
        return None  # behind by less than the noise
    last_paying = below[-1].label
    cap = int(dict(LOAD.buckets)[above[0].label]) - 1  # the most requests of the last bucket that pays
    per = ", ".join(f"{b.vs_baseline:+.0%} at {b.label}" for b in rows if b.vs_baseline is not None)
    return Advice("spec_stops_paying", sp.host, f"speculation stops paying above {last_paying} running requests",
                  f"gen tok/s of this epoch against the last run without speculation, by #running-req: {per} "
                  f"({sum(b.decode for b in rows)} decode lines)", "profiles",
                  f"an adaptive profile that drafts less from {above[0].label} running requests (SGLang: "
                  f"adaptive = true; vLLM: {_schedule_for(sp.spec, cap)}), or --max-running-requests {cap}",
                  (), sp.t0)


def _schedule_for(spec: dict, cap: int) -> str:
    """A profile's vLLM schedule that keeps the run's steps up to `cap` running requests and drafts
    none past it (vLLM carries the last range's K on to its largest batch)."""
    k = spec.get("num_steps")
    return f"schedule = [[1, {cap}, {k}], [{cap + 1}, {cap + 1}, 0]]" if isinstance(k, int) and k > 0 else \
        f"a schedule with K 0 from {cap + 1}"


def kv_full(sp: Span, lim: Limits, name: StepName | None) -> Advice | None:
    full = [r for r, u in sp.usage.items() if u >= lim.kv_usage_min]
    if not full or sp.retractions < 1:
        return None
    top = max(sp.usage[r] for r in full)
    return Advice("kv_full", sp.host, f"KV pool {top:.0%} full, requests retracted",
                  f"token usage up to {top:.2f}{where(full, list(sp.every))} and {sp.retractions} "
                  f"`KV cache pool is full. Retract requests.` over {_window(sp)}",
                  None, "lower --max-running-requests or raise --mem-fraction-static (a profile's "
                        "extra_args, then `p`)", tuple(full), sp.t0)


def rank_diverging(sp: Span, lim: Limits, name: StepName | None) -> Advice | None:
    if not sp.diverging:
        return None
    a = sp.diverging[0]
    n = (list(sp.every).index(a.ranks[0]) + 1) if len(a.ranks) == 1 and a.ranks[0] in sp.every else None
    key = f"focus_rank_{n}" if n is not None and n <= 9 else None
    return Advice("rank_diverging", sp.host, f"{a.title}: check that rank's GPU and link",
                  f"in each {_dur((sp.t1 - sp.t0) / lim.parts)} of {_window(sp)}: {a.title}", key,
                  "that rank alone in the chart" if key else "compare its GPU (nvidia-smi) with the others'",
                  a.ranks, a.since)


def gpus_idle(sp: Span, lim: Limits, name: StepName | None) -> Advice | None:
    """Requests wait while the GPUs sit mostly idle: the scheduler, not the GPUs, limits the
    service. Only where GPU samples cover the span."""
    if sp.queue is None or sp.gpu_util is None:
        return None
    if sp.queue.level < lim.queue_min or sp.gpu_util > lim.gpu_util_max:
        return None
    running = f" with {sp.running:.0f} running" if sp.running is not None else ""
    return Advice("gpus_idle", sp.host, f"GPUs {sp.gpu_util:.0f}% busy while {sp.queue.level:.0f} requests wait",
                  f"queue {sp.queue.words}{running} over {_window(sp)} "
                  f"while GPU util {sp.gpu_util:.0f}% mean ({sp.gpus} GPU{'s' if sp.gpus != 1 else ''})",
                  None, "raise --max-running-requests (or --chunked-prefill-size) where #running-req sits at "
                        "it (a profile's extra_args, then `p`); where it does not, check the server is not "
                        "stalled (py-spy dump of its scheduler)", (), sp.t0)


def died(host: str | None, text: str, since: float | None) -> Advice:
    """A run whose server died: no tuning advice holds for a dead server; what to read first does."""
    return Advice("crashed", host, "the server died: fix its first error before tuning it",
                  f"the run ended with: {text[:200]}", None,
                  "read the run's first error (the events pane, e; `summary` lists how each run ended), "
                  "fix it, then restart", (), since)


@dataclass(frozen=True)
class Rule:
    name: str
    judge: Callable[[Span, Limits, StepName | None], Advice | None]
    parted: bool  # judged in every part of the hold too (rank_diverging's alert already is)
    what: str  # when it holds, in words (the advisor screen and docs)


RULES: tuple[Rule, ...] = (
    # `what` fits one line of the advisor screen at 80 wide
    Rule("accept_short", accept_short, True, "accept len at most half the draft tokens on most ranks"),
    Rule("spec_slower", spec_slower, True,
         "gen tok/s at the load or context being served below the last spec-off epoch's there"),
    Rule("graph_off", graph_off, True, "every decode line logs `cuda graph: False`"),
    Rule("spec_graph_bs", spec_graph_bs, False, "speculating, batches past some size run off graphs"),
    Rule("accept_drift", accept_drift_down, False, "accept len falling part after part of a run of hours"),
    Rule("spec_stops_paying", spec_stops_paying, False, "ahead of spec off at low #running-req, behind higher"),
    Rule("kv_full", kv_full, True, "token usage near 1 and requests retracted, through the hold"),
    Rule("rank_diverging", rank_diverging, False, "one rank apart in accept len or tok/s per request"),
    Rule("gpus_idle", gpus_idle, True, "requests queued through the hold, the GPUs under half busy"),
)


def advise(store: Store, host: str | None, now: float, lim: Limits | None = None, th: Thresholds | None = None,
           step_name: StepName | None = None, gpus: Sequence[GpuSample] = ()) -> list[Advice]:
    """Every piece of advice that holds for `host` at log time `now`, in the table's order; `gpus`:
    the host's GPU samples (core/gpus.GpuHistory's), stamped on the log's clock."""
    lim = lim or Limits()
    th = th or Thresholds()
    epoch = epoch_at(store, host, now)
    if epoch is None or not store.ranks(host):
        return []
    crash = epoch.crash
    if crash is not None and crash.ts is not None and crash.ts <= now:
        return [died(host, crash.text, crash.ts)]
    t0 = max(now - lim.hold_s, epoch.start)
    if now - t0 < lim.hold_s * lim.coverage:
        return []  # the epoch is younger than the hold: nothing has held for minutes yet
    rows = epoch_rows([e.to_json(brief=True) for e in store.epochs.get(host) or []])
    row = next((r for r in rows if r.index == epoch.index), None)
    dth = dataclasses.replace(th, rank_diverge_hold_s=now - t0, rank_diverge_parts=lim.parts)
    # the alerts' own rule, over the advisor's hold: the same fact, judged once
    diverging = tuple(alerts._rank_diverging(host, store.ranks(host), now, dth))
    retracted = retractions(store, host, t0, now)
    gpus = [s for s in gpus if t0 <= s.t <= now]
    whole = span_of(store, host, t0, now, lim, row=row, diverging=diverging, retracted=retracted, gpus=gpus)
    whole = dataclasses.replace(whole, drift=accept_drift(store, host, epoch.start, now, lim),
                                graph_bs=graph_split(store, host, epoch.start, t0, now))
    step = (now - t0) / lim.parts
    parts = [span_of(store, host, t0 + i * step, t0 + (i + 1) * step, lim, row=row, diverging=diverging,
                     retracted=retracted, gpus=gpus) for i in range(lim.parts)]
    out = []
    for rule in RULES:
        found = rule.judge(whole, lim, step_name)
        if found is None or (rule.parted and any(rule.judge(p, lim, step_name) is None for p in parts)):
            continue
        out.append(found)
    return out






def _epoch_queue(series: list[dict], host: str | None, start: float) -> tuple[Queue | None, float | None]:
    """The host's queue and running requests over its last epoch, from `summary --json`'s series
    (whole-input figures per rank, no epoch's own): only where every rank's lines lie in that
    epoch, so the series' figures are the epoch's. The level is the median: half the epoch's lines
    had at least that many waiting."""
    mine = [s for s in series if s["host"] == host]
    qs = [s["decode"].get("queue_req") for s in mine]
    if not mine or any(q is None or s["first"] is None or s["first"] < start for s, q in zip(mine, qs)):
        return None, None
    lo, hi, mid = (math.fsum(q[k] for q in qs) for k in ("min", "max", "p50"))
    runs = [s["decode"].get("running_req") for s in mine]
    running = math.fsum(r["mean"] for r in runs) if all(runs) else None
    return Queue(mid, f"{lo:.0f}-{hi:.0f} requests (median {mid:.0f})"), running


def advise_epochs(epochs: list[dict], last_seen: dict | None = None, lim: Limits | None = None,
                  step_name: StepName | None = None, series: list[dict] | None = None,
                  gpus: dict | None = None) -> list[Advice]:
    """`summary`'s advice: each host's last epoch, whole, as `summary --json` gives the epochs. It
    keeps no samples in time, so a rule holds where the epoch ran at least the hold and the epoch's
    own figures say so (last_seen: host -> its newest batch line, the end of an epoch still
    running); the rules whose facts it does not keep (CUDA graphs and KV use per epoch,
    the ranks' figures in time) do not hold there. `series` (summary's) and `gpus` (host -> the
    record's GPU samples) give the idle-GPU rule its facts, where the series are the epoch's."""
    # One pass, keeping each host's last (epoch, row): 10,000 runs were built into a list of rows
    # and then walked again for the handful of hosts the advice is about.
    last: dict = {}
    for e, r in iter_epoch_rows(epochs):
        last[e["host"]] = (e, r)
    return advise_last(last, last_seen, lim, step_name, series, gpus)


def advise_last(last: dict[str | None, tuple[dict, EpochRow]], last_seen: dict | None = None,
                lim: Limits | None = None, step_name: StepName | None = None, series: list[dict] | None = None,
                gpus: dict | None = None) -> list[Advice]:
    """advise_epochs() from each host's last (epoch, its row) as the comparison of every epoch
    gave them (summary's EpochDocs.last_rows(): kept from the pass that wrote the epochs)."""
    lim = lim or Limits()
    out = []
    for host, (e, r) in last.items():
        ended = e.get("ended") or {}
        error = ended.get("error") or {}
        if ended.get("how") == "crashed" and error.get("kind") != "failed" and error.get("text"):
            out.append(died(host, error["text"], error.get("ts")))
            continue
        end = e["end"] if e["end"] is not None else (last_seen or {}).get(host, e["start"])
        if end - e["start"] < lim.hold_s:
            continue
        accept = {rank: v["accept_len"]["mean"] for rank, v in e["ranks"].items() if v.get("accept_len")}
        served = max(e.get(LOAD.json_key, ()), key=lambda b: b["decode"], default=None)
        queue, running = _epoch_queue(series or [], host, e["start"])
        util, n_gpus = _gpu_facts((gpus or {}).get(host) or (), e["start"], end, lim)
        sp = Span(host, e["start"], end, tuple(e["ranks"]), e.get("spec") or {}, accept, (), {}, 0,
                  served[LOAD.name] if served else None, r, (), window=f"epoch {e['index'] + 1} ({_dur(end - e['start'])})",
                  queue=queue, running=running, gpu_util=util, gpus=n_gpus)
        out += [a for rule in RULES if (a := rule.judge(sp, lim, step_name)) is not None]
    return out
