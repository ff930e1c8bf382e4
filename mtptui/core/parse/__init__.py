"""One raw line in, at most one record out: envelope, then SGLang (behind its own prefix or any
other) or vLLM, then events.

Two paths, one result. ``LineParser.general`` reads any line: the envelope, then the message.
``LineParser.parse`` first tries its fast paths, which read the common lines (SGLang's batch
lines and other prefixed lines, raw or in journald's `short` envelope, or behind a Ray actor's
decoration) from one regex match or a head remembered from an earlier line, and hands every
other line to ``general``. The rule: for every line, after any lines before it, a fast path
either declines or gives what ``general`` gives: the same record, the same LogLine when lines
are kept, and the same date noted (``LogDate``, timeparse.py: the one place the date a log has
reached is kept). The compiled lane (core/_compiled.pyx) is a fast path of its own, held to the
same rule. tests/unit/test_fast_general.py holds all of them to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from mtptui.core.parse import events, prefix, sglang, timeparse, vllm
from mtptui.core.parse.envelope import SHORT_STAMP, EnvelopeError, EnvelopeReader
from mtptui.core.parse.limits import MAX_LINE
from mtptui.core.parse.cursors import SAME_ENTRY, Cursors
from mtptui.core.parse.timeparse import STAMPS, LogDate
from mtptui.core.records import DECODE, PREFILL, SGLANG, SPEC, BatchStats, Event, LogLine

# what became of a line (Parsed.outcome)
BATCH: Final = "batch"
EVENT: Final = "event"
OTHER: Final = "other"
DROPPED: Final = "dropped"
RECORDED: Final = "recorded"  # mtptui's own entry of a record (core/recorded.py)
Outcome: TypeAlias = Literal["batch", "event", "other", "dropped", "recorded"]
SPEC_CONFIG = "spec_config"
# vLLM's decoration of its API server's lines (0.11+: `(APIServer pid=12) `): uvicorn's start behind it
# is vLLM's, whose engine is loaded by then (events.HTTP_UP), whether its start was in the log or not
VLLM_API_SERVER = "(APIServer pid="
HEAD_CACHE = 4096  # heads kept (cleared when full: stamps move on, old heads never return)
HEAD_MISSES = 64  # lookups missed in a row before they pause ...
HEAD_PAUSE = 4096  # ... for this many lines
PREFIX_CACHE = 4096  # other prefixes read, by their text
CLOCK_STEP_S = 900.0  # time zones differ in steps of a quarter hour ...
MAX_ZONE_S = 14 * 3600.0  # ... and by at most 14 hours from UTC (Kiribati)

# Its classes, and the body templates' (sglang._Template), admit no NUL, CR or ESC: a batch line
# read on this path needs none of the checks and cleaning the general path does for those.
_FAST = re.compile(
    r"(?:(" + SHORT_STAMP + r")(\.\d{1,6})? ([^\s\x00\x1b]+) [^\s\[:\x00\x1b]+(?:\[\d+\])?: ?)?"
    r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d{3}))?((?: [A-Z_]+-?\d+)*)\] ?"
    r"(?:(Decode|Prefill) batch(?: \[\d+\])?[.,] ?)?"
)


TRACEBACK = "Traceback (most recent call last)"
TROUBLE = ("crash", "error", "oom", "nccl", "watchdog")
MAX_FRAMES = 200  # lines of a traceback kept in its event (the first ones: where it began)
MAX_FRAME = 1000  # characters of each
# A traceback's own lines: a frame or its code (indented), the carets under it, a chained
# traceback's header and the sentences between them, a blank line between those.
_FRAME = re.compile(r"\s+\S|\s*$|Traceback \(most recent call last\)|During handling of the above exception"
                    r"|The above exception was the direct cause")
# Its last line: the exception, `RuntimeError: ...`, `torch.OutOfMemoryError: ...`, `KeyboardInterrupt`
_EXCEPTION = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure|Timeout|Fault)"
                        r"(?::|$)")
# A teardown's lines after its first (torch 2.x c10d, ProcessGroupNCCL.cpp and c10/util/Exception.cpp):
# the watchdog's further lines, `[rank0]:[E709 17:05:38.4 ProcessGroupNCCL.cpp:1899] ...` (`[E
# ProcessGroupNCCL.cpp:456] ` before 2.3; group 1: its rank), the C++ exception's `Exception raised from
# checkTimeout at ...` and `frame #0: ...`, `terminate called after throwing an instance of '...'`,
# its `  what():  ...`, torch's rank prefix on a Python traceback's lines (`[rank0]: ...`), blank lines.
_TEARDOWN = re.compile(r"(?:\[rank(\d+)\]:)?(?:\[[EFWI]\d{0,4}[ \d:.]*\w+\.(?:cpp|hpp|h):\d+\]|\[rank\d+\]: ?"
                       r"|Exception raised from |frame #\d+: |terminate called after throwing an instance of |\s+what\(\): "
                       r"|\s*$)")
# torch's c10 log prefix (glog's shape): `[rank0]:[E709 17:05:38.482326987 ProcessGroupNCCL.cpp:1536] `
_TORCH_LOG = re.compile(r"(?:\[rank(\d+)\]:)?\[[EFWI]\d{0,4}[ \d:.]*\w+\.(?:cpp|hpp|h):\d+\] ?")
# A fault handler's dump after its `Fatal Python error: Segmentation fault` (CPython's faulthandler.c,
# 3.8-3.13): its threads' headers, their frames, the extension modules, blank lines.
_DUMP = re.compile(r"(?:Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):|\s+File \"|\s+<no Python frame>"
                   r"|\s+\.\.\.|Extension modules: |Python runtime state: |\s*$")
TEARDOWN, DUMP = "teardown", "dump"  # Block.shape, besides a traceback's ""


@dataclass(slots=True)
class Block:
    """A traceback being gathered into the event its first line made (events.classify)."""
    event: Event
    before: str  # the text before `Traceback` on its first line: a prefix that its lines may repeat
    opened: str  # the first line's message
    done: bool = False  # its exception line came
    waiting: bool = False  # an error message whose traceback may follow on the next line
    shape: str = ""  # TEARDOWN (torch's NCCL watchdog), DUMP (a fault handler's), "" (a traceback)
    rank: str | None = None  # a teardown's `[rankN]` (another rank's is a teardown of its own)

    def add(self, frame: str) -> None:
        frames = self.event.data.setdefault("frames", [])
        if len(frames) < MAX_FRAMES:
            frames.append(frame[:MAX_FRAME])


@dataclass(slots=True)
class ParsedBatch:
    """A batch line: its record, and its LogLine (a fast path leaves it out without keep_lines)."""
    outcome: Literal["batch"]
    line: LogLine | None
    record: BatchStats
    reason: str = ""


@dataclass(slots=True)
class ParsedEvent:
    """A lifecycle or trouble line: its event."""
    outcome: Literal["event"]
    line: LogLine
    record: Event
    reason: str = ""


@dataclass(slots=True)
class ParsedOther:
    """Ordinary text (OTHER, with its line), or a line that could not be read at all (DROPPED,
    no line, and why)."""
    outcome: Literal["other", "dropped"]
    line: LogLine | None
    record: None = None
    reason: str = ""  # why a line was dropped


@dataclass(slots=True)
class ParsedRecorded:
    """An entry mtptui wrote into its own record beside the host's lines: its key and payload
    are the line's `own` (core/recorded.py), for the sinks that read them; not the host's text."""
    outcome: Literal["recorded"]
    line: LogLine
    record: None = None
    reason: str = ""


# What parse() gives for a line; its outcome tells which (p.outcome == BATCH: p.record is a BatchStats)
Parsed: TypeAlias = ParsedBatch | ParsedEvent | ParsedOther | ParsedRecorded


class LineParser:
    """Stateful only where the logs are: the date the log has reached (for year-less and
    time-only stamps) and vLLM's engine context."""

    def __init__(self, unresolved_rank: str = "") -> None:
        self.dates = LogDate()
        self.envelope = EnvelopeReader(self.dates)
        # host -> rank of its last vLLM throughput line, for the spec line that follows it
        self.vllm_rank: dict[str | None, str] = {}
        # the rank of a spec line with no throughput line before it; a reader of a file's middle
        # part marks them to resolve once the part before is known
        self.unresolved_rank = unresolved_rank
        self._prefixes: dict[str, tuple] = {}  # prefix.read of other prefixes, by their text
        self.vllm_hosts: set[str | None] = set()  # hosts whose vLLM start was seen (events.HTTP_UP)
        # host -> the traceback being gathered there (Block): its event, the prefix its lines repeat
        self.blocks: dict[str | None, Block] = {}
        # Batch heads by the text they begin with, up to the first field (envelope, stamp, rank,
        # head): a busy log repeats each for a second of lines, and a dict lookup costs less
        # than the regex. Lookups pause for a while after a run of misses (stamps with
        # milliseconds, vLLM lines: nothing repeats).
        self._heads: dict[str, tuple] = {}
        self._misses = 0
        self._skip_lookups = 0
        # Whether batch results carry their LogLine. A reader that only wants records (summary)
        # turns it off; building the line is a fair part of the cost of a batch line.
        self.keep_lines = True
        # host -> how far its server's stamps were off the envelope's clock (seconds, in quarter
        # hours), as first seen: a stream has one clock, the envelope's; noted once for the reader
        self.clock_offsets: dict[str | None, float] = {}
        self.cursors = Cursors()  # the journald entries read lately: one read again is dropped and counted

    def on_envelope_clock(self, host: str | None, inner: float | None, env: float | None) -> float | None:
        """A server's own stamp on the envelope's clock. The two differ by the server's time zone
        against the reader's (a container left in UTC, read where it is 8 hours later): a batch
        line then would sit hours away from the systemd lines around it. Line by line, in quarter
        hours (a zone's step; less is the one clock read twice, and the stamp's own precision is
        kept), so that any part of a log reads alone as it does in the whole."""
        if inner is None or env is None:
            return inner
        off = round((inner - env) / CLOCK_STEP_S) * CLOCK_STEP_S
        if not off or abs(off) > MAX_ZONE_S:
            return inner  # the same clock, or no zone's: a guessed year, a stamp that lies
        if host not in self.clock_offsets:
            self.clock_offsets[host] = off
        return inner - off

    def parse(self, raw: str, host: str | None = None) -> Parsed:
        """A line (what general() gives for it, faster): by a head remembered from an earlier line
        where there is one (a busy log repeats each for a second of lines), else by what its start
        matches (_by_start)."""
        if len(raw) > MAX_LINE:
            return ParsedOther(DROPPED, None, reason=f"line over {MAX_LINE} bytes")
        key = None
        if self._skip_lookups:
            self._skip_lookups -= 1
        else:
            i = raw.find("] ")
            j = raw.find(", ", i) if i > 0 else -1
            if j > 0 and raw[j - 1] != "]":  # `Decode batch [N], ` changes N on every line: no key
                key = raw[:j + 2]
                known = self._heads.get(key)
                if known is not None:
                    self._misses = 0
                    fast = self._fast(known, j + 2, raw, host)
                    if fast is not None:
                        return fast
                    key = None  # a body the fast path does not read: as below, without it
                else:
                    self._missed()
        return self._by_start(raw, host, key)

    def _missed(self) -> None:
        """A head not remembered: after HEAD_MISSES in a row, lookups pause for HEAD_PAUSE lines
        (stamps with milliseconds, vLLM's lines: nothing repeats)."""
        self._misses += 1
        if self._misses > HEAD_MISSES:
            self._misses = 0
            self._skip_lookups = HEAD_PAUSE

    def _by_start(self, raw: str, host: str | None, key: str | None) -> Parsed:
        """A line whose head was not remembered, by what its start matches (_FAST): a batch head
        (remembered under `key` when the key is that head whole), a Ray actor's line, any other
        line with SGLang's prefix; each by its fast path, and what that leaves by general()."""
        m = _FAST.match(raw)
        if m is None:
            if raw[:1] == "(":
                fast = self._actor_fast(raw, host, key)
                if fast is not None:
                    return fast
            return self.general(raw, host)
        if m.group(7) is not None:  # a batch head
            known = self._head(m)
            if key is not None and m.end() == len(key) and known[4] is None:
                if len(self._heads) >= HEAD_CACHE:
                    self._heads.clear()
                self._heads[key] = known
            fast = self._fast(known, m.end(), raw, host)
        elif "\x00" not in raw and "\r" not in raw and "\x1b" not in raw:
            fast = self._fast_other(m, raw, host)
        else:
            fast = None
        return self.general(raw, host) if fast is None else fast

    def general(self, raw: str, host: str | None = None) -> Parsed:
        """Any line, read step by step: what parse() gives for it, without the fast paths."""
        if len(raw) > MAX_LINE:
            return ParsedOther(DROPPED, None, reason=f"line over {MAX_LINE} bytes")
        if "\x00" in raw:
            return ParsedOther(DROPPED, None, reason="binary data (NUL bytes)")
        try:
            line = self.envelope.read(raw)
        except EnvelopeError as e:
            return ParsedOther(DROPPED, None, reason=str(e))
        if host is not None:
            line.host = host
        if line.cursor is not None and self.cursors.seen(line.cursor):
            return ParsedOther(DROPPED, line, reason=SAME_ENTRY)  # counted once (the lane leaves it here)
        if line.own is not None:
            return ParsedRecorded(RECORDED, line)
        text = line.text
        if self.blocks and line.host in self.blocks and not (text[:1] == "[" and sglang.split_prefix(text)):
            if self._continue_block(line.host, text):
                return ParsedOther(OTHER, line)  # the traceback of the error block on the line before
        engine = ""
        if text[:1] == "(":
            actor = prefix.actor(text)
            if actor is not None:
                engine, at = actor
                text = prefix.without_repeat_note(text[at:])
        pre = sglang.split_prefix(text) if text[:1] == "[" else None
        if pre is not None:
            return self._sglang_prefixed(line, text, engine, pre)
        if "batch" in text:
            rec = self._other_prefix(line, text, engine)
            if rec is not None:
                return ParsedBatch(BATCH, line, rec)
        # What no SGLang prefix reads is read whole, a Ray actor's decoration and all: vLLM's
        # stats lines, then events.
        if vllm.looks_like_vllm(line.text):
            stats = self._vllm_stats(line)
            if stats is not None:
                return stats
        return self._unprefixed(line)

    def _sglang_prefixed(self, line: LogLine, text: str, engine: str, pre: tuple[str, str | None, str, str]) -> Parsed:
        """A line behind SGLang's own prefix (pre: sglang.split_prefix of text): a batch line, or
        else an event or other."""
        stamp, millis, rank, msg = pre
        if engine:
            rank = f"{engine} {rank}" if rank else engine
        ts = self._stamp_time(line, stamp, millis)
        rec = sglang.parse_batch(msg, ts, line.host, rank) if msg[:1] in "DP" else None
        if rec is None and "batch" in msg:  # a head after a further prefix: `[...] [gpu=0] Decode batch`
            rec = self._other_prefix(line, text, engine)
        if rec is not None:
            return ParsedBatch(BATCH, line, rec)
        return self._event(line, msg, ts, rank)

    def _vllm_stats(self, line: LogLine) -> ParsedBatch | None:
        """vLLM's stats line, on the envelope's clock. A spec line carries no engine: it is the
        rank of the throughput line before it on its host."""
        rec, inner = vllm.parse_stats(line.text, line.host, self.dates.year)
        if rec is None:
            return None
        if not line.zoned and inner is not None:
            rec.ts = self.on_envelope_clock(line.host, inner, line.ts)
        elif line.ts is not None:
            rec.ts = line.ts
        if rec.kind == SPEC:
            rec.rank = self.vllm_rank.get(line.host, self.unresolved_rank)
        else:
            self.vllm_rank[line.host] = rec.rank
        self.vllm_hosts.add(line.host)
        return ParsedBatch(BATCH, line, rec)

    def _unprefixed(self, line: LogLine) -> Parsed:
        """A line without SGLang's prefix at its start: an event in vLLM's format or systemd's, or
        uvicorn's start on a vLLM host; else other."""
        text = line.text
        ts = line.ts
        if ts is None and line.host in self.blocks:
            ts = self.blocks[line.host].event.ts  # a traceback's bare line: the traceback's time
        p = self._event(line, text, ts, "")
        if p.outcome == EVENT:
            ev = p.record
            if " - " in text or "] " in text:
                self._vllm_event(line, ev, text)
            if ev.kind == "starting" or (ev.kind == SPEC_CONFIG and "non-default args: " in text):
                self.vllm_hosts.add(line.host)
        elif events.HTTP_UP in text and (line.host in self.vllm_hosts or text.startswith(VLLM_API_SERVER)):
            # its text from uvicorn's words on, behind whatever prefix (`(APIServer pid=1) INFO:     `)
            ready = Event(kind="ready", ts=line.ts, host=line.host, text=text[text.find(events.HTTP_UP):],
                          data={"by": "uvicorn"})
            p = ParsedEvent(EVENT, line, ready)
        return p

    def _vllm_event(self, line: LogLine, ev: Event, text: str) -> None:
        """An event behind vLLM's own prefix (`INFO 03-09 16:00:00 [file.py:12] `) or Python
        logging's: its time from that stamp, as for vLLM's stats lines, and its text the message
        after it."""
        inner, at = vllm.stamp(text, self.dates.year)
        if inner is not None and not line.zoned:
            ev.ts = self.on_envelope_clock(line.host, inner, line.ts)
        if at and ev.text == text:
            ev.text = text[at:]  # the message, as SGLang's events have it
        if at and ev.kind in TROUBLE and TRACEBACK not in text:
            # vLLM's logger.exception: the message, then its traceback, each line behind the
            # same prefix: one error block, one event (the traceback's header is no other)
            self.blocks[line.host] = Block(ev, text[:at], ev.text, waiting=True)

    def _stamp_time(self, line: LogLine, stamp: str, millis: str | None) -> float | None:
        """The time of a line with SGLang's prefix: a zoned envelope's, else the prefix's (on the
        envelope's clock when there is one)."""
        if line.zoned:
            return line.ts
        if len(stamp) == 8:
            return self.on_envelope_clock(line.host, self.dates.time_of_day(stamp, millis, line.ts), line.ts)
        inner = self.dates.full(stamp, millis)
        return line.ts if inner is None else self.on_envelope_clock(line.host, inner, line.ts)

    def _other_prefix(self, line: LogLine, text: str, engine: str) -> BatchStats | None:
        """A batch line after any other prefix (text: the message, without a Ray actor's
        decoration, whose engine token comes separately): its rank tokens and stamp are read
        wherever the prefix has them. It must carry a readable field: without SGLang's own
        prefix, that is what tells a batch line from text that names one."""
        at = prefix.head_at(text)
        if at < 0:
            return None
        kind = DECODE if text[at] == "D" else PREFILL
        m = sglang.HEAD.match(text, at)
        fields = None if m is None else sglang.fast_body(kind, text, m.end())
        rec = None if fields is None else BatchStats(kind, None, line.host, "", SGLANG, fields, {}, False)
        if rec is None:
            rec = sglang.parse_batch(text[at:], None, line.host, "")
            if rec is None or not rec.fields:
                return None
        before = text[:at]
        known = self._prefixes.get(before)
        if known is None:
            if len(self._prefixes) >= PREFIX_CACHE:
                self._prefixes.clear()
            known = self._prefixes[before] = prefix.read(before)
        rank, stamp = known
        if engine:
            rank = f"{engine} {rank}" if rank else engine
        rec.ts, rec.rank = self._prefix_time(line, stamp), rank
        return rec

    def _prefix_time(self, line: LogLine, stamp: tuple) -> float | None:
        """The time of a line from the stamp prefix.read found: a zoned envelope's time first, as
        for SGLang's own prefix; then a dated stamp's, a time-only one's, a month-and-day one's."""
        kind = stamp[0]
        if line.zoned or kind == prefix.NO_STAMP:
            return line.ts
        _, date, hms, frac, zone = stamp
        if kind == prefix.TIME_ONLY:
            ts = self.dates.time_of_day(hms, frac, line.ts)
        elif kind == prefix.MONTH_DAY:
            ts = self.dates.month_day(f"{date} {hms}", "." + frac if frac else None)
        else:
            ts = timeparse.instant(f"{date} {hms}", frac, zone) if zone else self.dates.full(f"{date} {hms}", frac)
        return line.ts if ts is None else self.on_envelope_clock(line.host, ts, line.ts)

    @staticmethod
    def _head(m: re.Match) -> tuple:
        """What a batch line's envelope, prefix and head say, from its fast match: (kind, time,
        host, rank, millis, date, short stamp, its fraction, where the prefix starts)."""
        short, frac, env_host, stamp, millis, rank, kind = m.groups()
        ts = STAMPS.get(stamp) if millis is None else None
        if ts is None:
            ts = timeparse.instant(stamp, millis, None)
        return (DECODE if kind == "Decode" else PREFILL, ts, env_host, rank[1:], millis, stamp[:10], short, frac,
                m.start(4) - 1)

    def _fast(self, head: tuple, end: int, raw: str, host: str | None) -> Parsed | None:
        """The common case: an SGLang batch line, raw or in journald's `short` envelope, with a
        body of a known layout, its head read by one regex (or known from an earlier line that
        began with the same text up to the first field). Anything else returns None for the
        general path, which gives the same result for these lines (the module's rule)."""
        kind, ts, env_host, rank, _, date, short, frac, start = head
        fields = sglang.fast_body(kind, raw, end)
        if fields is None:
            return None
        if host is None:
            host = env_host
        if short is not None and ts is not None:  # the envelope's year as below
            ts = self.on_envelope_clock(host, ts, self.dates.month_day(short, frac))
        if not self.keep_lines and ts is not None:
            if date != self.dates.date:  # as dates.full() notes it
                self.dates.note(date)
            return ParsedBatch(BATCH, None, BatchStats(kind, ts, host, rank, SGLANG, fields, {}, False))
        # the envelope's year is the one before this line's date is noted, as for general()
        env_ts = None if short is None else self.dates.month_day(short, frac)
        if ts is not None and date != self.dates.date:
            self.dates.note(date)
        text = raw[start:-1] if raw.endswith("\n") else raw[start:]
        rec = BatchStats(kind, ts if ts is not None else env_ts, host, rank, SGLANG, fields, {}, False)
        return ParsedBatch(BATCH, LogLine(text, host, None, env_ts), rec)

    def _actor_fast(self, raw: str, host: str | None, key: str | None) -> Parsed | None:
        """A Ray actor's batch line, `(SGLangEngine pid=41820) [2026-03-22 13:53:37 TP0] Decode
        batch, ...` without an envelope: the fast path after the decoration, the engine in the
        rank (RL frameworks log millions of these). Its head is remembered like the others."""
        actor = prefix.actor(raw)
        if actor is None:
            return None
        engine, at = actor
        m = _FAST.match(raw, at)
        if m is None or m.group(7) is None or m.group(1) is not None:
            return None
        kind, ts, env_host, rank, millis, date, short, frac, _ = self._head(m)
        known = (kind, ts, env_host, f"{engine} {rank}" if rank else engine, millis, date, short, frac, 0)
        if key is not None and m.end() == len(key) and millis is None:
            if len(self._heads) >= HEAD_CACHE:
                self._heads.clear()
            self._heads[key] = known
        return self._fast(known, m.end(), raw, host)

    def _fast_other(self, m: re.Match, raw: str, host: str | None) -> Parsed | None:
        """Any other line with SGLang's prefix (and the same envelopes), free of NUL, CR and
        ESC: an event or ordinary text, read from the fast match instead of matching the
        envelope and prefix again."""
        msg = raw[m.end():]
        if msg[:1] in "DP" or "batch" in msg:
            return None  # a batch head cut short, or after a further prefix: the general path knows those
        short, frac, env_host, stamp, millis, rank, _ = m.groups()
        if msg.endswith("\n"):
            msg = msg[:-1]
            raw = raw[:-1]
        env_ts = None if short is None else self.dates.month_day(short, frac)
        host = env_host if host is None else host
        ts = self.dates.full(stamp, millis)
        ts = env_ts if ts is None else self.on_envelope_clock(host, ts, env_ts)
        line = LogLine(raw[m.start(4) - 1:], host, None, env_ts)
        return self._event(line, msg, ts, rank[1:])

    def _event(self, line: LogLine, msg: str, ts: float | None, rank: str) -> Parsed:
        hit = events.classify(msg)
        if hit is None:
            return ParsedOther(OTHER, line)
        kind, data = hit
        ev = Event(kind=kind, ts=ts, host=line.host, text=msg, rank=rank, data=data)
        at = msg.find(TRACEBACK)
        if at >= 0:
            whole = line.text
            before = whole[:whole.find(TRACEBACK)] if TRACEBACK in whole else ""
            self.blocks[line.host] = Block(ev, before, msg)
        elif kind == "nccl" and (_TORCH_LOG.match(msg) or msg.startswith("terminate called after throwing")):
            # torch's watchdog tearing a rank's process down: a dozen lines, one event, whose text is
            # what its first says, its log prefix cut
            head = _TORCH_LOG.match(msg)
            if head is not None and msg[head.end():].strip():
                ev.text = msg[head.end():]
            self.blocks[line.host] = Block(ev, "", msg, shape=TEARDOWN, rank=head.group(1) if head is not None else None)
        elif kind == "crash" and msg.startswith("Fatal Python error: "):
            self.blocks[line.host] = Block(ev, "", msg, shape=DUMP)
        return ParsedEvent(EVENT, line, ev)

    def _continue_block(self, host: str | None, text: str) -> bool:
        """A line after a traceback's first on its host: a frame (kept in the event's data), the
        exception line (the event's text from then on), or the end of the traceback. The line
        itself is read as any other line is, whatever it is here: no batch line is swallowed.
        True for the traceback header of a vLLM error block (the line after its message, behind
        the same prefix): part of that event, no event of its own."""
        block = self.blocks[host]
        if block.shape:
            return self._continue_fault(host, block, text)
        if block.waiting:
            block.waiting = False
            if block.before and text.startswith(block.before) and text.startswith(TRACEBACK, len(block.before)):
                return True
            del self.blocks[host]
            return False
        body = text
        if block.before and text.startswith(block.before):
            body = text[len(block.before):]  # vLLM's formatter repeats its prefix on every line
        if _FRAME.match(body):
            if not block.done or body.strip():
                block.add(body)
            return False
        if _EXCEPTION.match(body):
            ev = block.event
            if not block.done:
                block.done = True
                ev.data["opened"] = block.opened
                ev.data["exception"] = ev.text = body[:MAX_FRAME]
            else:
                block.add(body)  # a chained exception's: the first is the cause, and the text
            return False
        del self.blocks[host]
        return False

    def _continue_fault(self, host: str | None, block: Block, text: str) -> bool:
        """A line after an NCCL teardown's or a fault handler's first: True (kept in the event's
        frames, no event of its own) while it is one of that fault's lines; else the fault is over
        and the line is read as any other (another rank's teardown is an event of its own)."""
        if block.shape == TEARDOWN:
            tag = _TEARDOWN.match(text)
            ok = tag is not None and (tag.group(1) is None or tag.group(1) == block.rank or block.rank is None)
        else:
            ok = _DUMP.match(text) is not None
        if not ok:
            del self.blocks[host]
            return False
        if text.strip():
            block.add(text)
        return True
