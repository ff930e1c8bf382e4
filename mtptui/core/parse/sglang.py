"""SGLang's message prefix and its Prefill/Decode batch lines, every version (reference §1, §2).

The head is recognised (`Prefill|Decode batch`, an optional ` [N]`, then `.` or `,`); the body is
read as `key: value` items split on `, `. Unknown keys are kept verbatim; a body cut short still
counts as a batch with the fields it has. Nothing absent becomes a zero.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mtptui.core.parse.numbers import amount, count
from mtptui.core.records import DECODE, PREFILL, SGLANG, BatchStats

# a field's reader: the value's text -> the value; ValueError for text that does not read
Reader = Callable[[str], float]
_INT: Reader = count
_FLOAT: Reader = amount
# A layout's generated reader calls the builtins, and its pattern admits only the texts for which
# they agree with the checked readers above: no letters in a float (no inf, nan or exponent: those
# take the general path), at most 300 characters (nothing too large for a double), at most 15 in an
# int (a count below 10**15), and no minus sign (no server prints a negative count, usage or rate).
# No value may hold NUL, CR or ESC either: the fast path in parse/__init__.py relies on it.
_BUILTIN: dict[Reader, tuple[str, str]] = {_INT: ("int", "([^,\x00\r\x1b-]{0,15})"),
                                           _FLOAT: ("float", "([^,a-zA-Z\x00\r\x1b-]{0,300})")}
# What a server can print for these, past their reader's own check: an accept len is at least the
# one token a step always gives, an accept rate a share. Outside, the field is unreadable (the line
# counted malformed): never averaged (issue 42). The compiled lane holds them too (field_range).
RANGES: dict[str, tuple[float, float]] = {"accept_len": (1.0, 1e6), "accept_rate": (0.0, 1.0),
                                          "cache_hit_rate_pct": (0.0, 100.0)}


def field_range(name: str) -> tuple[float, float]:
    """(lowest, highest) that a field's value may be (the compiled lane's check)."""
    return RANGES.get(name, (0.0, float("inf")))


def _in(x: float, name: str) -> float:
    lo, hi = RANGES[name]
    if lo <= x <= hi:
        return x
    raise ValueError(f"{name} out of range: {x}")


def _bool(v: str) -> bool:
    if v == "True":
        return True
    if v == "False":
        return False
    raise ValueError(v)


def _pct(v: str) -> float:
    if not v.endswith("%"):
        raise ValueError(v)
    return amount(v[:-1])


# key in the log -> (normalised field, converter)
FIELDS: dict[str, tuple[str, Reader]] = {
    "#running-req": ("running_req", _INT),
    "#queue-req": ("queue_req", _INT),
    "#token": ("num_token", _INT),
    "token usage": ("token_usage", _FLOAT),
    "#full token": ("full_token", _INT),
    "full token usage": ("full_token_usage", _FLOAT),
    "#swa token": ("swa_token", _INT),
    "swa token usage": ("swa_token_usage", _FLOAT),
    "mamba num": ("mamba_num", _INT),
    "mamba usage": ("mamba_usage", _FLOAT),
    "#gpu token": ("gpu_token", _INT),
    "gpu token usage": ("gpu_token_usage", _FLOAT),
    "#cpu token": ("cpu_token", _INT),
    "cpu token usage": ("cpu_token_usage", _FLOAT),
    "accept len": ("accept_len", _FLOAT),
    "accept rate": ("accept_rate", _FLOAT),
    "cap len": ("cap_len", _FLOAT),
    "block accept len": ("block_accept_len", _FLOAT),
    "gen throughput (token/s)": ("gen_throughput", _FLOAT),
    "input throughput (token/s)": ("input_throughput", _FLOAT),
    "pre-allocated usage": ("prealloc_usage", _FLOAT),
    "#prealloc-req": ("prealloc_req", _INT),
    "#transfer-req": ("transfer_req", _INT),
    "#retracted-req": ("retracted_req", _INT),
    "#host-receive-req": ("host_receive_req", _INT),
    "waiting-image-req": ("waiting_image_req", _INT),
    "#new-seq": ("new_seq", _INT),
    "#new-token": ("new_token", _INT),
    "#cached-token": ("cached_token", _INT),
    "cache hit rate": ("cache_hit_rate_pct", _pct),
    "#unbootstrapped-req": ("unbootstrapped_req", _INT),
    "#transferring-req": ("transferring_req", _INT),
    "#inflight-req": ("inflight_req", _INT),
    "#bootstrap-req": ("bootstrap_req", _INT),
    "#optimistic-req": ("optimistic_req", _INT),
    "#pending-token": ("pending_token", _INT),
    "#replay-token": ("replay_token", _INT),
    "fwd occupancy": ("fwd_occupancy_pct", _pct),
    "fwd+idle occupancy": ("fwd_idle_occupancy_pct", _pct),
    "est. prefill TFLOPS/s (per GPU)": ("prefill_tflops", _FLOAT),
    "est. decode TFLOPS/s (per GPU)": ("decode_tflops", _FLOAT),
    "est. read BW (GB/s per GPU)": ("read_bw_gbs", _FLOAT),
    "est. write BW (GB/s per GPU)": ("write_bw_gbs", _FLOAT),
}
GRAPH_KEYS = {"cuda graph": "cuda", "npu graph": "npu", "cpu graph": "cpu", "musa graph": "musa"}

# 0.4.9's one-off hybrid SWA pool: `#token: full=N, swa=M, token usage: full=x, swa=y`
_HYBRID_049: dict[tuple[str | None, str], tuple[str, Reader]] = {
    ("#token", "full"): ("full_token", _INT),
    ("#token", "swa"): ("swa_token", _INT),
    ("token usage", "full"): ("full_token_usage", _FLOAT),
    ("token usage", "swa"): ("swa_token_usage", _FLOAT),
}


# The prefix of reference §1.7: time, optional milliseconds, rank tokens (none at TP=1). Older
# versions (in reports of 2024) stamped the time of day only: `[04:40:55 TP0] `.
PREFIX = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|\d\d:\d\d:\d\d)(?:\.(\d{3}))?((?: [A-Z_]+-?\d+)*)\] ?")
HEAD = re.compile(r"(Decode|Prefill) batch(?: \[\d+\])?[.,] ?")


def split_prefix(text: str) -> tuple[str, str | None, str, str] | None:
    """`[2026-03-09 16:03:25.123 DP1 TP1] msg` -> (stamp, millis, rank, msg); None without a
    prefix. A time-only stamp is 8 characters long."""
    m = PREFIX.match(text)
    if m is None:
        return None
    stamp, millis, rank = m.groups()
    return stamp, millis, rank[1:], text[m.end():]


def batch_head(msg: str) -> tuple[str, str] | None:
    """(kind, body) when msg starts with a batch head, else None. A head cut short (`Decode
    batch [12`, `Decode batch `) still names a batch; its body is then empty."""
    if msg.startswith("Decode batch"):
        kind, i = DECODE, 12
    elif msg.startswith("Prefill batch"):
        kind, i = PREFILL, 13
    else:
        return None
    if msg[i:] in ("", " "):
        return kind, ""
    if msg.startswith(" [", i):
        j = msg.find("]", i + 2)
        digits = msg[i + 2:] if j < 0 else msg[i + 2:j]
        if digits and not digits.isdigit():
            return None
        if j < 0:
            return kind, ""
        if not digits:
            return None
        i = j + 1
    sep = msg[i:i + 1]
    if sep == "":
        return kind, ""
    if sep not in (".", ","):
        return None
    return kind, msg[i + 1:].lstrip(" ")


def parse_body(body: str, fields: dict[str, Any], extra: dict[str, str]) -> bool:
    """Fills fields/extra from the `key: value` items. Returns False if any item was unreadable."""
    ok = True
    if body.endswith(", "):
        body = body[:-2]
    elif body.endswith(","):
        body = body[:-1]
    if not body:
        return True
    prev_key: str | None = None
    for item in body.split(", "):
        key, sep, value = item.partition(": ")
        if not sep:
            # An item without `: ` continues the previous one: 0.4.9's `swa=M` after `#token: full=N`.
            name, eq, v = item.partition("=")
            spec = _HYBRID_049.get((prev_key, name)) if eq else None
            if spec is None:
                if key:
                    ok = False
                    extra[item] = ""
                continue
            try:
                fields[spec[0]] = spec[1](v)
            except ValueError:
                ok = False
            continue
        prev_key = key
        spec = FIELDS.get(key)
        if spec is not None:
            try:
                x = spec[1](value)
                fields[spec[0]] = _in(x, spec[0]) if spec[0] in RANGES else x
            except ValueError:
                if "=" in value and (key, value.partition("=")[0]) in _HYBRID_049:
                    name, _, v = value.partition("=")
                    hspec = _HYBRID_049[(key, name)]
                    try:
                        fields[hspec[0]] = hspec[1](v)
                        continue
                    except ValueError:
                        pass
                ok = False
                extra[key] = value
            continue
        g = GRAPH_KEYS.get(key)
        if g is not None:
            try:
                fields["graph"] = _bool(value)
                fields["graph_kind"] = g
            except ValueError:
                ok = False
                extra[key] = value
            continue
        extra[key] = value
    return ok


def fast_field(key: str) -> tuple[str, str] | None:
    """(normalised name, "int", "float" or "graph") of a key that the fast path reads, else None."""
    if key in GRAPH_KEYS:
        return "graph", "graph"
    spec = FIELDS.get(key)
    builtin = None if spec is None else _BUILTIN.get(spec[1])
    return None if spec is None or builtin is None else (spec[0], builtin[0])


class _Template:
    """How to read every body whose keys come in one order: a busy log repeats a handful of
    layouts millions of times, so the key lookups are done once per layout, not once per line.

    ``read`` is generated code: one dict display of direct int()/float() calls runs about twice
    as fast as any generic loop. Only our own field names (from FIELDS) go into the source,
    never text from the log.
    """

    __slots__ = ("keys", "rx", "read")

    def __init__(self, keys: list[str]) -> None:
        self.keys = tuple(keys)
        items, parts = [], []
        for i, key in enumerate(keys):
            spec = FIELDS.get(key)
            builtin = None if spec is None else _BUILTIN.get(spec[1])
            if spec is not None and builtin is not None:
                read = f"{builtin[0]}(v[{i}])"
                items.append(f"{spec[0]!r}: _in({read}, {spec[0]!r})" if spec[0] in RANGES else f"{spec[0]!r}: {read}")
                parts.append(re.escape(key) + ": " + builtin[1])
            elif key in GRAPH_KEYS:
                items.append(f"'graph': _GRAPH[v[{i}]]")
                items.append(f"'graph_kind': {GRAPH_KEYS[key]!r}")
                parts.append(re.escape(key) + ": ([^,\x00\r\x1b\n]*)")
            else:
                raise KeyError(key)  # unknown or special keys take the general path
        self.rx = re.compile(", ".join(parts) + "(?:, ?)?\n?")  # endings `, `, `,` or none
        namespace: dict[str, Any] = {"_GRAPH": {"True": True, "False": False}, "_in": _in}
        exec("def read(v):\n    return {" + ", ".join(items) + "}\n", namespace)  # noqa: S102
        # read(values) raises ValueError or KeyError for a value that does not read
        self.read: Callable[[tuple[str, ...]], dict[str, Any]] = namespace["read"]


_templates: dict[tuple[str, ...], _Template | None] = {}
_last: dict[str, _Template] = {}  # per batch kind, the layout that matched last


def layout_of(kind: str, text: str, pos: int) -> tuple[str, ...] | None:
    """The keys, in order, of the body text[pos:] of a batch of this kind when the fast path
    reads it, else None: where the compiled lane (core/_compiled.pyx) learns a layout."""
    if fast_body(kind, text, pos) is None:
        return None
    return _last[kind].keys  # fast_body leaves the layout it read there


def fast_body(kind: str, text: str, pos: int = 0) -> dict[str, Any] | None:
    """The fields of a well-formed body, text[pos:] (a final newline allowed), of a known
    layout; else None (take the general path)."""
    tmpl = _last.get(kind)
    if tmpl is not None:
        m = tmpl.rx.fullmatch(text, pos)
        if m is not None:
            try:
                return tmpl.read(m.groups())
            except (ValueError, KeyError):
                return None
    body = text[pos:]
    if body.endswith("\n"):
        body = body[:-1]
    if body.endswith(", "):
        body = body[:-2]
    # Every item must be exactly `key: value`: then keys and values alternate after one split.
    if not body or body.count(": ") != body.count(", ") + 1:
        return None
    kv = body.replace(": ", ", ").split(", ")
    keys = tuple(kv[0::2])
    try:
        tmpl = _templates[keys]
    except KeyError:  # a layout not seen yet
        try:
            tmpl = _Template(list(keys))
        except KeyError:
            tmpl = None
        if len(_templates) < 4096:
            _templates[keys] = tmpl
    if tmpl is None:
        return None
    m = tmpl.rx.fullmatch(body)
    if m is None:
        return None
    _last[kind] = tmpl
    try:
        return tmpl.read(m.groups())
    except (ValueError, KeyError):
        return None


def parse_batch(msg: str, ts: float | None, host: str | None, rank: str) -> BatchStats | None:
    m = HEAD.match(msg)
    if m is not None:
        kind = DECODE if m.group(1) == "Decode" else PREFILL
        body = msg[m.end():]
        fast = fast_body(kind, body)
        if fast is not None:
            return BatchStats(kind, ts, host, rank, SGLANG, fast, {}, False)
    else:
        head = batch_head(msg)  # a head cut short is still a batch, with no fields
        if head is None:
            return None
        kind, body = head
    fields: dict[str, Any] = {}
    extra: dict[str, str] = {}
    ok = parse_body(body, fields, extra)
    truncated = not ok or not body
    return BatchStats(kind=kind, ts=ts, host=host, rank=rank, engine=SGLANG, fields=fields,
                      extra=extra, truncated=truncated)
