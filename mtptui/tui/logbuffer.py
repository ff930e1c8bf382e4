"""The log pane's memory: the newest lines as read, bounded, one small tuple per line.

An ``Ingest`` line sink. The pane renders only what fits on screen from here on its tick, so a
flood of lines costs an append each, never a widget write each.
"""

from __future__ import annotations

from collections import deque
from mtptui.core.parse import BATCH, DROPPED, EVENT, Parsed

# Line kinds, for colouring
DECODE_LINE = "decode"
PREFILL_LINE = "prefill"
EVENT_LINE = "event"
OTHER_LINE = "other"
DROPPED_LINE = "dropped"


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

    def add_line(self, p: Parsed) -> None:
        self.seq += 1
        line = p.line
        o = p.outcome
        if o == DROPPED or line is None:
            self.lines.append((self.seq, None, None, DROPPED_LINE, f"[line not read: {p.reason}]"))
            return
        host = line.host
        rec = p.record
        ts = rec.ts if rec is not None and rec.ts is not None else line.ts
        if ts is None:
            ts = self._last_ts.get(host)
        else:
            self._last_ts[host] = ts
        if o == BATCH:
            kind = PREFILL_LINE if rec.kind == "prefill" else DECODE_LINE
        elif o == EVENT:
            kind = EVENT_LINE
        else:
            kind = OTHER_LINE
        self.lines.append((self.seq, ts, host, kind, line.text))

    # The Ingest sink interface: records are the store's business; this buffer keeps lines.
    def add_batch(self, rec) -> None:
        pass

    def add_event(self, ev) -> None:
        pass

    def clear(self) -> None:
        self.lines.clear()
        self._last_ts.clear()
