"""The replay clock and source, without a screen (the dashboard's feed: tests/unit/test_dashboard_feed.py)."""

from __future__ import annotations

import asyncio
import math
import time

import pytest

from mtptui.sources.base import ENDED, FAILED, SourceStatus
from mtptui.sources.replay import MAX_SPEED, ReplayClock, ReplaySource, parse_speed

T0 = 1773072000.0


def stamp(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def line(t: float, rank: int = 0) -> str:
    return (f"[{stamp(t)} TP{rank}] Decode batch, #running-req: 4, #token: 10, token usage: 0.01, "
            f"accept len: 2.50, accept rate: 0.50, cuda graph: True, gen throughput (token/s): 100.00, "
            f"#queue-req: 0\n")


class FakeWall:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_clock_moves_at_speed_pauses_and_seeks():
    w = FakeWall()
    c = ReplayClock(2.0, clock=w)
    assert c.position() is None
    c.start_at(T0)
    w.t += 5
    assert c.position() == T0 + 10
    c.pause()
    w.t += 100
    assert c.position() == T0 + 10
    assert c.seek(-4) == T0 + 6
    c.resume()
    w.t += 1
    assert c.position() == T0 + 8
    c.set_speed(10.0)
    w.t += 1
    assert c.position() == T0 + 18


def test_clock_full_speed_is_unlimited_until_paused_or_seeked():
    c = ReplayClock(MAX_SPEED, clock=FakeWall())
    c.start_at(T0)
    assert c.unlimited and c.position() == math.inf
    c.pause(at=T0 + 50)  # the dashboard passes the newest line's time
    assert c.position() == T0 + 50 and not c.unlimited
    c.resume()
    assert c.position() == math.inf
    assert c.seek(-10, at=T0 + 70) == T0 + 60
    assert c.paused, "a seek at full speed pauses there"
    assert c.seek(-100, lo=T0) == T0  # not before the oldest data


def test_clock_stops_at_the_end_once_every_source_ended():
    w = FakeWall()
    c = ReplayClock(1.0, clock=w)
    c.sources_seen = c.open_sources = 1
    c.start_at(T0)
    c.note_released(T0 + 60)
    w.t += 70
    assert c.position() == T0 + 70, "a source still reading: the clock runs on to its next line"
    c.open_sources = 0
    assert c.ended and c.position() == T0 + 60
    w.t += 1000  # the operator looks at the end for a while
    assert c.position() == T0 + 60
    assert c.seek(-10) == T0 + 50, "a seek back starts from the end at once"
    w.t += 5
    assert c.position() == T0 + 55
    w.t += 100
    assert c.position() == T0 + 60


def test_speed_steps_and_parsing():
    c = ReplayClock(1.0, clock=FakeWall())
    c.start_at(T0)
    assert c.step_speed(1) == 2.0
    assert c.step_speed(-1) == 1.0
    for _ in range(20):
        c.step_speed(1)
    assert c.speed == MAX_SPEED
    assert c.step_speed(-1) == 1000.0
    assert parse_speed("max") == MAX_SPEED and parse_speed("10x") == 10.0 and parse_speed("0.5") == 0.5
    for bad in ("0", "-1", "fast", "nan", "inf5"):
        with pytest.raises(ValueError):
            parse_speed(bad)


class ListFeed:
    def __init__(self) -> None:
        self.got: list[tuple[float, str]] = []
        self.states: list[SourceStatus] = []

    def lines(self, raw, host):
        now = time.monotonic()
        self.got += [(now, r) for r in raw]

    def status(self, st):
        self.states.append(st)

    def dropped(self, n, reason, host):
        raise AssertionError("a file replay loses nothing")


async def test_replay_keeps_the_gaps_scaled_by_speed(tmp_path):
    p = tmp_path / "x.log"
    # 0 s, 1 s, then a 4 s gap: at 20x that is 0.05 s and 0.2 s.
    p.write_text(line(T0) + line(T0 + 1) + line(T0 + 5))
    feed = ListFeed()
    clock = ReplayClock(20.0)
    await ReplaySource(str(p), clock).run(feed)
    times = [t for t, _ in feed.got]
    assert len(times) == 3
    assert 0.03 <= times[1] - times[0] <= 0.2
    assert 0.15 <= times[2] - times[1] <= 0.5
    assert feed.states[-1].state == ENDED and clock.ended


async def test_full_speed_reads_everything_in_chunks(tmp_path):
    p = tmp_path / "x.log"
    p.write_text("".join(line(T0 + k) for k in range(5000)))
    feed = ListFeed()
    await ReplaySource(str(p), ReplayClock(MAX_SPEED)).run(feed)
    assert len(feed.got) == 5000


async def test_full_speed_still_tells_the_clock_where_the_data_ends(tmp_path):
    p = tmp_path / "x.log"
    p.write_text("".join(line(T0 + k) for k in range(5000)) + "a last line without a stamp\n")
    clock = ReplayClock(MAX_SPEED)
    await ReplaySource(str(p), clock).run(ListFeed())
    assert clock.ended and clock.released == T0 + 4999
    clock.set_speed(1.0, at=T0 + 4999)  # slowed down after the end: the clock stays there
    await asyncio.sleep(0.05)
    assert clock.position() == T0 + 4999


async def test_paused_replay_releases_nothing_until_resumed(tmp_path):
    p = tmp_path / "x.log"
    p.write_text(line(T0) + line(T0 + 1))
    feed = ListFeed()
    clock = ReplayClock(1.0, paused=True)
    task = asyncio.ensure_future(ReplaySource(str(p), clock).run(feed))
    await asyncio.sleep(0.2)
    assert len(feed.got) <= 1  # the first line anchors the clock; nothing after it plays
    clock.seek(+5)
    await asyncio.wait_for(task, 2)
    assert len(feed.got) == 2


async def test_unreadable_input_is_a_failed_status(tmp_path):
    feed = ListFeed()
    await ReplaySource(str(tmp_path / "missing.log"), ReplayClock(MAX_SPEED)).run(feed)
    assert feed.states[-1].state == FAILED and "no such file" in feed.states[-1].detail
