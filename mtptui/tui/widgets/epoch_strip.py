"""The epoch strip, under the host line: did the last restart help? The run at the playhead (its
settings and age), its accept len and the host's gen throughput (summed over DP groups), and
the change against the run before and against the last run without speculation: the numbers of
`mtptui summary`'s epochs (core/compare.py), shown once they rest on enough lines."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from mtptui.core.compare import DELTA_MIN_BATCHES, Delta, percent
from mtptui.tui.viewmodel import DOWN, LOADING, WAITING, StripView, clock_text, duration_text

SEP = (" │ ", "$text-muted")
WRAP_SLACK = 12  # cells a wrap at spaces may leave at the end of the first line


def _change(d: Delta) -> tuple[str, str]:
    style = "bold $success" if d.change >= 0.005 else "bold $error" if d.change <= -0.005 else "bold"
    return percent(d.change), style


def strip_parts(v: StripView, compact: bool = False) -> list:
    """The strip's text as Content parts; `compact` for narrow screens: the same figures, fewer
    words (tests read the same parts)."""
    def say(full: str, short: str) -> str:
        return short if compact else full

    run, e = v.run, v.run.epoch
    if e is None:
        return [("no epoch yet: no line of this host has come in", "$text-muted")]
    age = f"{duration_text(v.age)}{' (ended)' if v.ended else ''}"
    parts: list = [(f"epoch {run.number}/{run.count} ", "bold"), (e.label, "bold $accent"),
                   (say(f" · {age} since {e.reason} {clock_text(e.start)}", f" · {age}"), "$text-muted")]
    if v.state == LOADING:
        return parts + [SEP, (" LOADING ", "bold $text on $primary"),
                        (say(" the server loads; no decode line in this run yet", " no decode line yet"),
                         "$text-muted")]
    if v.state == WAITING:
        return parts + [SEP, (" WAITING FOR FIRST BATCH ", "bold $text on $panel-lighten-2"),
                        (say(f" ready at {clock_text(run.ready_at)}, no request decoded yet",
                             f" ready {clock_text(run.ready_at)}"), "$text-muted")]
    if v.state == DOWN:
        parts += [SEP, (f" {run.down.upper()} ", "bold $text on $error" if run.down == "failed"
                        else "bold $text on $panel-lighten-2"), (f" at {clock_text(run.down_at)}", "$text-muted")]
    r = v.row
    if r is None or r.gen_total is None:
        return parts + [SEP, ("no decode line in this epoch", "$text-muted")]
    if r.accept_len is not None:
        parts += [SEP, ("accept len ", "$text-muted"), (f"{r.accept_len:.2f}", "bold")]
    groups = len(r.gen_per_dp)
    parts += [SEP, (say("host total ", "host "), "$text-muted"), (f"{r.gen_total:.0f}", "bold"),
              (say(" gen tok/s", " tok/s") + (say(f" ({groups} DP groups)", f" ({groups} DP)") if groups > 1 else ""),
               "$text-muted")]
    if not r.comparable:
        return parts + [SEP, (say(f"changes after {DELTA_MIN_BATCHES} decode lines"
                                  f"{' per DP group' if groups > 1 else ''} ({r.min_batches} so far)",
                                  f"changes after {DELTA_MIN_BATCHES} lines ({r.min_batches})"), "$text-muted")]
    prev, base = r.vs_previous, r.vs_baseline
    if prev is not None:
        parts += [SEP, (say(f"vs epoch {prev.index + 1}", f"vs #{prev.index + 1}")
                        + (" (spec off) " if base == prev else " "), "$text-muted"), _change(prev)]
    if base is not None and base != prev:
        parts += [SEP, (say(f"vs spec off (epoch {base.index + 1}) ", "vs spec off "), "$text-muted"), _change(base)]
    if r.short_before is not None:  # the run just before (newer than any compared with)
        index, lines = r.short_before
        parts += [SEP, (say(f"epoch {index + 1} too short to compare ({lines} decode lines)",
                            f"#{index + 1} too short ({lines})"), "$text-muted")]
    elif base is None and r.spec_off:
        parts += [SEP, (say("the baseline: runs after it compare with it", "the baseline"), "$text-muted")]
    elif base is None:
        parts += [SEP, (say("no spec-off run before it to compare with", "no spec-off run before"), "$text-muted")]
    return parts


class EpochStrip(Static):
    DEFAULT_CSS = """
    EpochStrip { height: auto; max-height: 2; padding: 0 1; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", **kw)
        self._last: Content | None = None

    def show(self, v: StripView) -> None:
        width = self.content_size.width
        content = Content.assemble(*strip_parts(v))
        # Two lines at most: wrapped at spaces, two lines hold a little less than twice the width.
        if width and content.cell_length > 2 * width - WRAP_SLACK:
            content = Content.assemble(*strip_parts(v, compact=True))
        if content == self._last:
            return
        # A layout pass only when the strip goes from one line to two or back.
        lines = lambda c: 1 if width and c.cell_length <= width else 2  # noqa: E731
        relayout = self._last is None or lines(content) != lines(self._last)
        self._last = content
        self.update(content, layout=relayout)
