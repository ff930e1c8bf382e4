"""One raw line in, at most one record out: envelope, then SGLang or vLLM, then events."""

from __future__ import annotations

from dataclasses import dataclass

from mtptui.core.parse import events, sglang, vllm
from mtptui.core.parse.envelope import EnvelopeError, EnvelopeReader
from mtptui.core.records import SPEC, BatchStats, Event, LogLine

# Lines longer than this are counted as dropped rather than parsed: no stats line comes near it,
# and a runaway line (a dumped tensor, a binary blob) must not stall the pipeline.
MAX_LINE = 1 << 20

BATCH, EVENT, OTHER, DROPPED = "batch", "event", "other", "dropped"


@dataclass(slots=True)
class Parsed:
    outcome: str  # BATCH, EVENT, OTHER or DROPPED
    line: LogLine | None
    record: BatchStats | Event | None = None
    reason: str = ""  # why a line was dropped


class LineParser:
    """Stateful only where the logs are: the year for year-less stamps and vLLM's engine context."""

    def __init__(self) -> None:
        self.envelope = EnvelopeReader()
        self._vllm_rank: dict[str | None, str] = {}

    def parse(self, raw: str, host: str | None = None) -> Parsed:
        if len(raw) > MAX_LINE:
            return Parsed(DROPPED, None, reason=f"line over {MAX_LINE} bytes")
        if "\x00" in raw:
            return Parsed(DROPPED, None, reason="binary data (NUL bytes)")
        try:
            line = self.envelope.read(raw)
        except EnvelopeError as e:
            return Parsed(DROPPED, None, reason=str(e))
        if host is not None:
            line.host = host
        text = line.text
        pre = sglang.split_prefix(text)
        if pre is not None:
            stamp, millis, rank, msg = pre
            inner = sglang.prefix_time(stamp, millis)
            if inner is not None:
                self.envelope.year = int(stamp[:4])
            ts = line.ts if (line.zoned or inner is None) else inner
            rec = sglang.parse_batch(msg, ts, line.host, rank)
            if rec is not None:
                return Parsed(BATCH, line, rec)
            return self._event(line, msg, ts, rank)
        if vllm.looks_like_vllm(text):
            rec, inner = vllm.parse_stats(text, line.host, self.envelope.year)
            if rec is not None:
                if not line.zoned and inner is not None:
                    rec.ts = inner
                elif line.ts is not None:
                    rec.ts = line.ts
                if rec.kind == SPEC:
                    rec.rank = self._vllm_rank.get(line.host, "")
                else:
                    self._vllm_rank[line.host] = rec.rank
                return Parsed(BATCH, line, rec)
        return self._event(line, text, line.ts, "")

    def _event(self, line: LogLine, msg: str, ts: float | None, rank: str) -> Parsed:
        hit = events.classify(msg)
        if hit is None:
            return Parsed(OTHER, line)
        kind, data = hit
        return Parsed(EVENT, line, Event(kind=kind, ts=ts, host=line.host, text=msg, rank=rank, data=data))
