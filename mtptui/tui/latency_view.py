"""The latency line of the main screen, apart from any widget: the host's server latency over the
last minute (core/latency.py), the parts that matter most first, as many whole parts as the width
holds (never a number cut), or the one line that says why there is none."""

from __future__ import annotations

from mtptui.core.latency import LABELS, ms

# The richer forms first, each a (figure, quantiles) list: the line takes the first that fits.
# ITL is what speculation buys, TTFT what it may cost: they stay longest.
TIERS = (
    (("itl", ("p50", "p90", "p99")), ("ttft", ("p50", "p90", "p99")), ("e2e", ("p50", "p90", "p99")),
     ("queue", ("p50", "p99"))),
    (("itl", ("p50", "p99")), ("ttft", ("p50", "p99")), ("e2e", ("p50", "p99")), ("queue", ("p99",))),
    (("itl", ("p50", "p99")), ("ttft", ("p50", "p99")), ("e2e", ("p50",)), ("queue", ("p99",))),
    (("itl", ("p50", "p99")), ("ttft", ("p50", "p99")), ("e2e", ("p50",))),
    (("itl", ("p50", "p99")), ("ttft", ("p50", "p99"))),
)
TITLE = "latency 1m"


def parts(now: dict, tier: tuple) -> list[str]:
    """'ITL p50 12ms p99 15ms' for each figure of the tier the server has."""
    out = []
    for fig, qs in tier:
        f = now.get(fig)
        if f:
            out.append(f"{LABELS[fig]} " + " ".join(f"{q} {ms(f.get(q))}" for q in qs))
    return out


def latency_line(now: dict | None, note: str | None, width: int) -> str | None:
    """The line for `width` cells, or None when there is nothing to say (no server reached)."""
    if not now or not parts(now, TIERS[-1]):
        if not note:
            return None
        return note if len(note) <= width else note[:max(0, width - 1)] + "…"
    spec = now.get("spec") or {}
    per_pos = spec.get("per_pos")
    # SGLang's steps in use (with --speculative-adaptive, its controller's tier) stay with every form
    steps = [f"steps {spec['num_steps']:g}"] if spec.get("num_steps") is not None else []
    # vLLM's per-position acceptance goes with the richer forms, before the plainer ones without it
    extras = ([*steps, "per pos " + " ".join(f"{p:.2f}" for p in per_pos)], steps) if per_pos else (steps,)
    for extra in extras:
        for tier in TIERS:
            line = "  ".join([TITLE, *parts(now, tier), *extra])
            if len(line) <= width:
                return line
    # not even the least: as many whole parts as fit
    return "  ".join([TITLE, *_fitting(parts(now, TIERS[-1]), width - len(TITLE) - 2)])


def _fitting(pieces: list[str], room: int) -> list[str]:
    kept: list[str] = []
    used = 0
    for p in pieces:
        need = len(p) + (2 if kept else 0)
        if used + need > room:
            break
        kept.append(p)
        used += need
    return kept


# -- the compare screen ----------------------------------------------------------------------------
COMPARED = (("itl", ("p50", "p99")), ("ttft", ("p50", "p99")))
LATENCY_COLUMNS = ("ITL p50/p99", "TTFT p50/p99")


def latency_cells(w: dict | None) -> tuple[str, str]:
    """An epoch's cells for LATENCY_COLUMNS: `9.1ms/15ms`, `-` without figures."""
    out = []
    for fig, _ in COMPARED:
        f = (w or {}).get(fig)
        out.append(f"{ms(f['p50'])}/{ms(f['p99'])}" if f else "-")
    return out[0], out[1]


def _change(v: float | None, base: float | None) -> str | None:
    if v is None or not base:
        return None
    return f"{(v / base - 1) * 100:+.0f}%".replace("-", "−")


def epoch_latency_text(rows: list, i: int, by_epoch: dict[float, dict] | None) -> str | None:
    """The picked epoch's ITL and TTFT p50/p99 and their change against the latest earlier epoch
    with figures and the latest earlier one without speculation (rows: EpochRow, by_epoch: the
    host's HostLatency.epochs); None when the epoch has none."""
    if not by_epoch or not 0 <= i < len(rows):
        return None
    mine = by_epoch.get(rows[i].start)
    if not mine:
        return None
    prev = next(((rows[j], by_epoch[rows[j].start]) for j in range(i - 1, -1, -1) if by_epoch.get(rows[j].start)), None)
    off = next(((rows[j], by_epoch[rows[j].start]) for j in range(i - 1, -1, -1)
                if rows[j].spec_off and by_epoch.get(rows[j].start)), None)
    if prev is not None and off is not None and prev[0] is off[0]:
        prev = None  # the epoch before is the spec-off one: said once
    words = []
    for fig, qs in COMPARED:
        f = mine.get(fig)
        if not f:
            continue
        said = []
        for q in qs:
            v = f.get(q)
            changes = []
            for name, other in (("prev", prev), ("off", off)):
                if other is None:
                    continue
                c = _change(v, (other[1].get(fig) or {}).get(q))
                if c:
                    changes.append(f"{c} vs {name} #{other[0].index + 1}")
            said.append(f"{q} {ms(v)}" + (f" ({', '.join(changes)})" if changes else ""))
        words.append(f"{LABELS[fig]} " + " ".join(said))
    return "server latency: " + " · ".join(words) if words else None
