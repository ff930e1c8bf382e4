"""Every value's range, in one place: a config key and the flag that sets the same value share one
`Range`, so their bounds never differ (`spec --timeout` and `[control] wait_timeout`). A Range checks
a config value (`check`: TOML gives it typed) and parses a flag (`parse`, argparse's `type=`), and
its message says the range. NaN and the infinities are never in one; nor is a boolean.
docs/limits.md lists them per command."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Any


def _g(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class Range:
    lo: float
    hi: float
    integer: bool = False
    unit: str = ""  # "seconds": said in the message

    def text(self) -> str:
        kind = "an integer" if self.integer else f"a number of {self.unit}" if self.unit else "a number"
        return f"{kind} from {_g(self.lo)} to {_g(self.hi)}"

    def __contains__(self, v: object) -> bool:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (self.integer and not isinstance(v, int)):
            return False
        try:
            return math.isfinite(v) and self.lo <= v <= self.hi
        except OverflowError:  # an integer of 400 digits
            return False

    def check(self, v: Any) -> Any:
        """A config value: the value (a float where seconds are asked) or ValueError(why)."""
        if v not in self:
            shown = repr(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)[:40]
            raise ValueError(f"must be {self.text()} (got {shown})")
        return v if self.integer else float(v)

    def parse(self, text: str) -> Any:
        """A flag's text: the value, or argparse.ArgumentTypeError saying the range."""
        try:
            v: float | int = int(text) if self.integer else float(text)
        except ValueError:
            v = math.nan
        if v not in self:
            raise argparse.ArgumentTypeError(f"{text!r}: give {self.text()}")
        return v

    __call__ = parse  # argparse's type=


# --- the hosts' connection ([defaults] and [[hosts]]; live's, record's ... flags) --------------------
PORT = Range(1, 65535, integer=True)
LINES = Range(0, 1_000_000, integer=True)  # --lines: journal lines read back before following
CONNECT_TIMEOUT = Range(0.1, 600, unit="seconds")
KEEPALIVE_INTERVAL = Range(0, 3600, unit="seconds")
KEEPALIVE_COUNT_MAX = Range(1, 100, integer=True)
RECONNECT_INITIAL = Range(0.01, 600, unit="seconds")
RECONNECT_MAX = Range(0.01, 3600, unit="seconds")
GIVE_UP_AFTER = Range(0.1, 30 * 86400, unit="seconds")  # live --give-up-after

# --- acting on a host ([control]; spec's, bench's, tune's flags) ------------------------------------
WAIT_TIMEOUT = Range(10, 86400, unit="seconds")  # [control] wait_timeout and --timeout: ready after a restart
VERIFY_BATCHES = Range(1, 100, integer=True)
LOCK_STALE_AFTER = Range(10, 7 * 86400, unit="seconds")
SMOKE_TIMEOUT = Range(1, 3600, unit="seconds")  # smoke --timeout: for the answer

# --- a profile ([profiles.NAME]): what SGLang's own limits allow, far past any sane value ------------
NUM_STEPS = Range(1, 64, integer=True)
TOPK = Range(1, 64, integer=True)
NUM_DRAFT_TOKENS = Range(1, 1024, integer=True)
SCHEDULE_K = Range(0, 64, integer=True)  # a vLLM schedule's K for a range of batch sizes; 0: no speculation there

# --- benchmarks (bench's, tune's flags) -----------------------------------------------------------------
CONCURRENCY = Range(1, 4096, integer=True)  # requests in flight
REQUESTS = Range(1, 1_000_000, integer=True)  # per concurrency
MAX_TOKENS = Range(1, 1_000_000, integer=True)  # output tokens per request

# --- reading and serving ----------------------------------------------------------------------------
JOBS = Range(1, 256, integer=True)  # summary --jobs: processes reading a file
DURATION = Range(0.01, 366 * 86400, unit="seconds")  # record --duration
STALE_AFTER = Range(0.1, 86400, unit="seconds")  # [thresholds] stale_s and export --stale-after
REFRESH = Range(0.1, 3600, unit="seconds")  # fleet --interval
QUERY_TIMEOUT = Range(0.1, 600, unit="seconds")  # fleet --timeout: one Prometheus query
OUTLIER_PCT = Range(0.1, 1000)  # fleet --outlier-pct
LAST = Range(1, 1_000_000_000, integer=True)  # audit -n/--last
