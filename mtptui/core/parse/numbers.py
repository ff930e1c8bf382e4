"""Reading numbers from log text: only values a server can mean.

Python's int() and float() also read `inf`, digit strings too large for a double, and doubles so
large that a sum of two overflows. No server logs those, and each breaks statistics downstream (a
mean of inf, invalid JSON, an overflow when stored or summed as a double), so a field of magnitude
10**290 or more is unreadable, like any other bad value: a sum of fewer than 10**18 values stays
finite. `nan` is kept: SGLang
prints `fwd occupancy: nan%` when it has no sample, and every consumer reads NaN as "no value".
"""

from __future__ import annotations

_BIG = 10**290
_BIG_FLOAT = 1e290


def bounded_int(v: str) -> int:
    x = int(v)
    if -_BIG < x < _BIG:
        return x
    raise ValueError(f"integer out of range: {v[:40]}")


# A count a server can print: no batch holds 10**15 requests or tokens (1e29 running requests is a
# broken line), and the compiled lane reads at most 15 digits, so both paths agree.
COUNT_LIMIT = 10**15


def count(v: str) -> int:
    """A count: an integer from 0 to below COUNT_LIMIT; ValueError for any other (issue 42)."""
    x = int(v)
    if 0 <= x < COUNT_LIMIT:
        return x
    raise ValueError(f"not a count: {v[:40]}")


def amount(v: str) -> float:
    """real_float(v), refusing a negative value (a throughput, a usage, an accept len); NaN passes."""
    x = real_float(v)
    if not x < 0:
        return x
    raise ValueError(f"negative: {v[:40]}")


def real_float(v: str) -> float:
    """float(v), refusing the infinities and near them (nan passes: see above)."""
    x = float(v)
    if -_BIG_FLOAT < x < _BIG_FLOAT or x != x:
        return x
    raise ValueError(f"out of range: {v[:40]}")
