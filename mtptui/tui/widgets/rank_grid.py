"""The rank grid: one panel per rank, with its state badges, numbers and sparklines.

A panel answers, for one scheduler rank over the chosen window: is speculation on (accept len
present), how well it accepts, what it generates, and whether its decode uses graphs and is
still logging. Numbers are the window's last value, min, mean and max.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Container, Horizontal, Vertical
from textual.content import Content
from textual.widgets import Sparkline, Static

from mtptui.tui.widgets.rank_table import RankTable

from mtptui.tui.viewmodel import (MAIN_METRICS, METRICS, SMALL_METRICS, SPEC_OFF, SPEC_ON, PanelView,
                                  fmt_value, rank_label)

PANEL_MIN_WIDTH = 38  # 11 label + 4 numbers x 6 + border and padding


def _num(metric: str, stats: dict | None, key: str) -> str:
    return fmt_value(metric, None if stats is None else stats[key])


def badges(v: PanelView) -> Content:
    parts: list[tuple[str, str] | str] = []
    if v.spec == SPEC_ON:
        parts.append((" SPEC ON ", "bold $text on $success"))
    elif v.spec == SPEC_OFF:
        style = "bold $text on $error" if v.spec_configured else "bold $text on $panel-lighten-2"
        parts.append((" SPEC OFF ", style))
    else:
        parts.append((" no decode yet ", "$text-muted"))
    if v.graph_off_now:
        parts += [" ", (" GRAPH OFF ", "bold $text on $warning")]
    elif v.graph_off:
        parts += [" ", (f"graph off {v.graph_off}x", "$warning")]
    if v.stale_s is not None:
        parts += [" ", (f" STALE {v.stale_s:.0f}s ", "bold $text on $error")]
    return Content.assemble(*parts)


class MetricRow(Static):
    """`accept len   2.87   2.10   2.80   3.10` (now, min, mean, max)."""


class RankPanel(Vertical):
    DEFAULT_CSS = """
    RankPanel { height: auto; border: round $panel-lighten-2; padding: 0 0 0 1; }
    RankPanel.-focused { border: heavy $accent; }
    RankPanel .head { color: $text-muted; height: 1; }
    RankPanel MetricRow { height: 1; }
    RankPanel Sparkline { height: 1; margin-bottom: 0; }
    RankPanel .small { height: 2; }
    RankPanel .small Vertical { width: 1fr; height: 2; }
    RankPanel .small Static { height: 1; }
    RankPanel .note { height: auto; color: $text-muted; }
    """

    def __init__(self, rank: str, index: int) -> None:
        super().__init__(classes="rank-panel")
        self.rank = rank
        self.index = index
        self._pending: tuple[PanelView, bool] | None = None
        self._ready = False
        self._rows: dict[str, Static] = {}
        self._sparks: dict[str, Sparkline] = {}
        self._note = Static("", classes="note")
        self._texts: dict[str, str] = {}
        self._title: Content | None = None

    def compose(self) -> ComposeResult:
        yield Static(f"{'':<11}{'now':>6}{'min':>6}{'mean':>6}{'max':>6}", classes="head")
        for m in MAIN_METRICS:
            self._rows[m] = MetricRow("")
            self._sparks[m] = Sparkline([], summary_function=_mean)
            yield self._rows[m]
            yield self._sparks[m]
        with Horizontal(classes="small"):
            for m in SMALL_METRICS:
                self._rows[m] = Static("")
                self._sparks[m] = Sparkline([], summary_function=_mean)
                with Vertical():
                    yield self._rows[m]
                    yield self._sparks[m]
        yield self._note

    def on_mount(self) -> None:
        self._ready = True
        if self._pending is not None:
            self.show(*self._pending)

    def show(self, v: PanelView, focused: bool) -> None:
        if not self._ready:
            self._pending = (v, focused)
            return
        self._pending = None
        self.set_class(focused, "-focused")
        title = Content.assemble((f"{self.index}", "$text-muted"), " ", (rank_label(v.rank), "bold $text"), " ",
                                 badges(v))
        if title != self._title:
            self._title = title
            self.border_title = title
        # Each row is one line of fixed width: updated without a layout pass, and only when its
        # text changed (a full relayout per tick is what makes a busy dashboard slow).
        for m in MAIN_METRICS:
            mv = v.metrics[m]
            st = mv.stats
            label = METRICS[m].label
            row = (f"{label:<11}{fmt_value(m, v.now.get(m)):>6}{_num(m, st, 'min'):>6}"
                   f"{_num(m, st, 'mean'):>6}{_num(m, st, 'max'):>6}")
            self._set_row(m, row, Content(row))
            self._set_spark(m, mv.spark)
        for m in SMALL_METRICS:
            mv = v.metrics[m]
            value = fmt_value(m, v.now.get(m))
            self._set_row(m, value, Content.assemble((METRICS[m].label + " ", "$text-muted"), value))
            self._set_spark(m, mv.spark)
        notes = []
        if v.max_accept_len and v.metrics["accept_len"].stats:
            notes.append(f"accept len max {v.max_accept_len} (steps+1)")
        if v.graph_off:
            notes.append(f"{v.graph_off}/{v.decode_batches} decode batches without graphs")
        if v.spec == SPEC_OFF and v.spec_configured:
            notes.append("configured, but decode lines carry no accept len")
        if v.truncated:
            notes.append("window older than the buffer: newest samples only")
        note = " · ".join(notes)
        if note != self._texts.get("note"):
            self._texts["note"] = note
            self._note.update(Content(note))

    def _set_row(self, m: str, key: str, content: Content) -> None:
        if self._texts.get(m) != key:
            self._texts[m] = key
            self._rows[m].update(content, layout=False)

    def _set_spark(self, m: str, data: list[float]) -> None:
        data = data or [0.0]
        if self._sparks[m].data != data:
            self._sparks[m].data = data


def _mean(values) -> float:
    return sum(values) / len(values)


class RankGrid(Vertical):
    """Panels in a grid whose column count follows the width; when the panels would take more
    than half the screen's height, a table with one row per rank instead."""

    DEFAULT_CSS = """
    RankGrid { height: auto; }
    RankGrid #panels { layout: grid; grid-size: 4; grid-gutter: 0 1; height: auto; }
    """
    PANEL_HEIGHT = 11

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._ranks: list[str] = []
        self._panels: list[RankPanel] = []
        self._grid = Container(id="panels")
        self._table = RankTable()
        self._table.display = False
        self.table_mode = False

    def compose(self) -> ComposeResult:
        yield self._grid
        yield self._table

    def show(self, views: list[PanelView], focused: str | None) -> None:
        self._choose_mode(len(views))
        if self.table_mode:
            self._table.show(views, focused)
            return
        ranks = [v.rank for v in views]
        if ranks != self._ranks:
            self._ranks = ranks
            self._grid.remove_children()
            self._panels = [RankPanel(r, i + 1) for i, r in enumerate(ranks)]
            self._grid.mount_all(self._panels)
        for panel, v in zip(self._panels, views):
            panel.show(v, focused is not None and v.rank == focused)

    def _columns(self, n: int) -> int:
        width = self.app.size.width
        return max(1, min(max(1, n), width // PANEL_MIN_WIDTH))

    def _choose_mode(self, n: int) -> None:
        cols = self._columns(n)
        rows = -(-max(1, n) // cols)
        table = rows * self.PANEL_HEIGHT > self.app.size.height // 2
        self._grid.styles.grid_size_columns = cols
        if table != self.table_mode:
            self.table_mode = table
            self._grid.display = not table
            self._table.display = table
