"""The dashboard's feed (tui/feed.py, Textual-free): raw lines parsed in slices into the store,
every line counted, a backlog dropped oldest first and said so, a lost connection a gap event;
and the live state that the timeline reads from it."""

from __future__ import annotations

import time

from mtptui.core.store import Store
from mtptui.sources.base import FAILED, RECONNECTING, SourceStatus
from mtptui.tui.feed import DashboardFeed

T0 = 1773072000.0


def line(t: float) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
    return (f"[{stamp} TP0] Decode batch, #running-req: 4, #token: 10, token usage: 0.01, accept len: 2.50, "
            "accept rate: 0.50, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0")


def test_feed_parses_in_slices_and_counts_every_line():
    store = Store()
    feed = DashboardFeed(store)
    feed.lines([line(T0 + k) for k in range(3000)], None)
    feed.lines(["plain text", "{not json"], "h")
    assert feed.pending == 3002
    first = feed.pump(budget_s=0.0)  # one slice of 256 even with no budget
    assert 0 < first < 3002
    feed.drain()
    c = feed.counts
    assert feed.pending == 0 and c.read == 3002 and c.batch == 3000 and c.unparsed + c.dropped == 2
    assert feed.log.seq == 3002


def test_feed_drops_oldest_when_parsing_falls_behind_and_says_so():
    store = Store()
    feed = DashboardFeed(store, max_pending=1000)
    for k in range(5):
        feed.lines([line(T0 + k)] * 400, None)
    assert feed.pending <= 1000
    feed.drain()
    c = feed.counts
    assert c.read == 2000 and c.dropped == 2000 - c.batch and c.dropped >= 1000
    assert any("backlog" in r for r in c.drop_reasons)


def test_reconnecting_becomes_a_gap_event():
    store = Store()
    feed = DashboardFeed(store)
    feed.lines([line(T0)], "gpu1")
    feed.drain()
    feed.status(SourceStatus("gpu1", RECONNECTING, "connection lost"))
    feed.status(SourceStatus("gpu1", RECONNECTING, "retry 2"))  # the same outage
    gaps = [e for e in store.events if e.kind == "gap"]
    assert len(gaps) == 1 and gaps[0].host == "gpu1" and gaps[0].ts == T0
    feed.status(SourceStatus("gpu1", "streaming"))
    feed.status(SourceStatus("gpu1", RECONNECTING, "lost again"))
    assert len([e for e in store.events if e.kind == "gap"]) == 2


def test_a_host_that_never_sent_a_line_is_named_but_has_no_gap_and_no_time():
    store = Store()
    feed = DashboardFeed(store)
    feed.status(SourceStatus("gpu9", "connecting"))
    feed.status(SourceStatus("gpu9", RECONNECTING, "connection refused"))
    assert store.hosts() == ["gpu9"], "the screen can name it before its first line"
    assert [e for e in store.events if e.kind == "gap"] == [] and store.last_ts is None
    feed.lines([line(T0)], "gpu1")
    feed.drain()
    assert store.hosts() == ["gpu9", "gpu1"]


def test_the_live_state_says_live_only_while_the_stream_is_up():
    from mtptui.tui.timeline import Timeline

    store = Store()
    feed = DashboardFeed(store)
    feed.lines([line(T0)], "gpu1")  # lines came before: they are not current
    feed.drain()
    link = ["connecting"]
    tl = Timeline(store, link=lambda: link[0])
    assert tl.state_label() == "CONNECTING"
    link[0] = RECONNECTING
    assert tl.state_label() == "RECONNECTING"
    tl.toggle_pause()
    assert tl.state_label() == "RECONNECTING paused"
    tl.toggle_pause()
    link[0] = "streaming"
    assert tl.state_label() == "LIVE"
    link[0] = FAILED
    assert tl.state_label() == "FAILED"
