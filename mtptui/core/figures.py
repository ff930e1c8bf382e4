"""A run that is over, as its figures: what `summary` keeps of each of 10,000 runs.

A run of a crash loop is some 100 decode lines. Its rows wait in buffers (a rank's Rows, each
scale's Buckets) until it is over; then its figures are made from them as columns, in numpy,
for many runs in one pass (freeze()): per rank and metric the statistics of stats.describe
(STAT_KEYS), per bucket its decode lines and mean gen throughput and accept len, as doubles.
Rows or buckets whose values went to value sets or exact sums (a long run) give theirs
(Rows.figures, Buckets.figures): the same numbers, to the bit, either way (tests/unit/test_figures.py).

The numbers are those of stats.describe and ExactSum.mean, by their forms over many groups at once
(exact.means, stats.quantiles, stats.tidied): a mean is the exact sum of the values over n, a
percentile interpolates between the two nearest ranks, each then rounded by stats.tidy; here numpy
only groups, sorts and indexes the values.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from mtptui.core.loadmatch import SCALES, Buckets, Scale
from mtptui.core.exact import means
from mtptui.core.stats import quantiles, tidied
from mtptui.core.valueset import STAT_KEYS, Rows

_K = len(STAT_KEYS)


class Figures(NamedTuple):
    """What a run that is over keeps (Epoch.freeze): its ranks in rank order, and as doubles
    (bytes: one object a run, pickled as it is), each rank's statistics (STAT_KEYS for each of
    its metrics; a NaN n: no values) and each bucket's decode lines, mean gen throughput and mean
    accept len, scale after scale (loadmatch.SCALES; NaN: no value)."""
    ranks: tuple[str, ...]
    metrics: tuple[str, ...]
    stats: bytes
    buckets: bytes

    def ranks_json(self, brief: bool = False) -> dict[str, dict[str, dict | None]]:
        """{rank: {metric: its statistics or None}}, as Rows.describe() (brief: .brief()) gave them."""
        figures = zip(*[iter(memoryview(self.stats).cast("d").tolist())] * _K)  # STAT_KEYS at a time
        out: dict[str, dict[str, dict | None]] = {}
        metrics = self.metrics
        for rank in self.ranks:
            described: dict[str, dict | None] = {}
            for metric, (n, mean, p50, p90, lo, hi, last) in zip(metrics, figures):
                if n != n:
                    described[metric] = None
                elif brief:
                    described[metric] = {"n": int(n), "mean": mean}
                else:
                    described[metric] = {"n": int(n), "mean": mean, "p50": p50, "p90": p90, "min": lo, "max": hi,
                                         "last": last}
            out[rank] = described
        return out

    def buckets_json(self) -> dict[str, list[dict]]:
        """{scale's json_key: its buckets with decode lines}, as Buckets.to_json() gave them."""
        figures = zip(*[iter(memoryview(self.buckets).cast("d").tolist())] * 3)
        out: dict[str, list[dict]] = {}
        for scale in SCALES:
            rows: list[dict] = []
            out[scale.json_key] = rows
            name = scale.name
            for (label, _), (decode, gen, accept) in zip(scale.buckets, figures):
                if decode:
                    rows.append({name: label, "decode": int(decode), "gen_throughput": None if gen != gen else gen,
                                 "accept_len": None if accept != accept else accept})
        return out


def _buffered(rows: Rows) -> bool:
    """Whether all of these rows' values wait in their buffer (no value set has any)."""
    sets = rows._sets
    return bool(rows.buf) and (sets is None or not any(v.n for v in sets.values()))


def freeze(runs: Sequence[tuple[Sequence[Rows], Sequence[Buckets]]]) -> list[tuple[bytes, bytes]]:
    """Each run's figures, from its ranks' rows (in the order given) and its buckets (one per
    scale, in SCALES' order): (the ranks' statistics, the buckets'), as Figures keeps them."""
    stats = _rows_figures([r for ranks, _ in runs for r in ranks])
    buckets = _buckets_figures([b for _, matched in runs for b in matched])
    out = []
    i = j = 0
    for ranks, matched in runs:
        out.append((b"".join(stats[i:i + len(ranks)]), b"".join(buckets[j:j + len(matched)])))
        i += len(ranks)
        j += len(matched)
    return out


def freeze_taken(runs: Sequence[tuple[tuple[str, ...], list[tuple[str, bytes]], tuple[str, ...]]],
                 m: int) -> list[tuple[bytes, bytes]]:
    """freeze() of runs whose rows are all still as their series handed them over (Epoch.take_rows):
    (its ranks in order, its chunks of rows (rank, the rows as doubles), their fields, the m
    metrics first). The runs' rows are read as one table: each rank's statistics from its rows
    (in time order), each scale's buckets from all the run's rows."""
    by_names: dict[tuple[str, ...], list[int]] = {}
    for i, (_, _, names) in enumerate(runs):
        by_names.setdefault(names, []).append(i)
    made: dict[int, tuple[bytes, bytes]] = {}
    for names, at in by_names.items():
        k = len(names)
        pieces: list[bytes] = []
        groups: list[int] = []
        run_rows: list[int] = []
        g = 0
        for i in at:
            ranks, chunks, _ = runs[i]
            place = {rank: g + j for j, rank in enumerate(ranks)}
            rows = 0
            for rank, raw in chunks:
                pieces.append(raw)
                groups.append(place[rank])
                rows += len(raw)
            run_rows.append(rows // (8 * k))
            g += len(ranks)
        # the chunks put in their rank's order (a rank's rows together, in time order): a sort
        # of the chunks, not of their rows; a run's ranks are numbered after the run's before it,
        # so its rows stay together, in the runs' order
        by_group = np.asarray(groups, dtype=np.int64)
        order = np.argsort(by_group, kind="stable").tolist()
        data = np.frombuffer(b"".join([pieces[c] for c in order]), dtype=np.float64).reshape(-1, k)
        lengths = np.fromiter((len(pieces[c]) // (8 * k) for c in order), dtype=np.intp, count=len(order))
        stats = _described_rows(data, np.repeat(by_group[order], lengths), g, m)
        runs_of = np.repeat(np.arange(len(at)), run_rows)
        buckets = [_split_rows(scale, data, names, runs_of, len(at)) for scale in SCALES]
        g = 0
        for j, i in enumerate(at):
            n = len(runs[i][0])
            made[i] = (b"".join(stats[g:g + n]), b"".join(scale_figures[j] for scale_figures in buckets))
            g += n
    return [made[i] for i in range(len(runs))]


def _rows_figures(all_rows: list[Rows]) -> list[bytes]:
    """Each Rows' statistics as doubles (Rows.figures); those of the same fields whose values all
    wait in their buffers, described together (_described)."""
    out: list[bytes | None] = [None] * len(all_rows)
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[int]] = {}
    for i, rows in enumerate(all_rows):
        if _buffered(rows):
            groups.setdefault((rows.names, rows.metrics), []).append(i)
        else:
            out[i] = array("d", rows.figures()).tobytes()
    for (names, metrics), at in groups.items():
        described = _described([all_rows[i].buf for i in at], len(names), len(metrics))
        for i, figures in zip(at, described):
            out[i] = figures
    return [b"" if f is None else f for f in out]


def _in_order(values: np.ndarray, n: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Values of groups one after another (ids: their group's, in order; n: each group's count),
    each group's put in order: one sort of a row per group (NaN after the values), where the
    groups are of like sizes, else one sort by group and value."""
    g = len(n)
    width = int(n.max())
    if g * width > 4 * len(values) + 4096:  # a long group among short ones: no padding to its length
        return values[np.lexsort((values, ids))]
    starts = np.cumsum(n) - n
    table = np.full((g, width), np.nan)
    table[ids, np.arange(len(values)) - starts[ids]] = values
    table.sort(axis=1)
    return table[np.arange(width) < n[:, None]]


def _described(bufs: list[array], k: int, m: int) -> list[bytes]:
    """The first m of k fields of each buffer's rows (NaN: absent), each column described as
    stats.describe describes its values, as doubles (STAT_KEYS each; NaNs where none): all the
    buffers in one pass, a column at a time."""
    g = len(bufs)
    lengths = np.fromiter((len(b) // k for b in bufs), dtype=np.intp, count=g)
    data = np.frombuffer(b"".join(bufs), dtype=np.float64).reshape(-1, k)
    return _described_rows(data, np.repeat(np.arange(g), lengths), g, m)


def _described_rows(data: np.ndarray, every: np.ndarray, g: int, m: int) -> list[bytes]:
    """_described() of rows of g groups (every: each row's group; a group's rows one after
    another, in time order)."""
    out = np.full((g, m, _K), np.nan)
    for j in range(m):
        column = data[:, j]
        present = ~np.isnan(column)
        values, ids = column[present], every[present]
        if not len(values):
            continue
        counts = np.bincount(ids, minlength=g)
        ends = np.cumsum(counts)
        has = counts > 0
        n, starts = counts[has], (ends - counts)[has]
        ordered = _in_order(values, counts, ids)
        o = np.empty((len(n), _K))
        o[:, 0] = n
        o[:, 1] = means(values, ids, g)[has]
        o[:, 2] = tidied(quantiles(ordered, starts, n, 0.5))
        o[:, 3] = tidied(quantiles(ordered, starts, n, 0.9))
        o[:, 4] = ordered[starts]
        o[:, 5] = ordered[starts + n - 1]
        o[:, 6] = values[starts + n - 1]  # the last value of each: the rows are in time order
        out[has, j] = o
    return [row.tobytes() for row in out]


def _buckets_figures(all_buckets: list[Buckets]) -> list[bytes]:
    """Each Buckets' figures as doubles (Buckets.figures); those whose lines all wait in their
    rows, split into buckets together, scale by scale."""
    out: list[bytes | None] = [None] * len(all_buckets)
    groups: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for i, b in enumerate(all_buckets):
        if b.rows and not b.buf and not any(b.decode):
            groups.setdefault((b.scale.json_key, b.rows_of), []).append(i)
        else:
            out[i] = array("d", b.figures()).tobytes()
    for (_, names), at in groups.items():
        for i, figures in zip(at, _split([all_buckets[i] for i in at], names)):
            out[i] = figures
    return [b"" if f is None else f for f in out]


def _split(all_buckets: list[Buckets], names: tuple[str, ...]) -> Iterable[bytes]:
    """Buckets of one scale whose lines wait in rows of these fields: each one's decode lines,
    mean gen throughput and mean accept len per bucket (ExactSum.mean's), as doubles."""
    scale = all_buckets[0].scale
    g = len(all_buckets)
    k = len(names)
    lengths = np.fromiter((len(b.rows) // k for b in all_buckets), dtype=np.intp, count=g)
    data = np.frombuffer(b"".join(b.rows for b in all_buckets), dtype=np.float64).reshape(-1, k)
    return _split_rows(scale, data, names, np.repeat(np.arange(g), lengths), g)


def _split_rows(scale: Scale, data: np.ndarray, names: tuple[str, ...], every: np.ndarray, g: int) -> list[bytes]:
    """_split() of rows of g groups (every: each row's group, in order)."""
    nb = len(scale.buckets)
    columns = [data[:, names.index(name)] for name in scale.row]
    nk = len(scale.fields)
    keys = np.asarray(scale.keys(*columns[:nk]), dtype=np.float64)
    bounds = np.asarray(scale.bounds)
    inside = keys >= bounds[0]  # NaN: in no bucket
    # each line's group and bucket, the lines put in that order (a stable sort of small integers)
    cells = every[inside] * nb + (np.searchsorted(bounds, keys[inside], side="right") - 1)  # bisect_right's
    out = np.empty((g * nb, 3))
    out[:, 0] = np.bincount(cells, minlength=g * nb)
    for c, column in ((1, columns[nk]), (2, columns[nk + 1])):
        values = column[inside]
        present = ~np.isnan(values)
        out[:, c] = means(values[present], cells[present], g * nb)
    out = out.reshape(g, nb * 3)
    return [block.tobytes() for block in out]
