"""The fleet table: a header and the rows of mtptui.fleet.table, drawn only where they are in view.

A sort, a filter, an expand or a refresh hands over a new list of rows and redraws the lines on
screen: nothing is measured or styled per row ahead of time. (Textual's DataTable measures each
cell as it is added: a fleet of 1,000 hosts with their 8,000 ranks took seconds to sort or expand.)
Keys: up, down, page up/down, home, end move the cursor; Enter selects its row. A click on a
header selects that column; a click on a row moves the cursor there, and a click on the cursor's
row selects it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from mtptui.fleet.table import COLUMN_KEYS, COLUMNS, Row, fitted
from mtptui.tui.bindings import bindings_for

PAD = 1  # blank cells each side of a cell, as DataTable draws them


class FleetTable(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    FleetTable {
        background: $surface;
        color: $foreground;
        &:focus {
            background-tint: $foreground 5%;
            & > .fleet-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .fleet-table--header { background-tint: $foreground 5%; }
        }
        &:dark > .fleet-table--even-row { background: $surface-darken-1 40%; }
        & > .fleet-table--header { text-style: bold; background: $panel; color: $foreground; }
        & > .fleet-table--even-row { background: $surface-lighten-1 50%; }
        & > .fleet-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .fleet-table--flags { color: $error; text-style: bold; }
        & > .fleet-table--host { text-style: bold; }
    }
    """
    COMPONENT_CLASSES = {"fleet-table--header", "fleet-table--even-row", "fleet-table--cursor",
                         "fleet-table--flags", "fleet-table--host"}
    BINDINGS = bindings_for("fleet_table")

    class RowHighlighted(Message):
        """The cursor moved to another row (by a key, a click or move_cursor)."""

        def __init__(self, index: int, row: Row) -> None:
            super().__init__()
            self.index, self.row = index, row

    class RowSelected(Message):
        def __init__(self, index: int, row: Row) -> None:
            super().__init__()
            self.index, self.row = index, row

    class HeaderSelected(Message):
        def __init__(self, column: str) -> None:
            super().__init__()
            self.column = column

    class Fitted(Message):
        """The columns left out to fit the width changed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []
        self.titles: tuple[str, ...] = tuple(c.title for c in COLUMNS)
        self.widths: tuple[int, ...] = tuple(cell_len(t) for t in self.titles)
        self.drawn: tuple[int, ...] = tuple(range(len(COLUMNS)))  # the columns that fit (see fitted)
        self.cursor_row = 0
        # drawn rows and the style that fills them to the width, until the rows or styles change
        self._lines: dict[tuple[int, bool], tuple[Strip, Style]] = {}
        self._base: Style | None = None  # the widget's own style (it changes with focus)

    # -- what it shows ---------------------------------------------------------------------------
    def show(self, rows: list[Row], titles: Sequence[str], widths: Sequence[int], cursor: int = 0) -> None:
        """New rows (titles: each column's header; widths: its widest cell), the cursor on row
        `cursor`, scrolled so that it is in view."""
        self.rows = rows
        self.titles = tuple(titles)
        self.widths = tuple(max(w, cell_len(t)) for w, t in zip(widths, self.titles))
        self._fit()
        self.cursor_row = max(0, min(cursor, len(rows) - 1))
        self._follow_cursor()
        self.refresh()

    def _fit(self) -> None:
        """The columns that fit the width (a vertical scrollbar's room kept), and the size to scroll."""
        room = self.size.width - self.styles.scrollbar_size_vertical
        drawn = fitted(self.widths, room, 2 * PAD) if room > 0 else self.drawn
        if drawn != self.drawn:
            self.drawn = drawn
            self.post_message(self.Fitted())
        self._lines.clear()
        self.virtual_size = Size(sum(self.widths[i] + 2 * PAD for i in self.drawn), len(self.rows) + 1)

    def on_resize(self) -> None:
        self._fit()
        self.refresh()

    @property
    def hidden(self) -> list[str]:
        """The keys of the columns left out to fit the width."""
        return [k for i, k in enumerate(COLUMN_KEYS) if i not in self.drawn]

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def header(self, key: str) -> str:
        return self.titles[COLUMN_KEYS.index(key)]

    def column(self, key: str) -> list[str]:
        """The cells of one column, top to bottom."""
        i = COLUMN_KEYS.index(key)
        return [r.cells[i] for r in self.rows]

    # -- the cursor ------------------------------------------------------------------------------
    def move_cursor(self, row: int) -> None:
        row = max(0, min(row, len(self.rows) - 1))
        if row != self.cursor_row and self.rows:
            self.refresh_line(self.cursor_row + 1)  # the two rows redrawn, not the screenful
            self.refresh_line(row + 1)
            self.cursor_row = row
            self.post_message(self.RowHighlighted(row, self.rows[row]))
        self._follow_cursor()

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)  # the header stays

    def _follow_cursor(self) -> None:
        top, page = round(self.scroll_y), self._page()
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + page:
            self.scroll_to(y=self.cursor_row - page + 1, animate=False, immediate=True)

    def action_move(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_page(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step * self._page())

    def action_edge(self, end: int) -> None:
        self.move_cursor(len(self.rows) - 1 if end else 0)

    def action_select(self) -> None:
        if self.rows:
            self.post_message(self.RowSelected(self.cursor_row, self.rows[self.cursor_row]))

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        x, y = offset.x + round(self.scroll_x), offset.y
        if y == 0:
            for i in self.drawn:
                x -= self.widths[i] + 2 * PAD
                if x < 0:
                    self.post_message(self.HeaderSelected(COLUMN_KEYS[i]))
                    return
            return
        row = round(self.scroll_y) + y - 1
        if row == self.cursor_row:
            self.action_select()
        elif row < len(self.rows):
            self.move_cursor(row)

    # -- drawing ---------------------------------------------------------------------------------
    def _restyle(self) -> None:
        self._lines.clear()
        self._base = None

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._restyle()

    def on_focus(self, event) -> None:
        self._restyle()  # the colours change with focus

    def on_blur(self, event) -> None:
        self._restyle()

    @property
    def base_style(self) -> Style:
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        if y == 0:
            line, fill = self._line(-1, False)
        else:
            i = scroll_y + y - 1
            if i >= len(self.rows):
                return Strip.blank(width, self.base_style)
            line, fill = self._line(i, i == self.cursor_row)
        return line.crop_extend(scroll_x, scroll_x + width, fill)

    def _line(self, i: int, cursor: bool) -> tuple[Strip, Style]:
        got = self._lines.get((i, cursor))
        if got is not None:
            return got
        if len(self._lines) > 1000:  # paged through thousands of rows: keep what is near
            self._lines.clear()
        style = self.get_component_rich_style
        if i < 0:
            base, cells, row = self.base_style + style("fleet-table--header"), self.titles, None
        else:
            row = self.rows[i]
            base = self.base_style + (style("fleet-table--even-row") if i % 2 == 0 else Style())
            cells = row.cells
        if cursor:
            base += style("fleet-table--cursor")
        segments = []
        for col in self.drawn:
            c, w, text = COLUMNS[col], self.widths[col], cells[col]
            cell = base
            if row is not None and text:
                if c.key == "flags":
                    cell += style("fleet-table--flags", partial=True)
                elif c.key == "host" and row.rank is None:
                    cell += style("fleet-table--host", partial=True)
                if cursor:  # the cursor's colours win over a cell's own
                    cell += Style(color=base.color, bgcolor=base.bgcolor)
            fill = " " * (w - cell_len(text))
            text = fill + text if c.numeric else text + fill
            segments.append(Segment(" " * PAD + text + " " * PAD, cell))
        got = self._lines[(i, cursor)] = (Strip(segments), base)
        return got
