"""Envelopes: what journald (or nothing) wrapped around the server's message.

Detected per line, so a file that mixes modes (or a paste) still reads:
- journald `json` (one object per line; MESSAGE may be a list of byte values, or null when
  journalctl withheld a large field, which happens without `--all`)
- journald `short`, `short-precise`, `short-iso`, `short-iso-precise`, `short-monotonic` (`[  371.469140]
  host tag[pid]: `: seconds since boot, no time of day: the host only); syslog's own lines in the
  same shapes, also with a priority (`<14>Mar  9 16:03:25 host tag[pid]: `, RFC 3164) or in
  RFC 5424 (`<14>1 2026-03-09T16:03:25.003Z host app procid msgid - `)
- container logs: the CRI format of Kubernetes nodes (`2026-03-09T16:03:25.123456789Z stdout F `),
  Docker's json-file lines (`{"log": ..., "stream": ..., "time": ...}`), the stamp that `docker logs
  -t` and `kubectl logs --timestamps` put before each line (`2026-03-09T16:03:25.123456789Z `, RFC 3339,
  kubectl's without trailing zeros), docker compose's `sglang-1  | ` (v1: `proj_sglang_1  | `; with
  `-t`, the stamp after it) and `kubectl logs --prefix`'s `[pod/sglang-0/sglang] `: the service or the
  pod is the line's host, so replicas read as the engines they are (and are kept, with their service,
  for the service's total: EnvelopeReader.replicas, core/services.py)
- `cat` and raw server output: the line is the message
CR/LF endings, stray carriage returns from progress bars and ANSI colour codes are removed.
"""

from __future__ import annotations

import json
import re

from mtptui.core.parse import timeparse
from mtptui.core.records import OWN_KEYS, LogLine

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")

SHORT_STAMP = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d"
_SHORT = re.compile(r"(" + SHORT_STAMP + r")(\.\d{1,6})? (\S+) [^\s\[:]+(?:\[\d+\])?: ?")
# (a host begins with no bracket: `2026-03-09T16:03:25.5Z [2026-03-09 16:03:25 TP0] ` is a container's stamp
# before SGLang's prefix)
_SHORT_ISO = re.compile(
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:?\d\d)) ([^\s\[(]\S*) [^\s\[:]+(?:\[\d+\])?: ?"
)
# `docker logs -t`, `kubectl logs --timestamps`: the runtime's stamp, a space, the line
_STAMPED = re.compile(timeparse.RFC3339 + " ")
# docker compose's prefix (v2 `sglang-1  | `, v1 `proj_sglang_1  | `), padded to the longest name
_COMPOSE = re.compile(r"([\w.-]+[-_]\d+) *\| ")
# `kubectl logs --prefix`: `[pod/sglang-0/sglang] ` (kind/name/container)
_KUBECTL = re.compile(r"\[(?:pod|pods|po)/([^/\s\]]+)/[^\s\]]+\] ")
# A replica's name, less what numbers it among its service's: compose's `-N`/`_N`, a StatefulSet's
# ordinal `-N`; a Deployment's pod `-<pod-template-hash>-<5>` and a DaemonSet's or a Job's `-<5>`, both
# in the alphabet of Kubernetes' rand.SafeEncodeString (no vowels, no 0 1 3: no word ends in one)
_REPLICA = re.compile(r"(.+?)(?:[-_]\d+|(?:-[bcdfghjklmnpqrstvwxz2456789]{6,10})?-[bcdfghjklmnpqrstvwxz2456789]{5})")


def service_of(replica: str) -> str:
    """The compose service or the Kubernetes workload a container's or a pod's name belongs to:
    `sglang-1` -> `sglang` (v2; `project-sglang-1` -> `project-sglang`), `proj_sglang_1` ->
    `proj_sglang` (v1), `sglang-0` -> `sglang` (StatefulSet), `vllm-7d9f8c5b6-x2k4q` -> `vllm`
    (Deployment); a name of none of these shapes is its own."""
    m = _REPLICA.fullmatch(replica)
    return m.group(1) if m else replica


_MONOTONIC = re.compile(r"\[ *\d+\.\d{6}\] (\S+) [^\s\[:]+(?:\[\d+\])?: ?")
_CRI = re.compile(timeparse.RFC3339 + r" (?:stdout|stderr) [FP] ")  # P: a part of a longer line
_MONOTONIC_START = frozenset(" 0123456789")
_PRIORITY = re.compile(r"<\d{1,3}>")
_RFC5424 = re.compile(r"1 (\S+) (\S+) \S+ \S+ \S+ (?:-|(?:\[[^\]]*\])+) ?")  # stamp or `-`, host


class EnvelopeError(ValueError):
    """The line claimed an envelope (a JSON object) but it could not be read."""


def clean(text: str) -> str:
    """Strip line endings, progress-bar carriage returns and colour codes."""
    if text.endswith("\n"):
        text = text[:-1]
    if "\r" in text:
        text = text.rstrip("\r")
        if "\r" in text:
            # A tqdm bar redraws with \r; what the terminal would show is the last segment.
            parts = [p for p in text.split("\r") if p]
            text = parts[-1] if parts else ""
    if "\x1b" in text:
        text = ANSI.sub("", text)
    return text


def _message_of(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        try:
            return bytes(value).decode("utf-8", "replace")
        except (TypeError, ValueError):
            return None
    return None


def from_json(line: str) -> LogLine:
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise EnvelopeError(f"bad journald json: {e}") from None
    if not isinstance(obj, dict):
        raise EnvelopeError("journald json line is not an object")
    if "MESSAGE" not in obj:
        if isinstance(obj.get("log"), str):
            return _from_docker(obj)
        if "__CURSOR" not in obj and "__REALTIME_TIMESTAMP" not in obj:
            raise EnvelopeError("a json line that is neither journald's nor Docker's")
    msg = _message_of(obj.get("MESSAGE"))
    if msg is None:
        raise EnvelopeError("MESSAGE missing or withheld (journalctl needs --all for large fields)")
    ts = None
    rt = obj.get("__REALTIME_TIMESTAMP")
    if rt is not None:
        try:
            ts = int(rt) / 1_000_000
        except (TypeError, ValueError, OverflowError):
            ts = None
    host = obj.get("_HOSTNAME")
    unit = obj.get("_SYSTEMD_UNIT") or obj.get("UNIT")
    cursor = obj.get("__CURSOR")
    own = next(((k, obj[k]) for k in OWN_KEYS if k in obj), None)
    return LogLine(
        text=clean(msg),
        host=host if isinstance(host, str) else None,
        unit=unit if isinstance(unit, str) else None,
        ts=ts,
        cursor=cursor if isinstance(cursor, str) else None,
        zoned=ts is not None,
        own=own,
    )


def _from_docker(obj: dict) -> LogLine:
    stamp = obj.get("time")
    ts = timeparse.rfc3339(stamp) if isinstance(stamp, str) else None
    return LogLine(clean(obj["log"]), None, None, ts, None, ts is not None)


def _stamped(text: str, host: str | None) -> LogLine:
    """A container's line after its name (host; None: none given): on its runtime's clock where
    `-t`/`--timestamps` put the stamp before it."""
    if text[:1].isdigit() and text[10:11] == "T":
        m = _STAMPED.match(text)
        if m:
            ts = timeparse.instant(*m.groups())
            return LogLine(text[m.end():], host, None, ts, None, ts is not None)
    return LogLine(text, host)


class EnvelopeReader:
    """Turns raw lines into LogLines. journald's year-less `short` stamps take the year of the
    log's date (``dates``, shared with the parser that reads the messages)."""

    def __init__(self, dates: timeparse.LogDate | None = None) -> None:
        self.dates = dates if dates is not None else timeparse.LogDate()
        self._iso_ts: dict[str, float | None] = {}
        # host -> its service (service_of), for the hosts a compose or kubectl prefix named: the
        # replicas whose throughput the service sums (core/services.py); a journal's host is none
        self.replicas: dict[str, str] = {}

    def _iso_time(self, stamp: str) -> float | None:
        ts = timeparse.iso_with_zone(stamp)
        if len(self._iso_ts) >= timeparse.STAMPS_KEPT:
            self._iso_ts.clear()
        self._iso_ts[stamp] = ts
        return ts

    def read(self, raw: str) -> LogLine:
        """Raises EnvelopeError for a JSON line that cannot be read."""
        if raw[:1] == "{":
            return from_json(raw)
        text = clean(raw)
        c = text[:1]  # after cleaning: a colour code or a progress bar may come before the stamp
        if c and c in "JFMASOND":
            m = _SHORT.match(text)
            if m:
                stamp, frac, host = m.groups()
                return LogLine(text[m.end():], host, None, self.dates.month_day(stamp, frac))
        elif c.isdigit() and text[10:11] == "T":
            m = _SHORT_ISO.match(text)
            if m:
                stamp, host = m.group(1, 2)
                ts = self._iso_ts.get(stamp, False)
                if ts is False:
                    ts = self._iso_time(stamp)
                return LogLine(text[m.end():], host, None, ts, None, ts is not None)
            m = _CRI.match(text)
            if m:
                ts = timeparse.instant(*m.groups())
                return LogLine(text[m.end():], None, None, ts, None, ts is not None)
            return _stamped(text, None)
        elif c == "<":
            return self._syslog(text)
        elif c == "[":
            if text[1:2] in _MONOTONIC_START:
                m = _MONOTONIC.match(text)
                if m:
                    return LogLine(text[m.end():], m.group(1))
            elif text[1:2] == "p":
                m = _KUBECTL.match(text)
                if m:
                    return _stamped(text[m.end():], self._replica(m.group(1)))
        if "| " in text:
            m = _COMPOSE.match(text)
            if m:
                return _stamped(text[m.end():], self._replica(m.group(1)))
        return LogLine(text)

    def _replica(self, host: str) -> str:
        if host not in self.replicas:
            self.replicas[host] = service_of(host)
        return host

    def _syslog(self, text: str) -> LogLine:
        """A syslog line with its priority: RFC 3164 (journald's `short` shape after it) or 5424."""
        p = _PRIORITY.match(text)
        if p is not None:
            m = _SHORT.match(text, p.end())
            if m:
                stamp, frac, host = m.groups()
                return LogLine(text[m.end():], host, None, self.dates.month_day(stamp, frac))
            m = _RFC5424.match(text, p.end())
            if m:
                stamp, host = m.groups()
                ts = timeparse.rfc3339(stamp)
                return LogLine(text[m.end():], None if host == "-" else host, None, ts, None, ts is not None)
        return LogLine(text)
