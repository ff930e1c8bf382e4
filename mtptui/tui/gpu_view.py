"""The GPU lines of the main screen, Textual-free: each GPU's utilisation, memory and power, and
the rank it serves where that is known, in cells of one width, rows by design (never one cut
mid-number, nor wrapped), the rest counted."""

from __future__ import annotations

import math
from collections.abc import Sequence

from mtptui.core.epochs import short_rank_labels
from mtptui.core.gpus import GpuSample, epoch_gpus, placement_holds, rank_devices
from mtptui.core.parse.events import placement_args
from mtptui.core.store import Store
from mtptui.tui.viewmodel import spec_for

HEAD = "GPUs  "
GAP = "  "
NO_RANK = "no rank"


def _entry(s: GpuSample, rank: str | None, mapped: bool) -> str:
    util = "-" if s.util is None else f"{s.util:.0f}%"
    if s.mem_used is not None and s.mem_total:
        mem = f"{s.mem_used / 1024:.0f}/{s.mem_total / 1024:.0f}G"
    else:
        mem = "-"
    power = "-" if s.power is None else f"{s.power:.0f}W"
    who = f"GPU{s.index}"
    if rank:
        who = f"{rank} {who}"
    elif mapped:
        who = f"{who} {NO_RANK}"
    return f"{who} {util} {mem} {power}"


def gpu_lines(samples: list[GpuSample], note: str | None, width: int, *, ranks: dict[int, str] | None = None,
              max_lines: int = 2) -> list[str]:
    """At most max_lines lines of `width`; [] when there is nothing to say. ranks: GPU index ->
    the rank it serves, where the mapping is known (a GPU not in it serves none); None: by index."""
    if not samples:
        return [note[:width]] if note and width > 0 else []
    entries = [_entry(s, None if ranks is None else ranks.get(s.index), ranks is not None) for s in samples]
    cw = max(len(e) for e in entries)
    per_row = (width - len(HEAD) + len(GAP)) // (cw + len(GAP))
    if per_row < 1 or max_lines < 1:
        count = f"{HEAD}{len(entries)}"
        return [count] if len(count) <= width else []
    rows = math.ceil(len(entries) / per_row)
    if rows <= max_lines:
        per_row = math.ceil(len(entries) / rows)  # as many in each row, so the columns hold
        chunks = [entries[i:i + per_row] for i in range(0, len(entries), per_row)]
        return [_row(i, chunk, cw) for i, chunk in enumerate(chunks)]
    chunks = [entries[i * per_row:(i + 1) * per_row] for i in range(max_lines)]
    last = chunks.pop()
    while True:
        left = len(entries) - per_row * len(chunks) - len(last)
        body = GAP.join(c.ljust(cw) for c in last)
        line = _lead(len(chunks)) + body + (GAP if body else "") + f"+{left} more"
        if len(line) <= width or not last:
            break
        last = last[:-1]
    return [_row(i, c, cw) for i, c in enumerate(chunks)] + ([line] if len(line) <= width else [])


def _lead(i: int) -> str:
    return HEAD if i == 0 else " " * len(HEAD)


def _row(i: int, cells: Sequence[str], cw: int) -> str:
    return (_lead(i) + GAP.join(c.ljust(cw) for c in cells)).rstrip()


class RankMap:
    """The GPU each rank serves on one host, for the GPU line: its server_args (the settings line
    in force at the playhead, read once per line) and its CUDA_VISIBLE_DEVICES, checked against
    the GPUs read (core/gpus.placement_holds). None where either is not known."""

    def __init__(self) -> None:
        # host -> (the settings, their line's placement): the line read once per settings
        self._placed: dict[str | None, tuple[dict, dict | None]] = {}
        # host -> (the settings, labels and visible list it was worked out for, rank -> GPU)
        self._devices: dict[str | None, tuple[dict, tuple, dict[str, int]]] = {}

    def ranks(self, store: Store, host: str | None, t: float | None, visible: Sequence[int] | None,
              samples: list[GpuSample], *, known: bool = True) -> dict[int, str] | None:
        """visible: the host's CUDA_VISIBLE_DEVICES (None: unset); known: whether it was read."""
        if not known or not samples:
            return None
        spec = spec_for(store, host, t)
        if not spec:
            return None
        placed = self._placed.get(host)
        if placed is None or placed[0] is not spec:
            placed = self._placed[host] = (spec, self._placement(store, host, spec))
        labels = [s.rank for s in store.ranks(host)]
        key = (tuple(labels), None if visible is None else tuple(visible))
        got = self._devices.get(host)
        if got is None or got[0] is not spec or got[1] != key:
            got = self._devices[host] = (spec, key, rank_devices(labels, spec, placed[1], visible))
        devices = got[2]
        if not placement_holds(devices, samples):
            return None
        names = short_rank_labels(labels)  # as the rank table and the chart name them
        return {gpu: names[label] for label, gpu in devices.items()}

    @staticmethod
    def _placement(store: Store, host: str | None, spec: dict) -> dict | None:
        """The placement fields of the settings line spec was read from (the newest that says it)."""
        for ev in reversed(store.events):
            if ev.kind == "spec_config" and ev.host == host and ev.data == spec:
                return placement_args(ev.text)
        return None


def epoch_energy_text(samples, start: float, end: float | None, gen_total: float | None) -> str | None:
    """The compare screen's GPU line for an epoch: its GPUs' mean use and power, and joules per
    generated token (core/gpus.epoch_gpus, over the host's throughput); None without samples in it."""
    got = epoch_gpus(list(samples), start, end, gen_total)
    if got is None:
        return None
    parts = [f"GPUs {got['gpus']}"]
    if got["util_mean"] is not None:
        parts.append(f"util {got['util_mean']:.0f}%")
    if got["power_mean_w"] is not None:
        parts.append(f"power {got['power_mean_w']:.0f} W")
    jpt = got["joules_per_token"]
    parts.append(f"{jpt:.3g} J/token" if isinstance(jpt, float) else "J/token: no gen throughput yet")
    return " · ".join(parts)
