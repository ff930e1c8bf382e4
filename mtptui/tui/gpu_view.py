"""The GPU lines of the main screen, Textual-free: each GPU's utilisation, memory and power, whole
entries packed into the width (never one cut mid-number), the rest counted."""

from __future__ import annotations

from mtptui.core.gpus import GpuSample


def _entry(s: GpuSample, rank: str | None) -> str:
    util = "-" if s.util is None else f"{s.util:.0f}%"
    if s.mem_used is not None and s.mem_total:
        mem = f"{s.mem_used / 1024:.0f}/{s.mem_total / 1024:.0f}G"
    else:
        mem = "-"
    power = "-" if s.power is None else f"{s.power:.0f}W"
    who = f"GPU{s.index}" + (f" {rank}" if rank else "")
    return f"{who} {util} {mem} {power}"


def gpu_lines(samples: list[GpuSample], note: str | None, width: int, *, ranks: dict[int, str] | None = None,
              max_lines: int = 2) -> list[str]:
    """At most max_lines lines of `width`; [] when there is nothing to say."""
    if not samples:
        return [note[:width]] if note and width > 0 else []
    ranks = ranks or {}
    entries = [_entry(s, ranks.get(s.index)) for s in samples]
    lines: list[str] = []
    cur = "GPUs"
    i = 0
    while i < len(entries):
        e = entries[i]
        if len(cur) + 2 + len(e) <= width:
            cur += "  " + e
            i += 1
            continue
        if len(lines) + 1 >= max_lines or cur.strip() in ("", "GPUs") and len(e) > width:
            break
        lines.append(cur)
        cur = "    "
    left = len(entries) - i
    if left:
        more = f"  +{left} more"
        while len(cur) + len(more) > width and "  " in cur.strip():
            cur = cur[:cur.rstrip().rfind("  ")]
            left += 1
            more = f"  +{left} more"
        cur = cur + more if len(cur) + len(more) <= width else cur
    lines.append(cur)
    return [ln for ln in lines if ln.strip()]


def epoch_energy_text(samples, start: float, end: float | None, gen_total: float | None) -> str | None:
    """The compare screen's GPU line for an epoch: its GPUs' mean use and power, and joules per
    generated token (core/gpus.epoch_gpus, over the host's throughput); None without samples in it."""
    from mtptui.core.gpus import epoch_gpus

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
