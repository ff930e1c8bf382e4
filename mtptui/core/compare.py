"""Epochs side by side: did the retune help? One routine for `summary`'s epoch table and the
dashboard's compare screen (c), both reading epochs as `Epoch.to_json()` gives them, so the two
can never disagree."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class EpochRow:
    host: str | None
    index: int
    start: float
    end: float | None  # None: the epoch still runs (or the input ended in it)
    label: str  # the speculation settings
    reason: str  # why it began
    decode_batches: int
    accept_len: float | None  # mean over every decode batch of every rank
    accept_rate: float | None
    gen_per_rank: dict[str, float]  # rank -> mean gen throughput
    gen_mean: float | None  # the mean over ranks of gen_per_rank
    gen_sum: float | None  # the host's throughput: gen_per_rank summed
    vs_before: float | None  # gen_mean against the host's previous epoch with throughput (0.39: +39 %)
    vs_first: float | None  # gen_sum against the host's first epoch with throughput


def pooled_mean(ranks: dict, metric: str) -> float | None:
    """The mean over every value of every rank, from each rank's mean and count."""
    stats = [r[metric] for r in ranks.values() if r.get(metric)]
    n = sum(s["n"] for s in stats)
    return sum(s["mean"] * s["n"] for s in stats) / n if n else None


def epoch_rows(epochs: list[dict]) -> list[EpochRow]:
    """One row per epoch, in the order given (each host's epochs oldest first)."""
    rows: list[EpochRow] = []
    before: dict = {}  # host -> gen_mean of its latest epoch with throughput
    first: dict = {}  # host -> gen_sum of its first epoch with throughput
    for e in epochs:
        per_rank = {rank: r["gen_throughput"]["mean"] for rank, r in e["ranks"].items() if r.get("gen_throughput")}
        gen_sum = sum(per_rank.values()) if per_rank else None
        gen_mean = gen_sum / len(per_rank) if per_rank else None
        host = e["host"]
        prev, base = before.get(host), first.get(host)
        rows.append(EpochRow(
            host=host, index=e["index"], start=e["start"], end=e["end"], label=e["label"], reason=e["reason"],
            decode_batches=e["decode_batches"], accept_len=pooled_mean(e["ranks"], "accept_len"),
            accept_rate=pooled_mean(e["ranks"], "accept_rate"), gen_per_rank=per_rank, gen_mean=gen_mean,
            gen_sum=gen_sum, vs_before=gen_mean / prev - 1 if gen_mean is not None and prev else None,
            vs_first=gen_sum / base - 1 if gen_sum is not None and base else None))
        if gen_mean is not None:
            before[host] = gen_mean
            first.setdefault(host, gen_sum)
    return rows


def percent(change: float | None) -> str:
    """0.39 -> `+39%`; None -> `-`."""
    return "-" if change is None else f"{change * 100:+.0f}%"
