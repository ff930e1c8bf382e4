"""Compares what a parser read from a line with what the simulator meant it to say.

Duck-typed on mtptui.core's `Parsed` (outcome, record with kind/rank/fields/extra/truncated/ts,
or an event's kind/data), so the simulator still imports nothing from mtptui.core. Used by the
simulator's tests and by anyone who wants to check a parser against `Line.truth`.
"""

from __future__ import annotations

TS_SLACK = 1.0  # the logs print whole seconds


def _value_mismatch(name: str, want, got, tol: float) -> str | None:
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{name}: read {got!r}, meant {want!r}"
        for w, g in zip(want, got):
            if abs(g - w) > tol + 1e-9:
                return f"{name}: read {got!r}, meant {want!r}"
        return None
    if isinstance(want, (bool, str)) or (isinstance(want, int) and not tol):
        return None if got == want and type(got) is type(want) else f"{name}: read {got!r}, meant {want!r}"
    if not isinstance(got, (int, float)) or isinstance(got, bool) or abs(got - want) > tol + 1e-9:
        return f"{name}: read {got!r}, meant {want!r} (+-{tol})"
    return None


def mismatch(truth: dict, parsed) -> str | None:
    """None when the parsed line says what the truth says, else the first difference."""
    want = truth["expect"]
    if parsed.outcome != want:
        return f"outcome {parsed.outcome!r}, meant {want!r}"
    rec = parsed.record
    if want == "batch":
        if rec.kind != truth["kind"]:
            return f"kind {rec.kind!r}, meant {truth['kind']!r}"
        if rec.rank != truth["rank"]:
            return f"rank {rec.rank!r}, meant {truth['rank']!r}"
        if rec.truncated or rec.extra:
            return f"unread parts: truncated={rec.truncated} extra={rec.extra}"
        fields = truth["fields"]
        if set(rec.fields) != set(fields):
            return f"fields {sorted(rec.fields)}, meant {sorted(fields)}"
        for name, value in fields.items():
            bad = _value_mismatch(name, value, rec.fields[name], truth["tol"].get(name, 0.0))
            if bad:
                return bad
    elif want == "event":
        if rec.kind != truth["event"]:
            return f"event {rec.kind!r}, meant {truth['event']!r}"
        if truth.get("data") and rec.data != truth["data"]:
            return f"event data {rec.data!r}, meant {truth['data']!r}"
    ts = truth.get("ts")
    if want in ("batch", "event") and ts is not None and (rec.ts is None or abs(rec.ts - ts) > TS_SLACK):
        return f"time {rec.ts!r}, meant {ts!r}"
    return None
