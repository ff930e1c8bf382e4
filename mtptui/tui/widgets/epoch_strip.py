"""The epoch strip, under the host line: did the last restart help? The run at the playhead (its
settings and age), its accept len and the host's gen throughput (summed over DP groups), and
the change against the run before and against the last run without speculation: the numbers of
`mtptui summary`'s epochs (core/compare.py), shown once they rest on enough lines."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from mtptui.core.compare import DELTA_MIN_BATCHES, Delta, EpochRow, percent
from mtptui.tui.viewmodel import (DOWN, LOADING, SPEC_OFF, SPEC_ON, WAITING, PanelView, RunState, StripView,
                                  clock_text, duration_text, plural)
from mtptui.tui.widgets.fit import Part, fit

SEP = (" │ ", "$text-muted")
WRAP_SLACK = 12  # cells a wrap at spaces may leave at the end of the first line


def _change(d: Delta) -> tuple[str, str]:
    style = "bold $success" if d.change >= 0.005 else "bold $error" if d.change <= -0.005 else "bold"
    return percent(d.change), style


def _part(rank: int, *forms: list) -> Part:
    """A part of the strip: its forms from the fullest (wide screens) to the shortest (one line
    on a tiny screen); rank 0 stays on screen whatever the width."""
    return Part.of(rank, *forms)


def figures_behind(rows: list[EpochRow], run: RunState, views: list[PanelView]) -> bool:
    """Whether the strip's figures (recounted at most every so often while lines stream) miss
    what the panels show: a panel decodes in the epoch at the playhead while its row counts no
    decode line yet. Then they are recounted at once, so the strip never says "no decode line"
    beside a panel's accept len."""
    e = run.epoch
    if e is None or not any(v.spec in (SPEC_ON, SPEC_OFF) and v.decode_batches for v in views):
        return False
    row = next((r for r in rows if r.index == e.index), None)
    return row is None or counts_nothing(row)


def counts_nothing(r: EpochRow) -> bool:
    """No decode line counted in the epoch: no batch, no acceptance figure (vLLM logs those on
    lines of their own), no throughput."""
    return r.decode_batches == 0 and r.accept_len is None and r.gen_total is None


def strip_parts(v: StripView) -> list[Part]:
    """The strip's parts in order, each in up to three forms: full, compact (fewer words), tiny
    (one line of 80 cells); the same figures in each (tests read them)."""
    run, e = v.run, v.run.epoch
    if e is None:
        return [_part(0, [("no epoch yet: no line of this host has come in", "$text-muted")],
                      [("no epoch yet", "$text-muted")])]
    age = f"{duration_text(v.age)}{' (ended)' if v.ended else ''}"
    # The settings are in the status bar too: on one line they go first.
    parts = [_part(0, [(f"epoch {run.number}/{run.count}", "bold")]),
             _part(3, [" ", (e.label, "bold $accent")]),
             _part(5, [(f" · {age} since {e.reason} {clock_text(e.start)}", "$text-muted")],
                   [(f" · {age}", "$text-muted")])]
    if v.state in (LOADING, WAITING):
        return parts + _not_decoding_yet(v.state, run.ready_at)
    if v.state == DOWN and run.down is not None:  # DOWN: the run's end is known
        parts.append(_down(run.down, run.down_at))
    r = v.row
    if r is None or counts_nothing(r):
        return parts + [_part(1, [SEP, ("no decode line in this epoch", "$text-muted")],
                              [SEP, ("no decode line", "$text-muted")])]
    if r.accept_len is not None:
        figure = (f"{r.accept_len:.2f}", "bold")
        parts.append(_part(2, [SEP, ("accept len ", "$text-muted"), figure], [SEP, ("accept len ", "$text-muted"), figure],
                           [SEP, ("acc ", "$text-muted"), figure]))
    if r.gen_total is None:  # decode lines without a gen throughput (vLLM's acceptance lines alone, say)
        return parts + [_part(1, [SEP, ("no gen throughput in its decode lines", "$text-muted")],
                              [SEP, ("no gen tok/s logged", "$text-muted")])]
    groups = len(r.gen_per_dp)
    total = (f"{r.gen_total:.0f}", "bold")
    parts.append(_part(0, [SEP, ("host total ", "$text-muted"), total,
                           (" gen tok/s" + (f" ({groups} DP groups)" if groups > 1 else ""), "$text-muted")],
                       [SEP, ("host ", "$text-muted"), total, (" tok/s" + (f" ({groups} DP)" if groups > 1 else ""),
                                                               "$text-muted")],
                       [SEP, ("host ", "$text-muted"), total, (" tok/s", "$text-muted")]))
    if not r.comparable:
        return parts + [_part(1, [SEP, (f"changes after {DELTA_MIN_BATCHES} decode lines"
                                        f"{' per DP group' if groups > 1 else ''} ({r.min_batches} so far)", "$text-muted")],
                              [SEP, (f"changes after {DELTA_MIN_BATCHES} lines ({r.min_batches})", "$text-muted")])]
    return parts + _comparisons(r)


def _comparisons(r: EpochRow) -> list[Part]:
    """The run against the one before it and the last spec-off one, or why it is compared with none."""
    parts: list[Part] = []
    prev, base = r.vs_previous, r.vs_baseline
    if prev is not None:
        off = " (spec off)" if base == prev else ""
        parts.append(_part(0, [SEP, (f"vs epoch {prev.index + 1}{off} ", "$text-muted"), _change(prev)],
                           [SEP, (f"vs #{prev.index + 1}{off} ", "$text-muted"), _change(prev)]))
    if base is not None and base != prev:
        parts.append(_part(0, [SEP, (f"vs spec off (epoch {base.index + 1}) ", "$text-muted"), _change(base)],
                           [SEP, ("vs spec off ", "$text-muted"), _change(base)]))
    if r.short_before is not None:  # the run just before (newer than any compared with)
        index, lines = r.short_before
        parts.append(_part(4, [SEP, (f"epoch {index + 1} too short to compare ({plural(lines, 'decode line')})", "$text-muted")],
                           [SEP, (f"#{index + 1} too short ({lines})", "$text-muted")]))
    elif base is None and r.spec_off:
        parts.append(_part(4, [SEP, ("the baseline: runs after it compare with it", "$text-muted")],
                           [SEP, ("the baseline", "$text-muted")]))
    elif base is None:
        parts.append(_part(4, [SEP, ("no spec-off run before it to compare with", "$text-muted")],
                           [SEP, ("no spec-off run before", "$text-muted")]))
    return parts


def _not_decoding_yet(state: str, ready_at: float | None) -> list[Part]:
    """A run that has not decoded yet: loading, or ready and waiting for its first batch."""
    if state == LOADING:
        return [_part(0, [SEP, (" LOADING ", "bold $text on $primary")]),
                _part(4, [(" the server loads; no decode line in this run yet", "$text-muted")],
                      [(" no decode line yet", "$text-muted")])]
    return [_part(0, [SEP, (" WAITING FOR FIRST BATCH ", "bold $text on $panel-lighten-2")]),
            _part(4, [(f" ready at {clock_text(ready_at)}, no request decoded yet", "$text-muted")],
                  [(f" ready {clock_text(ready_at)}", "$text-muted")])]


def _down(down: str, at: float | None) -> Part:
    """A run that went down: how (stopped or failed) and when."""
    badge = (f" {down.upper()} ", "bold $text on $error" if down == "failed" else "bold $text on $panel-lighten-2")
    return _part(0, [SEP, badge, (f" at {clock_text(at)}", "$text-muted")], [SEP, badge])


def strip_text(parts: list[Part], form: int) -> Content:
    """Every part in one form (0 full, 1 compact), or its shortest where it has fewer."""
    return Content.assemble(*(p.forms[min(form, len(p.forms) - 1)] for p in parts))


# One line: what goes first, in turn: (form, parts kept: rank below); the figures (rank 0) stay.
ONE_LINE_STEPS = ((0, 6), (1, 6), (1, 5), (2, 5), (2, 4), (2, 3), (2, 2), (2, 1))


def one_line(parts: list[Part], width: int) -> Content:
    """The strip on one line: words go first, then the age, then the settings (the status bar
    shows them too), then the accept len; the epoch, host total and changes stay."""
    for form, below in ONE_LINE_STEPS:
        content = strip_text([p for p in parts if p.rank < below], form)
        if content.cell_length <= width:
            return content
    return fit(parts, width)


class EpochStrip(Static):
    DEFAULT_CSS = """
    EpochStrip { height: auto; max-height: 2; padding: 0 1; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: Content | None = None

    def lines(self) -> int:
        """As many lines as the stylesheet lets it have (one on tiny screens, app.tcss)."""
        mh = self.styles.max_height
        return max(1, int(mh.value)) if mh is not None and mh.is_cells else 2

    def show(self, v: StripView) -> None:
        width = self.content_size.width or max(10, self.app.size.width - 2)
        parts = strip_parts(v)
        if self.lines() == 1:
            content = one_line(parts, width)
        else:
            content = strip_text(parts, 0)
            compact = strip_text(parts, 1)
            # One line where the compact form holds it (a wrap would split a phrase from its
            # figure); else two lines at most: wrapped at spaces, they hold a little less than
            # twice the width.
            if content.cell_length > width and compact.cell_length <= width:
                content = compact
            elif content.cell_length > 2 * width - WRAP_SLACK:
                content = compact
        if content == self._last:
            return
        # A layout pass only when the strip goes from one line to two or back.
        lines = lambda c: 1 if c.cell_length <= width else 2  # noqa: E731
        relayout = self._last is None or lines(content) != lines(self._last)
        self._last = content
        self.update(content, layout=relayout)
