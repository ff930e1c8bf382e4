"""Every SGLang batch-line format of the reference (§1.2-§1.6) and every logger prefix (§2), read
by the headless parser: kind, rank, time, host and each field, and nothing else.

The lines come from tests/unit/logsynth.py, built from the reference's f-strings, with values
chosen by these tests; the §1.6 example lines are also checked verbatim, with their fields
written out by hand, and logsynth is held to reproduce them character for character.
"""

from __future__ import annotations

import pytest
from logsynth import (
    DEFAULTS,
    VERSIONS,
    check_batch,
    decode,
    journald_iso,
    journald_json,
    journald_short,
    prefill,
    rank_label,
    sglang_line,
    utc,
)

from mtptui.core.parse import LineParser

T0 = utc(2026, 3, 9, 16, 3, 25)  # the reference's example stamp, 2026-03-09 16:03:25
HOST = "gpu-a"


def P(id, msg, rank="TP0", ms=None):
    return pytest.param(msg, rank, ms, id=id)


# §1.2: Decode lines, per version, with the conditional parts on and off.
DECODE_CASES = [
    P("0.3.6", decode("0.3.6")),
    P("0.4.3", decode("0.4.3")),
    P("0.4.3-spec", decode("0.4.3", spec=True)),
    P("0.4.6", decode("0.4.6")),
    P("0.4.6-spec", decode("0.4.6", spec=True)),
    P("0.4.6-pd", decode("0.4.6", pd=True)),
    P("0.4.6-spec-pd", decode("0.4.6", spec=True, pd=True)),
    P("0.4.8", decode("0.4.8")),
    P("0.4.8-graph-off", decode("0.4.8", graph=False)),
    P("0.4.8-spec", decode("0.4.8", spec=True)),
    P("0.4.8-spec-pd", decode("0.4.8", spec=True, pd=True)),
    P("0.4.9", decode("0.4.9"), rank=""),
    P("0.4.9-spec", decode("0.4.9", spec=True), rank="TP0"),
    P("0.4.9-pd", decode("0.4.9", pd=True), rank="TP0"),
    P("0.4.9-hybrid-swa-one-off", decode("0.4.9", pool="swa049", spec=True), rank="TP0"),
    P("0.4.9-hybrid-swa-one-off-nospec", decode("0.4.9", pool="swa049"), rank=""),
    P("0.5.1", decode("0.5.1")),
    P("0.5.1-spec", decode("0.5.1", spec=True)),
    P("0.5.1-swa", decode("0.5.1", pool="swa", spec=True)),
    P("0.5.1-pd", decode("0.5.1", pd=True, spec=True)),
    P("0.5.2-cpu-graph", decode("0.5.2", label="cpu", spec=True)),
    P("0.5.2-swa-graph-off", decode("0.5.2", pool="swa", label="cuda", graph=False)),
    P("0.5.3-spec", decode("0.5.3", spec=True)),
    P("0.5.3-pd-decode", decode("0.5.3", pd=True)),
    P("0.5.3-pd-decode-spec", decode("0.5.3", pd=True, spec=True)),
    P("0.5.3-swa", decode("0.5.3", pool="swa")),
    P("0.5.4", decode("0.5.4", forward_ct=1234)),
    P("0.5.4-spec", decode("0.5.4", spec=True, forward_ct=40)),
    P("0.5.4-mamba", decode("0.5.4", pool="mamba", spec=True, forward_ct=7)),
    P("0.5.4-swa", decode("0.5.4", pool="swa", spec=True, forward_ct=99999)),
    P("0.5.4-pd", decode("0.5.4", pd=True, spec=True, forward_ct=80)),
    P("0.5.4-cpu-graph", decode("0.5.4", label="cpu", forward_ct=0)),
    P("0.5.8", decode("0.5.8")),
    P("0.5.8-spec", decode("0.5.8", spec=True)),
    P("0.5.8-forward-iters", decode("0.5.8", spec=True, forward_ct=4711)),
    P("0.5.8-pd", decode("0.5.8", pd=True, spec=True)),
    P("0.5.8-mamba", decode("0.5.8", pool="mamba")),
    P("0.5.10", decode("0.5.10")),
    P("0.5.10-spec", decode("0.5.10", spec=True)),
    P("0.5.10-forward-iters", decode("0.5.10", spec=True, forward_ct=12)),
    P("0.5.10-pd", decode("0.5.10", pd=True, spec=True)),
    P("0.5.10-waiting-image", decode("0.5.10", waiting_image=True, spec=True)),
    P("0.5.10-mfu", decode("0.5.10", spec=True, suffix=("mfu",))),
    P("0.5.10-occupancy", decode("0.5.10", spec=True, suffix=("occupancy",))),
    P("0.5.10-mfu-occupancy", decode("0.5.10", suffix=("mfu", "occupancy"))),
    P("0.5.12", decode("0.5.12", spec=True, accept_rate=0.62)),
    P("0.5.12-hisparse", decode("0.5.12", pool="hisparse", spec=True)),
    P("0.5.12-swa-hisparse", decode("0.5.12", pool="swa+hisparse")),
    P("0.5.12-npu-graph", decode("0.5.12", label="npu", spec=True)),
    P("0.5.12-musa-graph", decode("0.5.12", label="musa", graph=False)),
    P("0.5.12-cpu-graph", decode("0.5.12", label="cpu")),
    P("0.5.12-mamba-pd", decode("0.5.12", pool="mamba", pd=True, spec=True)),
    P("0.5.17-cap", decode("0.5.17", spec=True, cap=True)),
    P("0.5.17-cap-pd", decode("0.5.17", spec=True, cap=True, pd=True)),
    P("0.5.17-spec-no-cap", decode("0.5.17", spec=True)),
    P("0.5.23-pd-host-receive", decode("0.5.23", spec=True, pd=True, host_receive=True)),
    P("0.5.23-pd", decode("0.5.23", pd=True)),
    P("0.5.23-occupancy", decode("0.5.23", spec=True, suffix=("occupancy",))),
    P("0.5.23-waiting-image", decode("0.5.23", waiting_image=True)),
    P("0.5.23-everything", decode("0.5.23", pool="mamba", spec=True, cap=True, pd=True,
                                  host_receive=True, waiting_image=True, label="musa",
                                  suffix=("mfu", "occupancy"), forward_ct=31337)),
    # zeros and large counts are values like any other
    P("0.5.12-zeros", decode("0.5.12", spec=True, running_req=0, queue_req=0, num_token=0,
                             token_usage=0.0, accept_len=1.0, accept_rate=0.0, gen_throughput=0.0)),
    P("0.5.12-big", decode("0.5.12", running_req=1024, num_token=12_345_678, token_usage=1.0,
                           gen_throughput=123456.78, queue_req=4096)),
]

# §1.3: Prefill lines, per version, normal and PD-prefill.
PREFILL_CASES = [
    P("0.3.6", prefill("0.3.6")),
    P("0.3.6-hit-rate-100", prefill("0.3.6", cache_hit_rate_pct=100.0)),
    P("0.4.3", prefill("0.4.3", cache_hit_rate_pct=33.33)),
    P("0.4.6", prefill("0.4.6")),
    P("0.4.6-pd", prefill("0.4.6", pd=True)),
    P("0.4.8", prefill("0.4.8")),
    P("0.4.8-pd", prefill("0.4.8", pd=True)),
    P("0.4.9", prefill("0.4.9"), rank=""),
    P("0.4.9-pd", prefill("0.4.9", pd=True)),
    P("0.4.9-hybrid-swa-one-off", prefill("0.4.9", pool="swa049")),
    P("0.5.1", prefill("0.5.1")),
    P("0.5.1-swa", prefill("0.5.1", pool="swa")),
    P("0.5.1-pd", prefill("0.5.1", pd=True)),
    P("0.5.2-pd-swa", prefill("0.5.2", pd=True, pool="swa")),
    P("0.5.3", prefill("0.5.3")),
    P("0.5.3-pd", prefill("0.5.3", pd=True)),
    P("0.5.3-mamba", prefill("0.5.3", pool="mamba")),
    P("0.5.4", prefill("0.5.4", forward_ct=1235)),
    P("0.5.4-pd", prefill("0.5.4", pd=True, forward_ct=1)),
    P("0.5.4-mamba", prefill("0.5.4", pool="mamba", forward_ct=2)),
    P("0.5.8", prefill("0.5.8")),
    P("0.5.8-pd", prefill("0.5.8", pd=True)),
    P("0.5.8-swa", prefill("0.5.8", pool="swa", forward_ct=3)),
    P("0.5.10", prefill("0.5.10")),
    P("0.5.10-pd", prefill("0.5.10", pd=True)),
    P("0.5.10-graph-on", prefill("0.5.10", graph=True)),
    P("0.5.10-mfu-occupancy", prefill("0.5.10", suffix=("mfu", "occupancy"))),
    P("0.5.12", prefill("0.5.12")),
    P("0.5.12-pd", prefill("0.5.12", pd=True)),
    P("0.5.12-waiting-image", prefill("0.5.12", waiting_image=True)),
    P("0.5.12-npu", prefill("0.5.12", label="npu")),
    P("0.5.12-swa", prefill("0.5.12", pool="swa")),
    P("0.5.12-mamba-pd", prefill("0.5.12", pool="mamba", pd=True)),
    P("0.5.17-pd-optimistic", prefill("0.5.17", pd=True)),
    P("0.5.17-pd-no-optimistic", prefill("0.5.17", pd=True, optimistic=False)),
    P("0.5.23-replay", prefill("0.5.23", replay=True)),
    P("0.5.23-no-replay", prefill("0.5.23")),
    P("0.5.23-everything", prefill("0.5.23", pool="mamba", replay=True, pd=True,
                                   waiting_image=True, label="cpu", suffix=("mfu", "occupancy"),
                                   forward_ct=77, graph=True)),
]

# §2: the prefix. (message, expected rank, milliseconds)
PREFIX_CASES = [
    P("0.3.6-always-TP", decode("0.3.6"), rank_label("0.3.6", tp_size=1)),
    P("0.3.6-DP-1", decode("0.3.6"), "DP-1 TP0"),
    P("0.4.6-DP1-TP0", decode("0.4.6"), rank_label("0.4.6", dp=1, tp=0)),
    P("0.4.6-TP3", decode("0.4.6"), rank_label("0.4.6", tp=3, tp_size=4)),
    P("0.4.8-tp1-no-rank", decode("0.4.8"), rank_label("0.4.8", tp_size=1)),
    P("0.4.9-TP-PP", decode("0.4.9", spec=True), rank_label("0.4.9", tp=1, pp=1)),
    P("0.4.9-DP-only", decode("0.4.9"), rank_label("0.4.9", dp=2, tp_size=1)),
    P("0.5.3-DP-TP-EP", decode("0.5.3", spec=True), rank_label("0.5.3", dp=3, tp=3, ep=3)),
    P("0.5.4-DP-TP-EP-PP", decode("0.5.4", spec=True), rank_label("0.5.4", dp=1, tp=1, ep=1, pp=1)),
    P("0.5.8-DP-PP-TP-EP", decode("0.5.8", spec=True), rank_label("0.5.8", dp=2, pp=1, tp=2, ep=2)),
    P("0.5.8-TP10", decode("0.5.8"), rank_label("0.5.8", tp=10, tp_size=16)),
    P("0.5.10-PP1-TP0", decode("0.5.10"), rank_label("0.5.10", pp=1, tp=0)),
    P("0.5.12-all-dims", decode("0.5.12", spec=True),
      rank_label("0.5.12", dp=1, pp=0, attn_cp=1, moe_dp=1, tp=5, ep=5)),
    P("0.5.23-ATTN_CP", prefill("0.5.23"), rank_label("0.5.23", attn_cp=1, tp=2)),
    P("0.5.23-MOE_DP", decode("0.5.23"), rank_label("0.5.23", moe_dp=3, tp=6, ep=6)),
    P("0.5.12-tp1-no-rank", decode("0.5.12", spec=True), rank_label("0.5.12", tp_size=1)),
    P("0.5.8-ms", decode("0.5.8", spec=True), "TP3", 7),
    P("0.5.8-ms-000", decode("0.5.8"), "TP0", 0),
    P("0.5.10-ms-999", decode("0.5.10"), "DP1 TP1", 999),
    P("0.5.23-ms-no-rank", prefill("0.5.23"), "", 42),
]


def raw_or_short(text, rank, ms, envelope, ts=T0):
    """The line as the server wrote it, or as `journalctl -o short` shows it (stamped a second
    later, so a reader that took the envelope's time would be caught)."""
    line = sglang_line(text, ts, rank, ms)
    if envelope == "short":
        return journald_short(line, (ts + 1) * 1_000_000, HOST), HOST
    return line, None


@pytest.mark.parametrize("envelope", ["raw", "short"])
@pytest.mark.parametrize("msg,rank,ms", DECODE_CASES + PREFILL_CASES + PREFIX_CASES)
def test_sglang_line(msg, rank, ms, envelope):
    line, host = raw_or_short(msg.text, rank, ms, envelope)
    p = LineParser().parse(line)
    check_batch(p, kind=msg.kind, rank=rank, ts=T0 + (ms or 0) / 1000, host=host,
                engine="sglang", fields=msg.fields, extra={})


def test_table_covers_every_version_and_both_kinds():
    """The tables above name every version of the reference's list for both kinds."""
    ids = {p.id for p in DECODE_CASES}
    for v in VERSIONS:
        assert any(i == v or i.startswith(v + "-") for i in ids), f"no decode case for {v}"
    ids = {p.id for p in PREFILL_CASES}
    for v in VERSIONS:
        assert any(i == v or i.startswith(v + "-") for i in ids), f"no prefill case for {v}"


def test_one_parser_reads_the_whole_table_in_any_order():
    """A parser keeps state between lines (layouts it has seen, the year); reading every format
    one after another, forwards and backwards, must give each line's own fields."""
    cases = [(p.values[0], p.values[1], p.values[2], p.id)
             for p in DECODE_CASES + PREFILL_CASES + PREFIX_CASES]
    for order in (cases, cases[::-1], cases[::2] + cases[1::2]):
        parser = LineParser()
        for i, (msg, rank, ms, cid) in enumerate(order):
            envelope = "short" if i % 3 == 0 else "raw"
            line, host = raw_or_short(msg.text, rank, ms, envelope, ts=T0 + i)
            try:
                check_batch(parser.parse(line), kind=msg.kind, rank=rank,
                            ts=T0 + i + (ms or 0) / 1000, host=host, engine="sglang",
                            fields=msg.fields, extra={})
            except AssertionError as e:
                raise AssertionError(f"{cid} (line {i} of the run): {e}\n{line}") from None


# §1.6: the reference's example lines, verbatim, fields written out by hand.
EXAMPLES = [
    pytest.param(
        "Prefill batch. #new-seq: 1, #new-token: 512, #cached-token: 0, cache hit rate: 0.00%, "
        "token usage: 0.01, #running-req: 0, #queue-req: 0",
        "prefill", dict(new_seq=1, new_token=512, cached_token=0, cache_hit_rate_pct=0.0,
                        token_usage=0.01, running_req=0, queue_req=0),
        prefill("0.3.6", new_seq=1, new_token=512, cached_token=0, cache_hit_rate_pct=0.0,
                token_usage=0.01, running_req=0, queue_req=0),
        id="0.3.6-prefill"),
    pytest.param(
        "Decode batch. #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.87, "
        "cuda graph: True, gen throughput (token/s): 1234.50, #queue-req: 0",
        "decode", dict(running_req=12, num_token=45678, token_usage=0.23, accept_len=2.87,
                       graph=True, graph_kind="cuda", gen_throughput=1234.5, queue_req=0),
        decode("0.4.8", spec=True, queue_req=0),
        id="0.4.8-spec"),
    pytest.param(
        "Decode batch. #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.87, "
        "cuda graph: True, gen throughput (token/s): 1234.50, #queue-req: 0, ",
        "decode", dict(running_req=12, num_token=45678, token_usage=0.23, accept_len=2.87,
                       graph=True, graph_kind="cuda", gen_throughput=1234.5, queue_req=0),
        decode("0.5.3", spec=True, queue_req=0),
        id="0.5.1-0.5.3-spec-trailing-comma"),
    pytest.param(
        "Decode batch [1234], #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.87, "
        "accept rate: 0.72, cuda graph: True, gen throughput (token/s): 1234.50, #queue-req: 0, ",
        "decode", dict(running_req=12, num_token=45678, token_usage=0.23, accept_len=2.87,
                       accept_rate=0.72, graph=True, graph_kind="cuda", gen_throughput=1234.5,
                       queue_req=0),
        decode("0.5.4", spec=True, queue_req=0, forward_ct=1234),
        id="0.5.4"),
    pytest.param(
        "Decode batch, #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.87, "
        "accept rate: 0.72, cuda graph: True, gen throughput (token/s): 1234.50, #queue-req: 0, ",
        "decode", dict(running_req=12, num_token=45678, token_usage=0.23, accept_len=2.87,
                       accept_rate=0.72, graph=True, graph_kind="cuda", gen_throughput=1234.5,
                       queue_req=0),
        decode("0.5.8", spec=True, queue_req=0),
        id="0.5.8"),
    pytest.param(
        "Decode batch, #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.87, "
        "accept rate: 0.62, cuda graph: True, gen throughput (token/s): 1234.50, #queue-req: 0",
        "decode", dict(running_req=12, num_token=45678, token_usage=0.23, accept_len=2.87,
                       accept_rate=0.62, graph=True, graph_kind="cuda", gen_throughput=1234.5,
                       queue_req=0),
        decode("0.5.12", spec=True, queue_req=0, accept_rate=0.62),
        id="0.5.12"),
    pytest.param(
        "Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, "
        "#running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, "
        "input throughput (token/s): 4321.00",
        "prefill", dict(new_seq=1, new_token=512, cached_token=0, token_usage=0.01, running_req=0,
                        queue_req=0, pending_token=0, graph=False, graph_kind="cuda",
                        input_throughput=4321.0),
        prefill("0.5.12", new_seq=1, new_token=512, cached_token=0, token_usage=0.01,
                running_req=0, queue_req=0, pending_token=0),
        id="0.5.12-prefill"),
    pytest.param(
        "Decode batch, #running-req: 64, #token: 123456, token usage: 0.45, accept len: 3.10, "
        "accept rate: 0.70, pre-allocated usage: 0.02, #prealloc-req: 0, #transfer-req: 2, "
        "#retracted-req: 0, cuda graph: True, gen throughput (token/s): 5000.00, #queue-req: 0",
        "decode", dict(running_req=64, num_token=123456, token_usage=0.45, accept_len=3.1,
                       accept_rate=0.7, prealloc_usage=0.02, prealloc_req=0, transfer_req=2,
                       retracted_req=0, graph=True, graph_kind="cuda", gen_throughput=5000.0,
                       queue_req=0),
        decode("0.5.12", spec=True, pd=True, running_req=64, num_token=123456, token_usage=0.45,
               accept_len=3.1, accept_rate=0.7, prealloc_usage=0.02, prealloc_req=0,
               transfer_req=2, retracted_req=0, gen_throughput=5000.0, queue_req=0),
        id="0.5.12-pd-decode"),
]


@pytest.mark.parametrize("msg,kind,fields,synth", EXAMPLES)
def test_reference_example_lines(msg, kind, fields, synth):
    line = "[2026-03-09 16:03:25 TP0] " + msg
    check_batch(LineParser().parse(line), kind=kind, rank="TP0", ts=T0, host=None,
                engine="sglang", fields=fields, extra={})
    # The generator behind the other tables writes exactly these lines from the same values.
    assert synth.text == msg
    assert synth.fields == fields


def test_a_line_seen_in_the_wild():
    """A 0.5.12+ PD-prefill line from a public log, with EP and `fwd occupancy: nan%`."""
    line = ("[2026-07-21 08:04:41 TP0 EP0] Prefill batch, #new-seq: 1, #new-token: 64, "
            "#cached-token: 10048, token usage: 0.00, #running-req: 0, #queue-req: 0, "
            "#pending-token: 0, #bootstrap-req: 0, #inflight-req: 1, cuda graph: False, "
            "input throughput (token/s): 178.18, est. prefill TFLOPS/s (per GPU): 9.90, "
            "fwd occupancy: nan%")
    check_batch(LineParser().parse(line), kind="prefill", rank="TP0 EP0",
                ts=utc(2026, 7, 21, 8, 4, 41), host=None, engine="sglang", extra={},
                fields=dict(new_seq=1, new_token=64, cached_token=10048, token_usage=0.0,
                            running_req=0, queue_req=0, pending_token=0, bootstrap_req=0,
                            inflight_req=1, graph=False, graph_kind="cuda",
                            input_throughput=178.18, prefill_tflops=9.9,
                            fwd_occupancy_pct=float("nan")))


@pytest.mark.parametrize("stamp,ts", [
    ("2024-02-29 23:59:59", utc(2024, 2, 29, 23, 59, 59)),
    ("2025-12-31 23:59:59", utc(2025, 12, 31, 23, 59, 59)),
    ("2027-01-01 00:00:00", utc(2027, 1, 1)),
])
def test_prefix_time_is_utc_on_any_date(stamp, ts):
    msg = decode("0.5.12", spec=True)
    line = f"[{stamp} DP0 TP0] {msg.text}"
    check_batch(LineParser().parse(line), kind="decode", rank="DP0 TP0", ts=ts, host=None,
                engine="sglang", fields=msg.fields, extra={})


# Envelopes: the same lines as journald shows them in each output mode.
ENVELOPE_MSGS = [
    pytest.param(decode("0.5.12", spec=True, pd=True), "DP1 TP1", None, id="0.5.12-pd-decode"),
    pytest.param(prefill("0.4.9"), "", None, id="0.4.9-prefill-no-rank"),
    pytest.param(decode("0.5.4", spec=True, pool="mamba"), "TP0", None, id="0.5.4-mamba"),
    pytest.param(decode("0.5.23", spec=True, cap=True), "DP0 TP0 EP0", 250, id="0.5.23-ms"),
    pytest.param(decode("0.5.3", spec=True), "TP0", None, id="0.5.3-trailing-comma"),
]
ENV_US = (T0 + 2) * 1_000_000 + 345_678  # journald got it 2.35 s after the server's stamp


@pytest.mark.parametrize("msg,rank,ms", ENVELOPE_MSGS)
@pytest.mark.parametrize("envelope", ["short", "short-precise", "short-iso", "short-iso-precise",
                                      "short-iso-offset", "json", "json-bytes", "json-no-time"])
def test_envelopes(envelope, msg, rank, ms):
    inner = sglang_line(msg.text, T0, rank, ms)
    prefix_ts = T0 + (ms or 0) / 1000
    if envelope == "short":
        line, ts = journald_short(inner, ENV_US, HOST), prefix_ts
    elif envelope == "short-precise":
        line, ts = journald_short(inner, ENV_US, HOST, precise=True), prefix_ts
    elif envelope == "short-iso":
        line, ts = journald_iso(inner, ENV_US, HOST), ENV_US // 1_000_000
    elif envelope == "short-iso-precise":
        line, ts = journald_iso(inner, ENV_US, HOST, precise=True), ENV_US / 1e6
    elif envelope == "short-iso-offset":
        # a host one hour east of UTC: the envelope's zone makes its time absolute
        line, ts = journald_iso(inner, ENV_US, HOST, precise=True, offset_min=60), ENV_US / 1e6
    elif envelope == "json":
        line, ts = journald_json(inner, ENV_US, HOST), ENV_US / 1e6
    elif envelope == "json-bytes":
        line, ts = journald_json(inner, ENV_US, HOST, as_bytes=True), ENV_US / 1e6
    else:
        # `--output-fields=MESSAGE,_HOSTNAME`: no envelope time, so the server's own stamp
        line, ts = journald_json(inner, ENV_US, HOST, only=("MESSAGE", "_HOSTNAME")), prefix_ts
    check_batch(LineParser().parse(line), kind=msg.kind, rank=rank, ts=ts, host=HOST,
                engine="sglang", fields=msg.fields, extra={})


def test_json_envelope_with_a_progress_bar_and_colour_in_the_message():
    """journald stores a message with control characters as bytes; the batch line after a
    carriage return (a progress bar redrawn over it) and inside colour codes still reads."""
    msg = decode("0.5.8", spec=True)
    inner = "Capturing batches (bs=1):  100%\r\x1b[0m" + sglang_line(msg.text, T0, "TP0") + "\x1b[0m"
    line = journald_json(inner, ENV_US, HOST, as_bytes=True)
    check_batch(LineParser().parse(line), kind="decode", rank="TP0", ts=ENV_US / 1e6, host=HOST,
                engine="sglang", fields=msg.fields, extra={})


def test_crlf_line_ending():
    msg = decode("0.5.10", spec=True)
    line = sglang_line(msg.text, T0, "TP0") + "\r\n"
    check_batch(LineParser().parse(line), kind="decode", rank="TP0", ts=T0, host=None,
                engine="sglang", fields=msg.fields, extra={})


def test_unknown_keys_are_kept_verbatim():
    """§1.4: split into `key: value` pairs and ignore unknown keys (kept as text in extra)."""
    msg = decode("0.5.23", spec=True)
    line = sglang_line(msg.text + ", est. SoL (%): 41.5, #paused-req: 3", T0, "TP0")
    check_batch(LineParser().parse(line), kind="decode", rank="TP0", ts=T0, host=None,
                engine="sglang", fields=msg.fields,
                extra={"est. SoL (%)": "41.5", "#paused-req": "3"})


# Cut-off lines: the head is there, so it is a batch; what was cut is absent, never invented.
TRUNCATED = [
    pytest.param("Decode batch", "decode", {}, id="head-only"),
    pytest.param("Prefill batch", "prefill", {}, id="prefill-head-only"),
    pytest.param("Decode batch, ", "decode", {}, id="head-and-comma"),
    pytest.param("Decode batch. ", "decode", {}, id="old-head-and-period"),
    pytest.param("Decode batch [12", "decode", {}, id="forward-ct-cut"),
    pytest.param("Decode batch [1234], ", "decode", {}, id="forward-ct-head"),
    pytest.param("Decode batch, #running-req: 12, #token: 45678, token usa", "decode",
                 dict(running_req=12, num_token=45678), id="cut-in-a-key"),
    pytest.param("Decode batch, #running-req: 12, #token: 45678, token usage: 0.23, accept len: ",
                 "decode", dict(running_req=12, num_token=45678, token_usage=0.23),
                 id="cut-after-a-key"),
    pytest.param("Decode batch, #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.…",
                 "decode", dict(running_req=12, num_token=45678, token_usage=0.23),
                 id="journalctl-ellipsis"),
    pytest.param("Decode batch. #running-req: 12, #token: 45678, token usage: 0.23, "
                 "cuda graph: Tr", "decode", dict(running_req=12, num_token=45678, token_usage=0.23),
                 id="cut-in-graph-value"),
    pytest.param("Prefill batch. #new-seq: 1, #new-token: 512, #cach", "prefill",
                 dict(new_seq=1, new_token=512), id="prefill-cut"),
    pytest.param("Prefill batch. #new-seq: 1, #new-token: 512, #cached-token: 0, cache hit rate: 12.5",
                 "prefill", dict(new_seq=1, new_token=512, cached_token=0),
                 id="hit-rate-without-percent"),
]


@pytest.mark.parametrize("envelope", ["raw", "short"])
@pytest.mark.parametrize("msg,kind,fields", TRUNCATED)
def test_truncated_lines(msg, kind, fields, envelope):
    line, host = raw_or_short(msg, "TP0", None, envelope)
    check_batch(LineParser().parse(line), kind=kind, rank="TP0", ts=T0, host=host,
                engine="sglang", fields=fields, extra=None, truncated=None)


# Lines that share words or field names with batch lines but are none.
LOOKALIKES = [
    "[2026-03-09 16:03:25 TP0] Cache not flushed because there are pending requests. "
    "#queue-req: 2, #running-req: 12",
    "[2026-03-09 16:03:25 TP0] Decode batches are logged every 40 iterations",
    "[2026-03-09 16:03:25 TP0] Prefill batch size exceeds the limit",
    "[2026-03-09 16:03:25] Receive: obj=GenerateReqInput(text='Decode batch, #running-req: 5')",
    "[2026-03-09 16:03:25 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1, "
    "#new_tokens_gained: 512, #new_token_ratio: 0.4 -> 0.5",
    "Capturing batches (bs=4 avail_mem=10.00 GB):  50%|#####     | 2/4 [00:01<00:01,  1.50it/s]",
    "Decode batch, #running-req: 12 is what the docs show",
]


@pytest.mark.parametrize("line", LOOKALIKES)
def test_lookalikes_are_not_batches(line):
    p = LineParser().parse(line)
    assert p.outcome in ("other", "event"), (p.outcome, p.record)
    short = LineParser().parse(journald_short(line, T0 * 1_000_000, HOST))
    assert short.outcome in ("other", "event"), (short.outcome, short.record)


def test_defaults_are_distinct():
    """A value read into the wrong field shows only if no two fields share a value."""
    vals = [v for v in DEFAULTS.values()]
    assert len(vals) == len(set(vals))
