"""The epoch strip live (issue 17): its clock counts from the epoch's start while the server
loads (lines without a time of their own to the store, such as `Load weight begin`, do not hold
it at `0m 00s`), never backwards, and its text agrees with the rank panels: it never says "no
decode line in this epoch" while a panel shows the run's accept len."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
from test_screen_truth import plain

from mtptui.core.records import Event
from mtptui.core.store import Store
from mtptui.tui.launch import build_app
from mtptui.tui.timeline import Timeline
from mtptui.tui.widgets.epoch_strip import EpochStrip
from mtptui.tui.widgets.rank_grid import RankPanel

TOGGLE = Path(__file__).resolve().parents[2] / "sample_logs" / "mtp-toggle-restarts.log"
HOST = "gpu-h1"
ARRIVAL = 0.2  # seconds from a line's stamp to its arrival, as a journal follower gets it


def stamp(line: str) -> float:
    return datetime.datetime.fromisoformat(line.split(" ", 1)[0]).timestamp()


class Live:
    """A live dashboard on the toggle sample, its lines arriving as their stamps come, on a wall
    clock the test moves."""

    def __init__(self) -> None:
        self.lines = TOGGLE.read_text().splitlines()
        self.i = 0
        self.now = 0.0
        self.app = build_app([], title="live", window="5m", wall=lambda: self.now)

    def index(self, needle: str, after: int = 0) -> int:
        return next(k for k in range(after, len(self.lines)) if needle in self.lines[k])

    def arrive_until(self, t: float) -> None:
        """The wall clock at t; the lines stamped up to t - ARRIVAL have arrived and are parsed."""
        self.now = t
        batch = []
        while self.i < len(self.lines) and stamp(self.lines[self.i]) + ARRIVAL <= t:
            batch.append(self.lines[self.i])
            self.i += 1
        if batch:
            self.app.dash.feed.lines(batch, HOST)
        self.app.dash.feed.drain()

    def strip(self) -> str:
        return " ".join(plain(self.app.screen.query_one(EpochStrip)).split())


AGE = re.compile(r"· (\d+)m (\d\d)s since")


def age_of(text: str) -> int:
    m = AGE.search(text)
    assert m, text
    return int(m[1]) * 60 + int(m[2])


async def test_the_clock_counts_through_a_load_and_never_goes_back():
    live = Live()
    second = live.index("systemd[1]: Started", after=live.index("systemd[1]: Stopping"))
    ready = live.index("ready to roll", after=second)
    began, ready_at = stamp(live.lines[second]), stamp(live.lines[ready])
    assert ready_at - began > 30  # a load of more than half a minute
    async with live.app.run_test(size=(160, 48)) as pilot:
        live.arrive_until(began + ARRIVAL)  # the Started line
        t = began + ARRIVAL + 0.25
        seen: list[tuple[float, int]] = []
        while t < ready_at + ARRIVAL - 0.01:  # up to just before the ready line arrives
            live.arrive_until(t)
            live.app.screen.redraw_now()
            await pilot.pause()
            text = live.strip()
            assert "epoch 2/2" in text and "LOADING" in text, text
            seen.append((t - began, age_of(text)))
            t += 0.5
        ages = [a for _, a in seen]
        assert all(b >= a for a, b in zip(ages, ages[1:])), seen  # never backwards
        # it counts from the epoch's start: within a second of the time since the Started line
        assert all(abs(a - elapsed) <= 1.0 for elapsed, a in seen), seen


def test_the_live_playhead_follows_the_wall_whatever_lines_without_a_time_arrive():
    """Lines that do not move the store's newest stamp (a load's messages, another host's late
    lines) arrive all the time; the playhead still runs on from the newest stamp, and never back."""
    store = Store()
    wall = [1000.2]
    arrived = [1000.2]
    tl = Timeline(store, wall=lambda: wall[0], last_arrival=lambda: arrived[0])
    store.add_event(Event(kind="started", ts=1000.0, host="h", text="Started x.service"))
    heads = []
    for k in range(1, 40):
        wall[0] = 1000.2 + k * 0.25
        if k % 3 == 0:
            arrived[0] = wall[0]  # a line without a time for the store
        if k == 20:
            store.add_event(Event(kind="ready", ts=1004.0, host="h", text="ready"))  # a stamp behind the wall
            arrived[0] = wall[0]
        heads.append(tl.playhead())
    assert all(b >= a for a, b in zip(heads, heads[1:])), heads
    # before the ready line: the Started line's stamp and the wall time since it arrived
    assert heads[18] == pytest.approx(1000.0 + 19 * 0.25)
    # after: the ready line's stamp and the wall time since it came (1.2 s late)
    assert heads[-1] == pytest.approx(1004.0 + (wall[0] - 1005.2))


async def test_the_strip_never_says_no_decode_line_while_a_panel_shows_accept_len(monkeypatch):
    # The strip's figures are recounted at most every EPOCH_ROWS_S while lines stream: however
    # long that is, the first decode lines of a run are not denied.
    from mtptui.tui.screens import main

    monkeypatch.setattr(main, "EPOCH_ROWS_S", 3600.0)
    live = Live()
    second = live.index("systemd[1]: Started", after=live.index("systemd[1]: Stopping"))
    ready = live.index("ready to roll", after=second)
    first = live.index("Decode batch", after=ready)
    async with live.app.run_test(size=(160, 48)) as pilot:
        live.arrive_until(stamp(live.lines[ready]) + ARRIVAL)
        live.app.screen.redraw_now()  # the figures counted while the run had decoded nothing
        await pilot.pause()
        assert "WAITING FOR FIRST BATCH" in live.strip()
        t = stamp(live.lines[first]) + ARRIVAL
        for _ in range(6):  # the first decode lines, drawn by the screen's own ticks
            live.arrive_until(t)
            await pilot.pause(0.3)
            panel = plain(live.app.screen.query(RankPanel).first())
            accept = next(ln for ln in panel.splitlines() if ln.lstrip().startswith("accept len"))
            text = live.strip()
            assert re.search(r"accept len +\d\.\d\d", accept), panel
            assert "no decode line" not in text, (text, accept)
            assert re.search(r"accept len \d\.\d\d", text), text
            t += 1.0
