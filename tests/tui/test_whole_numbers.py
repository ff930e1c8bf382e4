"""At 80x24, 100x30 and 160x48 no number is cut mid-value: the compare screen shows every epoch's
figures whole (the columns it has no room for left out and said in the detail under it, never cut
at the edge), the epoch strip holds its figures on whole lines, the rank panels' titles keep their
badges whole, and the keys' footer shows only whole keys. Read from the composed screen's text and
held to the figures the screen was given (summary's epochs, as in test_screen_truth.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.text import Text
from textual.content import Content
from tui_helpers import make_app, screen_text, settle

from mtptui.tui.screens.compare import COLUMNS, KEPT, CompareScreen, fit_columns, row_cells, short_settings
from mtptui.tui.widgets.rank_grid import panel_title

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
TOGGLE = str(SAMPLES / "mtp-toggle-restarts.log")
DP8 = str(SAMPLES / "dp-attention-8.log")
SIZES = [(80, 24), (100, 30), (160, 48)]
IDS = ["80x24", "100x30", "160x48"]
# each sample at each size
EVERY = pytest.mark.parametrize(("size", "path"), [(s, p) for s in SIZES for p in (TOGGLE, DP8)],
                                ids=[f"{i}-{n}" for i in IDS for n in ("toggle", "dp8")])
CUT = re.compile(r"\d…|…\d")  # an ellipsis against a digit: a number cut


def _text(cell) -> str:
    return cell.plain if isinstance(cell, (Content, Text)) else str(cell)


@EVERY
async def test_compare_shows_every_figure_whole(size, path):
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await pilot.press("c")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        lines = screen_text(app)
        text = "\n".join(lines)
        assert not CUT.search(text), text
        cells = [row_cells(r, app.dash.store.last_ts) for r in screen.rows]
        shown, headers, short = fit_columns(cells, screen.table_width())
        assert shown[:KEPT] == list(range(KEPT))  # the figures that say whether a retune helped, always
        head = next(ln for ln in lines if " # " in ln and "settings" in ln)
        assert all(f" {headers[i]} " in head + " " for i in shown), head
        for r, row in zip(screen.rows, cells):
            line = next(ln for ln in lines if re.match(rf"^█ +{r.index + 1}  ", ln))
            for i in shown:
                want = short_settings(_text(row[i])) if short and i == 1 else _text(row[i])
                # whole: the value with a space or the border on either side
                assert re.search(rf"(?<= ){re.escape(want)}(?=  | *█$)", line), (COLUMNS[i], want, line)
        # The columns left out are in the detail under the table, for the epoch picked.
        hidden = [COLUMNS[i] for i in range(len(COLUMNS)) if i not in shown]
        assert screen.hidden == hidden
        if size[0] == 160:
            assert hidden == []
        detail = " ".join(str(screen.query_one("#ranks").render()).split())
        r = screen.rows[0]
        assert f"{r.decode_batches:,} decode line" in detail and "began " in detail and " ran " in detail
        assert f"gen tok/s/rank {row_cells(r, app.dash.store.last_ts)[7]}" in detail


@EVERY
async def test_main_screen_cuts_no_number_and_no_key(size, path):
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        lines = screen_text(app)
        text = "\n".join(lines)
        assert not CUT.search(text), text
        # The epoch strip: one line from 160 wide down (its compact form when the full one would
        # wrap), each change whole on it.
        strip = lines[2] if lines[0].lstrip().startswith("◆") else lines[1]
        assert strip.lstrip().startswith("epoch "), lines[:4]
        below = lines[lines.index(strip) + 1]
        assert not below.strip() or below.startswith(("╭", "╔", "┏", " ")) and "%" not in below, below
        assert re.search(r"host (total )?\d+ (gen )?tok/s", strip), strip
        # The footer: whole keys only, the palette's on the right.
        footer = lines[-1]
        assert footer.rstrip().endswith("^p palette"), footer
        words = footer.split("▏")[0].split()
        assert words[:2] == ["q", "quit"]
        keys = dict(zip(words[::2], words[1::2]))
        assert all(w.isalpha() or w in ("/", "?") for w in keys.values() if w not in ("back", "fwd")), footer


def test_a_panel_title_keeps_its_badges_whole():
    marks = Content.assemble((" SPEC ON ", "bold"), " ", (" STALE 35s ", "bold"))
    full = panel_title(1, "DP0 TP0 EP0", marks, 0)
    assert full.plain == "1 DP0 TP0 EP0  SPEC ON   STALE 35s "
    assert panel_title(1, "DP0 TP0 EP0", marks, 34).plain == "1 DP0  SPEC ON   STALE 35s "
    assert panel_title(1, "DP0 TP0 EP0", marks, 26).plain == "DP0  SPEC ON   STALE 35s "
    assert panel_title(1, "DP0 TP0 EP0", marks, 12).plain == " SPEC ON   STALE 35s "
    assert panel_title(2, "pid=41820 TP0", marks, 30).plain == "2 TP0  SPEC ON   STALE 35s "
