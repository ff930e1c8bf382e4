"""The rank grid: one panel per rank, with its state badges, numbers and sparklines.

A panel answers, for one scheduler rank over the chosen window: is speculation on (accept len
present), how well it accepts, what it generates, and whether its decode uses graphs and is
still logging. Numbers are the window's last value, min, mean and max.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.containers import Container, Vertical, VerticalScroll
from textual.content import Content
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from mtptui.core.alerts import BADGE, ERROR, Alert
from mtptui.core.epochs import rank_label
from mtptui.tui.viewmodel import (LOADING, MAIN_METRICS, METRICS, NOT_DECODING, SMALL_METRICS, SPEC_OFF, SPEC_ON,
                                  WAITING, PanelView, fmt_value, steps_now)
from mtptui.tui.widgets.rank_table import HEAD_ROWS, RankTable, alert_style, state_style, state_text

PANEL_MIN_WIDTH = 38  # 11 label + 4 numbers x 6 + border and padding
# The steps in use where the engine adapts (SGLang's tier, vLLM's drafts per step: core/adaptive.py),
# and the small row's labels where four columns leave too little room for the long ones
STEPS_LABEL = "steps"
SHORT_LABELS = {"running": "run", "KV use": "KV", STEPS_LABEL: "K"}


def _num(metric: str, stats: dict | None, key: str) -> str:
    return fmt_value(metric, None if stats is None else stats[key])


def badges(v: PanelView, alerts: Sequence[Alert] = ()) -> Content:
    """State badges; while an alert holds on the rank its state badge takes the alert's colour
    (never a green SPEC ON over a collapse), with a ⚠ after it (the bottom border names them)."""
    parts: list[tuple[str, str] | str] = []
    warn = alert_style(alerts)
    if v.spec in NOT_DECODING:
        parts.append((f" {state_text(v)} ", state_style(v)))
    elif v.spec == SPEC_ON:
        parts.append((" SPEC ON ", warn or "bold $text on $success"))
    elif v.spec == SPEC_OFF:
        style = "bold $text on $error" if v.spec_configured else (warn or "bold $text on $panel-lighten-2")
        parts.append((" SPEC OFF ", style))
    else:
        parts.append((" no decode yet ", "$text-muted"))
    if v.graph_off_now:
        parts += [" ", (" GRAPH OFF ", "bold $text on $warning")]
    elif v.graph_off:
        parts += [" ", (f"graph off {v.graph_off}x", "$warning")]
    if v.stale_s is not None:
        parts += [" ", (f" STALE {v.stale_s:.0f}s ", "bold $text on $error")]
    if v.fell is not None:
        parts += [" ", (f" TOK/S FELL AT {v.fell.edge}+ ", "bold $text on $warning")]
    if alerts:
        parts += [" ", ("⚠", f"bold {alert_colour(alerts)}")]
    return Content.assemble(*parts)


TITLE_PAD = 4  # a border title's corners and the spaces about it


def short_rank(rank: str) -> str:
    """`DP3` for `DP3 TP3 EP3`, `TP0` for `pid=41820 TP0`: the token that names the rank."""
    tokens = rank_label(rank).split()
    return next((t for t in tokens if t.startswith("DP")), tokens[-1]) if tokens else rank_label(rank)


def panel_title(index: int, rank: str, marks: Content, width: int) -> Content:
    """A panel's title in `width` cells (no limit while it is not laid out): its index, its rank
    and the badges, the longest form that fits; the badges stay whole whatever is left out."""
    label = rank_label(rank)
    forms = [Content.assemble((f"{index}", "$text-muted"), " ", (label, "bold $text"), " ", marks),
             Content.assemble((f"{index}", "$text-muted"), " ", (short_rank(rank), "bold $text"), " ", marks),
             Content.assemble((short_rank(rank), "bold $text"), " ", marks), marks]
    return next((f for f in forms if width <= 0 or f.cell_length <= width), forms[-1])


def alert_colour(alerts: Sequence[Alert]) -> str:
    return "$error" if alerts[0].severity == ERROR else "$warning"


def alert_words(alerts: Sequence[Alert]) -> str:
    """`accept len 1, accept rate low`: what holds on the rank, a word or two each."""
    return ", ".join(dict.fromkeys(BADGE.get(a.kind, a.kind) for a in alerts))


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
        self._alerts: Sequence[Alert] = ()
        self._title: Content | None = None
        self._note: Content | None = None
        self._strips: list[Strip] | None = None
        self._strips_key: tuple | None = None  # (width, theme, visual style) they were built for
        self._styles_for: tuple | None = None  # ((theme, visual style), the styles resolved for them)

    def show(self, v: PanelView, focused: bool, alerts: Sequence[Alert] = ()) -> None:
        self.set_class(focused, "-focused")
        if v is self.view and alerts == self._alerts:
            return  # the same numbers (a key's frame): nothing to render again
        self.view = v
        self._alerts = alerts
        self.fit_title()
        notes = [v.fell.words()] if v.fell is not None else []  # first: what the title's badge means
        if v.max_accept_len and v.metrics["accept_len"].stats:
            notes.append(f"accept len ≤ {v.max_accept_len} (steps+1)")
        if v.graph_off:
            notes.append(f"no graphs {v.graph_off}/{v.decode_batches} batches")
        if v.spec == SPEC_OFF and v.spec_configured:
            notes.append("configured, yet no accept len")
        if v.spec in (LOADING, WAITING):
            notes.append("no decode line in this run yet")
        if v.truncated:
            notes.append("buffer shorter than window")
        note = Content(" · ".join(notes))
        if alerts:  # first: the title has room for the badge's ⚠ only
            words = Content.styled("⚠ " + alert_words(alerts), f"bold {alert_colour(alerts)}")
            note = Content(" · ").join([words, note]) if notes else words
        if note != self._note:
            self._note = note
            # In the bottom border: a row saved per panel, so two rows of panels fit on 48 lines.
            self.border_subtitle = note
        self.refresh_strips()

    def on_resize(self) -> None:
        if self.view is not None:
            self.fit_title()

    def fit_title(self) -> None:
        """The title, whole in the top border (a cut would leave `STALE 3…`): the rank's label,
        then the index, shortened or left out before a badge is."""
        v = self.view
        if v is None:
            return
        title = panel_title(self.index, v.rank, badges(v, self._alerts), self.size.width - TITLE_PAD)
        if title != self._title:
            self._title = title
            self.border_title = title

    # -- drawing: the Line API, with strips built straight from segments. Under a flood every
    # panel is redrawn on each data frame, and going through Content (style parsing, wrapping)
    # cost about 2 ms a panel; the styles are resolved once per theme instead.
    ROWS = 1 + 2 * len(MAIN_METRICS) + 2  # heads; number and spark rows; small heads and sparks

    def get_content_height(self, container, viewport, width: int) -> int:
        return self.ROWS  # the grid sizes its rows by content height

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        key = (width, self.app.theme, self.visual_style)
        if self._strips is None or self._strips_key != key:
            if self._styles_for is None or self._styles_for[0] != key[1:]:
                self._styles_for = (key[1:], self._styles())
            self._strips = self._build_strips(max(10, width), self._styles_for[1])
            self._strips_key = key
        if y < len(self._strips):
            return self._strips[y]
        return Strip.blank(width, self.visual_style.rich_style)

    def _styles(self) -> tuple[Style, Style, list[Style]]:
        """(plain, muted, the eight spark colours) as this panel draws them: each resolved by
        Textual from the theme, through the same path as any widget's text."""
        def resolve(spec: str) -> Style:
            content = Content.styled("x", spec) if spec else Content("x")
            strip = Visual.to_strips(self, content, 1, 1, self.visual_style)[0]
            return next((seg.style for seg in strip if seg.text and seg.style), Style())

        sparks = [resolve(c) for c in spark_styles(self)]
        return resolve(""), resolve("$text-muted"), sparks

    def _build_strips(self, width: int, styles: tuple[Style, Style, list[Style]]) -> list[Strip]:
        v = self.view
        plain_style, muted, sparks = styles
        if v is None:
            return []
        rows: list[list[Segment]] = [[Segment(f"{v.scope:<11.11}{'now':>6}{'min':>6}{'mean':>6}{'max':>6}", muted)]]
        for m in MAIN_METRICS:
            st = v.metrics[m].stats
            rows.append([Segment(f"{METRICS[m].label:<11}{fmt_value(m, v.now.get(m)):>6}{_num(m, st, 'min'):>6}"
                                 f"{_num(m, st, 'mean'):>6}{_num(m, st, 'max'):>6}", plain_style)])
            rows.append(spark_segments(v.metrics[m].spark, width - 1, sparks, v.scales.get(m)))
        # (label, value, spark cells, scale): the batch size, queue and KV use, and beside them,
        # where the engine adapts, the steps it drafts (shorter labels then: four to a row)
        cols = [(METRICS[m].label, fmt_value(m, v.now.get(m)), v.metrics[m].spark, v.scales.get(m))
                for m in SMALL_METRICS]
        if v.steps is not None:
            now = steps_now(v)
            cols.append((STEPS_LABEL, "-" if now is None else f"{now:.1f}", v.steps.spark, v.steps_scale))
        col = width // len(cols)
        heads: list[Segment] = []
        small: list[Segment] = []
        for label, value, spark, scale in cols:
            if len(label) + 1 + len(value) >= col:
                label = SHORT_LABELS.get(label, label)
            label += " "
            heads += [Segment(label, muted), Segment(value, plain_style),
                      Segment(" " * max(1, col - len(label) - len(value)), plain_style)]
            small += spark_segments(spark, col - 1, sparks, scale) + [Segment(" ", plain_style)]
        rows += [heads, small]
        return [Strip(row).crop_extend(0, width, plain_style) for row in rows]

    def refresh_strips(self) -> None:
        self._strips = None
        self.refresh()


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
    setattr(app, "_spark_styles", (key, styles))  # per app (its theme): kept on it, as read above
    return styles


def spark_levels(cells: list[float | None], width: int, scale: tuple[float, float] | None = None) -> list[int | None]:
    """One height 0-7 per cell of a `width`-cell sparkline, or None where there is no data (drawn
    empty). Each cell is the mean of the time cells under it; heights are on `scale` (lo, hi),
    the same for every panel of a host (else the cells' own min and max)."""
    width = max(1, width)
    n = len(cells)
    if not n:
        return [None] * width
    if n != width:
        out: list[float | None] = []
        for c in range(width):
            a = c * n // width
            b = max(a + 1, (c + 1) * n // width)
            chunk = [x for x in cells[a:b] if x is not None]
            out.append(sum(chunk) / len(chunk) if chunk else None)
        cells = out
    if scale is None:
        seen = [x for x in cells if x is not None]
        scale = (min(seen), max(seen)) if seen else (0.0, 1.0)
    lo, hi = scale
    extent = hi - lo
    return [None if x is None else 0 if extent <= 0 else max(0, min(7, int((x - lo) / extent * 7.999)))
            for x in cells]


def spark_text(cells: list[float | None], width: int, scale: tuple[float, float] | None = None) -> str:
    """The sparkline as text: a bar per cell, a space where there is no data."""
    return "".join(" " if level is None else BARS[level] for level in spark_levels(cells, width, scale))


def spark_segments(cells: list[float | None], width: int, styles: list[Style],
                   scale: tuple[float, float] | None = None) -> list[Segment]:
    """A sparkline as segments: runs of one height share a segment (fewer, cheaper to draw)."""
    levels = spark_levels(cells, width, scale)
    out: list[Segment] = []
    run_level, run_len = levels[0], 0
    for level in levels + [-1]:  # -1: a sentinel that ends the last run
        if level == run_level:
            run_len += 1
            continue
        if run_level is None:
            out.append(Segment(" " * run_len, styles[0]))  # no data: nothing drawn, not a low bar
        else:
            out.append(Segment(BARS[run_level] * run_len, styles[run_level]))
        run_level, run_len = level, 1
    return out


class RankScroll(VerticalScroll):
    """The box the grid sits in: its max-height (app.tcss) is the grid's room, and r enlarges it.
    Enlarged with panels in it, it gets a frame whose title says how to shrink it again (the
    table says so in its own title)."""

    ALLOW_MAXIMIZE = True
    DEFAULT_CSS = """
    RankScroll.-framed { border: round $accent; }
    """


class RankGrid(Vertical):
    """Panels in a grid whose column count follows the width; when the panels would take more
    rows than the grid has (its box's max-height), a table with one row per rank instead."""

    DEFAULT_CSS = """
    RankGrid { height: auto; }
    RankGrid #panels { layout: grid; grid-size: 4; grid-gutter: 0 1; height: auto; }
    """
    PANEL_HEIGHT = 11
    TABLE_FRAME = 2 + HEAD_ROWS  # the table's border and heads

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

    def show(self, views: list[PanelView], focused: str | None, alerts: dict[str, list[Alert]] | None = None,
             room: int | None = None, enlarged: bool = False) -> None:
        """alerts: rank -> the alerts holding on it (mtptui.core.alerts.by_rank); room: the
        rows the grid may take (None: half the screen); enlarged: it has the screen (r)."""
        alerts = alerts or {}
        room = room if room is not None else self.app.size.height // 2
        self._choose_mode(len(views), room - 2 if enlarged else room)  # enlarged panels get a frame
        box = self.parent
        if isinstance(box, RankScroll):
            box.set_class(enlarged and not self.table_mode, "-framed")
            box.border_title = Content.styled("ranks · r or Esc shrinks", "bold $accent") if enlarged else ""
        if self.table_mode:
            self._table.show(views, focused, alerts, width=self.app.size.width - 2,
                             max_rows=max(1, room - self.TABLE_FRAME), enlarged=enlarged)
            return
        ranks = [v.rank for v in views]
        if ranks != self._ranks:
            self._ranks = ranks
            self._grid.remove_children()
            self._panels = [RankPanel(r, i + 1) for i, r in enumerate(ranks)]
            self._grid.mount_all(self._panels)
        for panel, v in zip(self._panels, views):
            panel.show(v, focused is not None and v.rank == focused, alerts.get(v.rank, []))

    def _columns(self, n: int) -> int:
        width = self.app.size.width
        return max(1, min(max(1, n), width // PANEL_MIN_WIDTH))

    def _choose_mode(self, n: int, room: int) -> None:
        cols = self._columns(n)
        rows = -(-max(1, n) // cols)
        table = rows * self.PANEL_HEIGHT > room
        self._grid.styles.grid_size_columns = cols
        if table != self.table_mode:
            self.table_mode = table
            self._grid.display = not table
            self._table.display = table
