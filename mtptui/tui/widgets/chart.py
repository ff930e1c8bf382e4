"""The large chart: one metric, every rank of the host, over the window, with restarts marked.

x is log time (seconds before the playhead, ticks labelled with the clock). Vertical lines mark
epoch boundaries (a restart or a new server process) and events: ready, OOM, crash, gap.
The plot is rebuilt from plain data on every render (textual-plotext #5/#11: the size must be
set and the figure refreshed each time).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.content import Content
from textual_plotext import PlotextPlot
from textual_plotext.plot import Plot

from mtptui.core.epochs import rank_key
from mtptui.core.records import EventKind

from mtptui.core.epochs import rank_label, short_rank_labels
from mtptui.tui.viewmodel import BOUNDS, METRICS, clock_text, gap_limit, metric_range
from mtptui.tui.widgets.fit import Part, fit

# Event kinds drawn on the time axis, and their marker colours
EVENT_MARKS = {
    "ready": "green", "crash": "red", "oom": "red", "failed": "red", "error": "red", "nccl": "red",
    "watchdog": "red", "gap": "yellow", "auto_restart": "orange",
}
EPOCH_HEX = "#FF00FF"
DEFAULT_RANK_COLORS = ("#4FC3F7", "#FFB74D", "#81C784", "#F06292", "#9575CD", "#FFF176", "#E57373", "#E0E0E0")


def _rgb(hex_colour: str) -> tuple[int, int, int] | str:
    h = hex_colour.strip().lstrip("#")
    if len(h) != 6:
        return hex_colour.strip()
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


@dataclass
class ChartData:
    metric: str
    t0: float | None
    t1: float | None
    series: dict[str, tuple[list[float], list[float]]]
    epochs: list[tuple[float, str]] = field(default_factory=list)  # (start, label) after the first
    events: list[tuple[float, EventKind]] = field(default_factory=list)  # (ts, kind)
    focus: str | None = None
    window_label: str = ""
    accept_cap: int | None = None  # num_steps + 1 of the epochs in the window: accept len's ceiling


class MetricChart(PlotextPlot):
    DEFAULT_CSS = """
    MetricChart { height: 1fr; min-height: 8; border-title-color: $text; }
    """

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.data: ChartData | None = None
        self.rank_colors: tuple[str, ...] = DEFAULT_RANK_COLORS

    def show(self, data: ChartData) -> None:
        self.data = data
        self.rank_colors = self._theme_colors()
        # The legend lives in the border: plotext's own sits on top of the lines.
        ranks = sorted(data.series, key=rank_key)
        short = short_rank_labels(ranks)
        parts: list = [" "]
        for i, r in enumerate(ranks):
            if data.focus is not None and r != data.focus:
                continue
            parts += [("━━ ", self.rank_colors[i % len(self.rank_colors)]), short[r], "  "]
        if data.epochs:
            parts += [("┃ ", EPOCH_HEX), "restart  "]
        self.border_subtitle = Content.assemble(*parts) if len(parts) > 1 else ""
        self.border_title = self.title_for(data, (self.size.width or self.app.size.width) - 6)
        self.refresh()

    @staticmethod
    def title_for(d: ChartData, width: int) -> Content:
        """The chart's title in its border, so that it shows at any height: the metric always
        (shortened to its label on a narrow screen), then the focused rank, window, time base."""
        info = METRICS[d.metric]
        empty = not any(vs for r, (_, vs) in d.series.items() if d.focus is None or r == d.focus)
        parts = [Part.of(0, [(info.title, "bold")], [(info.label, "bold")]),
                 Part.of(1, f" · rank {rank_label(d.focus)}" if d.focus is not None else ""),
                 Part.of(0, (": no values in this window", "$warning") if empty else ""),
                 Part.of(2, f" · window {d.window_label}"), Part.of(3, " · log time")]
        return fit(parts, width)

    def _theme_colors(self) -> tuple[str, ...]:
        try:
            spec = self.app.theme_variables.get("chart-ranks", "")
        except Exception:  # noqa: BLE001 - not mounted in an app (a unit test)
            spec = ""
        cols = tuple(c.strip() for c in spec.split(",") if c.strip())
        return cols or DEFAULT_RANK_COLORS

    def render(self):
        try:
            return self._render_plot()
        except Exception as e:  # noqa: BLE001 - a plot that fails to draw must not take the app down
            from rich.text import Text

            return Text(f"the chart could not be drawn ({type(e).__name__}: {e}); the panels are unaffected",
                        style="italic")

    def _render_plot(self):
        # A fresh figure each time: plotext keeps layout state between builds (tick placement
        # drifted by a cell depending on earlier sizes), and the screen must be a function of data.
        self._plot = Plot()
        plt = self.plt
        d = self.data
        if d is None or d.t1 is None:
            plt.title("waiting for the first batch line ...")
            return super().render()
        t1 = d.t1
        t0 = d.t0 if d.t0 is not None else min(
            (ts[0] for ts, _ in d.series.values() if ts), default=t1 - 60)
        if t1 - t0 < 1:
            t0 = t1 - 1
        shown = {r: v for r, v in d.series.items() if d.focus is None or r == d.focus}
        lo, hi = y_range(d.metric, shown.values(), d.accept_cap)
        self._plot_lines(d, shown, t1)
        marks = self._plot_marks(d, t0, t1)  # after the data, so they stay visible over the lines
        plt.ylim(lo, hi)
        yticks = _yticks(lo, hi, self.size.height - PLOT_FRAME_ROWS)
        plt.yticks(yticks, [_ylabel(y, hi - lo) for y in yticks])
        plt.xlim(t0 - t1, 0)
        # Labels left to right, each only where it does not run into the one before.
        width = max(20, self.size.width - 10)
        free_from = -1.0
        for ts, text, color in sorted(marks):
            col = (ts - t0) / (t1 - t0) * width
            if col < free_from:
                continue
            plt.text(text, ts - t1, lo + (hi - lo) * 0.96, color=color, alignment="left")
            free_from = col + len(text) + 1
        ticks = _ticks(t0 - t1, 0, self.size.width)
        plt.xticks(ticks, [clock_text(t1 + x) for x in ticks])
        return super().render()


    def _plot_lines(self, d: ChartData, shown: dict, t1: float) -> None:
        """Each shown rank's line in its colour (its place among all ranks), one per stretch of data:
        no line drawn across a restart or a silence."""
        plt = self.plt
        for i, (rank, (ts, vs)) in enumerate(sorted(d.series.items(), key=lambda kv: rank_key(kv[0]))):
            if rank not in shown:
                continue
            color = _rgb(self.rank_colors[i % len(self.rank_colors)])
            for seg_t, seg_v in _segments(ts, vs, [start for start, _ in d.epochs]):
                xs = [t - t1 for t in seg_t]
                if len(xs) == 1:
                    plt.scatter(xs, seg_v, color=color, marker="braille")
                else:
                    plt.plot(xs, seg_v, color=color, marker="braille")

    def _plot_marks(self, d: ChartData, t0: float, t1: float) -> list[tuple[float, str, object]]:
        """The restarts' and events' vertical lines in [t0, t1]; their labels, to place."""
        plt = self.plt
        marks: list[tuple[float, str, object]] = []
        for start, label in d.epochs:
            if t0 <= start <= t1:
                plt.vline(start - t1, _rgb(EPOCH_HEX))
                marks.append((start, f"restart: {label}", _rgb(EPOCH_HEX)))
        for ts, kind in d.events:
            if t0 <= ts <= t1 and kind in EVENT_MARKS:
                plt.vline(ts - t1, EVENT_MARKS[kind])
                marks.append((ts, kind, EVENT_MARKS[kind]))
        return marks


def _segments(ts: list[float], vs: list[float], cuts: list[float]):
    """Splits a series where an epoch starts or where the gap between samples is far longer
    than usual (viewmodel.gap_limit, as the sparklines)."""
    if len(ts) < 2:
        yield ts, vs
        return
    limit = gap_limit(ts)
    cuts = sorted(cuts)
    start = 0
    for k in range(1, len(ts)):
        a, b = ts[k - 1], ts[k]
        if b - a > limit or any(a < c <= b for c in cuts):
            yield ts[start:k], vs[start:k]
            start = k
    yield ts[start:], vs[start:]


def y_range(metric: str, items, accept_cap: int | None) -> tuple[float, float]:
    """The y-axis: the metric's own range (viewmodel.metric_range: accept len from 1, the rest
    from 0; never a value the metric cannot take), with headroom over the most seen where the
    metric has no ceiling of its own (throughput, counts)."""
    seen = [max(vs) for _, vs in items if vs]
    lo, hi = metric_range(metric, max(seen) if seen else None, accept_cap)
    if BOUNDS.get(metric, (0.0, None))[1] is None and metric != "accept_len":
        hi *= 1.1
    return lo, hi


PLOT_FRAME_ROWS = 3  # the content rows that are not the plot's: its frame and the x labels (the title is in the border)


def _yticks(lo: float, hi: float, rows: int) -> list[float]:
    """The y-axis labels, one every other row at most, both ends of the range among them: a grid
    of round steps (0.25, 0.5, 1, 2, 2.5, 5 ... x 10^k) when one fits from end to end, else
    round steps from the floor, else even steps. (plotext's own choice on a plot a few rows high
    put them out of order.)"""
    if rows < 2 or hi <= lo:
        return []  # no room for a scale: none rather than two labels on top of each other
    most = max(2, min(6, rows // 2 + 1))
    span = hi - lo
    steps = [m * 10.0 ** k for k in range(-2, 12) for m in (1, 2, 2.5, 5) if span / (m * 10.0 ** k) + 1 <= most]
    exact = [st for st in steps if round(span / st) >= 1 and abs(span / st - round(span / st)) < 1e-9]
    if exact:
        return [lo + i * exact[0] for i in range(round(span / exact[0]) + 1)]
    between = [lo + i * steps[0] for i in range(1, most) if lo + i * steps[0] < hi - steps[0] / 2]
    if not between and most > 2:
        between = [lo + span * i / (most - 1) for i in range(1, most - 1)]
    return [lo, *between, hi]


def _ylabel(y: float, span: float) -> str:
    return f"{y:.0f}" if span >= 20 else f"{y:.2f}".rstrip("0").rstrip(".") if y != int(y) else f"{y:.0f}"


def _ticks(a: float, b: float, width: int) -> list[float]:
    """Tick values for an axis `width` cells wide, kept 6 cells clear of both ends and 16 cells
    apart: plotext nudges a label that touches a border or a neighbour, and where it lands then
    varies from run to run (its de-duplication iterates a set), which broke the snapshots."""
    if b <= a or width < 30:
        return [a + (b - a) / 2]
    per_cell = (b - a) / width
    lo, hi = a + 6 * per_cell, b - 6 * per_cell
    n = max(1, int((width - 12) // 16))
    step = (hi - lo) / n
    return [lo + i * step for i in range(n + 1)]
