"""The live journal's decoding in bulk (sources/journal.py): the entries of each read decoded at once
and pushed in one list, as the line-by-line decoding gave them, and the source's guarantees kept
(a cut line held back, an oversize one counted as dropped, the newest cursor noted)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled import _store

from mtptui.core import compiled
from mtptui.sources.journal import MAX_LINE, Entries, LineSplitter


class LineByLine:
    """The splitter as it was: each line decoded on its own (the reference)."""

    def __init__(self, max_line: int) -> None:
        self.buf = bytearray()
        self.max_line = max_line
        self.skipping = False
        self.too_long = 0

    def push(self, data: bytes) -> list[str]:
        start = len(self.buf)
        self.buf += data
        if self.buf.find(b"\n", start) < 0:
            if len(self.buf) > self.max_line:
                if not self.skipping:
                    self.too_long += 1
                self.skipping = True
                self.buf.clear()
            return []
        parts = self.buf.split(b"\n")
        self.buf = bytearray(parts.pop())
        if self.skipping:
            parts.pop(0)
            self.skipping = False
        return [p.decode("utf-8", "replace") for p in parts if p[:1] == b"{"]


_pieces = st.sampled_from([b"{", b"}", b"\n", b"\r", b"x", b'"MESSAGE":"a"', "é€😀".encode(), b"\xe2\x82", b"\xf0\x9f",
                           b"\xff", b"\x80", b"\xc3", b"-- No entries --", b"\x00", b" "])


@settings(max_examples=500, deadline=None)
@given(data=st.lists(_pieces, max_size=60).map(b"".join), cuts=st.lists(st.integers(0, 400), max_size=8),
       max_line=st.sampled_from([4, 16, 64, 1 << 20]))
def test_entries_decoded_in_bulk_are_those_decoded_line_by_line(data, cuts, max_line):
    """Any bytes (broken UTF-8 at a line's end or across reads, notes, oversize lines), read in any
    pieces: the same lines, the same count of lines too long, the same tail held back."""
    bulk, ref = LineSplitter(max_line), LineByLine(max_line)
    at = 0
    for cut in sorted(cuts) + [len(data)]:
        piece = data[at:max(at, cut)]
        at = max(at, cut)
        assert bulk.push(piece) == ref.push(piece)
        assert (bulk.too_long, bulk.skipping, bytes(bulk.buf)) == (ref.too_long, ref.skipping, bytes(ref.buf))


class Pushed:
    """A feed that keeps what it was given."""

    def __init__(self) -> None:
        self.chunks: list[tuple[list[str], str | None]] = []
        self.drops: list[tuple[int, str]] = []

    def lines(self, raw: list[str], host: str | None) -> None:
        self.chunks.append((raw, host))

    def dropped(self, n: int, reason: str, host: str | None) -> None:
        self.drops.append((n, reason))


def _entry(i: int, msg: object) -> bytes:
    return (json.dumps({"__CURSOR": f"s=ab;i={i:x}", "__REALTIME_TIMESTAMP": str(1773072205000000 + i),
                        "_HOSTNAME": "gpu", "MESSAGE": msg}) + "\n").encode()


def test_entries_keep_the_cursor_of_the_newest_and_count_what_is_too_long():
    feed = Pushed()
    entries = Entries("gpu1")
    entries.splitter = LineSplitter(max_line=1000)  # MAX_LINE's 64 MiB, smaller
    data = _entry(1, "a") + _entry(2, "b")[:20]
    assert entries.take(data, feed) == 1 and entries.cursor == "s=ab;i=1"
    assert entries.take(_entry(2, "b")[20:] + b'{"MESSAGE":"no cursor"}\n', feed) == 2
    assert entries.cursor == "s=ab;i=2"  # the last with one
    assert entries.take(b"{" + b"x" * 1001, feed) == 0
    assert feed.drops == [(1, f"journal line over {MAX_LINE >> 20} MiB")]
    assert entries.take(b"x\n" + _entry(3, "c"), feed) == 1 and entries.cursor == "s=ab;i=3"
    assert [len(lines) for lines, _ in feed.chunks] == [1, 2, 1] and {h for _, h in feed.chunks} == {"gpu1"}


def test_live_entries_reach_the_store_as_the_python_path_reads_them():
    """A message as a byte array, non-ASCII, escapes: the store fed through Entries (the lane where it
    can) holds what the Python path makes of the same lines, one at a time."""
    msgs = ["[2026-03-09 16:03:25 TP0] Decode batch, #running-req: 3, accept len: 2.50, cuda graph: True",
            list("[2026-03-09 16:03:26 TP1] Decode batch, #running-req: 4, accept len: 1.50".encode()),
            "[2026-03-09 16:03:27 TP0] Decode batch, #running-req: 5, accept len: 3.00 é",
            "[2026-03-09 16:03:28 TP0] Scheduler hit an exception: \"boom\"\n",
            "[2026-03-09 16:03:29 TP1] Decode batch, #running-req: 6, accept len: 2.00\n"]
    data = b"".join(_entry(i, m) for i, m in enumerate(msgs))
    read: list = []

    def live(ingest):
        class ToStore(Pushed):
            def lines(self, raw, host):
                ingest.feed_many(raw, host)

        entries = Entries("gpu1")
        for i in range(0, len(data), 97):
            entries.take(data[i:i + 97], ToStore())
        lane = ingest.sinks[0].lane
        read.append((lane.batches if lane is not None else None, ingest.counts.to_json()))

    def one_at_a_time(ingest):
        for line in data.decode().splitlines():
            ingest.take(ingest.parser.general(line, "gpu1"))
        read.append((None, ingest.counts.to_json()))

    assert _store(live) == _store(one_at_a_time)
    assert read[0][1] == read[1][1]
    assert read[0][0] == (2 if compiled.ENABLED else None)  # two batch lines are the lane's, the rest Python's
