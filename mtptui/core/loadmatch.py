"""An epoch's decode batches by load: mean throughput between two runs says little when their
traffic differed (speculation can help at one running request and hurt at sixty-four), so each
epoch also keeps, per bucket of `#running-req`, how many decode lines fell in it and the exact sum
of their gen throughput and accept len. compare.py sets the buckets of two epochs side by side.

Each line counts where its own scheduler's running requests put it: its gen throughput is that
DP group's at that load (not the host's sum). A line without `#running-req` (vLLM's separate
speculative line) counts in no bucket. Used by summary's series and by the dashboard's epochs
through one routine (add_columns), so both give the same buckets to the bit.
"""

from __future__ import annotations

from array import array

from mtptui.core import compiled
from mtptui.core.stats import ExactSum

# (label, the smallest #running-req of the bucket); each runs up to the next one's.
LOAD_BUCKETS = (("1", 1), ("2-4", 2), ("5-16", 5), ("17-64", 17), ("65+", 65))
LOAD_FIELDS = ("running_req", "gen_throughput", "accept_len")
_NAN3 = (float("nan"),) * 3
_FOLD = 3 * 4096  # the dashboard's buffered rows are summed at least this often


# bucket index by int(#running-req) below the last bucket's start (None: idle); the last at and past it
_BY_RUNNING = [None] + [max(i for i, (_, lo) in enumerate(LOAD_BUCKETS) if lo <= r) for r in range(1, LOAD_BUCKETS[-1][1])]
_LAST = len(LOAD_BUCKETS) - 1


def bucket_of(running: float) -> int | None:
    """The bucket's index for a line's `#running-req`; None for none (NaN) or an idle 0."""
    if not running >= 1:
        return None
    return _BY_RUNNING[int(running)] if running < LOAD_BUCKETS[-1][1] else _LAST


class LoadBuckets:
    """Per bucket of LOAD_BUCKETS: decode lines, gen throughput and accept len (exact sums)."""

    __slots__ = ("decode", "gen", "accept", "buf")

    def __init__(self) -> None:
        k = len(LOAD_BUCKETS)
        self.decode = [0] * k
        self.gen = [ExactSum() for _ in range(k)]
        self.accept = [ExactSum() for _ in range(k)]
        self.buf = array("d")  # add()'s rows, LOAD_FIELDS each, until fold()

    def add(self, fields: dict) -> None:
        """One record's row (the dashboard's way; summary hands its rows over in columns)."""
        buf = self.buf
        buf.extend(map(fields.get, LOAD_FIELDS, _NAN3))
        if len(buf) >= _FOLD:
            self.fold()

    def fold(self) -> None:
        buf = self.buf
        if buf:
            self.add_columns(buf[0::3], buf[1::3], buf[2::3])
            del buf[:]

    def add_columns(self, running, gen, accept) -> None:
        """Lines in columns (NaN: the line did not carry the field): the one routine that sorts
        lines into buckets."""
        k = len(LOAD_BUCKETS)
        decode = self.decode
        table, top = _BY_RUNNING, LOAD_BUCKETS[-1][1]
        if compiled.split_by_load is not None:  # the same loop in C (summary's hot path)
            counts, gens, accepts = compiled.split_by_load(running, gen, accept, table, top, k)
            for i in range(k):
                decode[i] += counts[i]
        else:
            gens = [[] for _ in range(k)]
            accepts = [[] for _ in range(k)]
            for r, g, a in zip(running, gen, accept):  # bucket_of(), inlined: this runs for every line
                if r >= top:
                    i = _LAST
                elif r >= 1:
                    i = table[int(r)]
                else:
                    continue  # NaN or idle
                decode[i] += 1
                if g == g:
                    gens[i].append(g)
                if a == a:
                    accepts[i].append(a)
        for i in range(k):
            if gens[i]:
                self.gen[i].add(gens[i])
            if accepts[i]:
                self.accept[i].add(accepts[i])

    def merge(self, later: LoadBuckets) -> None:
        self.fold()
        later.fold()
        for i in range(len(LOAD_BUCKETS)):
            self.decode[i] += later.decode[i]
            self.gen[i].merge(later.gen[i])
            self.accept[i].merge(later.accept[i])

    def __getstate__(self) -> tuple:
        self.fold()
        return self.decode, self.gen, self.accept

    def __setstate__(self, state: tuple) -> None:
        self.decode, self.gen, self.accept = state
        self.buf = array("d")

    def to_json(self) -> list[dict]:
        """The buckets with decode lines, fewest running requests first."""
        self.fold()
        return [{"running": label, "decode": self.decode[i], "gen_throughput": self.gen[i].mean(),
                 "accept_len": self.accept[i].mean()}
                for i, (label, _) in enumerate(LOAD_BUCKETS) if self.decode[i]]
