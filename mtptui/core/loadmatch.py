"""An epoch's decode batches matched by load and by context: mean throughput between two runs says
little when their traffic differed (speculation can help at one running request and hurt at
sixty-four; its acceptance falls as contexts grow long), so each epoch also keeps, per bucket of a
scale, how many decode lines fell in it and the exact sum of their gen throughput and accept len.
compare.py sets the buckets of two epochs side by side.

Two scales, one mechanism (Buckets), each a bucket table and a key per line:
- LOAD: the line's `#running-req`;
- CONTEXT: the tokens in use per running request (`#token`, or a hybrid pool's `#full token`, over
  `#running-req`), the mean context of a running request, where speculation stops paying.

Each line counts where its own scheduler put it: its gen throughput is that DP group's at that
load or context (not the host's sum). A line without the key's fields (vLLM's separate speculative
line, an idle line with no running request) counts in no bucket. Used by summary's series and by
the dashboard's epochs through one routine (add_columns), so both give the same buckets to the bit.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat

import numpy as np
from numpy.typing import ArrayLike

from mtptui.core.exact import ExactSum, exact_sums

VALUE_FIELDS = ("gen_throughput", "accept_len")  # what a bucket sums, after the key's fields in a row
_ROWS_PER_FOLD = 4096  # the dashboard's buffered rows are summed at least this often
_NAN = float("nan")
_NO_SUMS: list = []  # the sums of Buckets that have had no lines yet


def _running_keys(running: ArrayLike) -> ArrayLike:
    return running


def context_keys(tokens: ArrayLike, full: ArrayLike, running: ArrayLike) -> np.ndarray:
    """Each line's tokens in use per running request: `#token` (or, when a hybrid pool logs none,
    `#full token`) over `#running-req`; NaN with neither, or with no request running."""
    t, f, r = (np.asarray(c, float) for c in (tokens, full, running))
    with np.errstate(all="ignore"):  # 0 running, or a hostile #token of 1e308: NaN or inf, said by no warning
        keys: np.ndarray = np.where(np.isnan(t), f, t) / r
    keys[~(r >= 1)] = _NAN
    return keys


@dataclass(frozen=True)
class Scale:
    """How decode lines are bucketed: a line's key from some of its fields, and the bucket table."""
    name: str  # a bucket's label in JSON: {"running": "5-16"}
    json_key: str  # the epoch's list of buckets in JSON: "by_load"
    buckets: tuple[tuple[str, float], ...]  # (label, the smallest key in it); each runs up to the next one's
    fields: tuple[str, ...]  # the decode fields the key is made of
    keys: Callable[..., ArrayLike]  # their columns -> each line's key (NaN: in no bucket)

    @cached_property
    def bounds(self) -> tuple[float, ...]:
        return tuple(lo for _, lo in self.buckets)

    @cached_property  # read per record by the dashboard
    def row(self) -> tuple[str, ...]:
        """The fields of a buffered row: the key's, then what the buckets sum."""
        return self.fields + VALUE_FIELDS

    def bucket_of(self, key: float) -> int | None:
        """The bucket's index for a line's key; None below the first bucket (or NaN)."""
        return bisect_right(self.bounds, key) - 1 if key >= self.buckets[0][1] else None


K = 1024  # contexts in tokens, as models state them (32k: 32768)
LOAD = Scale("running", "by_load", (("1", 1), ("2-4", 2), ("5-16", 5), ("17-64", 17), ("65+", 65)),
             ("running_req",), _running_keys)
CONTEXT = Scale("context", "by_context", (("<4k", 0), ("4-16k", 4 * K), ("16-32k", 16 * K), ("32-64k", 32 * K),
                                          ("64k+", 64 * K)),
                ("num_token", "full_token", "running_req"), context_keys)
SCALES = (LOAD, CONTEXT)
# every field a scale reads from a decode line, each once, in the order the scales name them
MATCH_FIELDS = tuple(dict.fromkeys(f for s in SCALES for f in s.row))


def split(keys: ArrayLike, gen: ArrayLike, accept: ArrayLike,
          bounds: tuple[float, ...]) -> tuple[list[int], list[ExactSum], list[ExactSum]]:
    """Per bucket: how many lines have their key in it (the last bound at or below the key; none
    below the first bound, or NaN), and the exact sums of the gen throughputs and accept lens
    those lines carried (NaN: none)."""
    k = len(bounds)
    key = np.asarray(keys, float)
    inside = key >= bounds[0]
    bucket = np.searchsorted(bounds, key[inside], side="right") - 1
    sums: list[list[ExactSum]] = []
    for column in (gen, accept):
        values = np.asarray(column, float)[inside]
        has = ~np.isnan(values)
        values, at = values[has], bucket[has]
        n = np.bincount(at, minlength=k).tolist()
        finite = np.isfinite(values)  # an infinite value makes its bucket's mean infinite (or NaN)
        special = np.bincount(at[~finite], values[~finite], k).tolist()
        units = exact_sums(values[finite], at[finite], k)
        sums.append([ExactSum.of(units[i], n[i], special[i]) for i in range(k)])
    return np.bincount(bucket, minlength=k).tolist(), sums[0], sums[1]


class Buckets:
    """Per bucket of a scale: decode lines, gen throughput and accept len (exact sums)."""

    __slots__ = ("scale", "decode", "gen", "accept", "buf", "rows", "rows_of")

    def __init__(self, scale: Scale) -> None:
        k = len(scale.buckets)
        self.scale = scale
        self.decode = [0] * k
        # each bucket's exact sums, made when lines first come (_sums()): a run of 100 lines is
        # frozen from its rows without them (figures())
        self.gen: list[ExactSum] = _NO_SUMS
        self.accept: list[ExactSum] = _NO_SUMS
        self.buf = array("d")  # add()'s rows, the scale's row fields each, until fold()
        # add_rows()'s rows (of the fields rows_of names), until fold(): a run's rows from each
        # of its ranks are sorted into buckets in one go, not a rank at a time
        self.rows = array("d")
        self.rows_of: tuple[str, ...] = ()

    def add(self, fields: dict) -> None:
        """One record's row (the dashboard's way; summary hands its rows over in columns)."""
        row = self.scale.row
        buf = self.buf
        buf.extend(map(fields.get, row, repeat(_NAN)))
        if len(buf) >= _ROWS_PER_FOLD * len(row):
            self.fold()

    def fold(self) -> None:
        buf = self.buf
        if buf:
            self._add_rows(buf, self.scale.row)
            del buf[:]
        rows = self.rows
        if rows:
            self._add_rows(rows, self.rows_of)
            del rows[:]

    def add_rows(self, buf: array, names: tuple[str, ...]) -> None:
        """Rows of these fields one after another (NaN: the line did not carry the field), of
        which this scale reads its columns: held until fold() (or until they are many)."""
        if names != self.rows_of:
            if self.rows:
                self._add_rows(self.rows, self.rows_of)
                del self.rows[:]
            self.rows_of = names
        self.rows.extend(buf)
        if len(self.rows) >= _ROWS_PER_FOLD * len(names):
            self._add_rows(self.rows, names)
            del self.rows[:]

    def _add_rows(self, buf: array, names: tuple[str, ...]) -> None:
        self.add_columns(*self.columns(buf, names))

    def columns(self, buf: array, names: tuple[str, ...]) -> list[np.ndarray]:
        """The scale's row fields, in order, of rows of these fields one after another (views)."""
        rows = np.frombuffer(buf, float).reshape(-1, len(names))
        return [rows[:, names.index(name)] for name in self.scale.row]

    def add_columns(self, *columns: ArrayLike) -> None:
        """Lines in columns, the scale's row fields in order: the one routine that sorts lines
        into buckets."""
        scale = self.scale
        n = len(scale.fields)
        lines, gens, accepts = split(scale.keys(*columns[:n]), columns[n], columns[n + 1], scale.bounds)
        gen, accept = self._sums()
        for i, c in enumerate(lines):
            self.decode[i] += c
            gen[i].merge(gens[i])
            accept[i].merge(accepts[i])

    def _sums(self) -> tuple[list[ExactSum], list[ExactSum]]:
        if self.gen is _NO_SUMS:
            k = len(self.decode)
            self.gen = [ExactSum() for _ in range(k)]
            self.accept = [ExactSum() for _ in range(k)]
        return self.gen, self.accept

    def merge(self, later: Buckets) -> None:
        self.fold()
        later.fold()
        if later.gen is _NO_SUMS:
            return  # no lines
        gen, accept = self._sums()
        for i in range(len(self.decode)):
            self.decode[i] += later.decode[i]
            gen[i].merge(later.gen[i])
            accept[i].merge(later.accept[i])

    def __getstate__(self) -> tuple:
        self.fold()
        return self.scale.json_key, self.decode, self.gen, self.accept

    def __setstate__(self, state: tuple) -> None:
        key, self.decode, self.gen, self.accept = state
        if not self.gen:
            self.gen = self.accept = _NO_SUMS  # none made yet (_sums())
        self.scale = next(s for s in SCALES if s.json_key == key)
        self.buf = array("d")
        self.rows, self.rows_of = array("d"), ()

    def to_json(self) -> list[dict]:
        """The buckets with decode lines, in the scale's order."""
        self.fold()
        gen, accept = self._sums()
        return [{self.scale.name: label, "decode": self.decode[i], "gen_throughput": gen[i].mean(),
                 "accept_len": accept[i].mean()}
                for i, (label, _) in enumerate(self.scale.buckets) if self.decode[i]]


    def holds(self) -> bool:
        """Whether any line reached these buckets."""
        return bool(self.buf or self.rows or any(self.decode))

    def figures(self) -> list[float]:
        """Each bucket's decode lines, mean gen throughput and mean accept len (NaN: none), in
        the scale's order, from its sums: what a run that is over keeps (epochs.Figures). Buckets
        whose lines all wait in their rows are read together, without sums (figures.freeze)."""
        self.fold()
        gen, accept = self._sums()
        return [x for c, g, a in zip(self.decode, gen, accept) for x in (c, _mean(g), _mean(a))]


def _mean(s: ExactSum) -> float:
    mean = s.mean()
    return _NAN if mean is None else mean


def matched() -> tuple[Buckets, ...]:
    """An epoch's buckets, one per scale."""
    return tuple(Buckets(s) for s in SCALES)
