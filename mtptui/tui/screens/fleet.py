"""The fleet screen: one row per host that Prometheus knows (space shows its ranks), sorted by any
column, filtered, searched, refreshed every few seconds; Enter opens the host's live dashboard.
The rows come from mtptui.fleet.table; this screen only shows them and takes the keys."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from mtptui.fleet.prom import PromError
from mtptui.fleet.query import Host
from mtptui.fleet.table import COLUMN_KEYS, COLUMNS, FleetRows, Row, ViewState, host_key, matches, refreshed
from mtptui.tui.bindings import bindings_for
from mtptui.tui.gcpace import Paced
from mtptui.tui.widgets.fleet_table import FleetTable


class FleetScreen(Screen):
    DEFAULT_CSS = """
    FleetScreen { layout: vertical; }
    #fleet-title { height: 1; padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    #fleet-table { height: 1fr; }
    #fleet-detail { height: auto; max-height: 6; padding: 0 1; border-top: solid $primary-darken-2; }
    #fleet-input { display: none; height: 3; }
    #fleet-input.-open { display: block; }
    """
    BINDINGS = bindings_for("fleet")

    def __init__(self, load: Callable[[], list[Host]], *, state: ViewState, interval: float, title: str,
                 open_host: Callable[[Host], str | None], hosts: list[Host] | None = None) -> None:
        super().__init__()
        self.load = load
        self.state = state
        self.interval = interval
        self.where = title
        self.open_host = open_host  # returns a reason when the host cannot be opened
        self.model = FleetRows(hosts or [])
        self.shown: list[Row] = []
        self.find_term = ""
        self.asking = ""  # "filter" or "find" while the input is open
        self.refreshed: float | None = time.time() if hosts is not None else None
        self.error = ""
        self.loading = False  # a refresh is under way
        self.detail_shape: int | None = None  # the detail's lines when none wraps

    def compose(self) -> ComposeResult:
        yield Static(id="fleet-title")
        yield FleetTable(id="fleet-table")
        yield Static(id="fleet-detail")
        yield Input(id="fleet-input")
        yield Footer()

    def on_mount(self) -> None:
        self.rebuild()
        self.query_one(FleetTable).focus()
        if self.refreshed is None:
            self.action_refresh()
        self.set_interval(self.interval, self.action_refresh)

    # -- data ------------------------------------------------------------------------------------
    @property
    def hosts(self) -> list[Host]:
        return self.model.hosts

    @work(group="fleet-load")
    async def action_refresh(self) -> None:
        # One at a time: a refresh's thread cannot be cancelled, so one started over it (a tick,
        # `r`) would run beside it, and a Prometheus slower than the interval would pile them up.
        if self.loading:
            return
        self.loading = True
        state = replace(self.state, expanded=set(self.state.expanded))
        shown = None
        try:
            model, shown = await asyncio.to_thread(self._fetch, state)
        except PromError as e:
            self.error = str(e)
        else:
            self.model, self.error, self.refreshed = model, "", time.time()
        finally:
            self.loading = False
        if not self.query(FleetTable):  # the screen went (the app quit) while the thread read
            return
        # The rows the thread ordered, unless a key changed the order meanwhile.
        self.rebuild(shown if shown is not None and state.rows_key() == self.state.rows_key() else None)
        if isinstance(self.app, Paced):
            self.call_after_refresh(self.app.gc_pacer.after_frame)

    def _fetch(self, state: ViewState) -> tuple[FleetRows, list[Row]]:
        """The fleet and the rows shown in `state`'s order, made off the screen's loop."""
        return refreshed(self.load(), state, cell_len)

    def rebuild(self, shown: list[Row] | None = None) -> None:
        """The rows again (`shown`: already in order), after new figures or another sort, filter
        or expand: the cursor stays on its row when the row is still shown."""
        self.shown = shown if shown is not None else self.model.rows(self.state)
        titles = [c.title + ((" ▼" if self.state.reverse else " ▲") if c.key == self.state.sort else "")
                  for c in COLUMNS]
        keep = self.state.cursor
        cursor = next((i for i, r in enumerate(self.shown) if r.key == keep), 0)
        self.query_one(FleetTable).show(self.shown, titles, self.model.widths(cell_len), cursor)
        self.show_title()
        self.show_detail()

    def show_title(self) -> None:
        n = len(self.hosts)
        flagged = sum(bool(h.flags) for h in self.hosts)
        parts = [f"fleet · {self.where} · {n} host{'s' * (n != 1)} · {flagged} flagged"]
        if self.state.filter:
            parts.append(f"filter {self.state.filter!r}: {sum(r.rank is None for r in self.shown)} shown")
        if self.state.flagged_only:
            parts.append("flagged only")
        if self.refreshed is not None:
            parts.append(f"at {time.strftime('%H:%M:%S', time.localtime(self.refreshed))}, every {self.interval:g} s")
        hidden = self.query_one(FleetTable).hidden
        if hidden:
            parts.append(f"{len(hidden)} column{'s' * (len(hidden) != 1)} hidden")
        text = Text(" · ".join(parts))
        if self.error:
            text.append(f" · {self.error}", style=f"bold {self.app.current_theme.error or 'red'}")
        self.query_one("#fleet-title", Static).update(text, layout=False)  # one line, always

    def current(self) -> Row | None:
        table = self.query_one(FleetTable)
        if not self.shown or not 0 <= table.cursor_row < len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def show_detail(self) -> None:
        row = self.current()
        detail = Text()
        if row is None:
            detail.append("no hosts" + (" match" if self.state.filter or self.state.flagged_only else
                                        ": Prometheus has no sglang:* or mtptui_* series"), style="dim")
        else:
            h = row.host
            detail.append(f"{h.host} ({h.source}): ", style="bold")
            detail.append(", ".join(f"{k} {v}" for k, v in h.spec.items() if v not in (None, "")) or "settings unknown")
            # The figures of the columns left out to fit the width (source and settings are above).
            hidden = self.query_one(FleetTable).hidden
            more = [f"{COLUMNS[i].title} {row.cells[i]}" for i, k in enumerate(COLUMN_KEYS)
                    if k in hidden and k not in ("source", "settings") and row.cells[i]]
            if more:
                detail.append("\n" + " · ".join(more))
            flags = [f for f in h.flags if row.rank is None or f.rank == row.rank.rank]
            for f in flags:
                detail.append(f"\n{f.kind}: ", style=f"bold {self.app.current_theme.error or 'red'}")
                detail.append(f.text)
            if not flags:
                detail.append("\nno flags", style="dim")
        box = self.query_one("#fleet-detail", Static)
        # A new layout only when the box may change height: one per cursor move redraws the screen.
        lines = detail.plain.split("\n")
        shape = len(lines) if all(cell_len(line) <= box.content_size.width for line in lines) else None
        box.update(detail, layout=shape is None or shape != self.detail_shape)
        self.detail_shape = shape

    @on(FleetTable.Fitted)
    def _fitted(self) -> None:
        self.show_title()
        self.show_detail()

    @on(FleetTable.RowHighlighted)
    def _highlighted(self, event: FleetTable.RowHighlighted) -> None:
        self.state.cursor = event.row.key
        self.show_detail()

    # -- keys ------------------------------------------------------------------------------------
    @on(FleetTable.RowSelected)
    def _open(self, event: FleetTable.RowSelected) -> None:
        why = self.open_host(event.row.host)
        if why:
            self.notify(why, severity="error", timeout=8, markup=False)

    @on(FleetTable.HeaderSelected)
    def _header(self, event: FleetTable.HeaderSelected) -> None:
        self.sort_by(event.column)

    def sort_by(self, key: str) -> None:
        if key == self.state.sort:
            self.state.reverse = not self.state.reverse
        else:
            self.state.sort, self.state.reverse = key, False
        self.rebuild()

    def action_sort_next(self) -> None:
        i = COLUMN_KEYS.index(self.state.sort)
        self.state.sort = COLUMN_KEYS[(i + 1) % len(COLUMN_KEYS)]
        self.rebuild()

    def action_sort_reverse(self) -> None:
        self.state.reverse = not self.state.reverse
        self.rebuild()

    def action_toggle(self) -> None:  # type: ignore[override]  # the fleet's own `toggle` key (config/keys.py), not DOMNode.toggle(attribute)
        row = self.current()
        if row is None:
            return
        key = host_key(row.host)
        self.state.expanded ^= {key}
        self.state.cursor = key
        self.rebuild()

    def action_toggle_all(self) -> None:
        every = {host_key(h) for h in self.hosts}
        self.state.expanded = set() if self.state.expanded >= every else every
        row = self.current()
        if row is not None:
            self.state.cursor = host_key(row.host)
        self.rebuild()

    def action_flagged(self) -> None:
        self.state.flagged_only = not self.state.flagged_only
        self.rebuild()

    def action_ask(self, what: str) -> None:
        self.asking = what
        box = self.query_one(Input)
        box.placeholder = ("filter: host, source, settings or flag (Enter keeps it, Escape clears)"
                           if what == "filter" else "find: host, settings or flag (Enter jumps, n the next)")
        box.value = self.state.filter if what == "filter" else self.find_term
        box.add_class("-open")
        box.focus()

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        if self.asking == "filter":
            self.state.filter = event.value
            self.rebuild()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if self.asking == "find":
            self.find_term = event.value
            self.close_input()
            self.action_find_next()
        else:
            self.close_input()

    def close_input(self) -> None:
        self.asking = ""
        self.query_one(Input).remove_class("-open")
        self.query_one(FleetTable).focus()

    def action_clear(self) -> None:
        if self.asking == "filter" or (not self.asking and self.state.filter):
            self.state.filter = ""
            self.rebuild()
        self.close_input()

    def action_find_next(self) -> None:
        if not self.find_term or not self.shown:
            return
        table = self.query_one(FleetTable)
        n = len(self.shown)
        for step in range(1, n + 1):
            i = (table.cursor_row + step) % n
            if matches(self.shown[i], self.find_term):
                table.move_cursor(i)
                return
        self.notify(f"not found: {self.find_term}", timeout=3, markup=False)
