"""The results of the benchmark (b) and of the tune (T). The benchmark's: per concurrency a
table of the profiles with output tokens/s and its change against `off` and its interval, the
best marked where it is separated from the runner-up (a line under each table says so, or how
many more requests it would take), latency, errors and the accept len the log showed, and each
profile's per-request acceptance where the server reported it; bars of tokens/s per profile
and concurrency; where the JSON was saved. The tune's: the same table for each round, what the
round dropped and why, then the winner and the points measured against the grid's; bars per
round. A tune's screen opens before its end, under the question whether to keep the winner
(the host not yet restored), and is told the end (finish)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot
from textual_plotext.plot import Plot

from mtptui.prove import results
from mtptui.tui.bindings import bindings_for


def sections(r: dict) -> list[tuple[str, dict, int, list[str]]]:
    """(title, the report of its rows, its concurrency, lines after its table) of each table: a
    benchmark's concurrencies, a tune's rounds (each load of a round where it measured several,
    for a schedule; what a round dropped after its last)."""
    if "rounds" in r:
        from mtptui.prove import tune

        out = []
        for heading, sub, dropped in tune.by_round(r):
            cs = results.concurrencies(sub) or [r["concurrency"]]
            out += [(heading if len(cs) == 1 else f"{heading} · concurrency {c}", sub, c,
                     dropped if c == cs[-1] else []) for c in cs]
        return out
    return [(f"concurrency {c}", r, c, []) for c in results.concurrencies(r)]


class ResultsScreen(ModalScreen):
    DEFAULT_CSS = """
    ResultsScreen { align: center middle; }
    ResultsScreen > Vertical { width: 100%; height: 100%; border: thick $accent; background: $surface; padding: 0 1; }
    ResultsScreen .title { text-style: bold; margin-top: 1; }
    ResultsScreen #tables { height: auto; max-height: 50%; }
    ResultsScreen DataTable { height: auto; }
    ResultsScreen Bars { height: 1fr; min-height: 6; }
    ResultsScreen .verdict, ResultsScreen .acceptance { color: $text-muted; }
    ResultsScreen #ending { text-style: bold; height: auto; margin-top: 1; }
    ResultsScreen #hint { color: $text-muted; }
    """
    BINDINGS = bindings_for("results")

    def __init__(self, report: dict, saved: str) -> None:
        super().__init__()
        self.report = report
        self.saved = saved  # "" while a tune still asks whether to keep its winner

    @property
    def tuned(self) -> bool:
        return "rounds" in self.report

    def compose(self) -> ComposeResult:
        r = self.report
        with Vertical() as box:
            box.border_title = f"{'tune' if self.tuned else 'benchmark'} · {r['host']} · {r['unit']} · {r['started']}"
            box.border_subtitle = self._state()
            with VerticalScroll(id="tables"):
                if self.tuned:
                    yield Static(f"concurrency {r['concurrency']} ({r['concurrency_from']}) · "
                                 f"budget {r['budget_s'] / 60:g} min", markup=False)
                for title, sub, c, after in sections(r):
                    yield Static(title, classes="title", markup=False)
                    table: DataTable[str] = DataTable(cursor_type="none", zebra_stripes=True)
                    table.add_columns(*results.HEADER)
                    for cells in results.table_rows(sub, c):
                        table.add_row(*cells)
                    yield table
                    # whether the leader is separated from the runner-up (★ only then)
                    yield Static(results.verdict_line(results.verdict(results.at(sub, c))), classes="verdict",
                                 markup=False)
                    accepted = results.acceptance_lines(results.at(sub, c))
                    if accepted:
                        yield Static("\n".join(accepted), classes="acceptance", markup=False)
                    if after:
                        yield Static("\n".join(after), classes="verdict", markup=False)
            if self.tuned:  # under the tables, not in their scroll: the winner is always in sight
                yield Static(self._ending(), id="ending", markup=False)
            if sections(r):  # a tune stopped in its first round has no round to draw: its ending says so
                yield Bars(r)
            yield Static(self._hint(), id="hint", markup=False)

    def _state(self) -> str:
        r = self.report
        if r.get("kept"):
            return f"left running {r['kept']}, as accepted"
        if r["restored"]:
            return "restored as found"
        return "the host is not yet restored: answer the question" if not self.saved else "NOT RESTORED: look at the host"

    def _ending(self) -> str:
        from mtptui.prove import tune

        lines = tune.ending_lines(self.report)
        return "\n".join(lines if self.saved else lines[:2])  # the host's line once it is known

    def _hint(self) -> str:
        return f"saved: {self.saved} · Esc closes" if self.saved else "saved once the host is restored · Esc closes"

    def answered(self, keep: bool) -> None:
        """The question answered: what the tune does now, until finish()."""
        self.query_one(Vertical).border_subtitle = (f"leaving {self.report['winner']} applied" if keep
                                                    else "restoring the host as it was found")

    def finish(self, report: dict, saved: str) -> None:
        """The tune's end (the winner kept or the host restored), on the screen opened before it."""
        self.report, self.saved = report, saved
        self.query_one(Vertical).border_subtitle = self._state()
        if self.tuned:
            self.query_one("#ending", Static).update(self._ending())
        self.query_one("#hint", Static).update(self._hint())


class Bars(PlotextPlot):
    """Output tokens/s, a bar per profile, grouped by concurrency (a tune's: by round)."""

    def __init__(self, report: dict) -> None:
        super().__init__()
        self.report = report

    def render(self):
        self._plot = Plot()  # a fresh figure for each size (plotext keeps layout state between builds)
        groups = [(title.split(":")[0], results.at(sub, c)) for title, sub, c, _ in sections(self.report)]
        profiles = list(dict.fromkeys(x["profile"] for x in self.report["results"]))
        values = [[next((x["output_tok_s"] or 0 for x in rows if x["profile"] == p), 0) for _, rows in groups]
                  for p in profiles]
        self.plt.multiple_bar([g for g, _ in groups], values, labels=profiles)
        self.plt.title("output tokens/s")
        return super().render()
