"""Recording a live session: every journald entry received, as JSON lines, in arrival order.

A record file is an ordinary `journalctl -o json` stream (so `mtptui summary FILE` and
`mtptui replay FILE` read it with the json envelope), with two changes: `_HOSTNAME` is the host's
configured name, the one the dashboard showed; and where a stream was lost, a marker entry (key
`MTPTUI_GAP`, no `__CURSOR`) stands between the last entry before and the first after, so a
replay shows the gap where the live session did. Entries are written as received, never re-encoded
otherwise, so a 10 MB or a binary (byte-list) MESSAGE is kept as journald sent it.
"""

from __future__ import annotations

import json
import os
from typing import IO

from mtptui.core.parse.events import GAP_MARK
from mtptui.sources.base import RECONNECTING, Feed, Source, SourceStatus

_HOSTNAME_KEY = '"_HOSTNAME":"'


def with_hostname(line: str, host: str | None) -> str:
    """The entry with `_HOSTNAME` set to host, edited in place in the text (no json round trip:
    cheap at thousands of lines per second, and the rest of the entry stays byte for byte)."""
    if host is None:
        return line
    if not line.startswith("{"):
        # not journald json (a source that is not a journal): keep the text as the MESSAGE
        return json.dumps({"_HOSTNAME": host, "MESSAGE": line}, ensure_ascii=False)
    quoted = json.dumps(host, ensure_ascii=False)
    i = line.find(_HOSTNAME_KEY)
    if i >= 0:
        start = i + len(_HOSTNAME_KEY) - 1
        end = line.find('"', start + 1)
        if end > 0 and "\\" not in line[start:end]:
            return line[:start] + quoted + line[end + 1:]
    if i >= 0 or '"_HOSTNAME"' in line:
        # an escaped or differently spaced _HOSTNAME: re-encode rather than guess
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            obj["_HOSTNAME"] = host
            return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return '{"_HOSTNAME":' + quoted + ("," if line[1:2] != "}" else "") + line[1:]


class RecordWriter:
    """Appends entries to a file; flushed after every batch so that a killed run keeps its data."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.f: IO[str] = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        self.entries = 0

    def write(self, lines: list[str], host: str | None) -> None:
        self.f.write("".join(with_hostname(x.rstrip("\r\n"), host) + "\n" for x in lines))
        self.f.flush()
        self.entries += len(lines)

    def gap(self, host: str | None, detail: str, ts: float) -> None:
        entry = {"MTPTUI_GAP": "1", "_HOSTNAME": host, "__REALTIME_TIMESTAMP": str(int(ts * 1_000_000)),
                 "MESSAGE": f"{GAP_MARK} {detail}".rstrip()}
        self.f.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.f.flush()

    def close(self) -> None:
        if not self.f.closed:
            self.f.flush()
            os.fsync(self.f.fileno())
            self.f.close()


class RecordingFeed:
    """A Feed that writes every line to the record, then hands everything on unchanged."""

    def __init__(self, inner: Feed | None, writer: RecordWriter) -> None:
        self.inner = inner
        self.writer = writer
        self._state: dict[str | None, str] = {}

    def lines(self, raw: list[str], host: str | None) -> None:
        self.writer.write(raw, host)
        if self.inner is not None:
            self.inner.lines(raw, host)

    def status(self, st: SourceStatus) -> None:
        # one marker per outage, not one per reconnect attempt
        if st.state == RECONNECTING and self._state.get(st.host) != RECONNECTING:
            self.writer.gap(st.host, st.detail, st.ts)
        self._state[st.host] = st.state
        if self.inner is not None:
            self.inner.status(st)

    def dropped(self, n: int, reason: str, host: str | None) -> None:
        if self.inner is not None:
            self.inner.dropped(n, reason, host)


class RecordingSource(Source):
    """Wraps a source so that the dashboard's feed also goes to the record (`--record FILE`)."""

    def __init__(self, inner: Source, writer: RecordWriter) -> None:
        self.inner = inner
        self.writer = writer
        self.label = inner.label

    def __getattr__(self, name: str):
        # host, cursor, received ... of the wrapped source, for whoever shows them
        return getattr(self.inner, name)

    async def run(self, feed: Feed) -> None:
        await self.inner.run(RecordingFeed(feed, self.writer))
