"""The rank grid: one panel per rank, with its state badges, numbers and sparklines.

A panel answers, for one scheduler rank over the chosen window: is speculation on (accept len
present), how well it accepts, what it generates, and whether its decode uses graphs and is
still logging. Numbers are the window's last value, min, mean and max.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.content import Content
from textual.widget import Widget

from mtptui.tui.viewmodel import (MAIN_METRICS, METRICS, SMALL_METRICS, SPEC_OFF, SPEC_ON, PanelView,
                                  fmt_value, rank_label)

from mtptui.tui.widgets.rank_table import RankTable  # noqa: E402

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


class RankPanel(Widget):
    """One rank: a single widget that renders all its rows itself.

    Rows: the column heads; for accept len, accept rate and gen tok/s a row of numbers and a
    sparkline; then running, queue and KV use with small sparklines. One widget rather than a
    dozen Statics and Sparklines: under a flood every number changes on every redraw, and the
    cost of a frame is per widget.
    """

    DEFAULT_CSS = """
    RankPanel { height: 11; border: round $frame; padding: 0 0 0 1;
                border-subtitle-align: left; border-subtitle-color: $text-muted; }
    RankPanel.-focused { border: heavy $accent; }
    """

    def __init__(self, rank: str, index: int) -> None:
        super().__init__(classes="rank-panel")
        self.rank = rank
        self.index = index
        self.view: PanelView | None = None
        self._title: Content | None = None
        self._note: str | None = None

    def show(self, v: PanelView, focused: bool) -> None:
        self.view = v
        self.set_class(focused, "-focused")
        title = Content.assemble((f"{self.index}", "$text-muted"), " ", (rank_label(v.rank), "bold $text"), " ",
                                 badges(v))
        if title != self._title:
            self._title = title
            self.border_title = title
        notes = []
        if v.max_accept_len and v.metrics["accept_len"].stats:
            notes.append(f"accept len ≤ {v.max_accept_len} (steps+1)")
        if v.graph_off:
            notes.append(f"no graphs {v.graph_off}/{v.decode_batches} batches")
        if v.spec == SPEC_OFF and v.spec_configured:
            notes.append("configured, yet no accept len")
        if v.truncated:
            notes.append("buffer shorter than window")
        note = " · ".join(notes)
        if note != self._note:
            self._note = note
            # In the bottom border: a row saved per panel, so two rows of panels fit on 48 lines.
            self.border_subtitle = Content(note)
        self.refresh()

    def render(self):
        v = self.view
        if v is None:
            return Content("")
        width = max(10, self.size.width)
        styles = spark_styles(self)
        lines: list[Content] = [Content(f"{'':<11}{'now':>6}{'min':>6}{'mean':>6}{'max':>6}").stylize("$text-muted")]
        for m in MAIN_METRICS:
            st = v.metrics[m].stats
            lines.append(Content(f"{METRICS[m].label:<11}{fmt_value(m, v.now.get(m)):>6}{_num(m, st, 'min'):>6}"
                                 f"{_num(m, st, 'mean'):>6}{_num(m, st, 'max'):>6}"))
            lines.append(spark(v.metrics[m].spark, width - 1, styles))
        col = width // len(SMALL_METRICS)
        heads, sparks = [], []
        for m in SMALL_METRICS:
            text = f"{METRICS[m].label} {fmt_value(m, v.now.get(m))}"
            heads.append(Content.assemble((METRICS[m].label + " ", "$text-muted"), fmt_value(m, v.now.get(m)),
                                          " " * max(0, col - len(text))))
            sparks.append(spark(v.metrics[m].spark, col - 1, styles) + Content(" "))
        lines.append(Content.assemble(*heads))
        lines.append(Content.assemble(*sparks))
        return Content("\n").join(lines)


BARS = "▁▂▃▄▅▆▇█"


def spark_styles(widget: Widget) -> list[str]:
    """Eight colours from the theme: primary at 30% over the background, up to primary."""
    from textual.color import Color

    app = widget.app
    key = app.theme
    cache = getattr(app, "_spark_styles", None)
    if cache is not None and cache[0] == key:
        return cache[1]
    tv = app.theme_variables
    primary = Color.parse(tv.get("primary", "#4FA3E0"))
    background = Color.parse(tv.get("background", "#12161C"))
    lo = background.blend(primary, 0.3)
    styles = [lo.blend(primary, i / 7).hex for i in range(8)]
    app._spark_styles = (key, styles)
    return styles


def spark(values: list[float], width: int, styles: list[str]) -> Content:
    """A one-line sparkline of `width` cells: one bucket mean per cell, eight heights."""
    width = max(1, width)
    if not values:
        return Content(BARS[0] * width).stylize(styles[0])
    n = len(values)
    if n != width:
        cells = []
        for c in range(width):
            a = c * n // width
            b = max(a + 1, (c + 1) * n // width)
            chunk = values[a:b]
            cells.append(sum(chunk) / len(chunk))
        values = cells
    lo, hi = min(values), max(values)
    extent = hi - lo
    levels = [0 if extent == 0 else int((x - lo) / extent * 7.999) for x in values]  # flat: a baseline
    # Runs of one level share a span: fewer spans, cheaper to draw.
    parts: list[tuple[str, str]] = []
    run_level, run_len = levels[0], 0
    for level in levels:
        if level == run_level:
            run_len += 1
        else:
            parts.append((BARS[run_level] * run_len, styles[run_level]))
            run_level, run_len = level, 1
    parts.append((BARS[run_level] * run_len, styles[run_level]))
    return Content.assemble(*parts)


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
