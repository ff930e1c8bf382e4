"""Reading numbers from log text: only values a server can mean.

Python's int() and float() also read `inf` and digit strings too large for a double. No server
logs those, and each breaks statistics downstream (a mean of inf, invalid JSON, an overflow when
stored as a double), so such a field is unreadable, like any other bad value. `nan` is kept: SGLang
prints `fwd occupancy: nan%` when it has no sample, and every consumer reads NaN as "no value".
"""

from __future__ import annotations

_BIG = 10**300


def bounded_int(v: str) -> int:
    x = int(v)
    if -_BIG < x < _BIG:
        return x
    raise ValueError(f"integer out of range: {v[:40]}")


def real_float(v: str) -> float:
    """float(v), refusing the infinities (nan passes: see above)."""
    x = float(v)
    if x - x == 0.0 or x != x:  # x - x is nan for inf as well as for nan
        return x
    raise ValueError(f"infinite: {v[:40]}")
