"""The rank table: the rank panels' numbers, one row per rank, for screens too short for panels
(or hosts with many ranks).

It fits its width and its height rather than being cut: on a narrow screen the rank names are
shortened first (DP3 for DP3 TP3 EP3), then the columns that matter least are left out, and a
column is always as wide as its widest number. When not every rank fits in the rows it has, it
shows the focused rank and the ranks under an alert first, and its bottom border says how many
are hidden and which key shows them all.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

from mtptui.core.alerts import ERROR, Alert
from mtptui.core.epochs import rank_label, short_rank_labels
from mtptui.config.keys import KEYS
from mtptui.tui.viewmodel import (DOWN, LOADING, NOT_DECODING, SPEC_OFF, SPEC_ON, WAITING, PanelView,
                                  duration_text, fmt_value, steps_now)
from mtptui.tui.widgets.fit import Part, fit


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


def alert_style(alerts: Sequence[Alert]) -> str | None:
    """The badge colour while alerts hold on a rank (errors first), else None."""
    return _alert_colour(alerts[0]) if alerts else None


def _alert_colour(first: Alert) -> str:
    return "bold $text on $error" if first.severity == ERROR else "bold $text on $warning-darken-1"


def state_badge(v: PanelView, alerts: Sequence[Alert] = ()) -> tuple[str, str]:
    """The one state that matters most, as (text, style); an alert on the rank marks it (⚠)
    in the alert's colour."""
    if v.spec in NOT_DECODING:
        return state_text(v).split()[0], state_style(v)
    if v.stale_s is not None:
        return f"STALE {v.stale_s:.0f}s", "bold $text on $error"
    if v.spec == SPEC_OFF and v.spec_configured:
        return "SPEC OFF!", "bold $text on $error"
    if alerts:
        text = "SPEC ON" if v.spec == SPEC_ON else "SPEC OFF" if v.spec == SPEC_OFF else "no decode"
        return "⚠" + text, _alert_colour(alerts[0])
    if v.graph_off_now:
        return "GRAPH OFF", "bold $text on $warning"
    if v.spec == SPEC_ON:
        return "SPEC ON", "bold $text on $success"
    if v.spec == SPEC_OFF:
        return "SPEC OFF", "bold $text on $panel-lighten-2"
    return "no decode", "$text-muted"


def _n(v: PanelView, m: str, key: str) -> str:
    if m == STEPS:
        now = steps_now(v)
        return "-" if now is None else f"{now:.1f}"
    if key == "now":
        return fmt_value(m, v.now.get(m))
    st = v.metrics[m].stats
    return fmt_value(m, None if st is None else st[key])


# Column groups: (title, short title, columns); a column is (metric, stat, rank), rank 0 the
# last to be left out on a narrow screen.
GROUPS = (
    ("accept len", "acc len", (("accept_len", "now", 0), ("accept_len", "min", 8), ("accept_len", "mean", 1),
                               ("accept_len", "max", 9))),
    ("acc rate", "rate", (("accept_rate", "now", 2), ("accept_rate", "mean", 7))),
    ("gen tok/s", "tok/s", (("gen_throughput", "now", 3), ("gen_throughput", "mean", 4),
                            ("gen_throughput", "max", 10))),
    ("run", "run", (("running_req", "now", 5),)),
    ("queue", "queue", (("queue_req", "now", 6),)),
    ("KV", "KV", (("token_usage", "now", 11),)),
)
# where the engine adapts (PanelView.steps): the steps in use, beside the batch size
STEPS = "steps"
STEPS_GROUP = ("K", "K", ((STEPS, "now", 5.5),))
HEAD_ROWS = 2
RANKS_KEY = next(k.keys for k in KEYS if k.id == "ranks")  # the default key that enlarges the rank grid


def _groups(views: Sequence[PanelView]) -> tuple:
    """GROUPS, and K after the batch size where a rank shows the steps in use."""
    if not any(v.steps is not None for v in views):
        return GROUPS
    return GROUPS[:4] + (STEPS_GROUP,) + GROUPS[4:]


def _layout(width: int, left: int, widths: dict[tuple[str, str], int], groups: tuple = GROUPS
            ) -> list[tuple[str, str, tuple]]:
    """The groups and columns that fit in `width` after `left` cells, dropping the columns that
    matter least first: [(title, short title, columns kept)]."""
    cols = sorted(((c[2], c[:2]) for _, _, cs in groups for c in cs))
    keep: set[tuple[str, str]] = set()
    used = left
    for _, col in cols:
        w = widths[col] + 1
        if used + w > width:
            break
        keep.add(col)
        used += w
    return [(t, s, tuple(c[:2] for c in cs if c[:2] in keep)) for t, s, cs in groups
            if any(c[:2] in keep for c in cs)]


def _rank_names(ranks: list[str], width: int, widths: dict, w_idx: int, w_state: int, groups: tuple = GROUPS
                ) -> tuple[dict[str, str], int, int]:
    """Each rank's name in the first column, that column's width and where the figures start: full
    names while every column fits with them, short ones (DP3) before any column goes."""
    all_cols = sum(len(cs) for _, _, cs in groups)
    for names in ({r: rank_label(r) for r in ranks}, short_rank_labels(ranks)):
        w_rank = max([4, *map(len, names.values())])
        left = w_idx + w_rank + 1 + w_state
        if sum(len(cs) for _, _, cs in _layout(width, left, widths, groups)) == all_cols:
            break
    return names, w_rank, left


def _headings(groups: list, widths: dict, left: int) -> tuple[str, str]:
    """The two heading lines: each group's title (its short one where the long one does not fit) over
    its columns' names."""
    top, sub = " " * left, " " * left
    for title, short_title, cols in groups:
        w = sum(widths[c] + 1 for c in cols)
        name = title if len(title) <= w - 1 else short_title
        top += f"{name:>{w}}" if len(cols) == 1 else " " + f"{name:^{w - 1}}"
        sub += "".join(f" {c[1]:>{widths[c]}}" for c in cols)
    return top, sub


def _more(hidden: list[str], ranks: list[str], width: int) -> Content | str:
    """The subtitle that says which ranks did not fit, and the key that shows them all ('' if none)."""
    if not hidden:
        return ""
    plural = "s" if len(hidden) > 1 else ""
    short = short_rank_labels(ranks)
    more = f" {len(hidden)} more rank{plural} ({', '.join(short[r] for r in hidden)}) · {RANKS_KEY} shows all "
    if len(more) + 4 > width:
        more = f" {len(hidden)} more rank{plural} · {RANKS_KEY} shows all "
    return Content.assemble((more, "bold $warning"))


def _table(views: list[PanelView], shown: list[PanelView], focused: str | None, alerts: dict[str, list[Alert]],
           width: int) -> list:
    """The table's lines: the headings over the columns that fit, then a row per shown rank (its
    place among all, its name, its state badge, its figures; the focused one reversed)."""
    all_groups = _groups(views)
    cells = {(m, k): [_n(v, m, k) for v in shown] for _, _, cs in all_groups for m, k, _ in cs}
    widths = {c: max([5, *map(len, vals)]) for c, vals in cells.items()}
    badges = [state_badge(v, alerts.get(v.rank, [])) for v in shown]
    idx = {v.rank: i for i, v in enumerate(views, start=1)}
    w_idx = max(2, len(str(len(views))))
    w_state = max([9, *(len(t) for t, _ in badges)])
    names, w_rank, left = _rank_names([v.rank for v in views], width, widths, w_idx + 1, w_state, all_groups)
    groups = _layout(width, left, widths, all_groups)
    top, sub = _headings(groups, widths, left)
    parts: list = [(top, "bold $text-muted"), "\n", (sub, "$text-muted")]
    for row, v in enumerate(shown):
        text, style = badges[row]
        row_style = "reverse" if focused is not None and v.rank == focused else ""
        nums = "".join(f" {cells[c][row]:>{widths[c]}}" for _, _, cols in groups for c in cols)
        parts += ["\n", (f"{idx[v.rank]:>{w_idx}} {names[v.rank]:<{w_rank}} ", row_style or "bold"),
                  (f"{text:<{w_state}}", style), (nums, row_style)]
    if not views:
        parts += ["\n", ("no batch lines yet", "$text-muted")]
    return parts


def _title(views: list[PanelView], width: int, enlarged: bool) -> Content:
    """The border's title: what the table is, how to shrink it when enlarged, and what its figures
    span, each part dropped in its turn where the width is short."""
    scope = f" · min/mean/max over {views[0].scope if views and views[0].scope else 'the window'}"
    return fit([Part.of(0, ("ranks", "bold $text")),
                Part.of(1, (f" · {RANKS_KEY} or Esc shrinks", "bold $accent") if enlarged else ""),
                Part.of(3, " · now = newest decode line"),
                Part.of(2, f"{scope} (W: epoch or window)", scope)],
               width - 4)


def _subtitle(views: list[PanelView], shown: list[PanelView], width: int) -> Content | str:
    """The border's subtitle: the ranks that did not fit, and the panels' badge where throughput fell
    past an edge of the host's schedule, said once."""
    on = {v.rank for v in shown}
    hidden = [v.rank for v in views if v.rank not in on]
    more = _more(hidden, [v.rank for v in views], width)
    fell = next((v.fell for v in shown if v.fell is not None), None)
    if fell is not None:
        more = Content.assemble(more, (f" TOK/S FELL AT {fell.edge}+: {fell.words()} ", "bold $warning"))
    return more


class RankTable(Static):
    DEFAULT_CSS = """
    RankTable { height: auto; border: round $frame; padding: 0; text-wrap: nowrap;
                text-overflow: ellipsis; border-subtitle-align: left; border-subtitle-color: $text; }
    """

    def show(self, views: list[PanelView], focused: str | None, alerts: dict[str, list[Alert]] | None = None,
             width: int = 200, max_rows: int | None = None, enlarged: bool = False) -> None:
        """width: cells inside the border; max_rows: rank rows that fit (None: all); enlarged:
        the table has the screen (its title says how to shrink it)."""
        alerts = alerts or {}
        shown = self._pick(views, focused, alerts, max_rows)
        self.border_title = _title(views, width, enlarged)
        self.border_subtitle = _subtitle(views, shown, width)
        self.update(Content.assemble(*_table(views, shown, focused, alerts, width)))

    @staticmethod
    def _pick(views: list[PanelView], focused: str | None, alerts: dict, max_rows: int | None) -> list[PanelView]:
        """The ranks to show, in their order: all when they fit, else the focused one, then
        those under an alert, then the first ones."""
        if max_rows is None or len(views) <= max_rows:
            return list(views)
        first = [v.rank for v in views if v.rank == focused] + [v.rank for v in views if alerts.get(v.rank)]
        chosen = list(dict.fromkeys(first + [v.rank for v in views]))[:max(1, max_rows)]
        return [v for v in views if v.rank in chosen]
