"""vLLM's periodic stats lines (reference §6), mapped onto the SGLang metric names.

- throughput lines (V0, V1 `Engine 000:`, `N Engines Aggregated:`): one decode sample each;
  gen_throughput <- Avg generation throughput, running_req <- Running, queue_req <- Waiting/Pending,
  token_usage <- GPU KV cache usage as a fraction (V1 on another device: that device's, e.g. CPU's).
- spec lines (V0 `Speculative metrics:`, V1 `SpecDecoding metrics:` in both forms): accept_len <-
  Mean acceptance length, accept_rate <- the draft acceptance rate as a fraction (a percentage / 100).
  They carry no engine, so they belong to the rank of the throughput line before them.
"""

from __future__ import annotations

import re

from mtptui.core.parse import timeparse
from mtptui.core.parse.numbers import bounded_int, real_float
from mtptui.core.parse.sglang import RANGES
from mtptui.core.records import DECODE, SPEC, VLLM, BatchStats

# `(APIServer pid=66) INFO 09-02 08:46:23 [v1/metrics/loggers.py:271] msg`; the file part is
# `[file:line]` in new versions and `file:line]` in old ones; some builds pad the level
# (`INFO  09-09 05:27:57`).
_PREFIX = re.compile(
    r"(?:\([\w.-]+ pid=\d+\) )?(?:.*? )??(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) +(\d\d)-(\d\d) (\d\d:\d\d:\d\d)(?:\.\d+)? "
    r"\[?[^\]\s]*:\d+\] "
)  # `(?:.*? )??` is VLLM_LOGGING_PREFIX: any text the operator put before the level
# The same lines where a deployment's logging config sets Python's own format:
# `2026-03-09 16:03:25,123 - vllm.engine.metrics - INFO - Avg prompt throughput: ...` (the
# asctime, the logger's name, the level; any text before it, as above).
_PYLOG = re.compile(
    r"(?:.*? )??(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:[,.](\d{1,9}))? - [\w.]+ - "
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - "
)
_ENGINE = re.compile(r"(?:Engine (\d+)|(\d+) Engines Aggregated): ")

_THROUGHPUT_FIELDS = {
    "Avg prompt throughput": "prompt_throughput",
    "Avg generation throughput": "gen_throughput",
    "Running": "running_req",
    "Waiting": "queue_req",
    "Pending": "queue_req",
    "Swapped": "swapped_req",
    "Preemptions": "preemptions",
    "Corrupted": "corrupted_req",
    "GPU KV cache usage": "token_usage",
    "CPU KV cache usage": "cpu_kv_usage",
    "Prefix cache hit rate": "prefix_cache_hit_rate",
    "External prefix cache hit rate": "external_prefix_cache_hit_rate",
    "MM cache hit rate": "mm_cache_hit_rate",
}
_SPEC_FIELDS = {
    "Mean acceptance length": "accept_len",
    "Avg Draft acceptance rate": "accept_rate",
    "Draft acceptance rate": "accept_rate",
    "Accepted throughput": "accepted_throughput",
    "Drafted throughput": "drafted_throughput",
    "Accepted": "accepted_tokens",
    "Drafted": "drafted_tokens",
    "System efficiency": "spec_efficiency",
    "Number of speculative tokens": "num_spec_tokens",
    "Number of accepted tokens": "accepted_tokens",
    "Number of draft tokens": "drafted_tokens",
    "Number of emitted tokens": "emitted_tokens",
    "Per-position acceptance rate": "per_position_accept_rate",
}
_UNITS = (" tokens/s", " tokens", " reqs")
# What vLLM can print (issue 42): no negative count, throughput or share; a share at most 1 once
# its percentage is a fraction; an accept length of at least the one token a step gives. Outside,
# the field is unreadable and the line malformed: never averaged.
_SHARES = ("token_usage", "cpu_kv_usage", "prefix_cache_hit_rate", "external_prefix_cache_hit_rate",
           "mm_cache_hit_rate", "accept_rate", "spec_efficiency")
_RANGES = {**RANGES, **dict.fromkeys(_SHARES, (0.0, 1.0))}


def _ranged(name: str, x: float) -> float:
    lo, hi = _RANGES.get(name, (0.0, float("inf")))
    if lo <= x <= hi:
        return x
    raise ValueError(f"{name} out of range: {x}")


def _number(value: str) -> float:
    """`11.5 tokens/s` -> 11.5, `3 reqs` -> 3, `63.2%` -> 0.632 (a fraction, like SGLang's)."""
    v = value.rstrip(".")
    for u in _UNITS:
        if v.endswith(u):
            v = v[: -len(u)]
            break
    if v.endswith("%"):
        return round(real_float(v[:-1]) / 100, 12)
    if v.isdigit():
        return bounded_int(v)
    return real_float(v)


def _items(body: str, names: dict[str, str], fields: dict, extra: dict[str, str]) -> bool:
    ok = True
    key = None
    values: list[str] = []

    def flush() -> None:
        nonlocal ok
        if key is None:
            return
        name = names.get(key)
        if name is None:
            extra[key] = ", ".join(values)
            return
        try:
            if name == "per_position_accept_rate":
                fields[name] = [_ranged("accept_rate", real_float(x)) for x in values]
            else:
                fields[name] = _ranged(name, _number(values[0]))
        except (ValueError, IndexError):
            ok = False
            extra[key] = ", ".join(values)

    for item in body.rstrip(".").split(", "):
        k, sep, v = item.partition(": ")
        if sep:
            flush()
            key, values = k, [v]
        elif key is not None:
            values.append(item)  # the per-position list also uses `, `
    flush()
    return ok


def _device_kv_usage(fields: dict, extra: dict[str, str]) -> None:
    """V1 names the KV cache by its device (vllm/v1/metrics/loggers.py, 0.32.0: `"GPU" if
    device_type == "cuda" else device_type.upper()`): on a CPU build `CPU KV cache usage` is the
    engine's KV cache, not V0's swap space beside a `GPU KV cache usage`, and so is XPU's or TPU's."""
    if "cpu_kv_usage" in fields:
        fields["token_usage"] = fields["cpu_kv_usage"]
        return
    for key, value in extra.items():
        if key.endswith(" KV cache usage") and key[:-len(" KV cache usage")].isalpha():
            try:
                fields["token_usage"] = _ranged("token_usage", _number(value))
            except ValueError:
                return
            del extra[key]
            return


def looks_like_vllm(text: str) -> bool:
    return "throughput: " in text or "metrics: " in text


def stamp(text: str, year: int) -> tuple[float | None, int]:
    """The time in vLLM's own prefix (or Python logging's) of any line, None without one; and
    where the message after that prefix begins (0 without one)."""
    m = _PREFIX.match(text)
    if m:
        mon, day, hms = m.groups()
        return timeparse.month_day_hms(year, int(mon), int(day), hms), m.end()
    m = _PYLOG.match(text)
    if m:
        date, hms, frac = m.groups()
        ts = timeparse.ymd_hms(f"{date} {hms}")
        if ts is not None and frac:
            ts += int(frac) / 10 ** len(frac)
        return ts, m.end()
    return None, 0


def parse_stats(text: str, host: str | None, year: int) -> tuple[BatchStats | None, float | None]:
    """Parses a vLLM stats line. Returns (record or None, the line's own timestamp)."""
    ts, at = stamp(text, year)
    msg = text[at:]
    fields: dict = {}
    extra: dict[str, str] = {}
    if msg.startswith(("SpecDecoding metrics: ", "Speculative metrics: ")):
        body = msg.partition(": ")[2]
        ok = _items(body, _SPEC_FIELDS, fields, extra)
        return BatchStats(kind=SPEC, ts=ts, host=host, rank="", engine=VLLM, fields=fields,
                          extra=extra, truncated=not ok), ts
    rank = ""
    em = _ENGINE.match(msg)
    if em:
        rank = f"Engine {int(em.group(1)):03d}" if em.group(1) is not None else ""
        msg = msg[em.end():]
    if not msg.startswith("Avg prompt throughput: "):
        return None, ts
    ok = _items(msg, _THROUGHPUT_FIELDS, fields, extra)
    if "token_usage" not in fields:
        _device_kv_usage(fields, extra)
    return BatchStats(kind=DECODE, ts=ts, host=host, rank=rank, engine=VLLM, fields=fields,
                      extra=extra, truncated=not ok), ts
