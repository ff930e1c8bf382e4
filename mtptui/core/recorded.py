"""mtptui's own entries in a record: what `record` and the dashboard write beside the host's lines
(sources/record.py: a /metrics scrape, a batch of GPU samples, each a journald JSON entry with its
payload under one key), read back as what they hold. The parse knows them by that key
(envelope.from_json) and hands them to the sinks as such, never as log text; a replay reads them
all before its lines (sources/record.recorded), since its playhead may go anywhere in the file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from mtptui.core import latency
from mtptui.core.gpus import GpuSample
from mtptui.core.records import OWN_GPUS as GPUS
from mtptui.core.records import OWN_KEYS as KEYS
from mtptui.core.records import OWN_METRICS as METRICS

__all__ = ["GPUS", "KEYS", "METRICS", "Recorded"]


def _scrape(payload: str) -> list:
    obj = json.loads(payload)
    scrape = latency.from_json(obj)
    epoch = obj.get("epoch")
    return [] if scrape is None else [(scrape, float(epoch) if epoch is not None else None)]


def _gpus(payload: str) -> list:
    got = [GpuSample.from_json(d) for d in json.loads(payload)]
    return [g for g in got if g is not None]


@dataclass
class Recorded:
    """A record's own entries, per host in file order: scrapes as (Scrape, the epoch start the
    dashboard gave it), and GPU samples. A damaged entry is counted and skipped."""

    scrapes: dict[str | None, list] = field(default_factory=dict)
    gpus: dict[str | None, list[GpuSample]] = field(default_factory=dict)
    damaged: int = 0

    def add(self, key: str, host: str | None, payload: object) -> None:
        read = _scrape if key == METRICS else _gpus
        try:
            got = read(payload) if isinstance(payload, str) else []
        except (ValueError, KeyError, TypeError, AttributeError):
            got = []
        if not got:
            self.damaged += 1
            return
        (self.scrapes if key == METRICS else self.gpus).setdefault(host, []).extend(got)

    def merge(self, later: Recorded) -> None:
        """Adds the entries of the input read after this one (the next part of a file)."""
        for mine, theirs in ((self.scrapes, later.scrapes), (self.gpus, later.gpus)):
            for host, got in theirs.items():
                mine.setdefault(host, []).extend(got)
        self.damaged += later.damaged

    def __bool__(self) -> bool:
        return bool(self.scrapes or self.gpus)
