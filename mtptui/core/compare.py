"""Epochs side by side: did the retune help? One routine for `summary`'s epochs (table and JSON),
the dashboard's epoch strip and its compare screen (c), all reading epochs as `Epoch.to_json()`
gives them (the strip its brief form: only n and mean per rank), so they can never disagree.

The host's throughput is the sum over its DP groups: each DP group is one stream of requests,
logged by one scheduler (or, with `--enable-metrics-for-all-schedulers`, by every TP rank of the
group, each the same stream), so the ranks of one group count once (their pooled mean).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from mtptui.core.loadmatch import CONTEXT, LOAD, SCALES

# An epoch's host total is compared with another epoch's only when both rest on at least this
# many decode lines with gen throughput in every DP group. Each line averages
# --decode-log-interval decode steps (40 by default), so 10 lines are some 400 steps of each
# group, tens of seconds of decoding: enough that the first lines after a restart (warm-up, a
# few requests, throughput far below the steady state) and a burst of load do not decide the sign.
DELTA_MIN_BATCHES = 10
# The same minimum holds for a bucket of load or context (loadmatch.py): a bucket's gen throughput
# is compared with another epoch's in that bucket only when each has DELTA_MIN_BATCHES decode
# lines in it.

_DP = re.compile(r"(?:^| )(DP-?\d+)(?: |$)")


@lru_cache(maxsize=4096)  # a few ranks, asked for in every epoch
def dp_group(rank: str) -> str:
    """The DP group a rank label logs for: `DP3 TP3 EP3` -> `DP3`; `TP0`, `TP3`, `PP1 TP0` and
    `` (TP=1) -> `` (the one group of a server without DP). An engine of its own is a group of
    its own: vLLM's `Engine 001`, a Ray actor's `pid=41820 TP0` -> `pid=41820` (with its DP rank,
    if any: `pid=41820 DP1 TP1` -> `pid=41820 DP1`)."""
    if rank.startswith("Engine"):
        return rank
    engine = rank.split(" ", 1)[0] if rank.startswith("pid=") else ""
    m = _DP.search(rank)
    return " ".join(p for p in (engine, m.group(1) if m else "") if p)


@dataclass(slots=True)  # one per run compared: a frozen dataclass is made 5x more slowly
class Delta:
    """The host total against an earlier epoch's."""
    index: int  # the earlier epoch's index
    label: str  # its settings
    gen_total: float  # its host total
    change: float  # 0.39: +39 %

    def to_json(self) -> dict:
        return {"epoch": self.index, "label": self.label, "gen_throughput": self.gen_total,
                "change": self.change}


@dataclass(slots=True)  # a few per run compared
class BucketRow:
    """An epoch's decode lines in one bucket of a scale (#running-req, or context), and its mean
    gen throughput there against the latest earlier epoch (vs_previous) and the latest earlier
    epoch without speculation (vs_baseline) with enough lines in the same bucket (0.39: +39 %;
    None: none). below_baseline: the epoch runs speculation and is slower there than that epoch."""
    name: str  # the scale's name for its label in JSON: `running`, `context`
    label: str  # the bucket: `5-16`, `32-64k`
    decode: int
    gen_throughput: float | None
    accept_len: float | None
    vs_previous: float | None = None
    vs_baseline: float | None = None
    below_baseline: bool = False

    @property
    def comparable(self) -> bool:
        return bool(self.gen_throughput) and self.decode >= DELTA_MIN_BATCHES

    def to_json(self) -> dict:
        return {self.name: self.label, "decode": self.decode, "gen_throughput": self.gen_throughput,
                "accept_len": self.accept_len, "vs_previous": self.vs_previous, "vs_baseline": self.vs_baseline}


def stops_paying_from(buckets: list[BucketRow]) -> str | None:
    """The first bucket from which speculation is slower than the run without it: below the
    baseline there, and in every later bucket that can be compared with it; None when the last
    such bucket is not below it (or none can be compared)."""
    found = None
    for b in buckets:
        if b.vs_baseline is None:
            continue
        if not b.below_baseline:
            found = None
        elif found is None:
            found = b.label
    return found


@dataclass(slots=True)  # one per run compared
class EpochRow:
    host: str | None
    index: int
    start: float
    end: float | None  # None: the epoch still runs (or the input ended in it)
    label: str  # the speculation settings
    reason: str  # why it began
    decode_batches: int
    spec_off: bool  # known to run without speculation: a baseline for the epochs after it
    accept_len: float | None  # mean over every decode batch of every rank
    accept_rate: float | None
    gen_per_rank: dict[str, float]  # rank -> mean gen throughput
    gen_mean: float | None  # the mean over ranks of gen_per_rank
    gen_per_dp: dict[str, float]  # DP group -> its pooled mean gen throughput
    gen_total: float | None  # the host's throughput: gen_per_dp summed
    min_batches: int  # the fewest gen throughput lines of any DP group (0: none)
    vs_previous: Delta | None  # against the latest earlier epoch with a comparable total
    vs_baseline: Delta | None  # against the latest earlier comparable epoch without speculation
    # The epoch just before, when it decoded too little to compare with: (index, min_batches)
    short_before: tuple[int, int] | None = None
    # scale's json_key -> the buckets it decoded in, in the scale's order (loadmatch.SCALES)
    matched: dict[str, list[BucketRow]] = field(default_factory=dict)
    # the first context bucket from which this spec-on epoch is slower than the spec-off baseline
    stops_paying_from: str | None = None
    # how it ended (Epoch.ending): how, text, and for a crash its first error
    ended: dict | None = None

    @property
    def by_load(self) -> list[BucketRow]:
        return self.matched.get(LOAD.json_key, [])

    @property
    def by_context(self) -> list[BucketRow]:
        return self.matched.get(CONTEXT.json_key, [])

    @property
    def comparable(self) -> bool:
        """Whether the host total rests on enough lines to be compared (DELTA_MIN_BATCHES)."""
        return self.gen_total is not None and self.min_batches >= DELTA_MIN_BATCHES

    def totals_json(self) -> dict:
        """The `host_totals` of an epoch in `summary --json`."""
        return {"accept_len": self.accept_len, "accept_rate": self.accept_rate, "gen_throughput": self.gen_total,
                "gen_throughput_per_dp": self.gen_per_dp, "dp_groups": len(self.gen_per_dp),
                "min_batches": self.min_batches, "comparable": self.comparable}


def pooled_mean(ranks: dict, metric: str) -> float | None:
    """The mean over every value of every rank, from each rank's mean and count."""
    return _pooled([r[metric] for r in ranks.values() if r.get(metric)])


def _pooled(stats: list[dict]) -> float | None:
    """The mean over every value of these statistics (a metric's of some ranks), from each one's
    mean and count."""
    return _pooled_n(stats)[0]


def _pooled_n(stats: list[dict]) -> tuple[float | None, int]:
    """_pooled(), and the count of the values."""
    if len(stats) == 1:
        one = stats[0]
        return one["mean"], one["n"]  # the mean as it is, without the rounding of mean * n / n
    n = 0
    total = 0  # summed as sum() sums: from the int 0, in order
    for s in stats:
        k = s["n"]
        n += k
        total += s["mean"] * k
    return (total / n if n else None), n


def _delta(row: EpochRow, other: EpochRow | None) -> Delta | None:
    if other is None or row.gen_total is None or not row.comparable or not other.gen_total:
        return None
    return Delta(other.index, other.label, other.gen_total, row.gen_total / other.gen_total - 1)


def epoch_rows(epochs: list[dict]) -> list[EpochRow]:
    """One row per epoch, in the order given (each host's epochs oldest first)."""
    return [row for _, row in iter_epoch_rows(epochs)]


def iter_epoch_rows(epochs: Iterable[dict]) -> Iterator[tuple[dict, EpochRow]]:
    """(epoch, its row) one at a time, as epoch_rows() gives them: what is compared with is kept
    (Comparison), not every epoch, so 10,000 runs are compared without holding 10,000 epochs."""
    comparison = Comparison()
    for e in epochs:
        yield e, comparison.row(e)


class Comparison:
    """Epochs compared one after another (each host's oldest first): each one's row, against
    what came before it, of which only what later rows are compared with is kept (per host, the
    latest comparable row and bucket)."""

    __slots__ = ("previous", "baseline", "decoded", "previous_bucket", "baseline_bucket")

    def __init__(self) -> None:
        self.previous: dict = {}  # host -> its latest comparable row
        self.baseline: dict = {}  # host -> its latest comparable row without speculation
        self.decoded: dict = {}  # host -> its latest row with a host total
        # (host, scale, bucket) -> the latest comparable BucketRow of any epoch / of one without speculation
        self.previous_bucket: dict = {}
        self.baseline_bucket: dict = {}

    def row(self, e: dict) -> EpochRow:
        """The row of the next epoch, as Epoch.to_json() gives it (brief or whole)."""
        previous, baseline, decoded = self.previous, self.baseline, self.decoded
        previous_bucket, baseline_bucket = self.previous_bucket, self.baseline_bucket
        # each rank's figures, in one pass: gen throughput by DP group, accept len and rate
        per_rank: dict[str, float] = {}
        groups: dict[str, list[dict]] = {}
        lens: list[dict] = []
        rates: list[dict] = []
        for rank, r in e["ranks"].items():
            gen = r.get("gen_throughput")
            if gen:
                per_rank[rank] = gen["mean"]
                groups.setdefault(dp_group(rank), []).append(gen)
            if r.get("accept_len"):
                lens.append(r["accept_len"])
            if r.get("accept_rate"):
                rates.append(r["accept_rate"])
        per_dp: dict[str, float] = {}
        min_batches = -1
        for g, members in groups.items():
            mean, n = _pooled_n(members)
            if mean is not None:
                per_dp[g] = mean
            if min_batches < 0 or n < min_batches:
                min_batches = n
        min_batches = max(min_batches, 0)
        accept_len, accept_rate = _pooled(lens), _pooled(rates)
        host, label = e["host"], e["label"]
        # Without speculation: server_args said so, or (no server_args seen) it decoded and no
        # line carried accept len.
        spec_off = label == "spec off" or (label == "settings unknown" and e["decode_batches"] > 0
                                           and accept_len is None and accept_rate is None)
        row = EpochRow(
            host, e["index"], e["start"], e["end"], label, e["reason"], e["decode_batches"], spec_off, accept_len,
            accept_rate, per_rank, sum(per_rank.values()) / len(per_rank) if per_rank else None, per_dp,
            sum(per_dp.values()) if per_dp else None, min_batches, None, None, ended=e.get("ended"))
        row.vs_previous = _delta(row, previous.get(host))
        row.vs_baseline = _delta(row, baseline.get(host))
        last = decoded.get(host)
        if last is not None and not last.comparable:
            row.short_before = (last.index, last.min_batches)
        if row.gen_total is not None:
            decoded[host] = row
        matched = row.matched
        for scale in SCALES:
            name = scale.name
            buckets: list[BucketRow] = []
            matched[scale.json_key] = buckets
            for b in e.get(scale.json_key, ()):
                label, n, gen = b[name], b["decode"], b["gen_throughput"]
                key = (host, name, label)
                vs_previous = vs_baseline = None
                if n >= DELTA_MIN_BATCHES and gen is not None:  # _bucket_change, in line
                    other = previous_bucket.get(key)
                    if other is not None and other.gen_throughput is not None:
                        vs_previous = gen / other.gen_throughput - 1
                    other = baseline_bucket.get(key)
                    if other is not None and other.gen_throughput is not None:
                        vs_baseline = gen / other.gen_throughput - 1
                bucket = BucketRow(name, label, n, gen, b["accept_len"], vs_previous, vs_baseline,
                                   not spec_off and vs_baseline is not None and vs_baseline < 0)
                buckets.append(bucket)
                if gen and n >= DELTA_MIN_BATCHES:  # bucket.comparable
                    previous_bucket[key] = bucket
                    if spec_off:
                        baseline_bucket[key] = bucket
        row.stops_paying_from = stops_paying_from(matched[CONTEXT.json_key])
        if row.comparable:
            previous[host] = row
            if spec_off:
                baseline[host] = row
        return row


def with_comparison(epochs: list[dict]) -> list[dict]:
    """The epochs of `summary --json`, each with its `host_totals`, `vs_previous` and
    `vs_baseline` (null: nothing comparable before it, or too few lines), its `by_load` and
    `by_context` buckets each with their own `vs_previous` and `vs_baseline` (a change, as
    BucketRow's), each context bucket marked `below_baseline`, and `stops_paying_from`: the first
    context bucket from which speculation is slower than without (stops_paying_from())."""
    return list(iter_with_comparison(epochs))


def iter_with_comparison(epochs: Iterable[dict]) -> Iterator[dict]:
    """with_comparison(), an epoch at a time (summary streams its epochs: see iter_epoch_rows)."""
    for e, r in iter_epoch_rows(epochs):
        yield compared(e, r)


def compared(e: dict, r: EpochRow) -> dict:
    """An epoch with its row's figures, as with_comparison() gives it."""
    return {**e, "host_totals": r.totals_json(),
            "vs_previous": r.vs_previous.to_json() if r.vs_previous else None,
            "vs_baseline": r.vs_baseline.to_json() if r.vs_baseline else None,
            "by_load": [b.to_json() for b in r.by_load],
            "by_context": [{**b.to_json(), "below_baseline": b.below_baseline} for b in r.by_context],
            "stops_paying_from": r.stops_paying_from}


def percent(change: float | None) -> str:
    """0.39 -> `+39%`; None -> `-`."""
    return "-" if change is None else f"{change * 100:+.0f}%"


def delta_text(row: EpochRow, which: Delta | None, *, baseline: bool = False) -> str:
    """A delta for a table cell: `+39%`; `n<10` while this epoch has too few lines; for the
    baseline column (`baseline`), `base` on a first epoch without speculation; else `-`."""
    if which is not None:
        return percent(which.change)
    if row.gen_total is not None and not row.comparable:
        return f"n<{DELTA_MIN_BATCHES}"
    return "base" if baseline and row.spec_off and row.comparable else "-"


def bucket_cells(b: BucketRow) -> tuple[str, str, str, str, str, str]:
    """A bucket as shown: its label, decode lines, accept len, gen tok/s, and its changes (`n<10`
    while the bucket has too few lines to be compared; `-` with nothing to compare to)."""
    def change(c: float | None) -> str:
        return percent(c) if c is not None or b.comparable else f"n<{DELTA_MIN_BATCHES}"
    return (b.label, str(b.decode), "-" if b.accept_len is None else f"{b.accept_len:.2f}",
            "-" if b.gen_throughput is None else f"{b.gen_throughput:.1f}", change(b.vs_previous), change(b.vs_baseline))
