"""The log pane's memory: the newest lines as read, bounded, one small tuple per line.

An ``Ingest`` line sink, or given lines in bulk as they came (``add_raw``): those are read for
the pane (parsed for their time and kind) only when the pane reaches them, so under a flood the
lines that scroll by unseen cost an append each, never a parse. The pane renders only what fits
on screen from here on its tick, never a widget write per line.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from mtptui.core.parse import BATCH, DROPPED, EVENT, LineParser, Parsed

# Line kinds, for colouring
DECODE_LINE = "decode"
PREFILL_LINE = "prefill"
EVENT_LINE = "event"
OTHER_LINE = "other"
DROPPED_LINE = "dropped"
RAW_LINE = "raw"  # not read yet: the text as it came (newest_first reads it)


# An entry is a plain tuple (seq, ts, host, kind, text), not an object: tuples of strings and
# numbers drop out of the garbage collector's view, and 20,000 tracked objects that each live
# for 20,000 lines made its collections pause the screen for tens of milliseconds.
#   seq: 1, 2, ... over the whole session, so "N new lines" is a subtraction
#   ts: log time (the previous line's for a line without one); host; kind (below); text
Entry = tuple
SEQ, TS, HOST, KIND, TEXT = range(5)


class LogBuffer:
    def __init__(self, maxlen: int = 20000) -> None:
        self.lines: deque[Entry] = deque(maxlen=maxlen)
        self.seq = 0
        self._last_ts: dict[str | None, float | None] = {}
        self._parser: LineParser | None = None  # for the lines taken raw

    def add_line(self, p: Parsed) -> None:
        self.seq += 1
        self.lines.append(self._entry(self.seq, p))

    def add_raw(self, raw: list[str], host: str | None) -> None:
        """Lines as they came (`host`: the source's name for their host), read when shown."""
        seq = self.seq
        self.lines.extend((seq + k, None, host, RAW_LINE, text) for k, text in enumerate(raw, 1))
        self.seq += len(raw)

    def newest_first(self, host=None) -> Iterator[Entry]:
        """The entries from the newest back, each line taken raw read as the pane reaches it
        (and kept read). `host`: only that host's lines (and those of no host), when given; a
        line taken raw for another host is passed over unread."""
        lines = self.lines
        for i in range(len(lines) - 1, -1, -1):
            e = lines[i]
            if e[KIND] == RAW_LINE:
                if host is not None and e[HOST] is not None and e[HOST] != host:
                    continue
                if self._parser is None:
                    self._parser = LineParser()
                e = lines[i] = self._entry(e[SEQ], self._parser.parse(e[TEXT], e[HOST]), follows=False)
            yield e

    def _entry(self, seq: int, p: Parsed, follows: bool = True) -> Entry:
        """`follows`: the line comes after the ones before it, whose time a line without one takes."""
        line = p.line
        if p.outcome == DROPPED or line is None:
            return (seq, None, None, DROPPED_LINE, f"[line not read: {p.reason}]")
        host = line.host
        rec = p.record
        ts = rec.ts if rec is not None and rec.ts is not None else line.ts
        if follows:
            if ts is None:
                ts = self._last_ts.get(host)
            else:
                self._last_ts[host] = ts
        if p.outcome == BATCH:
            kind = PREFILL_LINE if p.record.kind == "prefill" else DECODE_LINE
        elif p.outcome == EVENT:
            kind = EVENT_LINE
        else:
            kind = OTHER_LINE
        return (seq, ts, host, kind, line.text)

    # The Ingest sink interface: records are the store's business; this buffer keeps lines.
    def add_batch(self, rec) -> None:
        pass

    def add_event(self, ev) -> None:
        pass

    def clear(self) -> None:
        self.lines.clear()
        self._last_ts.clear()
