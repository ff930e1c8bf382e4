"""`mtptui open` (and `replay --speed max`): a file read at once and shown whole. A progress bar
while it reads, keys answering meanwhile (q quits, and the read gives up), then every figure of
the whole file (`summary --json`'s, held to it in test_screen_truth.py), the playhead at the end,
and left seeks back."""

from __future__ import annotations

import threading

import pytest
from test_screen_truth import plain
from tui_helpers import long_log, open_app, settle, until

from mtptui.tui.opening import Opening
from mtptui.tui.widgets.rank_grid import RankPanel
from mtptui.tui.widgets.status_bar import StatusBar

SIZE = (160, 48)


@pytest.fixture
def gate(monkeypatch):
    """Holds the read (in its thread, begun as the dashboard is made) until the test opens the
    gate: the real read, run later."""
    event = threading.Event()
    real = Opening._read

    def held(self, *args, **kwargs):
        event.wait(60)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Opening, "_read", held)
    yield event
    event.set()


async def test_progress_while_it_reads_then_the_whole_file_at_its_end(tmp_path, gate):
    app = open_app(long_log(tmp_path / "long.log"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        d = app.dash
        bar = app.screen.query_one("#loading")
        assert bar.display and not d.opening.done
        status = plain(app.screen.query_one(StatusBar))
        assert "open long.log: reading" in status and "OPENING" in status
        assert d.feed.counts.read == 0 and not d.store.series
        await pilot.press("w")  # keys work during the read
        assert d.timeline.window_label != "all"
        await pilot.press("w", "w", "w", "w")
        assert d.timeline.window_label == "all"
        gate.set()
        await until(pilot, lambda: d.opening.done, "the file read")
        await settle(pilot, app)
        assert not bar.display
        assert d.feed.counts.read == 20_004
        assert d.timeline.playhead() == d.store.last_ts
        # read at once, not played: OPEN, and no replay that "ended"
        assert d.timeline.state_label() == "OPEN; ← to seek"
        assert "open long.log │ OPEN; ← to seek at " in plain(app.screen.query_one(StatusBar))
        seconds = iter(range(int(d.wall()) + 10, int(d.wall()) + 20))
        d.wall = lambda: float(next(seconds))  # ticks a second apart after the read: no lines
        d.tick()
        d.tick()
        assert d.lines_per_s is None  # and no rate ("0 lines/s") made of that
        # More than the ring holds, and the panels cover all of it: no "buffer shorter" note.
        (s0, s1) = d.store.ranks("gpu-h1")
        assert s0.decode_batches == 10_000 and len(s0.decode) == s0.decode.capacity
        assert all("buffer shorter" not in str(p.border_subtitle) for p in app.screen.query(RankPanel))
        # The chart (accept len: the spec-on run) spans the whole run, its overview before the
        # ring, not the ring's tail.
        spec_on = d.store.epochs["gpu-h1"][1].start
        assert s0.decode.first_time() > spec_on + 300
        chart = app.screen.query_one("#chart")
        times = [t for ts, _ in chart.data.series.values() for t in ts]
        assert min(times) < spec_on + 60
        # Left seeks back from the end, and pauses there.
        end = d.timeline.playhead()
        await pilot.press("left")
        assert d.timeline.playhead() < end and d.replay.paused
        assert d.timeline.state_label() == "OPEN paused max"


async def test_q_during_the_read_quits_and_the_read_gives_up(tmp_path, gate):
    app = open_app(long_log(tmp_path / "long.log"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        assert not app.dash.opening.done
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
    assert app.dash.opening.progress.stopped
    gate.set()  # the held read now starts, and stops at its first block
    (worker,) = [w for w in app.workers if w.group == "open"] or [None]
    if worker is not None:
        await worker.wait()
    assert not app.dash.store.series
