"""The benchmark's results (b): per concurrency a table of the profiles with output tokens/s and
its change against `off` and its interval, the best marked where it is separated from the
runner-up (a line under each table says so, or how many more requests it would take), latency,
errors and the accept len the log showed; bars of tokens/s per profile and concurrency; where
the JSON was saved."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot
from textual_plotext.plot import Plot

from mtptui.prove import results
from mtptui.tui.bindings import bindings_for


class ResultsScreen(ModalScreen):
    DEFAULT_CSS = """
    ResultsScreen { align: center middle; }
    ResultsScreen > Vertical { width: 100%; height: 100%; border: thick $accent; background: $surface; padding: 0 1; }
    ResultsScreen .title { text-style: bold; margin-top: 1; }
    ResultsScreen #tables { height: auto; max-height: 60%; }
    ResultsScreen DataTable { height: auto; }
    ResultsScreen Bars { height: 1fr; min-height: 10; }
    ResultsScreen .verdict { color: $text-muted; }
    ResultsScreen #hint { color: $text-muted; }
    """
    BINDINGS = bindings_for("results")

    def __init__(self, report: dict, saved: str) -> None:
        super().__init__()
        self.report = report
        self.saved = saved

    def compose(self) -> ComposeResult:
        r = self.report
        with Vertical() as box:
            box.border_title = f"benchmark · {r['host']} · {r['unit']} · {r['started']}"
            box.border_subtitle = "restored as found" if r["restored"] else "NOT RESTORED: look at the host"
            with VerticalScroll(id="tables"):
                for c in results.concurrencies(r):
                    yield Static(f"concurrency {c}", classes="title")
                    table: DataTable[str] = DataTable(cursor_type="none", zebra_stripes=True)
                    table.add_columns(*results.HEADER)
                    for cells in results.table_rows(r, c):
                        table.add_row(*cells)
                    yield table
                    # whether the leader is separated from the runner-up (★ only then)
                    yield Static(results.verdict_line(results.verdict(results.at(r, c))), classes="verdict",
                                 markup=False)
            yield Bars(r)
            yield Static(f"saved: {self.saved} · Esc closes", id="hint")


class Bars(PlotextPlot):
    """Output tokens/s, a bar per profile, grouped by concurrency."""

    def __init__(self, report: dict) -> None:
        super().__init__()
        self.report = report

    def render(self):
        self._plot = Plot()  # a fresh figure for each size (plotext keeps layout state between builds)
        r = self.report
        levels = results.concurrencies(r)
        profiles = list(dict.fromkeys(x["profile"] for x in r["results"]))
        values = [[next((x["output_tok_s"] or 0 for x in results.at(r, c) if x["profile"] == p), 0) for c in levels]
                  for p in profiles]
        self.plt.multiple_bar([f"concurrency {c}" for c in levels], values, labels=profiles)
        self.plt.title("output tokens/s")
        return super().render()
