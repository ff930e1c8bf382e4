"""The replay clock and source, without a screen; the source only reads, and the dashboard's feed
(tests/unit/test_dashboard_feed.py) parses each line once and paces it by the clock, on a fake clock."""

from __future__ import annotations

import math
import time

import pytest

from mtptui.core.store import Store
from mtptui.sources.base import FAILED, SourceStatus
from mtptui.sources.replay import MAX_SPEED, ReplayClock, ReplaySource, parse_speed
from mtptui.tui.feed import DashboardFeed

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


def paced_feed(clock: ReplayClock) -> tuple[Store, DashboardFeed]:
    store = Store()
    feed = DashboardFeed(store)
    feed.clock = clock
    return store, feed


async def test_the_source_only_reads_the_feed_parses_once_and_releases_at_the_clock(tmp_path):
    p = tmp_path / "x.log"
    # 0 s, 1 s, then a 4 s gap: at 20x that is 0.05 s and 0.2 s of (fake) wall time.
    p.write_text(line(T0) + line(T0 + 1) + line(T0 + 5))
    wall = FakeWall()
    clock = ReplayClock(20.0, clock=wall)
    store, feed = paced_feed(clock)
    parsed = []
    parse = feed.ingest.parser.parse
    feed.ingest.parser.parse = lambda raw, host=None: parsed.append(raw) or parse(raw, host)
    await ReplaySource(str(p), clock).run(feed)
    assert feed.pending == 3 and parsed == [], "the source reads; it parses nothing"
    feed.pump()
    assert len(parsed) == 3 and feed.counts.read == 1, "parsed at once, the first line released"
    for step, read in ((0.04, 1), (0.01, 2), (0.19, 2), (0.01, 3)):
        wall.t += step
        feed.pump()
        assert feed.counts.read == read, (step, read)
    assert len(parsed) == 3, "each line parsed once"
    assert clock.ended and store.last_ts == T0 + 5


async def test_full_speed_reads_everything_in_chunks(tmp_path):
    p = tmp_path / "x.log"
    p.write_text("".join(line(T0 + k) for k in range(5000)))
    feed = ListFeed()
    await ReplaySource(str(p), ReplayClock(MAX_SPEED)).run(feed)
    assert len(feed.got) == 5000


async def test_full_speed_still_tells_the_clock_where_the_data_ends(tmp_path):
    p = tmp_path / "x.log"
    p.write_text("".join(line(T0 + k) for k in range(5000)) + "a last line without a stamp\n")
    wall = FakeWall()
    clock = ReplayClock(MAX_SPEED, clock=wall)
    _, feed = paced_feed(clock)
    await ReplaySource(str(p), clock).run(feed)
    feed.drain()
    assert clock.ended and clock.released == T0 + 4999 and feed.counts.read == 5001
    clock.set_speed(1.0, at=T0 + 4999)  # slowed down after the end: the clock stays there
    wall.t += 50
    assert clock.position() == T0 + 4999


async def test_paused_replay_releases_nothing_until_resumed(tmp_path):
    p = tmp_path / "x.log"
    p.write_text(line(T0) + line(T0 + 1))
    clock = ReplayClock(1.0, paused=True, clock=FakeWall())
    _, feed = paced_feed(clock)
    await ReplaySource(str(p), clock).run(feed)
    feed.drain()
    assert feed.counts.read == 1 and not clock.ended  # the first line anchors the clock; nothing after it plays
    clock.seek(+5)
    feed.drain()
    assert feed.counts.read == 2 and clock.ended


async def test_each_file_is_paced_on_its_own(tmp_path):
    """Two files on one clock: a later line of one never holds back an earlier line of the other."""
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text(line(T0) + line(T0 + 10))
    b.write_text(line(T0 + 5, rank=1))
    wall = FakeWall()
    clock = ReplayClock(1.0, clock=wall)
    store, feed = paced_feed(clock)
    await ReplaySource(str(a), clock).run(feed)
    await ReplaySource(str(b), clock).run(feed)
    feed.drain()
    assert feed.counts.read == 1
    wall.t += 5
    feed.drain()
    assert feed.counts.read == 2 and [s.rank for s in store.ranks(None)] == ["TP0", "TP1"]
    wall.t += 5
    feed.drain()
    assert feed.counts.read == 3 and clock.ended


async def test_unreadable_input_is_a_failed_status(tmp_path):
    feed = ListFeed()
    await ReplaySource(str(tmp_path / "missing.log"), ReplayClock(MAX_SPEED)).run(feed)
    assert feed.states[-1].state == FAILED and "no such file" in feed.states[-1].detail


async def test_a_line_dated_year_10000_neither_crashes_nor_holds_a_replay(tmp_path):
    """Issue 42: one entry dated year 10000 crashed the dashboard (open, replay); held by its time,
    it would also have held every line after it. It is dropped and counted; the next is released."""
    import json

    p = tmp_path / "x.json"
    msg = line(T0).split("] ", 1)[1].strip()  # the message without SGLang's own stamp
    entries = [{"__REALTIME_TIMESTAMP": str(int(t * 1_000_000)), "_HOSTNAME": "h", "MESSAGE": msg}
               for t in (T0, 253402300800.0, T0 + 1)]
    p.write_text("".join(json.dumps(e) + "\n" for e in entries))
    wall = FakeWall()
    clock = ReplayClock(20.0, clock=wall)
    store, feed = paced_feed(clock)
    await ReplaySource(str(p), clock).run(feed)
    for _ in range(5):
        feed.pump()
        wall.t += 0.1
    c = feed.counts
    assert (c.read, c.batch, c.dropped) == (3, 2, 1) and c.drop_reasons == {"time outside 1970-9999": 1}
    assert store.last_ts == T0 + 1
