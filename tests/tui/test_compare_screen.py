"""The compare screen (c) says what `mtptui summary --json` says about the same log's epochs."""

from __future__ import annotations

from pathlib import Path

from test_screen_truth import summary_json
from textual.widgets import DataTable, Static
from tui_helpers import make_app, settle

from mtptui.core.compare import bucket_cells, epoch_rows
from mtptui.core.epochs import EPOCH_METRICS
from mtptui.tui.screens.compare import CompareScreen, row_cells

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
TOGGLE = str(SAMPLES / "mtp-toggle-restarts.log")
LONG = str(SAMPLES / "long-context-toggle.log")
SIZE = (160, 48)


async def test_c_shows_summarys_epochs_and_escape_closes():
    # The screen reads n and mean per rank (the brief form): summary's epochs cut to those.
    brief = [{**e, "ranks": {r: {m: s[m] and {"n": s[m]["n"], "mean": s[m]["mean"]} for m in EPOCH_METRICS}
                             for r, s in e["ranks"].items()}}
             for e in summary_json(TOGGLE)["epochs"] if e["host"] == "gpu-h1"]
    want = epoch_rows(brief)
    assert len(want) == 3
    app = make_app(TOGGLE)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert screen.rows == want
        table = screen.query_one(DataTable)
        shown = [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
        assert shown == [row_cells(r, app.dash.store.last_ts) for r in want]
        # As an operator reads it: settings, accept len, the host total against the run before and
        # against the spec-off run.
        assert shown[1][1] == "EAGLE steps=3 topk=1 draft=4" and shown[1][2] == f"{want[1].accept_len:.2f}"
        assert [row[5:7] for row in shown] == [("-", "base"), ("+39%", "+39%"), ("-7%", "+29%")]
        assert shown[0][2] == "-"
        assert shown[2][10].endswith("+")  # the last epoch runs to the end of the log
        await pilot.press("down")
        ranks = str(screen.query_one("#ranks", Static).render())
        assert "epoch 2: EAGLE steps=3" in ranks
        assert all(f"{v:.1f}" in ranks for v in want[1].gen_per_rank.values())
        # Under it, the epoch at each load against the spec-off run at that load (summary's numbers).
        lines = ranks.splitlines()
        at = lines.index(next(ln for ln in lines if ln.startswith("at the same load")))
        by_context = lines.index(next(ln for ln in lines if ln.startswith("by context")))
        assert [ln.split() for ln in lines[at + 1:by_context]] == [
            [b.label, f"{b.gen_throughput:.1f}", "tok/s", "acc", "len", f"{b.accept_len:.2f}", str(b.decode), "lines",
             "vs", "prev", "+40%", "vs", "spec", "off", "+40%"] for b in want[1].by_load]
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)


async def test_c_shows_where_speculation_stops_paying_by_context():
    want = epoch_rows(summary_json(LONG)["epochs"])
    assert want[1].stops_paying_from == "32-64k"
    app = make_app(LONG)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await pilot.press("down")
        lines = str(screen.query_one("#ranks", Static).render()).splitlines()
        at = lines.index(next(ln for ln in lines if ln.startswith("by context")))
        # Under the load buckets: the epoch by tokens in use per running request, against the spec-off
        # run in each bucket (summary's numbers), the buckets where MTP runs slower marked, and where
        # that begins.
        shown = [ln.split() for ln in lines[at + 1:at + 1 + len(want[1].by_context)]]
        cells = [bucket_cells(b) for b in want[1].by_context]
        assert [row[:6] for row in shown] == [[c[0], c[3], "tok/s", "acc", "len", c[2]] for c in cells]
        assert [row[-4:] == ["▼", "below", "spec", "off"] for row in shown] == [False, False, False, True, True]
        assert [row[row.index("off") + 1] for row in shown] == [c[5] for c in cells]
        assert lines[at + 1 + len(cells)].strip() == "speculation stops paying from 32-64k tokens per request"


async def test_the_first_epochs_buckets_say_there_is_no_previous_epoch():
    """Whatever a bucket's lines (the first run of this log has a bucket of 2 lines and buckets of
    hundreds), the host's first epoch has nothing before it to compare with, and every bucket says so."""
    first = epoch_rows(summary_json(LONG)["epochs"])[0]
    buckets = first.by_load + first.by_context
    assert any(not b.comparable for b in buckets) and any(b.comparable for b in buckets)
    app = make_app(LONG)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("c")
        lines = str(app.screen.query_one("#ranks", Static).render()).splitlines()
        assert lines[0].startswith("epoch 1: spec off")
        shown = [ln for ln in lines if ln.split() and ln.split()[0] in {b.label for b in buckets}]
        assert len(shown) == len(buckets)
        assert all(ln.endswith("lines  no previous epoch") for ln in shown), shown
        assert not any("vs prev" in ln or "n<10" in ln for ln in lines)
