"""At 80x24 and 120x36 nothing that matters is cut, read from the composed screen's text: the
host line and status bar keep the host, source and freshness; the chart's title names the metric;
the rank table keeps every number whole (its numbers are the panel views', character for
character) and counts the ranks it has no rows for; enlarged panes (e, l, r) fit the screen with
the status bar and keys under them, the log folding its lines so no figure is lost, and their
titles say how to shrink them again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tui_helpers import make_app, screen_text, settle

from mtptui.tui.viewmodel import METRICS, fmt_value, panel_view, spec_for

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
DP8 = str(SAMPLES / "dp-attention-8.log")
SIZES = [(80, 24), (120, 36)]
IDS = ["80x24", "120x36"]
ROW = re.compile(r"^│ +(\d+) (\S+(?: TP\d+ EP\d+)?) +(\S*SPEC ON) +(.*?) *│$")


def rank_rows(lines: list[str]) -> list[re.Match]:
    return [m for line in lines if (m := ROW.match(line))]


def formatted(app, rank_index: int) -> set[str]:
    """Every number the panel view of this rank has, as the screen formats it."""
    dash = app.dash
    t0, t1 = dash.timeline.bounds()
    s = dash.store.ranks(dash.host)[rank_index]
    v = panel_view(s, t0, t1, spec=spec_for(dash.store, dash.host, t1), th=dash.th)
    out = {fmt_value(m, v.now.get(m)) for m in METRICS}
    for m in METRICS:
        st = v.metrics[m].stats
        out |= {fmt_value(m, st[k]) for k in ("min", "mean", "max")}
    return out


def assert_bars(text: str) -> None:
    """The status bar (source, state, time shown) and the keys are on screen."""
    assert "replay dp-attention-8.log │ REPLAY ended; ← to seek at 16:02:57" in text
    assert "q quit" in text


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_main_screen_keeps_host_source_metric_and_whole_numbers(size):
    app = make_app(DP8, window="all")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        lines = screen_text(app)
        text = "\n".join(lines)
        # The host line keeps the host; the epoch strip under it the epoch and its figures (its
        # settings too where it has room: the status bar always names them).
        assert "host gpu-h2  TP 8 · DP 8" in text
        assert re.search(r"\n epoch 1/1 .*│ acc(ept len)? \d\.\d\d", text), text
        assert "spec EAGLE (MTP) steps=3 topk=1 draft=4" in text
        assert_bars(text)
        assert re.search(r"╭─ accept len \(tokens per step", text), "the chart's title names its metric"
        rows = rank_rows(lines)
        assert rows, text
        heads = next(line for line in lines if " now " in line and " mean " in line)[1:-1].split()
        assert heads[:2] == ["now", "mean"] or heads[:4] == ["now", "min", "mean", "max"]
        for m in rows:
            cells = m.group(4).split()
            assert len(cells) == len(heads), (heads, cells)  # a number under each head
            want = formatted(app, int(m.group(1)) - 1)
            # Whole: each cell is one of the rank's numbers as formatted, never a cut one.
            assert set(cells) <= want, (m.group(0), sorted(set(cells) - want))
        hidden = 8 - len(rows)
        if size == (80, 24):
            assert hidden > 0
            names = ", ".join(f"DP{i}" for i in range(8 - hidden, 8))
            assert f"{hidden} more ranks ({names}) · r shows all" in text
        else:
            assert hidden == 0 and "more rank" not in text


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_r_shows_every_rank_and_says_how_to_shrink(size):
    app = make_app(DP8, window="all")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await pilot.press("r")
        await pilot.pause()
        await pilot.pause()
        lines = screen_text(app)
        text = "\n".join(lines)
        assert [int(m.group(1)) for m in rank_rows(lines)] == list(range(1, 9))
        assert "ranks · r or Esc shrinks" in text and "more rank" not in text
        assert_bars(text)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.pause()
        assert "r or Esc shrinks" not in "\n".join(screen_text(app))


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_enlarged_log_fits_and_folds_every_figure(size):
    app = make_app(DP8, window="all")
    last = Path(DP8).read_text().splitlines()[-1].split("]: ", 1)[1]
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await pilot.press("l")
        await pilot.pause()
        lines = screen_text(app)
        text = "\n".join(lines)
        assert lines[0].startswith("╭─ log · l or Esc shrinks")
        assert_bars(text)
        bottom = next(i for i, line in enumerate(lines) if line.startswith("╰"))
        pane = lines[1:bottom]
        assert bottom == size[1] - 4 and all(line.startswith("│") and line.endswith("│") for line in pane)
        # The newest line, folded over several rows, has every character on screen.
        body = "".join("".join(line[1:-1].split()) for line in pane)
        assert "".join(last.split()) in body
        assert len(last) > size[0]  # so it was indeed folded


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_enlarged_events_fit_with_the_bars(size):
    app = make_app(DP8, window="all")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await pilot.press("e")
        await pilot.pause()
        await pilot.pause()
        lines = screen_text(app)
        text = "\n".join(lines)
        assert lines[0].startswith("╭─ events · e or Esc shrinks")
        assert lines[size[1] - 4].startswith("╰") and lines[size[1] - 4].endswith("╯")
        assert_bars(text)
        for entry in ("started   Started sglang-dsv3.service", "ready     The server is fired up and ready to roll!"):
            assert entry in text
        await pilot.press("e")
        await pilot.pause()
        await pilot.pause()
        assert "events (e enlarges)" in "\n".join(screen_text(app))


def test_fit_shortens_then_leaves_out_what_matters_least():
    from mtptui.tui.widgets.fit import Part, fit

    parts = [Part.of(0, "host gpu1"), Part.of(2, "  epoch 2/3 since 16:04:07, restart", "  epoch 2/3"),
             Part.of(3, "  TP 8 · DP 8")]
    assert fit(parts, 80).plain == "host gpu1  epoch 2/3 since 16:04:07, restart  TP 8 · DP 8"
    assert fit(parts, 45).plain == "host gpu1  epoch 2/3 since 16:04:07, restart"
    assert fit(parts, 30).plain == "host gpu1  epoch 2/3"
    assert fit(parts, 12).plain == "host gpu1"
    assert fit(parts, 5).plain == "host gpu1"  # what matters most stays (the screen's edge cuts it)
