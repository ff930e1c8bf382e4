"""The rank table: the rank panels' numbers, one row per rank, for screens too short for panels
(or hosts with many ranks)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from mtptui.tui.viewmodel import (DOWN, LOADING, NOT_DECODING, SPEC_OFF, SPEC_ON, WAITING, PanelView,
                                  duration_text, fmt_value, rank_label)


def state_text(v: PanelView) -> str:
    """LOADING 0m 27s, WAITING FOR FIRST BATCH, STOPPED, FAILED: a rank not decoding in its run."""
    if v.spec == LOADING:
        return f"LOADING {duration_text(v.state_s)}"
    if v.spec == WAITING:
        return "WAITING FOR FIRST BATCH"
    return (v.down or "down").upper()


def state_style(v: PanelView) -> str:
    if v.spec == LOADING:
        return "bold $text on $primary"
    return "bold $text on $error" if v.spec == DOWN and v.down == "failed" else "bold $text on $panel-lighten-2"


def state_badge(v: PanelView) -> tuple[str, str]:
    """The one state that matters most, as (text, style)."""
    if v.spec in NOT_DECODING:
        return state_text(v).split()[0], state_style(v)
    if v.stale_s is not None:
        return f"STALE {v.stale_s:.0f}s", "bold $text on $error"
    if v.spec == SPEC_OFF and v.spec_configured:
        return "SPEC OFF!", "bold $text on $error"
    if v.graph_off_now:
        return "GRAPH OFF", "bold $text on $warning"
    if v.spec == SPEC_ON:
        return "SPEC ON", "bold $text on $success"
    if v.spec == SPEC_OFF:
        return "SPEC OFF", "bold $text on $panel-lighten-2"
    return "no decode", "$text-muted"


def _n(v: PanelView, m: str, key: str) -> str:
    if key == "now":
        return fmt_value(m, v.now.get(m))
    st = v.metrics[m].stats
    return fmt_value(m, None if st is None else st[key])


# (metric, stat) per column, under a group title; each column is 6 cells: a space and 5 digits.
GROUPS = (
    ("accept len", (("accept_len", "now"), ("accept_len", "min"), ("accept_len", "mean"), ("accept_len", "max"))),
    ("acc rate", (("accept_rate", "now"), ("accept_rate", "mean"))),
    ("gen tok/s", (("gen_throughput", "now"), ("gen_throughput", "mean"), ("gen_throughput", "max"))),
    ("run", (("running_req", "now"),)),
    ("queue", (("queue_req", "now"),)),
    ("KV", (("token_usage", "now"),)),
)
LEFT = 2 + 1 + 11 + 1 + 9  # "#", rank, state


def _heads() -> tuple[str, str]:
    top, sub = " " * LEFT, " " * LEFT
    for title, cols in GROUPS:
        w = 6 * len(cols)
        top += f"{title:>{w}}" if len(cols) == 1 else " " + f"{title:^{w - 1}}"
        sub += "".join(f" {k:>5}" for _, k in cols)
    return top, sub


HEAD1, HEAD2 = _heads()


class RankTable(Static):
    DEFAULT_CSS = """
    RankTable { height: auto; border: round $frame; padding: 0; text-wrap: nowrap;
                text-overflow: ellipsis; }
    """

    def show(self, views: list[PanelView], focused: str | None) -> None:
        parts: list = [(HEAD1, "bold $text-muted"), "\n", (HEAD2, "$text-muted")]
        for i, v in enumerate(views, start=1):
            text, style = state_badge(v)
            row_style = "reverse" if focused is not None and v.rank == focused else ""
            cells = "".join(f" {_n(v, m, k):>5}" for _, cols in GROUPS for m, k in cols)
            parts += ["\n", (f"{i:>2} {rank_label(v.rank):<11.11} ", row_style or "bold"),
                      (f"{text:<9.9}", style), (cells, row_style)]
        if not views:
            parts += ["\n", ("no batch lines yet", "$text-muted")]
        scope = views[0].scope if views else ""
        self.border_title = (f"ranks · now = newest decode line · min/mean/max over {scope or 'the window'}"
                             " (W: epoch or window)")
        self.update(Content.assemble(*parts))
