"""Synthetic SGLang and vLLM log lines, each with the record it must read back as.

Every line is built from the f-strings that /work/shared/reference/sglang-log-formats.md gives
(§1 SGLang batch lines by version, §2 the logger prefix and its rank tokens, §6 vLLM), wrapped in
journald's envelopes when asked. Each comes with what a correct parser must make of it: kind, rank,
time, host and every normalised field. Nothing here imports mtptui, so tests that compare the
parser's output with these expectations check the parser against the reference, not against itself.

Values are chosen at the precision the f-string prints (two decimals for `:.2f`, one for `%.1f`,
three for `%.3f`), so the printed text reads back as exactly the chosen number.
"""

from __future__ import annotations

import calendar
import itertools
import json
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

SGLANG, VLLM = "sglang", "vllm"

# SGLang key -> normalised field name: the parser's contract, as the brief states it.
NAMES = {
    "#running-req": "running_req",
    "#queue-req": "queue_req",
    "#token": "num_token",
    "token usage": "token_usage",
    "#full token": "full_token",
    "full token usage": "full_token_usage",
    "#swa token": "swa_token",
    "swa token usage": "swa_token_usage",
    "mamba num": "mamba_num",
    "mamba usage": "mamba_usage",
    "#gpu token": "gpu_token",
    "gpu token usage": "gpu_token_usage",
    "#cpu token": "cpu_token",
    "cpu token usage": "cpu_token_usage",
    "accept len": "accept_len",
    "accept rate": "accept_rate",
    "cap len": "cap_len",
    "block accept len": "block_accept_len",
    "gen throughput (token/s)": "gen_throughput",
    "input throughput (token/s)": "input_throughput",
    "pre-allocated usage": "prealloc_usage",
    "#prealloc-req": "prealloc_req",
    "#transfer-req": "transfer_req",
    "#retracted-req": "retracted_req",
    "#host-receive-req": "host_receive_req",
    "waiting-image-req": "waiting_image_req",
    "#new-seq": "new_seq",
    "#new-token": "new_token",
    "#cached-token": "cached_token",
    "cache hit rate": "cache_hit_rate_pct",
    "#unbootstrapped-req": "unbootstrapped_req",
    "#transferring-req": "transferring_req",
    "#inflight-req": "inflight_req",
    "#bootstrap-req": "bootstrap_req",
    "#optimistic-req": "optimistic_req",
    "#pending-token": "pending_token",
    "#replay-token": "replay_token",
    "fwd occupancy": "fwd_occupancy_pct",
    "fwd+idle occupancy": "fwd_idle_occupancy_pct",
    "est. prefill TFLOPS/s (per GPU)": "prefill_tflops",
    "est. decode TFLOPS/s (per GPU)": "decode_tflops",
    "est. read BW (GB/s per GPU)": "read_bw_gbs",
    "est. write BW (GB/s per GPU)": "write_bw_gbs",
}

# One distinct value per field, so a value read into the wrong field shows.
DEFAULTS = {
    "running_req": 12, "queue_req": 3, "num_token": 45678, "token_usage": 0.23,
    "full_token": 40001, "full_token_usage": 0.31, "swa_token": 5002, "swa_token_usage": 0.12,
    "mamba_num": 17, "mamba_usage": 0.44, "gpu_token": 2048, "gpu_token_usage": 0.05,
    "cpu_token": 4096, "cpu_token_usage": 0.09, "accept_len": 2.87, "accept_rate": 0.72,
    "cap_len": 3.4, "block_accept_len": 2.1, "gen_throughput": 1234.5, "input_throughput": 4321.0,
    "prealloc_usage": 0.02, "prealloc_req": 1, "transfer_req": 2, "retracted_req": 14,
    "host_receive_req": 4, "waiting_image_req": 5, "new_seq": 6, "new_token": 512,
    "cached_token": 128, "cache_hit_rate_pct": 20.0, "unbootstrapped_req": 7,
    "transferring_req": 8, "inflight_req": 9, "bootstrap_req": 10, "optimistic_req": 11,
    "pending_token": 13, "replay_token": 15, "fwd_occupancy_pct": 93.5,
    "fwd_idle_occupancy_pct": 97.25, "prefill_tflops": 9.9, "decode_tflops": 12.34,
    "read_bw_gbs": 456.78, "write_bw_gbs": 1.23,
}

VERSIONS = ("0.3.6", "0.4.3", "0.4.6", "0.4.8", "0.4.9", "0.5.1", "0.5.2", "0.5.3", "0.5.4",
            "0.5.8", "0.5.10", "0.5.12", "0.5.17", "0.5.23")


def ver(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


@dataclass
class Msg:
    """One message (the text after the logger's prefix) and what it must read back as."""

    text: str
    kind: str | None  # "decode", "prefill", "spec", or None for a line that is no batch
    fields: dict
    extra: dict = field(default_factory=dict)
    rank: str | None = None  # vLLM: the rank the message itself names; None: from elsewhere


def _exact(v: float, places: int) -> None:
    # A value the f-string would round would not read back as itself: a mistake in the test.
    if isinstance(v, float) and math.isnan(v):
        return
    assert float(f"{v:.{places}f}") == v, f"{v!r} is not exact at {places} decimals"


class _Body:
    """The `key: value` items of one line, in order, and the fields they must give."""

    def __init__(self, values: dict) -> None:
        self.v = values
        self.parts: list[str] = []
        self.fields: dict = {}

    def int(self, key: str) -> None:
        name = NAMES[key]
        v = self.v[name]
        assert isinstance(v, int) and not isinstance(v, bool), (key, v)
        self.parts.append(f"{key}: {v}")
        self.fields[name] = v

    def f2(self, key: str) -> None:
        name = NAMES[key]
        v = float(self.v[name])
        _exact(v, 2)
        self.parts.append(f"{key}: {v:.2f}")
        self.fields[name] = v

    def pct2(self, key: str) -> None:
        name = NAMES[key]
        v = float(self.v[name])
        _exact(v, 2)
        self.parts.append(f"{key}: {v:.2f}%")
        self.fields[name] = v

    def graph(self, label: str) -> None:
        on = self.v["graph"]
        self.parts.append(f"{label} graph: {on}")
        self.fields["graph"] = on
        self.fields["graph_kind"] = label

    def swa049(self) -> None:
        # 0.4.9's one-off hybrid SWA pool text (§1.2)
        v = self.v
        _exact(v["full_token_usage"], 2)
        _exact(v["swa_token_usage"], 2)
        self.parts.append(f"#token: full={v['full_token']}, swa={v['swa_token']}, "
                          f"token usage: full={v['full_token_usage']:.2f}, swa={v['swa_token_usage']:.2f}")
        for name in ("full_token", "swa_token", "full_token_usage", "swa_token_usage"):
            self.fields[name] = v[name]


def _head(kind: str, V: tuple, forward_ct: int | None) -> str:
    if V < (0, 5, 4):
        assert forward_ct is None
        return f"{kind} batch. "
    if V < (0, 5, 8):
        return f"{kind} batch [{1234 if forward_ct is None else forward_ct}], "
    return f"{kind} batch, " if forward_ct is None else f"{kind} batch [{forward_ct}], "


def _tail(V: tuple) -> str:
    return ", " if (0, 5, 1) <= V < (0, 5, 10) else ""


def _graph_ok(V: tuple, label: str) -> None:
    need = {"cuda": (0, 4, 8), "cpu": (0, 5, 2), "npu": (0, 5, 12), "musa": (0, 5, 12)}[label]
    assert V >= need, f"{label} graph appears in {need}"


def _suffixes(b: _Body, V: tuple, suffix: tuple, kind: str) -> None:
    for s in suffix:
        assert V >= (0, 5, 10), "the §1.4 suffixes appear in 0.5.10"
        if s == "mfu" and kind == "decode":
            b.f2("est. decode TFLOPS/s (per GPU)")
            b.f2("est. read BW (GB/s per GPU)")
            b.f2("est. write BW (GB/s per GPU)")
        elif s == "mfu":
            b.f2("est. prefill TFLOPS/s (per GPU)")
        elif s == "occupancy":
            b.pct2("fwd occupancy")
            if V >= (0, 5, 23):
                b.pct2("fwd+idle occupancy")
        else:
            raise ValueError(s)


def _decode_pool(b: _Body, V: tuple, pool: str) -> None:
    if pool == "plain":
        b.int("#token")
        b.f2("token usage")
        return
    if pool == "swa049":
        assert V == (0, 4, 9)
        b.swa049()
        return
    if pool.startswith("swa"):
        assert V >= (0, 5, 1)
        b.int("#full token")
        b.f2("full token usage")
        b.int("#swa token")
        b.f2("swa token usage")
    if pool == "mamba":
        assert V >= (0, 5, 4)
        b.int("#full token")
        b.f2("full token usage")
        b.int("mamba num")
        b.f2("mamba usage")
    if pool.endswith("hisparse"):
        assert V >= (0, 5, 12)
        b.int("#gpu token")
        b.f2("gpu token usage")
        b.int("#cpu token")
        b.f2("cpu token usage")
    assert pool in ("swa", "mamba", "hisparse", "swa+hisparse"), pool


def decode(version: str, *, spec: bool = False, pool: str = "plain", pd: bool = False,
           label: str = "cuda", cap: bool = False, host_receive: bool = False,
           waiting_image: bool = False, suffix: tuple = (), forward_ct: int | None = None,
           **values) -> Msg:
    """A `Decode batch` message of the given SGLang version (§1.2), values by normalised name
    (`graph` is the graph flag's value, `label` its `cuda`/`cpu`/`npu`/`musa` name)."""
    V = ver(version)
    b = _Body({**DEFAULTS, "graph": True, **values})
    b.int("#running-req")
    _decode_pool(b, V, pool)
    if spec:
        assert V >= (0, 4, 3), "accept len appears in 0.4.3"
        b.f2("accept len")
        if V >= (0, 5, 4):
            b.f2("accept rate")
        if cap:
            assert V >= (0, 5, 17)
            b.f2("cap len")
            b.f2("block accept len")
    if pd:
        assert V >= (0, 4, 6)
        b.f2("pre-allocated usage")
        if V >= (0, 5, 3):
            b.int("#prealloc-req")
            b.int("#transfer-req")
            if host_receive:
                assert V >= (0, 5, 23)
                b.int("#host-receive-req")
        if V >= (0, 4, 8):
            b.int("#retracted-req")
    if waiting_image:
        assert V >= (0, 5, 10)
        b.int("waiting-image-req")
    if V >= (0, 4, 8):
        _graph_ok(V, label)
        b.graph(label)
    b.f2("gen throughput (token/s)")
    b.int("#queue-req")
    _suffixes(b, V, suffix, "decode")
    return Msg(_head("Decode", V, forward_ct) + ", ".join(b.parts) + _tail(V), "decode", b.fields)


def _prefill_pool(b: _Body, V: tuple, pool: str) -> None:
    if pool == "plain":
        if V == (0, 4, 9):
            b.int("#token")
        b.f2("token usage")
    elif pool == "swa049":
        assert V == (0, 4, 9)
        b.swa049()
    elif pool == "swa":
        assert V >= (0, 5, 1)
        b.f2("full token usage")
        b.f2("swa token usage")
    elif pool == "mamba":
        assert V >= (0, 5, 3)
        b.f2("full token usage")
        b.f2("mamba usage")
    else:
        raise ValueError(pool)


def prefill(version: str, *, pool: str = "plain", pd: bool = False, label: str = "cuda",
            replay: bool = False, optimistic: bool = True, waiting_image: bool = False,
            suffix: tuple = (), forward_ct: int | None = None, **values) -> Msg:
    """A `Prefill batch` message of the given SGLang version (§1.3)."""
    V = ver(version)
    b = _Body({**DEFAULTS, "graph": False, **values})
    tail = _tail(V)
    b.int("#new-seq")
    b.int("#new-token")
    b.int("#cached-token")
    if V <= (0, 4, 3):
        assert not pd and pool == "plain"
        b.pct2("cache hit rate")
        b.f2("token usage")
        b.int("#running-req")
        b.int("#queue-req")
    elif V < (0, 5, 3):
        _prefill_pool(b, V, pool)
        if pd:
            b.int("#unbootstrapped-req")
            b.int("#queue-req")
            b.int("#transferring-req")
            if V >= (0, 4, 8):
                b.f2("input throughput (token/s)")
            if V < (0, 5, 1):
                tail = " "  # ≤0.4.10 PD-prefill lines end with a space (§1.1)
        else:
            b.int("#running-req")
            b.int("#queue-req")
    else:
        _prefill_pool(b, V, pool)
        b.int("#running-req")
        b.int("#queue-req")
        if V >= (0, 5, 12):
            b.int("#pending-token")
        if replay:
            assert V >= (0, 5, 23)
            b.int("#replay-token")
        if pd:
            b.int("#bootstrap-req" if V >= (0, 5, 12) else "#prealloc-req")
            b.int("#inflight-req")
            if optimistic and V >= (0, 5, 17):
                b.int("#optimistic-req")
            if (0, 5, 4) <= V < (0, 5, 10):
                b.f2("input throughput (token/s)")
        if waiting_image:
            assert V >= (0, 5, 12)
            b.int("waiting-image-req")
        if V >= (0, 5, 10):
            _graph_ok(V, label)
            b.graph(label)
            b.f2("input throughput (token/s)")
    _suffixes(b, V, suffix, "prefill")
    return Msg(_head("Prefill", V, forward_ct) + ", ".join(b.parts) + tail, "prefill", b.fields)


# ---------------------------------------------------------------------------------------- §2 prefix

def rank_label(version: str, *, tp: int = 0, tp_size: int = 2, dp: int | None = None,
               pp: int | None = None, ep: int | None = None, attn_cp: int | None = None,
               moe_dp: int | None = None) -> str:
    """The scheduler's rank tokens for a version (§2). A dimension not in use is None."""
    V = ver(version)
    tp_tok = f"TP{tp}" if (V <= (0, 4, 6) or tp_size > 1) else None
    dp_tok = f"DP{dp}" if dp is not None else None
    pp_tok = f"PP{pp}" if pp is not None else None
    ep_tok = f"EP{ep}" if ep is not None else None
    cp_tok = f"ATTN_CP{attn_cp}" if attn_cp is not None else None
    mdp_tok = f"MOE_DP{moe_dp}" if moe_dp is not None else None
    if V <= (0, 4, 6):
        assert pp is None and ep is None and attn_cp is None and moe_dp is None
        order = [dp_tok, tp_tok]
    elif V <= (0, 4, 9):
        assert ep is None and attn_cp is None and moe_dp is None
        order = [dp_tok, tp_tok, pp_tok]
    elif V <= (0, 5, 4):
        assert attn_cp is None and moe_dp is None
        order = [dp_tok, tp_tok, ep_tok, pp_tok]
    elif V < (0, 5, 10):
        assert attn_cp is None and moe_dp is None
        order = [dp_tok, pp_tok, tp_tok, ep_tok]
    else:
        order = [dp_tok, pp_tok, cp_tok, mdp_tok, tp_tok, ep_tok]
    return " ".join(t for t in order if t)


def utc(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> int:
    return calendar.timegm((y, mo, d, h, mi, s))


def sglang_line(msg: str, ts: int, rank: str = "TP0", ms: int | None = None) -> str:
    """`[%Y-%m-%d %H:%M:%S{.ms}{ rank}] msg`; ts in whole UTC seconds."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts))
    if ms is not None:
        stamp += f".{ms:03d}"
    return f"[{stamp}{' ' + rank if rank else ''}] {msg}"


# ---------------------------------------------------------------------------- journald envelopes

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def journald_short(msg: str, us: int, host: str, *, precise: bool = False,
                   ident: str = "python3", pid: int = 4242) -> str:
    """`Mar 09 16:03:25 host ident[pid]: msg` (short) or with `.123456` (short-precise); us = UTC µs."""
    t = time.gmtime(us // 1_000_000)
    stamp = f"{_MONTHS[t.tm_mon - 1]} {t.tm_mday:02d} {t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    if precise:
        stamp += f".{us % 1_000_000:06d}"
    return f"{stamp} {host} {ident}[{pid}]: {msg}"


def journald_iso(msg: str, us: int, host: str, *, precise: bool = False, offset_min: int = 0,
                 ident: str = "python3", pid: int = 4242) -> str:
    """`2026-03-09T16:03:25+0000 host ident[pid]: msg`, in a zone offset_min east of UTC."""
    local = us // 1_000_000 + offset_min * 60
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(local))
    if precise:
        stamp += f".{us % 1_000_000:06d}"
    sign = "+" if offset_min >= 0 else "-"
    stamp += f"{sign}{abs(offset_min) // 60:02d}{abs(offset_min) % 60:02d}"
    return f"{stamp} {host} {ident}[{pid}]: {msg}"


_SEQ = itertools.count(1)


def journald_json(msg: str | None, us: int, host: str, *, unit: str = "sglang.service",
                  ident: str = "python3", pid: int = 4242, seq: int | None = None,
                  as_bytes: bool = False, only: tuple | None = None) -> str:
    """One `journalctl -o json` object. as_bytes: MESSAGE as a list of byte values, as journald
    writes a message with control characters; msg None: the field withheld (null); only: the
    fields kept, as `--output-fields=` (journalctl always adds the cursor). seq None: the next
    of this process, as journald gives each entry a cursor of its own (a cursor seen twice is one
    entry read twice, and dropped)."""
    seq = next(_SEQ) if seq is None else seq
    message: object = msg
    if as_bytes and msg is not None:
        message = list(msg.encode())
    obj = {
        "__CURSOR": f"s=5f1c7a1e9b3f4d2e8a6b0c9d7e5f3a1b;i={seq:x};b=0b1d2c3e4f5a6b7c8d9e0f1a2b3c4d5e;"
                    f"m={seq:x};t={us:x};x={seq * 7919:x}",
        "__REALTIME_TIMESTAMP": str(us),
        "__MONOTONIC_TIMESTAMP": str(1_000_000 + seq),
        "_BOOT_ID": "0b1d2c3e4f5a6b7c8d9e0f1a2b3c4d5e",
        "PRIORITY": "6",
        "_HOSTNAME": host,
        "SYSLOG_IDENTIFIER": ident,
        "_PID": str(pid),
        "_SYSTEMD_UNIT": unit,
        "MESSAGE": message,
    }
    if only is not None:
        obj = {k: v for k, v in obj.items() if k in only or k == "__CURSOR"}
    return json.dumps(obj)


# ------------------------------------------------------------------------------------------ §6 vLLM

def vllm_prefix(ts: int, *, proc: str | None = None, level: str = "INFO",
                path: str = "v1/metrics/loggers.py", lineno: int = 271, old: bool = False) -> str:
    """`(APIServer pid=66) INFO 09-02 08:46:23 [v1/metrics/loggers.py:271] `; old: `metrics.py:341] `."""
    t = time.gmtime(ts)
    stamp = f"{t.tm_mon:02d}-{t.tm_mday:02d} {t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    loc = f"{path.rsplit('/', 1)[-1]}:{lineno}]" if old else f"[{path}:{lineno}]"
    return (f"({proc}) " if proc else "") + f"{level} {stamp} {loc} "


def _exact1(*vals: float) -> None:
    for v in vals:
        _exact(v, 1)


def vllm_v0_throughput(*, prompt: float = 512.3, gen: float = 1024.7, running: int = 21,
                       swapped: int = 2, pending: int = 5, gpu: float = 63.2,
                       cpu: float = 1.5) -> Msg:
    _exact1(prompt, gen, gpu, cpu)
    text = ("Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, "
            "Running: %d reqs, Swapped: %d reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%, "
            "CPU KV cache usage: %.1f%%.") % (prompt, gen, running, swapped, pending, gpu, cpu)
    return Msg(text, "decode", {
        "prompt_throughput": prompt, "gen_throughput": gen, "running_req": running,
        "swapped_req": swapped, "queue_req": pending, "token_usage": gpu / 100,
        "cpu_kv_usage": cpu / 100}, rank="")


def vllm_v1_throughput(*, engine: int | None = 0, aggregated: int | None = None,
                       prompt: float = 812.4, gen: float = 2210.9, running: int = 33,
                       waiting: int = 4, gpu: float = 47.8, prefix_hit: float = 35.6,
                       preemptions: int | None = None, corrupted: int | None = None,
                       external: float | None = None, mm: float | None = None,
                       deferred: int | None = None) -> Msg:
    """`Engine %03d: ...` (engine) or `N Engines Aggregated: ...` (aggregated=N), with the optional
    parts of newer V1 when given. `deferred` is a newer part the reference does not list: an
    unknown key, kept in extra."""
    _exact1(prompt, gen, gpu, prefix_hit)
    parts = ["Avg prompt throughput: %.1f tokens/s", "Avg generation throughput: %.1f tokens/s",
             "Running: %d reqs", "Waiting: %d reqs"]
    args: list = [prompt, gen, running, waiting]
    fields: dict = {"prompt_throughput": prompt, "gen_throughput": gen, "running_req": running,
                    "queue_req": waiting}
    extra: dict = {}
    if deferred is not None:
        parts.append("Deferred: %d reqs")
        args.append(deferred)
        extra["Deferred"] = f"{deferred} reqs"
    if preemptions is not None:
        parts.append("Preemptions: %d")
        args.append(preemptions)
        fields["preemptions"] = preemptions
    parts += ["GPU KV cache usage: %.1f%%", "Prefix cache hit rate: %.1f%%"]
    args += [gpu, prefix_hit]
    fields["token_usage"] = gpu / 100
    fields["prefix_cache_hit_rate"] = prefix_hit / 100
    # The brief names no fields for these three; the names are the ones mtptui/core/parse/vllm.py
    # documents. Their values are what the reference's format says.
    if corrupted is not None:
        parts.append("Corrupted: %d reqs")
        args.append(corrupted)
        fields["corrupted_req"] = corrupted
    if external is not None:
        _exact1(external)
        parts.append("External prefix cache hit rate: %.1f%%")
        args.append(external)
        fields["external_prefix_cache_hit_rate"] = external / 100
    if mm is not None:
        _exact1(mm)
        parts.append("MM cache hit rate: %.1f%%")
        args.append(mm)
        fields["mm_cache_hit_rate"] = mm / 100
    if aggregated is not None:  # vLLM's own expressions for the two prefixes
        prefix, rank = "{} Engines Aggregated: ".format(aggregated), ""
    else:
        prefix, rank = "Engine %03d: " % engine, "Engine %03d" % engine
    return Msg(prefix + (", ".join(parts) % tuple(args)), "decode", fields, extra, rank=rank)


def vllm_spec_v0(*, rate: float = 0.712, efficiency: float = 0.654, k: int = 3,
                 accepted: int = 2136, drafted: int = 3000, emitted: int = 2943) -> Msg:
    for v in (rate, efficiency):
        _exact(v, 3)
    text = ("Speculative metrics: Draft acceptance rate: %.3f, System efficiency: %.3f, "
            "Number of speculative tokens: %d, Number of accepted tokens: %d, "
            "Number of draft tokens: %d, Number of emitted tokens: %d.") % (
                rate, efficiency, k, accepted, drafted, emitted)
    return Msg(text, "spec", {"accept_rate": rate, "spec_efficiency": efficiency,
                              "num_spec_tokens": k, "accepted_tokens": accepted,
                              "drafted_tokens": drafted, "emitted_tokens": emitted})


def vllm_spec_v1_early(*, rate_pct: float = 71.2, accepted: int = 2136, drafted: int = 3000) -> Msg:
    _exact1(rate_pct)
    text = ("SpecDecoding metrics: Draft acceptance rate: %.1f%%, Accepted: %d tokens, "
            "Drafted: %d tokens") % (rate_pct, accepted, drafted)
    return Msg(text, "spec", {"accept_rate": rate_pct / 100, "accepted_tokens": accepted,
                              "drafted_tokens": drafted})


def vllm_spec_v1(*, mean_len: float = 3.14, accepted_tp: float = 410.25,
                 drafted_tp: float = 576.0, accepted: int = 2136, drafted: int = 3000,
                 per_pos: tuple = (0.912, 0.705, 0.519), rate_pct: float = 71.2) -> Msg:
    for v in (mean_len, accepted_tp, drafted_tp):
        _exact(v, 2)
    for v in per_pos:
        _exact(v, 3)
    _exact1(rate_pct)
    rates = ", ".join(f"{p:.3f}" for p in per_pos)
    text = ("SpecDecoding metrics: Mean acceptance length: %.2f, Accepted throughput: %.2f tokens/s, "
            "Drafted throughput: %.2f tokens/s, Accepted: %d tokens, Drafted: %d tokens, "
            "Per-position acceptance rate: %s, Avg Draft acceptance rate: %.1f%%") % (
                mean_len, accepted_tp, drafted_tp, accepted, drafted, rates, rate_pct)
    return Msg(text, "spec", {"accept_len": mean_len, "accepted_throughput": accepted_tp,
                              "drafted_throughput": drafted_tp, "accepted_tokens": accepted,
                              "drafted_tokens": drafted, "per_position_accept_rate": list(per_pos),
                              "accept_rate": rate_pct / 100})


# ----------------------------------------------------------------------------- checking a record

def same(actual, expected) -> bool:
    """Equal, with the same type (an int stays an int), NaN equal to NaN, fractions and lists of
    floats compared to 1e-12 (a percentage over 100 need not be the nearest double)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, int):
        return type(actual) is int and actual == expected
    if isinstance(expected, float):
        if type(actual) is not float:
            return False
        if math.isnan(expected):
            return math.isnan(actual)
        return math.isclose(actual, expected, rel_tol=1e-12, abs_tol=1e-12)
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(actual) == len(expected)
                and all(same(a, e) for a, e in zip(actual, expected)))
    return actual == expected


def field_diff(actual: dict, expected: dict) -> list[str]:
    """What differs between two field dicts, for an assertion message; empty when they agree."""
    out = []
    for k in sorted(set(actual) | set(expected), key=str):
        if k not in actual:
            out.append(f"missing {k}={expected[k]!r}")
        elif k not in expected:
            out.append(f"unexpected {k}={actual[k]!r}")
        elif not same(actual[k], expected[k]):
            out.append(f"{k}: got {actual[k]!r} ({type(actual[k]).__name__}), "
                       f"want {expected[k]!r} ({type(expected[k]).__name__})")
    return out


def check_batch(parsed, *, kind: str, rank: str, ts: float | None, host: str | None,
                engine: str, fields: dict, extra: dict | None = None,
                truncated: bool | None = False) -> None:
    """Asserts one parse result against what the line must read back as. extra None: not
    checked; truncated None: either value is allowed (a cut-off line)."""
    assert parsed.outcome == "batch", f"outcome {parsed.outcome!r}, want 'batch'"
    r = parsed.record
    assert r.kind == kind, f"kind {r.kind!r}, want {kind!r}"
    assert r.rank == rank, f"rank {r.rank!r}, want {rank!r}"
    assert r.engine == engine, f"engine {r.engine!r}, want {engine!r}"
    assert r.host == host, f"host {r.host!r}, want {host!r}"
    if ts is None:
        assert r.ts is None, f"ts {r.ts!r}, want None"
    else:
        assert r.ts is not None and abs(r.ts - ts) < 1e-6, f"ts {r.ts!r}, want {ts!r}"
    diff = field_diff(r.fields, fields)
    assert not diff, "fields: " + "; ".join(diff)
    if extra is not None:
        assert r.extra == extra, f"extra {r.extra!r}, want {extra!r}"
    if truncated is not None:
        assert r.truncated is truncated, f"truncated {r.truncated!r}, want {truncated!r}"


# ---------------------------------------------------------------------- whole logs, for summaries

@dataclass
class Line:
    """One line of a generated log and what it must count as."""

    text: str
    outcome: str  # "batch", "event", "other" or "dropped"
    kind: str | None = None  # batch kind
    engine: str | None = None
    host: str | None = None
    rank: str = ""
    ts: float | None = None
    fields: dict = field(default_factory=dict)
    event: str | None = None  # event kind


def _d2(rng: random.Random, lo: float, hi: float) -> float:
    """A value with two decimals, exact as the `:.2f` text reads back."""
    return rng.randint(round(lo * 100), round(hi * 100)) / 100


def _d1(rng: random.Random, lo: float, hi: float) -> float:
    return rng.randint(round(lo * 10), round(hi * 10)) / 10


def _wrap(text: str, envelope: str, host: str | None, us: int, seq: int) -> str:
    if envelope == "raw":
        return text
    if envelope == "short":
        return journald_short(text, us, host)
    if envelope == "json":
        return journald_json(text, us, host, seq=seq)
    raise ValueError(envelope)


@dataclass
class SGLangServer:
    """One SGLang server's scheduler lines: its ranks log Decode lines, now and then a Prefill.

    segments: [(version, steps)], run one after another (an upgrade or restart in between).
    envelope: "raw" (host None), "short" or "json". Under `short` the record time is the SGLang
    prefix (the envelope stamp is a second later, as journald's arrival would be); under `json`
    it is __REALTIME_TIMESTAMP, set a fraction of a second after the prefix.
    """

    host: str | None
    envelope: str
    ranks: list[str]
    segments: list[tuple[str, int]]
    spec: bool = True
    ms: bool = False  # SGLANG_LOG_MS=1
    prefill_every: int = 4
    graph_off: float = 0.1
    step_s: int = 2

    def lines(self, rng: random.Random, start: int, seq0: int = 0) -> list[tuple[float, list[Line]]]:
        out = []
        t = start
        seq = seq0
        for version, steps in self.segments:
            V = ver(version)
            for _ in range(steps):
                t += rng.randint(1, self.step_s)
                group = []
                for rank in self.ranks:
                    values = {
                        "running_req": rng.randint(0, 64), "queue_req": rng.randint(0, 9),
                        "num_token": rng.randint(0, 500000), "token_usage": _d2(rng, 0, 0.99),
                        "accept_len": _d2(rng, 1, 4), "accept_rate": _d2(rng, 0.2, 0.99),
                        "gen_throughput": _d2(rng, 0, 9000), "graph": rng.random() >= self.graph_off,
                        "new_seq": rng.randint(1, 8), "new_token": rng.randint(1, 16384),
                        "cached_token": rng.randint(0, 8192), "input_throughput": _d2(rng, 0, 90000),
                        "cache_hit_rate_pct": _d2(rng, 0, 100), "pending_token": rng.randint(0, 99),
                    }
                    if rng.randrange(self.prefill_every) == 0:
                        msg = prefill(version, **values)
                    else:
                        msg = decode(version, spec=self.spec and V >= (0, 4, 3), **values)
                    ms = rng.randint(0, 999) if self.ms else None
                    prefix_ts = t + (ms or 0) / 1000
                    text = sglang_line(msg.text, t, rank, ms)
                    seq += 1
                    if self.envelope == "short":
                        us, rec_ts = (t + 1) * 1_000_000, prefix_ts
                    elif self.envelope == "json":
                        us = t * 1_000_000 + rng.randint(1_000, 999_999)
                        rec_ts = us / 1_000_000
                    else:
                        us, rec_ts = t * 1_000_000, prefix_ts
                    group.append(Line(_wrap(text, self.envelope, self.host, us, seq), "batch",
                                      msg.kind, SGLANG, self.host, rank, rec_ts, msg.fields))
                out.append((t, group))
        return out


@dataclass
class VLLMServer:
    """One vLLM server's stats lines: per step, each engine's throughput line, then its spec line.

    style: "v0" (no engine; `Pending`, `Swapped`), "engine" (`Engine %03d:`) or "aggregated".
    spec: None, "v0", "v1early" or "v1". Under `short` the envelope stamp equals the line's own
    stamp, so the record time is the same whichever of the two a reader takes.
    """

    host: str | None
    envelope: str
    style: str
    steps: int
    engines: tuple = (0,)
    spec: str | None = "v1"
    proc: str | None = None
    old: bool = False
    step_s: int = 5

    def lines(self, rng: random.Random, start: int, seq0: int = 0) -> list[tuple[float, list[Line]]]:
        out = []
        t = start
        seq = seq0
        for _ in range(self.steps):
            t += rng.randint(self.step_s, self.step_s + 2)
            group = []
            for engine in (self.engines if self.style == "engine" else (None,)):
                tp = dict(prompt=_d1(rng, 0, 9999), gen=_d1(rng, 0, 9999), running=rng.randint(0, 99),
                          gpu=_d1(rng, 0, 99.9))
                if self.style == "v0":
                    msgs = [vllm_v0_throughput(swapped=rng.randint(0, 3), pending=rng.randint(0, 20),
                                               cpu=_d1(rng, 0, 9.9), **tp)]
                elif self.style == "engine":
                    msgs = [vllm_v1_throughput(engine=engine, waiting=rng.randint(0, 20),
                                               prefix_hit=_d1(rng, 0, 99.9), **tp)]
                else:
                    msgs = [vllm_v1_throughput(aggregated=len(self.engines), waiting=rng.randint(0, 20),
                                               prefix_hit=_d1(rng, 0, 99.9),
                                               preemptions=rng.choice([None, rng.randint(1, 9)]), **tp)]
                rank = msgs[0].rank
                if self.spec == "v0":
                    msgs.append(vllm_spec_v0(rate=rng.randint(100, 999) / 1000,
                                             efficiency=rng.randint(100, 999) / 1000))
                elif self.spec == "v1early":
                    msgs.append(vllm_spec_v1_early(rate_pct=_d1(rng, 10, 99.9)))
                elif self.spec == "v1":
                    msgs.append(vllm_spec_v1(mean_len=_d2(rng, 1, 4), rate_pct=_d1(rng, 10, 99.9),
                                             per_pos=tuple(rng.randint(0, 1000) / 1000 for _ in range(3))))
                for m in msgs:
                    text = vllm_prefix(t, proc=self.proc, old=self.old,
                                       path="metrics.py" if self.old else "v1/metrics/loggers.py",
                                       lineno=341 if self.old else 271) + m.text
                    seq += 1
                    if self.envelope == "json":
                        us = t * 1_000_000 + rng.randint(1_000, 999_999)
                        rec_ts = us / 1_000_000
                    else:
                        us, rec_ts = t * 1_000_000, float(t)
                    group.append(Line(_wrap(text, self.envelope, self.host, us, seq), "batch", m.kind,
                                      VLLM, self.host, rank, rec_ts, m.fields))
            out.append((t, group))
        return out


def noise(rng: random.Random, t: int, host: str | None, envelope: str, seq: int = 0) -> Line:
    """One line that is no batch: ordinary text, a lookalike, a progress bar, or an event."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
    us = t * 1_000_000 + 500_000
    choices = [
        (f'[{stamp}] INFO:     127.0.0.1:40312 - "POST /generate HTTP/1.1" 200 OK', "other", None),
        (f"[{stamp} TP0] Cache not flushed because there are pending requests. #queue-req: 2, "
         f"#running-req: 12", "other", None),
        (f"[{stamp}] Receive: obj=GenerateReqInput(text='Decode batch, #running-req: 5, "
         f"#queue-req: 0', sampling_params={{'max_new_tokens': 64}})", "other", None),
        (f"[{stamp} TP0] Decode batches are logged every 40 iterations", "other", None),
        ("Capturing batches (bs=4 avail_mem=10.00 GB):  50%|#####     | 2/4 [00:01<00:01,  1.50it/s]"
         "\rCapturing batches (bs=2 avail_mem=9.95 GB): 100%|##########| 4/4 [00:02<00:00,  1.60it/s]",
         "other", None),
        (vllm_prefix(t, path="entrypoints/openai/api_server.py", lineno=1882)
         + "Starting vLLM API server 0 on http://0.0.0.0:8000", "event", "starting"),  # issue 19
        (f"[{stamp}] The server is fired up and ready to roll!", "event", "ready"),
    ]
    text, outcome, event = rng.choice(choices)
    if event in ("ready", "starting"):
        ts = us / 1_000_000 if envelope == "json" else float(t)
        if envelope == "short":
            us = t * 1_000_000
        return Line(_wrap(text, envelope, host, us, seq), "event", host=host, ts=ts, event=event)
    return Line(_wrap(text, envelope, host, us, seq), outcome, host=host)


def systemd_started(t: int, host: str) -> Line:
    """systemd's own line in the `short` envelope: an event at the envelope's time."""
    text = journald_short("Started sglang.service - SGLang server.", t * 1_000_000, host,
                          ident="systemd", pid=1)
    return Line(text, "event", host=host, ts=float(t), event="started")


def unreadable_json(t: int, host: str, seq: int) -> list[Line]:
    """Two json lines no reader can use: MESSAGE withheld (null) and an object cut in half."""
    withheld = journald_json(None, t * 1_000_000, host, seq=seq)
    cut = journald_json(sglang_line("Decode batch, #running-req: 5", t), t * 1_000_000, host,
                        seq=seq + 1)[:90]
    return [Line(withheld, "dropped", host=host), Line(cut, "dropped", host=host)]


def interleave(*streams: list[tuple[float, list[Line]]]) -> list[Line]:
    """Merge servers' groups by time, keeping each group's lines together and in order."""
    tagged = []
    for si, stream in enumerate(streams):
        for gi, (t, group) in enumerate(stream):
            tagged.append((t, si, gi, group))
    tagged.sort(key=lambda x: (x[0], x[1], x[2]))
    return [line for *_, group in tagged for line in group]


def sprinkle(rng: random.Random, lines: list[Line], extra: list[Line]) -> list[Line]:
    """Insert lines at random places, never inside the first line (the file's head stays text)."""
    out = list(lines)
    for ln in extra:
        out.insert(rng.randint(1, len(out)), ln)
    return out


def toggle_log(path: Path, restarts: int, seed: int) -> None:
    """Restarts under systemd, crash loops (server_args twice), and vLLM lines between them."""
    rnd = random.Random(seed)
    lines = []
    t = 1773072000

    def stamp():
        return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))

    for r in range(restarts):
        if r % 3 != 2:
            lines.append("Mar 09 16:00:00 gpu-a systemd[1]: Started sglang-qwen.service - SGLang.")
        steps = rnd.choice([None, 1, 3])
        algo = "None" if steps is None else "'EAGLE'"
        lines.append(f"[{stamp()}] server_args=ServerArgs(model_path='m', speculative_algorithm={algo}, "
                     f"speculative_num_steps={steps})")
        for _ in range(rnd.randrange(0, 40)):
            t += 1
            acc = "" if steps is None else f"accept len: {1 + rnd.random() * steps:.2f}, "
            rank = rnd.choice(["TP0", "DP1 TP1"])
            lines.append(f"[{stamp()} {rank}] Decode batch, #running-req: 4, #token: 10, token usage: 0.01, "
                         f"{acc}cuda graph: True, gen throughput (token/s): {rnd.random() * 1000:.2f}, #queue-req: 0")
            if rnd.random() < 0.2:
                lines.append(f"INFO 03-09 16:00:{t % 60:02d} [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
                             f"Avg generation throughput: {rnd.random() * 100:.1f} tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
                             "GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%")
                lines.append(f"INFO 03-09 16:00:{t % 60:02d} [metrics.py:1] SpecDecoding metrics: Mean acceptance length: "
                             f"{1 + rnd.random():.2f}, Accepted: 5 tokens, Drafted: 9 tokens, Avg Draft acceptance rate: 55.5%")
    path.write_text("\n".join(lines) + "\n")
