"""The audit screen on a small terminal (issue 17): at 80x24 the table fits the screen (no
sideways scrolling), every result is whole, and a cell too long for its column is cut with an
ellipsis, at a space where one is near, never at the edge mid-word (`applie`, `rolled`); the
details below keep everything whole."""

from __future__ import annotations

import time

import pytest
from test_audit_screen import entry, open_audit, phase, write_log
from textual.widgets import DataTable, Static
from tui_helpers import make_app

HOST = "gpu-h1.example.internal"
RESULTS = [("applied", 0, "verified: accept len 2.41 after 3 batches (server_args, decode lines)"),
           ("rolled_back", 3, "not ready after 120 s (starting); rolled back, old state verified: speculation off"),
           ("rollback_failed", 4, "the rollback's run failed: RuntimeError: Not enough memory"),
           ("lock_lost", 4, "lost the lock to ops@laptop pid 4242 (it took this console for gone): stopped at wait"),
           ("not_run", 1, "locked by ops@laptop pid 4242 since 12:01:07 (apply mtp3, phase wait)"),
           ("interrupted", None, "[TP0] KeyboardInterrupt"), ("running", None, "")]


def entries() -> list[dict]:
    out = []
    for k, (result, code, message) in enumerate(RESULTS):
        e = entry(1_800_000_000 + 600 * k, HOST if k % 2 else "gpu2", "mtp3", result, code, message,
                  [phase("lock", "start", 0.0), phase("lock", "ok", 0.2)])
        e["unit"] = "sglang-qwen3.5-122b.service"
        out.append(e)
    return out


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_clip_cuts_at_a_space_with_an_ellipsis():
    from mtptui.tui.screens.audit import ELLIPSIS, clip

    assert clip("rolled_back", 11) == "rolled_back"
    assert clip("no ready within 900 s", 12) == "no ready…"
    assert clip("KeyboardInterrupt", 10) == "KeyboardI" + ELLIPSIS  # one word: cut where it must be
    assert len(clip("a" * 40, 7)) == 7


@pytest.mark.parametrize("width", [76, 96, 116, 156])
def test_the_layout_fits_and_keeps_every_result_whole(width):
    from mtptui.tui.screens.audit import ELLIPSIS, PAD, table_layout

    es = entries()
    layout, rows = table_layout(es, width)
    assert sum(w + PAD for _, w in layout) <= width
    names = [n for n, _ in layout]
    assert "result" in names and "host" in names and "message" in names
    for e, row in zip(es, rows):
        cells = dict(zip(names, row))
        assert cells["result"] == e["result"]
        for (name, w), text in zip(layout, row):
            assert len(text) <= w
            if name != "time":
                full = {"host": e["host"], "unit": e["unit"], "action": f"apply {e['profile']}",
                        "result": e["result"], "message": e["message"]}[name]
                assert text == full or (text.endswith(ELLIPSIS) and full.startswith(text[:-1])), (name, text)
    if width >= 156:  # room for everything, the year and the unit too
        assert names == ["time", "host", "unit", "action", "result", "message"] and rows[0][0] == "2027-01-15 08:00:00"


async def test_at_80x24_the_table_fits_and_no_word_is_cut_at_the_edge(tmp_path, monkeypatch, utc):
    log = tmp_path / "audit.jsonl"
    write_log(log, entries())
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_audit(pilot, monkeypatch, log)
        table = app.screen.query_one(DataTable)
        assert table.virtual_size.width <= table.size.width  # nothing beyond the edge
        drawn = [table.render_line(y).text for y in range(1, table.row_count + 1)]
        for (result, _, _), line in zip(reversed(RESULTS), drawn):
            assert f" {result} " in line, line
        assert any("[TP0]" in line for line in drawn)  # brackets are text, not markup
        first = str(app.screen.query_one("#detail", Static).render()).splitlines()
        assert first[1] == "running", first  # no message: no colon after the result
        await pilot.press("down", "down", "down")  # lock_lost, the details whole
        text = " ".join(str(app.screen.query_one("#detail", Static).render()).split())
        assert "lock_lost (exit 4): lost the lock to ops@laptop pid 4242 (it took this console for gone)" in text
        assert f"on {HOST} · sglang-qwen3.5-122b.service" in text


async def test_a_resize_fits_the_table_again(tmp_path, monkeypatch, utc):
    log = tmp_path / "audit.jsonl"
    write_log(log, entries())
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await open_audit(pilot, monkeypatch, log)
        await pilot.press("down")
        assert "unit" in [str(c.label) for c in app.screen.query_one(DataTable).columns.values()]
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert table.virtual_size.width <= table.size.width and table.cursor_row == 1
        assert "unit" not in [str(c.label) for c in table.columns.values()]


def test_audit_screen_80x24(snap_compare, tmp_path, monkeypatch, utc):
    assert audit_snapshot(snap_compare, tmp_path, monkeypatch, (80, 24))


def test_audit_screen_100x30(snap_compare, tmp_path, monkeypatch, utc):
    assert audit_snapshot(snap_compare, tmp_path, monkeypatch, (100, 30))


def test_audit_screen_160x48(snap_compare, tmp_path, monkeypatch, utc):
    assert audit_snapshot(snap_compare, tmp_path, monkeypatch, (160, 48))


def audit_snapshot(snap_compare, tmp_path, monkeypatch, size: tuple[int, int]) -> bool:
    monkeypatch.chdir(tmp_path)  # the log's path is on screen: the same on every run
    log = "audit.jsonl"
    write_log(tmp_path / log, entries())

    async def run_before(pilot):
        await open_audit(pilot, monkeypatch, log)
        await pilot.pause()

    return snap_compare(make_app(), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 48)])
async def test_the_hint_stays_on_screen_under_long_details(tmp_path, monkeypatch, utc, size):
    """The details (an ExecStart that wraps) take what room is left: the hint below them, and the
    count of bad lines, are never pushed past the box's edge."""
    log = tmp_path / "audit.jsonl"
    write_log(log, entries())
    with log.open("a") as f:
        f.write("not an action\n")
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await open_audit(pilot, monkeypatch, log)
        await pilot.pause()
        box = app.screen.query_one("AuditScreen > Vertical").content_region
        for name in ("#hint", "#bad"):
            region = app.screen.query_one(name).region
            assert region.height == 1 and box.contains_region(region), (name, region, box)
