"""The latency line of the main screen, apart from any widget: the host's server latency over the
last minute (core/latency.py), the parts that matter most first, as many whole parts as the width
holds (never a number cut), or the one line that says why there is none."""

from __future__ import annotations

from mtptui.core.latency import LABELS, ms

# (figure, quantiles) in the order they give way: ITL is what speculation buys, TTFT what it may cost
PARTS = (("itl", ("p50", "p99")), ("ttft", ("p50", "p99")), ("e2e", ("p50",)), ("queue", ("p99",)),
         ("itl", ("p90",)), ("ttft", ("p90",)), ("e2e", ("p99",)))
TITLE = "latency 1m"


def parts(now: dict | None) -> list[tuple[str, str]]:
    """(figure, 'ITL p50 12ms p99 15ms'), merged per figure, in PARTS' order."""
    out: list[tuple[str, list[str]]] = []
    if not now:
        return []
    for fig, qs in PARTS:
        f = now.get(fig)
        if not f:
            continue
        words = [f"{q} {ms(f.get(q))}" for q in qs]
        for name, got in out:
            if name == fig:
                got += words
                break
        else:
            out.append((fig, words))
    return [(fig, f"{LABELS[fig]} {' '.join(words)}") for fig, words in out]


def latency_line(now: dict | None, note: str | None, width: int) -> str | None:
    """The line for `width` cells, or None when there is nothing to say (no server reached)."""
    if not now:
        if not note:
            return None
        return note if len(note) <= width else note[:max(0, width - 1)] + "…"
    pieces = [text for _, text in parts(now)]
    if not pieces:
        return None if not note else latency_line(None, note, width)
    line = TITLE
    # whole parts only, in order; a figure's later quantiles (p90) join only if all fit
    for text in _fitting(pieces, width - len(TITLE) - 2):
        line += "  " + text
    spec = now.get("spec") or {}
    per_pos = spec.get("per_pos")
    if per_pos:
        extra = "  per pos " + " ".join(f"{p:.2f}" for p in per_pos)
        if len(line) + len(extra) <= width:
            line += extra
    return line


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
