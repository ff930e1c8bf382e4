"""The compare screen (c): every epoch of the shown host side by side: its settings, when it began
and how long it ran, decode batches, accept len and rate, the host's gen throughput (summed over
DP groups) and its change against the run before and the last run without speculation, and the
mean per rank, and for the epoch picked, its decode lines by #running-req with their changes at the
same load, and by context (tokens in use per running request) with the buckets where speculation
runs slower than without it marked. The numbers are `mtptui summary`'s epochs (core/compare.py), as on the epoch
strip, kept up to date while the dashboard runs; and how each run ended (Epoch.ending)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from mtptui.core.compare import DELTA_MIN_BATCHES, BucketRow, EpochRow, bucket_cells, delta_text
from mtptui.core.epochs import short_rank_labels
from mtptui.tui.bindings import bindings_for
from mtptui.tui.gpu_view import epoch_energy_text
from mtptui.tui.latency_view import LATENCY_COLUMNS, epoch_latency_text, latency_cells
from mtptui.tui.viewmodel import clock_text, duration_text, host_epoch_rows, host_label, plural

# What tells whether a retune helped comes first: a narrow screen leaves out the columns after
# the first KEPT (whole, never cut: fit_columns), and the detail under the table says them.
COLUMNS = ("#", "settings", "acc len", "acc rate", "host tok/s", "vs prev", "vs spec off", "gen tok/s/rank",
           "decode", "began", "ran", "ended")
SHORT_HEADERS = dict(zip(COLUMNS, ("#", "settings", "acc", "rate", "host tok/s", "vs prev", "vs off")))
KEPT = 7  # the columns every width shows: the epoch, its settings, accept len and rate, the host total, the changes
CELL_PAD = 2  # a DataTable cell's padding, either side together
# how a run ended, in a word (the detail below the table says it whole)
ENDED_WORDS = {"restarted by mtptui": "mtptui restart", "restarted by systemd": "systemd restart",
               "stopped": "stopped", "crashed": "crashed", "still running": "running", "ended": "-"}


def ended_cell(r: EpochRow) -> str | Content:
    ended = r.ended or {}
    how = ended.get("how")
    if how == "crashed":
        kind = (ended.get("error") or {}).get("kind", "")
        word = {"crash": "died", "oom": "OOM", "nccl": "NCCL", "watchdog": "watchdog", "failed": "failure"}.get(kind, "error")
        return Content.styled(f"crashed: {word}", "bold $error")
    return ENDED_WORDS.get(how, "-") if isinstance(how, str) else "-"
REFRESH_S = 1.0


def _num(v: float | None, prec: int) -> str:
    return "-" if v is None else f"{v:.{prec}f}"


def row_cells(r: EpochRow, newest: float | None) -> tuple[str | Content, ...]:
    """The table's cells for one epoch; the open one runs to the newest line."""
    end = r.end if r.end is not None else newest
    ran = duration_text(None if end is None else end - r.start) + (" +" if r.end is None else "")
    return (str(r.index + 1), r.label, _num(r.accept_len, 2), _num(r.accept_rate, 2), _num(r.gen_total, 1),
            delta_text(r, r.vs_previous), delta_text(r, r.vs_baseline, baseline=True), _num(r.gen_mean, 1),
            str(r.decode_batches), clock_text(r.start), ran, ended_cell(r))


def short_settings(label: str) -> str:
    """`EAGLE (MTP) s3 k1 d4` for `EAGLE (MTP) steps=3 topk=1 draft=4`: the table's form on a
    narrow screen (the detail under it gives the label whole)."""
    return label.replace(" steps=", " s").replace(" topk=", " k").replace(" draft=", " d")


def _width(cells: list) -> int:
    return max((Content(c).cell_length if isinstance(c, str) else c.cell_length for c in cells), default=0) + CELL_PAD


def fit_columns(rows: list[tuple], width: int, columns: tuple[str, ...] = COLUMNS) -> tuple[list[int], tuple[str, ...], bool]:
    """Which columns the table shows in `width` cells, with every value whole: the first KEPT
    always (with short headers, then short settings, where they need them), then each further
    column, in order, that still fits. Returns (column indices, the headers, short settings)."""
    for short_headers, short_label in ((False, False), (True, False), (True, True)):
        headers = tuple(SHORT_HEADERS.get(c, c) if short_headers else c for c in columns)
        cells = [list(r) for r in rows]
        if short_label:
            for r in cells:
                r[1] = short_settings(str(r[1]))
        widths = [_width([headers[i]] + [r[i] for r in cells]) for i in range(len(columns))]
        if sum(widths[:KEPT]) <= width or short_label:
            break
    used, shown = sum(widths[:KEPT]), list(range(KEPT))
    for i in range(KEPT, len(columns)):
        if used + widths[i] <= width:
            shown.append(i)
            used += widths[i]
    return shown, headers, short_label


def _bucket_parts(buckets: list[BucketRow], first: bool) -> list:
    """A line per bucket: its throughput and accept len, and its changes against the runs before
    in the same bucket; `▼ below spec off` where speculation runs slower there than without. In
    the host's first epoch every bucket says that there is no run before it (whatever its lines:
    `n<10` would promise a change once the bucket had enough)."""
    parts: list = []
    for b in buckets:
        label, decode, al, gen, prev, base = bucket_cells(b)
        parts += [(f"\n  {label:>6} ", "bold"), f"{gen:>8} tok/s  acc len {al:>4}  ",
                  # the gap after the count is the count's own: a gap that starts a part is lost
                  # where Textual folds the line (`11 linesvs prev` at 80 wide)
                  (plural(b.decode, "line") + "  ", "$text-muted"),
                  ("no previous epoch", "$text-muted") if first else f"vs prev {prev}  vs spec off {base}"]
        if b.below_baseline:
            parts.append(("  ▼ below spec off", "bold $error"))
    return parts


def load_parts(r: EpochRow) -> list:
    """The epoch's load buckets, then its context buckets, with where speculation stops paying."""
    parts: list = [(f"\nat the same load (#running-req; changes need {DELTA_MIN_BATCHES} lines in the bucket "
                     "in both epochs):", "bold")]
    if not r.by_load:
        parts.append(" no decode line with #running-req")
    first = r.index == 0  # epochs are numbered per host from 0
    parts += _bucket_parts(r.by_load, first)
    parts.append(("\nby context (tokens in use per running request):", "bold"))
    if not r.by_context:
        parts.append(" no decode line with #token and #running-req")
    parts += _bucket_parts(r.by_context, first)
    if r.stops_paying_from is not None:
        parts.append((f"\n  speculation stops paying from {r.stops_paying_from} tokens per request", "bold $error"))
    return parts


class CompareScreen(ModalScreen):
    DEFAULT_CSS = """
    CompareScreen { align: center middle; }
    CompareScreen > Vertical { width: 100%; height: auto; max-height: 100%; border: thick $accent;
                               background: $surface; padding: 0 1; }
    CompareScreen DataTable { height: auto; max-height: 30; }
    CompareScreen #ranks { margin: 1 0; height: auto; }
    CompareScreen #hint { color: $text-muted; }
    """
    BINDINGS = bindings_for("compare")

    def __init__(self, dash) -> None:
        super().__init__()
        self.dash = dash
        self.host = dash.host
        self.rows: list[EpochRow] = []
        self._version: int | None = None
        self._columns: tuple | None = None  # (indices, headers) the table has
        self.hidden: list[str] = []  # the columns left out for want of width (the detail says them)

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"compare epochs · {host_label(self.host)}"
            yield DataTable(cursor_type="row", zebra_stripes=True)
            yield Static(id="ranks")
            yield Static("the numbers are `mtptui summary`'s epochs: means over every decode batch of the epoch; "
                         "host tok/s adds up the DP groups · '+' the epoch still runs · ↑↓ picks an epoch · "
                         "Esc closes", id="hint")

    def on_mount(self) -> None:
        self.refresh_rows()
        self.set_interval(REFRESH_S, self.refresh_rows)

    def on_resize(self) -> None:
        self._version = None  # fit the columns to the new width
        self.refresh_rows()

    def table_width(self) -> int:
        """The cells the table has: the screen less the box's border and padding, and a cell of slack."""
        return max(20, self.app.size.width - 5)

    def refresh_rows(self) -> None:
        store = self.dash.store
        if store.version == self._version:
            return
        self._version = store.version
        self.rows = host_epoch_rows(store, self.host)
        table: DataTable[str | Content] = self.query_one(DataTable)
        keep = table.cursor_row
        cells = [row_cells(r, store.last_ts) for r in self.rows]
        columns: tuple[str, ...] = COLUMNS
        lat = self.dash.latency.get(self.host)
        if lat is not None and lat.epochs:  # the server's latency, first after the kept columns
            columns = COLUMNS[:KEPT] + LATENCY_COLUMNS + COLUMNS[KEPT:]
            cells = [c[:KEPT] + latency_cells(lat.epochs.get(r.start)) + c[KEPT:] for r, c in zip(self.rows, cells)]
        shown, headers, short = fit_columns(cells, self.table_width(), columns)
        self.hidden = [columns[i] for i in range(len(columns)) if i not in shown]
        if (shown, headers) != self._columns:
            table.clear(columns=True)
            table.add_columns(*(headers[i] for i in shown))
            self._columns = (shown, headers)
        else:
            table.clear()
        for row in cells:
            table.add_row(*((short_settings(str(row[i])) if short and i == 1 else row[i]) for i in shown))
        if self.rows:
            table.move_cursor(row=min(keep, len(self.rows) - 1) if keep >= 0 else 0)
        else:
            self.query_one("#ranks", Static).update("no epochs yet: no batch line of this host has come in")
        n = len(self.rows)
        self.query_one(Vertical).border_subtitle = f"{n} epoch{'s' if n != 1 else ''} (restarts split them)"

    @on(DataTable.RowHighlighted)
    def _show_ranks(self, event: DataTable.RowHighlighted) -> None:
        if not 0 <= event.cursor_row < len(self.rows):
            return
        r = self.rows[event.cursor_row]
        parts: list = [(f"epoch {r.index + 1}: {r.label}", "bold"), (f" · began: {r.reason}", "$text-muted")]
        how = r.ended or {}
        ended = how.get("text")
        if ended:
            parts.append((f" · ended: {ended}", "bold $error" if how.get("how") == "crashed" else "$text-muted"))
        parts.append((f"\n{plural(r.decode_batches, 'decode line')} · began {clock_text(r.start)} · ran "
                      f"{row_cells(r, self.dash.store.last_ts)[10]} · gen tok/s/rank {_num(r.gen_mean, 1)}",
                      "$text-muted"))
        lat = self.dash.latency.get(self.host)
        said = epoch_latency_text(self.rows, event.cursor_row, lat.epochs if lat is not None else None)
        if said:
            parts.append((f"\n{said}", "bold"))
        gpus = self.dash.gpus.get(self.host)
        energy = epoch_energy_text(gpus.samples, r.start, r.end, r.gen_total) if gpus is not None else None
        if energy:
            parts.append((f"\n{energy}", "bold"))
        parts.append(("\ngen tok/s, mean per rank:", "bold"))
        if not r.gen_per_rank:
            parts.append(" none logged")
        names = short_rank_labels(list(r.gen_per_rank))
        for rank, v in r.gen_per_rank.items():
            parts += [(f"  {names[rank]} ", "$text-muted"), f"{v:.1f}"]
        parts += load_parts(r)
        self.query_one("#ranks", Static).update(Content.assemble(*parts))
