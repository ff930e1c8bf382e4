"""Recording a live session: every journald entry received, as JSON lines, in arrival order.

A record file is an ordinary `journalctl -o json` stream (so `mtptui summary FILE` and
`mtptui replay FILE` read it with the json envelope), with two changes: `_HOSTNAME` is the host's
configured name, the one the dashboard showed; and where a stream was lost, a marker entry (key
`MTPTUI_GAP`, no `__CURSOR`) stands between the last entry before and the first after, so a
replay shows the gap where the live session did. Entries are written as received, never re-encoded
otherwise, so a 10 MB or a binary (byte-list) MESSAGE is kept as journald sent it.

A record is never truncated by accident. A new record refuses a file that exists; `append` adds
to it (each host resuming after its last entry in the file: a journal's by its cursor, see
`last_cursors`, a container's by the runtime's stamp and text, see `last_stamps`); `force`
overwrites it, but only once the first entry has come: it writes to a hidden file beside it and
renames that over the old one then, its mode and owner kept. Only a regular file is ever appended
to or replaced: a device, a FIFO, a socket or a symbolic link is refused (mtptui/files.py). A
session that received no entry (the host unreachable) leaves no file behind and an old one as it
was, byte for byte. A write that fails (a full disk) stops the record, never the session: what
came after is counted (`lost`) and the command says so and exits 1.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable, Iterator
from typing import IO, Any

from mtptui.core import recorded as recorded_entries
from mtptui.files import NotReplaced, Replacing, replaceable
from mtptui.core.parse import timeparse
from mtptui.core.parse.events import GAP_MARK
from mtptui.core.recorded import Recorded
from mtptui.sources.base import RECONNECTING, Feed, Source, SourceStatus
from mtptui.sources.container import ContainerLogSource, Resume
from mtptui.sources.journal import JournalSource, cursor_of
from mtptui.sources.runtime import stamp_of

NEW, APPEND, FORCE = "new", "append", "force"

_HOSTNAME_KEY = '"_HOSTNAME":"'
# a container's line as the runtime stamped it (`docker logs --timestamps`, nanoseconds; the entry's
# __REALTIME_TIMESTAMP keeps microseconds): where `--append` resumes its stream
STAMP = "RUNTIME_STAMP"
_STAMP_KEY = b'"RUNTIME_STAMP"'
METRICS_MARK = "-- mtptui: server metrics --"  # the MESSAGE of a recorded scrape
GPUS_MARK = "-- mtptui: gpus --"  # the MESSAGE of a recorded set of GPU samples


def with_hostname(line: str, host: str | None) -> str:
    """The entry with `_HOSTNAME` set to host, edited in place in the text (no json round trip:
    cheap at thousands of lines per second, and the rest of the entry stays byte for byte)."""
    if host is None:
        return line
    if not line.startswith("{"):
        # not journald json (a source that is not a journal): keep the text as the MESSAGE; a
        # container runtime's stamp (`docker logs --timestamps`) as journald's time of the entry
        stamp = stamp_of(line)
        ts = timeparse.rfc3339(stamp) if stamp else None
        if stamp and ts is not None:
            return json.dumps({"__REALTIME_TIMESTAMP": str(round(ts * 1e6)), STAMP: stamp, "_HOSTNAME": host,
                               "MESSAGE": line[len(stamp) + 1:]}, ensure_ascii=False)
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


class RecordExists(FileExistsError):
    """The record's file exists and neither append nor force was asked for."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EEXIST, "exists (not overwritten)", path)


class RecordWriter:
    """Writes entries to a record; flushed after every batch so that a killed run keeps its data.

    mode NEW: the file must not exist (RecordExists); APPEND: entries go after the file's own (a
    file that does not exist is a new one); FORCE: the file is replaced once the first entry comes.
    Until an entry is written, nothing is: gap markers wait for one, and at close a session
    without entries removes the file it created (`nothing_written` says so)."""

    def __init__(self, path: str, mode: str = NEW) -> None:
        if mode not in (NEW, APPEND, FORCE):
            raise ValueError(f"record mode {mode!r}")
        self.path = path
        self.entries = 0
        self._pending: list[str] = []  # gap markers before the first entry
        self._lead = ""  # APPEND to a file whose last line has no newline: one goes first
        self._replacing: Replacing | None = None  # FORCE over a file: the new file that replaces it
        self._created = False  # the file is ours (created now): removed again if nothing came
        self._appending = False  # APPEND to a file that was there
        self.failed: OSError | None = None  # the write that failed: nothing more is written
        self.lost = 0  # entries that came after it
        self.on_fail: Callable[[], None] | None = None  # told once, when a write fails
        exists = self.existed = os.path.lexists(path)
        if exists and os.path.isdir(path) and not os.path.islink(path):
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        if exists and mode == NEW:
            raise RecordExists(path)
        if exists:
            replaceable(path)  # a device, a FIFO, a symbolic link ...: NotReplaced
        if exists and mode == APPEND:
            self.f: IO[str] = open(path, "a", encoding="utf-8", newline="\n")  # noqa: SIM115
            self._appending = True
            self._lead = "" if _ends_with_newline(path) else "\n"
        elif exists:  # FORCE
            self._replacing = Replacing(path)
            self.f = self._replacing.file
        else:
            self.f = open(path, "x", encoding="utf-8", newline="\n")  # noqa: SIM115
            self._created = True

    @property
    def nothing_written(self) -> bool:
        return self.entries == 0

    def resume(self, sources: list[Source]) -> list[str]:
        """APPEND: sets each host's source to follow after the host's last entry in the file (a
        journal by its cursor, a container by its stamps and lines), so nothing comes
        twice and nothing between is lost; one line per host saying so."""
        if not self._appending:
            return []
        journals = {s.host: j for s in sources if s.host and (j := journal_source(s)) is not None}
        boxes = {s.host: b for s in sources if s.host and (b := container_source(s)) is not None}
        cursors = last_cursors(self.path, set(journals)) if journals else {}
        stamps = last_stamps(self.path, set(boxes), {h for h, b in boxes.items() if b.selector.compose}) \
            if boxes else {}
        said = []
        for s in sources:
            host = s.host or ""
            cursor = cursors.get(host)
            box = boxes.get(host)
            mine = {h: r for h, r in stamps.items() if h == host or (box and box.selector.compose and replica_of(h, host))}
            if cursor and host in journals:
                journals[host].cursor = cursor
                said.append(f"{host}: resuming {self.path} after its last entry there")
            elif box is not None and mine:
                box.resumed = mine
                said += [f"{h}: resuming {self.path} after its last entry there (stamped {r.stamp})"
                         for h, r in sorted(mine.items())]
            else:
                said.append(f"{s.host}: no entry in {self.path} to resume after: starting as a new record does")
        return said

    def _put(self, text: str) -> bool:
        """Whether `text` is written; a write that fails is kept in `failed`, said once (on_fail)."""
        if self.failed is not None:
            return False
        try:
            if self.entries == 0:
                text = self._lead + "".join(self._pending) + text
                self._pending = []
                if self._replacing is not None:
                    self.f.write(text)
                    self._replacing.commit()  # the old record goes only now, its mode and owner kept
                    self._replacing = None
                    return True
            self.f.write(text)
            self.f.flush()
        except (OSError, NotReplaced) as e:  # NotReplaced: the path changed since it was checked
            self.failed = e if isinstance(e, OSError) else OSError(errno.EBUSY, str(e))
            if self.on_fail is not None:
                self.on_fail()
            return False
        return True

    def write(self, lines: list[str], host: str | None) -> None:
        if not lines:
            return
        if self._put("".join(with_hostname(x.rstrip("\r\n"), host) + "\n" for x in lines)):
            self.entries += len(lines)
        else:
            self.lost += len(lines)

    def gap(self, host: str | None, detail: str, ts: float) -> None:
        entry = {"MTPTUI_GAP": "1", "_HOSTNAME": host, "__REALTIME_TIMESTAMP": str(int(ts * 1_000_000)),
                 "MESSAGE": f"{GAP_MARK} {detail}".rstrip()}
        text = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        if self.entries == 0:
            self._pending.append(text)
        else:
            self._put(text)

    def metrics(self, host: str | None, scrape: dict, ts: float) -> None:
        """A scrape of the host's /metrics (core/latency.to_json), as an entry of its own
        (`MTPTUI_METRICS`), once the record has begun: replay and `summary` read it back."""
        if self.entries == 0:
            return
        entry = {recorded_entries.METRICS: json.dumps(scrape, separators=(",", ":")), "_HOSTNAME": host,
                 "__REALTIME_TIMESTAMP": str(int(ts * 1_000_000)), "MESSAGE": METRICS_MARK}
        self._put(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")

    def gpus(self, host: str | None, samples: list, ts: float) -> None:
        """GPU samples (core/gpus.GpuSample) as they came, one entry per batch (`MTPTUI_GPUS`), once
        the record has begun: replay, `open` and `summary` read them back (recorded_gpus)."""
        if self.entries == 0 or not samples:
            return
        entry = {recorded_entries.GPUS: json.dumps([x.to_json() for x in samples], separators=(",", ":")),
                 "_HOSTNAME": host, "__REALTIME_TIMESTAMP": str(int(ts * 1_000_000)), "MESSAGE": GPUS_MARK}
        self._put(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")

    def close(self) -> None:
        if self.f.closed:
            return
        try:
            if self.failed is None:
                self.f.flush()
                if self.entries:
                    os.fsync(self.f.fileno())
        except OSError as e:
            self.failed = e
        finally:
            with contextlib.suppress(OSError):  # what could not be written is said by `failed`
                self.f.close()
            if self._replacing is not None:
                self._replacing.abandon()  # the old record as it was
            if self.entries == 0 and self._created:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)


def _ends_with_newline(path: str) -> bool:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _backwards(path: str, block: int) -> Iterator[bytes]:
    """A file's lines from its last back to its first, read a block at a time (a long record is not
    read whole when what is looked for is near its end)."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        pos = f.tell()
        tail = b""
        while pos > 0:
            n = min(block, pos)
            pos -= n
            f.seek(pos)
            lines = (f.read(n) + tail).split(b"\n")
            tail = lines.pop(0) if pos > 0 else b""  # maybe cut short: read whole with the next block
            yield from reversed(lines)


def last_cursors(path: str, hosts: set[str] | None = None, block: int = 1 << 20) -> dict[str, str]:
    """Each host's last journal cursor in a record ({_HOSTNAME: __CURSOR}), read from the end
    back, and only until every host of `hosts` has one. Gap markers carry no cursor; lines that
    are not json are passed over."""
    out: dict[str, str] = {}
    for raw in _backwards(path, block):
        if hosts is not None and hosts <= out.keys():
            break
        _cursor_line(raw, out)
    return out


def replica_of(name: str, host: str) -> bool:
    """Whether a record's host name is the configured host's: itself, or one of its compose
    replicas (`HOST-N`, runtime.Container.replica)."""
    return name == host or (name.startswith(f"{host}-") and name[len(host) + 1:].isdigit())


def last_stamps(path: str, hosts: set[str], compose: set[str] | None = None, block: int = 1 << 20) -> dict[str, Resume]:
    """Where each container host's stream stands in a record ({_HOSTNAME: Resume}: its latest
    stamp and the lines of the window before it, container.WINDOW_S), read from the end back until
    every host of `hosts` has its own; a compose host's replicas (`HOST-N`, how many is not
    known) need the whole file."""
    found: dict[str, Resume] = {}
    done: set[str] = set()
    for raw in _backwards(path, block):
        if not compose and hosts <= done:
            break
        if _STAMP_KEY not in raw:
            continue
        try:
            entry = json.loads(raw)
            host, stamp, message = entry["_HOSTNAME"], entry[STAMP], entry["MESSAGE"]
        except (ValueError, KeyError, TypeError):
            continue
        if not (isinstance(host, str) and isinstance(stamp, str) and isinstance(message, str)) or host in done:
            continue
        if host not in hosts and not any(replica_of(host, h) for h in compose or ()):
            continue
        if not found.setdefault(host, Resume()).seed(f"{stamp} {message}"):
            done.add(host)  # older than the window: every line a resume brings again is in
    return found


def _cursor_line(raw: bytes, out: dict[str, str]) -> None:
    if b'"__CURSOR"' not in raw:
        return
    line = raw.decode("utf-8", errors="replace").strip()
    cursor = cursor_of(line)
    if not cursor:
        return
    try:
        host = json.loads(line).get("_HOSTNAME")
    except (ValueError, AttributeError):
        return
    if isinstance(host, str):
        out.setdefault(host, cursor)


def _wrapped(s: Source) -> Iterator[Source]:
    """The source and those inside its wrappers (--give-up-after, --record), outermost first."""
    found: Source | None = s
    while found is not None:
        yield found
        found = vars(found).get("inner")


def journal_source(s: Source) -> JournalSource | None:
    """The journal source inside wrappers, the one that keeps the cursor."""
    return next((x for x in _wrapped(s) if isinstance(x, JournalSource)), None)


def container_source(s: Source) -> ContainerLogSource | None:
    """The container source inside wrappers, the one that keeps where each stream stands."""
    return next((x for x in _wrapped(s) if isinstance(x, ContainerLogSource)), None)


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

    def __getattr__(self, name: str) -> Any:
        # host, cursor, received ... of the wrapped source, for whoever shows them
        return getattr(self.inner, name)

    async def run(self, feed: Feed) -> None:
        await self.inner.run(RecordingFeed(feed, self.writer))


SCAN_CHUNK = 1 << 22  # bytes read at a time when a record is searched for its own entries
KEY_START = b'"MTPTUI_'
_KEYS = {f'"{k}":'.encode(): k for k in recorded_entries.KEYS}


def recorded_scrapes(path: str) -> dict[str | None, list]:
    """The /metrics scrapes a record holds (its MTPTUI_METRICS entries) with the epoch start the
    dashboard gave each, per host in file order."""
    return recorded(path).scrapes


def recorded_gpus(path: str) -> dict[str | None, list]:
    """The GPU samples a record holds (its MTPTUI_GPUS entries), per host in file order."""
    return recorded(path).gpus


def recorded(path: str) -> Recorded:
    """A record's own entries, before its lines are read: a replay windows them at its playhead,
    which may go anywhere in the file (`summary` and `open` take them from the parse instead). A
    byte search a chunk at a time, so a file without them costs one read of its bytes and no more
    memory than a chunk and its longest line. Only a journald JSON file (what `record` writes) can
    hold them, so any other file is not read at all. A damaged entry is skipped; a file that
    cannot be read has none."""
    out = Recorded()
    try:
        with open(path, "rb") as f:
            if not f.read(64).lstrip().startswith(b"{"):
                return out
            f.seek(0)
            tail = b""
            while True:
                chunk = f.read(SCAN_CHUNK)
                buf = tail + chunk
                cut = len(buf) if not chunk else buf.rfind(b"\n") + 1
                part, tail = buf[:cut], buf[cut:]
                _scan(part, out)
                if not chunk:
                    return out
    except OSError:
        return Recorded()


def _scan(buf: bytes, out: Recorded) -> None:
    # one search for what every key starts with: a second full search per key doubled the cost
    i = buf.find(KEY_START)
    while i >= 0:
        end = buf.find(b"\n", i)
        end = len(buf) if end < 0 else end
        key = next((k for k in _KEYS if buf.startswith(k, i)), None)
        if key is not None:
            start = buf.rfind(b"\n", 0, i) + 1
            try:
                entry = json.loads(buf[start:end])
                host = entry.get("_HOSTNAME")
                payload = entry[_KEYS[key]]
            except (ValueError, KeyError, TypeError, AttributeError):
                out.damaged += 1
            else:
                out.add(_KEYS[key], host, payload)
        i = buf.find(KEY_START, i + len(KEY_START))
