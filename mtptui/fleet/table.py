"""The fleet table without a screen: its columns, one row per host (its ranks below it when
expanded), sorted by any column, filtered; `mtptui fleet --once` prints it, the screen shows it.

A host row sums or averages its ranks: accept len and rate are the mean over the ranks; gen
throughput, running and queued requests are summed over the DP groups (the TP ranks of a group
report the one batch they share).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from mtptui.core.epochs import rank_key
from mtptui.fleet.query import Host, Rank


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    numeric: bool = False


COLUMNS = (
    Column("host", "host"), Column("source", "source"), Column("settings", "settings"),
    Column("ranks", "ranks", True), Column("accept_len", "accept len", True),
    Column("accept_rate", "accept rate", True), Column("gen_throughput", "gen tok/s", True),
    Column("running", "running", True), Column("queue", "queue", True), Column("graph", "graph"),
    Column("flags", "flags"),
)
COLUMN_KEYS = tuple(c.key for c in COLUMNS)
# The columns a screen too narrow for all leaves out, the first first (the line under the table
# tells the cursor row's source, settings, graph and queue, and which are left out).
SPARE = ("source", "ranks", "settings", "graph", "queue")
RANK_COLUMNS = ("accept_len", "accept_rate", "gen_throughput", "running", "queue", "graph")
FORMATS = {"accept_len": "{:.2f}", "accept_rate": "{:.2f}", "gen_throughput": "{:,.0f}"}


@dataclass
class ViewState:
    """What the user chose; it outlives a trip to the live dashboard and back."""

    sort: str = "host"
    reverse: bool = False
    filter: str = ""
    flagged_only: bool = False
    expanded: set[str] = field(default_factory=set)  # host keys
    cursor: str | None = None  # the row key under the cursor

    def rows_key(self) -> tuple:
        """What decides the rows shown (all but the cursor)."""
        return (self.sort, self.reverse, self.filter, self.flagged_only, frozenset(self.expanded))


class Row(NamedTuple):  # a tuple: a refresh makes 9,000
    key: str  # host_key(host), or with "\t" and the rank
    host: Host
    rank: Rank | None
    values: dict  # column key -> the value sorted on (None: none)
    cells: tuple[str, ...]  # the text of each column
    flagged: bool


def host_key(h: Host) -> str:
    return f"{h.source}:{h.host}"


def settings(h: Host) -> str:
    if "settings" in h.spec:
        return h.spec["settings"]
    if "model_name" in h.spec:
        return f"model {h.spec['model_name']}"
    return "settings unknown"


def graph_state(states: list[bool | None]) -> str | None:
    if False in states:
        return "off"
    return "on" if states and all(states) else None


def flag_kinds(h: Host, rank: str | None = None) -> str:
    kinds: list[str] = []
    for f in h.flags:
        if (rank is None or f.rank == rank) and f.kind not in kinds:
            kinds.append(f.kind)
    return " ".join(kinds)


def host_row(h: Host) -> Row:
    values = {"host": h.host, "source": h.source, "settings": settings(h), "ranks": len(h.ranks),
              "accept_len": h.mean("accept_len"), "accept_rate": h.mean("accept_rate"),
              "gen_throughput": h.total("gen_throughput"), "running": h.total("running"),
              "queue": h.total("queue"), "graph": graph_state([r.graph for r in h.ranks]),
              "flags": flag_kinds(h)}
    return Row(host_key(h), h, None, values, _cells(values), bool(h.flags))


def rank_row(h: Host, r: Rank, key: str | None = None) -> Row:
    """`key`: the host's (host_key), when the caller has it."""
    flags = flag_kinds(h, r.rank) if h.flags else ""
    graph = None if r.graph is None else ("on" if r.graph else "off")
    values = {"host": f"  {r.rank or '(rank)'}", "source": "", "settings": "", "ranks": "",
              "accept_len": r.accept_len, "accept_rate": r.accept_rate, "gen_throughput": r.gen_throughput,
              "running": r.running, "queue": r.queue, "graph": graph, "flags": flags}
    return Row(f"{key or host_key(h)}\t{r.rank}", h, r, values, _cells(values), bool(flags))


def _writer(key: str) -> Callable[[object], str]:
    """How a column's value is written ("-" for none)."""
    fmt = FORMATS.get(key)

    def write(v: object) -> str:
        if v is None:
            return "-"
        if v.__class__ is str:
            return v
        if fmt is not None:
            return fmt.format(v)
        return f"{v:g}" if v.__class__ is float else str(v)
    return write


# How each column's value is written (a fleet's refresh writes 100,000 cells).
_WRITE = tuple(_writer(key) for key in COLUMN_KEYS)


def _cells(values: dict) -> tuple[str, ...]:
    return tuple([write(values[k]) for write, k in zip(_WRITE, COLUMN_KEYS)])


def matches(row: Row, text: str) -> bool:
    """Case-insensitive: the text is in the host, source, settings, flags or rank of the row."""
    t = text.strip().lower()
    return not t or any(t in str(row.values[k]).lower() for k in ("host", "source", "settings", "flags"))


def _sorted(rows: list[Row], column: str, reverse: bool) -> list[Row]:
    """By the column, texts in natural order (10.0.0.9 before 10.0.0.10), absent values last
    either way; ties by host name."""
    def key(r: Row):
        v = r.values[column]
        return rank_key(v.lower()) if isinstance(v, str) else v

    have = sorted((r for r in rows if r.values[column] not in (None, "")),
                  key=lambda r: (key(r), rank_key(r.host.host)), reverse=reverse)
    return have + sorted((r for r in rows if r.values[column] in (None, "")), key=lambda r: rank_key(r.host.host))


class FleetRows:
    """The rows of one refresh, each made once: a sort, a filter or an expand only picks and orders
    them (1,000 hosts and their 8,000 ranks: formatting every cell again per key costs 100 ms).
    A host's rank rows are made when it is first expanded (a screen's refresh makes those of the
    hosts it shows expanded, off its loop: see `refreshed`)."""

    def __init__(self, hosts: list[Host]) -> None:
        self.hosts = hosts
        self.tops = [host_row(h) for h in hosts]
        self._ranks: dict[str, list[Row]] = {}
        self._widths: tuple[Callable, int, tuple[int, ...]] | None = None  # measure, rank lists, widths

    def ranks(self, top: Row) -> list[Row]:
        got = self._ranks.get(top.key)
        if got is None:
            got = self._ranks[top.key] = [rank_row(top.host, r, top.key) for r in top.host.ranks]
        return got

    def widths(self, measure: Callable[[str], int] = len) -> tuple[int, ...]:
        """Each column's widest cell over the rows made so far, shown or not (every host's, and
        the ranks made: folding or filtering rows keeps the columns), by `measure` (a screen's:
        cells, not chars)."""
        made = len(self._ranks)
        if self._widths is None or self._widths[:2] != (measure, made):
            every = self.tops + [r for ranks in self._ranks.values() for r in ranks]
            columns = zip(*(r.cells for r in every)) if every else [()] * len(COLUMNS)
            # Each distinct text measured once: a column of 9,000 cells holds a few hundred.
            self._widths = (measure, made, tuple(max(map(measure, set(col)), default=0) for col in columns))
        return self._widths[2]

    def rows(self, state: ViewState) -> list[Row]:
        """The rows to show, in order: hosts sorted and filtered, each followed by its ranks when
        it is expanded (sorted by the same column when it is one a rank has, else in rank order)."""
        tops = self.tops
        if state.flagged_only:
            tops = [r for r in tops if r.flagged]
        if state.filter:
            tops = [r for r in tops if matches(r, state.filter)]
        out: list[Row] = []
        for top in _sorted(tops, state.sort, state.reverse):
            out.append(top)
            if top.key in state.expanded:
                ranks = self.ranks(top)
                if state.sort in RANK_COLUMNS:
                    ranks = _sorted(ranks, state.sort, state.reverse)
                out += ranks
        return out


def refreshed(hosts: list[Host], state: ViewState, measure: Callable[[str], int] = len) -> tuple[FleetRows, list[Row]]:
    """What a screen's refresh makes off its loop: the rows shown in `state`'s order (the ranks of
    the hosts it expands: those of the others are made when they are expanded, 8,000 rows that a
    refresh of a folded fleet would make for nothing) and the columns' widths."""
    model = FleetRows(hosts)
    shown = model.rows(state)
    model.widths(measure)
    return model, shown


def rows(hosts: list[Host], state: ViewState) -> list[Row]:
    """The rows to show (see FleetRows.rows)."""
    return FleetRows(hosts).rows(state)


def fitted(widths: Sequence[int], room: int, pad: int) -> tuple[int, ...]:
    """The columns (indices) to draw in `room` cells, each `pad` cells wider than its widest cell:
    all when they fit, else without the SPARE ones, in order, until they fit."""
    shown = list(range(len(COLUMNS)))
    need = sum(w + pad for w in widths)
    for key in SPARE:
        if need <= room:
            break
        i = COLUMN_KEYS.index(key)
        shown.remove(i)
        need -= widths[i] + pad
    return tuple(shown)


def text_table(rows_: list[Row]) -> str:
    """The rows as aligned plain text, with a header line (`fleet --once`)."""
    lines = [tuple(c.title for c in COLUMNS)] + [r.cells for r in rows_]
    widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS))]
    right = [c.numeric for c in COLUMNS]
    return "\n".join("  ".join(cell.rjust(w) if r else cell.ljust(w) for cell, w, r in zip(line, widths, right)).rstrip()
                     for line in lines)
