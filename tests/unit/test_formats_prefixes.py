"""Batch lines behind the prefixes real deployments put before them, not only SGLang's default:
each shape read with its exact fields, rank, time and host; the shapes still unreadable, counted.

The rule under test: a line is a batch line when its message holds a batch head, whatever
precedes it; the rank comes from `TPn`/`DPn`/`EPn`/`gpu=n` tokens wherever the prefix has them
(and a Ray actor's pid and ip, which name an engine); the time from whatever stamp the line or
its envelope has (a time-only stamp takes its date from the envelope or the last full stamp).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from logsynth import check_batch, decode, journald_iso, journald_json, journald_short, prefill, utc

from mtptui.commands.summary import render_table
from mtptui.core.ingest import Ingest
from mtptui.core.parse import LineParser
from mtptui.core.summary import Summary

T0 = utc(2026, 3, 9, 16, 3, 25)
HOST = "gpu-a"
ENV_US = (T0 + 2) * 1_000_000 + 345_678  # journald's time, 2.35 s after the server's stamp
D = decode("0.5.12", spec=True)  # `Decode batch, ...`
D_OLD = decode("0.4.8", spec=True)  # `Decode batch. ...`
P = prefill("0.5.12")
STAMP = "2026-03-09 16:03:25"


def S(id, line, rank, ts, host=None, msg=D):
    return pytest.param(line, rank, ts, host, msg, id=id)


SHAPES = [
    # Ray actors of RL frameworks: each actor is an engine, its own series
    S("ray-pid", f"(SGLangEngine pid=41820) [{STAMP} TP0] {D.text}", "pid=41820 TP0", T0),
    S("ray-pid-ip", f"(SGLangEngine pid=111711, ip=10.15.36.1) [{STAMP} TP0] {D.text}",
      "pid=111711@10.15.36.1 TP0", T0),
    S("ray-tp1-no-rank", f"(SGLangEngine pid=7) [{STAMP}] {P.text}", "pid=7", T0, msg=P),
    S("ray-dp-attention", f"(SGLangEngine pid=9, ip=10.0.0.2) [{STAMP} DP3 TP3 EP3] {D.text}",
      "pid=9@10.0.0.2 DP3 TP3 EP3", T0),
    S("ray-colour-codes", f"\x1b[36m(SGLangEngine pid=41820)\x1b[0m [{STAMP} TP1] {D.text}",
      "pid=41820 TP1", T0),
    S("ray-repeated-note", f"(SGLangEngine pid=41820) [{STAMP} TP0] {D.text} [repeated 7x across cluster]",
      "pid=41820 TP0", T0),
    S("ray-ipv6-other-actor", f"(RolloutWorker pid=5, ip=fe80::1) [{STAMP} TP0] {D.text}", "pid=5@fe80::1 TP0", T0),
    S("ray-without-sglang-prefix", f"(SGLangEngine pid=12) {D.text}", "pid=12", None),
    S("ray-forward-ct-and-comma-ending",
      f"(SGLangEngine pid=35555) [{STAMP} TP0] Decode batch [51341], #running-req: 317, #token: 1094261, "
      "token usage: 0.67, cuda graph: True, gen throughput (token/s): 14806.57, #queue-req: 0,",
      "pid=35555 TP0", T0, msg=decode("0.5.4", running_req=317, num_token=1094261, token_usage=0.67,
                                      gen_throughput=14806.57, queue_req=0)),
    S("ray-in-journald-short", journald_short(f"(SGLangEngine pid=41820) [{STAMP} TP0] {D.text}", ENV_US, HOST),
      "pid=41820 TP0", T0, HOST),
    S("ray-in-journald-json", journald_json(f"(SGLangEngine pid=41820) [{STAMP} TP0] {D.text}", ENV_US, HOST),
      "pid=41820 TP0", ENV_US / 1e6, HOST),
    # the time-only stamp of older versions: the date from the envelope
    S("time-only-in-short", journald_short(f"[16:03:25 TP0] {D_OLD.text}", ENV_US, HOST), "TP0", T0, HOST, D_OLD),
    S("time-only-ms-in-short", journald_short(f"[16:03:25.250 TP2] {D_OLD.text}", ENV_US, HOST), "TP2",
      T0 + 0.25, HOST, D_OLD),
    S("time-only-before-midnight-read-after",
      journald_short(f"[23:59:59 TP0] {D_OLD.text}", utc(2026, 3, 10, 0, 0, 2) * 1_000_000, HOST), "TP0",
      utc(2026, 3, 9, 23, 59, 59), HOST, D_OLD),
    S("time-only-after-midnight-clock-behind",
      journald_short(f"[00:00:01 TP0] {D_OLD.text}", utc(2026, 3, 9, 23, 59, 58) * 1_000_000, HOST), "TP0",
      utc(2026, 3, 10, 0, 0, 1), HOST, D_OLD),
    S("time-only-in-json", journald_json(f"[16:03:25 TP0] {D_OLD.text}", ENV_US, HOST), "TP0", ENV_US / 1e6,
      HOST, D_OLD),
    # no prefix at all: the envelope's time, or none
    S("none", D.text, "", None),
    S("none-prefill", P.text, "", None, msg=P),
    S("none-in-json", journald_json(D.text, ENV_US, HOST), "", ENV_US / 1e6, HOST),
    S("none-in-short-iso", journald_iso(D.text, ENV_US, HOST, precise=True), "", ENV_US / 1e6, HOST),
    # old versions' `[gpu=N]`
    S("gpu", f"[gpu=0] {D_OLD.text}", "gpu=0", None, msg=D_OLD),
    S("gpu-in-json", journald_json(f"[gpu=3] {D_OLD.text}", ENV_US, HOST), "gpu=3", ENV_US / 1e6, HOST, D_OLD),
    S("gpu-after-sglang-stamp", f"[{STAMP}] [gpu=1] {D.text}", "gpu=1", T0),
    S("level-after-sglang-prefix", f"[{STAMP} TP0] DEBUG {D.text}", "TP0", T0),
    # Python logging formats that deployments configure
    S("logging-asctime-ms-level-name",
      f"{STAMP},659 [INFO] sglang.srt.managers.scheduler_metrics_mixin: {D.text}", "", T0 + 0.659),
    S("logging-asctime-level-pid-file", f"{STAMP} INFO 151972 [scheduler_metrics_mixin.py:287] {D_OLD.text}, ",
      "", T0, msg=D_OLD),
    S("logging-rank-inside-file-bracket",
      f"{STAMP} INFO 151972 [DP3 TP3 EP3 scheduler_metrics_mixin.py:222] {D_OLD.text},", "DP3 TP3 EP3", T0,
      msg=D_OLD),
    S("logging-basic-format-in-json", journald_json(f"INFO:sglang.srt.managers.scheduler:{D.text}", ENV_US, HOST),
      "", ENV_US / 1e6, HOST),
    S("loguru-default", f"{STAMP}.250 | INFO     | sglang.srt.managers.scheduler:log_decode:287 - {D.text}", "",
      T0 + 0.25),
    S("loguru-iso-stamp-with-zone", f"2026-03-09T17:03:25.250+01:00 | INFO | TP3 | {D.text}", "TP3", T0 + 0.25),
    S("logging-utc-z-and-rank-tokens", f"2026-03-09T16:03:25Z scheduler DP1 TP1 | {D.text}", "DP1 TP1", T0),
    S("logging-pp-tp", f"{STAMP}.500 PP1 TP0 INFO {P.text}", "PP1 TP0", T0 + 0.5, msg=P),
    # container logs: Kubernetes (CRI) and Docker's json-file, zoned: their time wins
    S("kubernetes-cri", f"2026-03-09T16:03:27.345678901Z stdout F [{STAMP} TP2] {D.text}", "TP2",
      T0 + 2.345678901),
    S("kubernetes-cri-no-prefix", f"2026-03-09T18:03:27.5+02:00 stderr F {D.text}", "", T0 + 2.5),
    S("kubernetes-cri-ray", f"2026-03-09T16:03:27Z stdout F (SGLangEngine pid=3) [{STAMP} TP0] {D.text}",
      "pid=3 TP0", T0 + 2),
    S("docker-json-file", json.dumps({"log": f"[{STAMP} TP1] {D.text}\n", "stream": "stderr",
                                      "time": "2026-03-09T16:03:27.5Z"}), "TP1", T0 + 2.5),
    # syslog forwarded with its priority: RFC 3164 (the server's stamp wins, as under journald's
    # `short`) and RFC 5424 (zoned)
    S("syslog-3164-priority", f"<14>Mar  9 16:03:27 {HOST} sglang[77]: [{STAMP} TP0] {D.text}", "TP0", T0, HOST),
    S("syslog-5424", f"<14>1 2026-03-09T16:03:27.003Z {HOST} sglang 77 - - [{STAMP} TP0] {D.text}", "TP0",
      T0 + 2.003, HOST),
    S("syslog-5424-structured-data", f'<14>1 2026-03-09T16:03:27Z {HOST} sglang 77 ID4 [meta a="1"] {D.text}', "",
      T0 + 2, HOST),
]


@pytest.mark.parametrize("line,rank,ts,host,msg", SHAPES)
def test_prefix_shapes(line, rank, ts, host, msg):
    check_batch(LineParser().parse(line), kind=msg.kind, rank=rank, ts=ts, host=host, engine="sglang",
                fields=msg.fields, extra={})


def test_every_shape_in_one_parser_forwards_and_backwards():
    """The parser keeps state (the date of the last full stamp, layouts seen, prefixes read):
    each line still reads as it reads alone, whatever came before it."""
    cases = [p.values for p in SHAPES]
    for order in (cases, cases[::-1]):
        parser = LineParser()
        for line, rank, ts, host, msg in order:
            check_batch(parser.parse(line), kind=msg.kind, rank=rank, ts=ts, host=host, engine="sglang",
                        fields=msg.fields, extra={})


# Bodies in other orders, with other fields and endings: read the same behind any prefix.
BODIES = [
    pytest.param("Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, "
                 "#running-req: 0, #queue-req: 0, input throughput (token/s): 4321.00, cuda graph: False",
                 "prefill", dict(new_seq=1, new_token=512, cached_token=0, token_usage=0.01, running_req=0,
                                 queue_req=0, input_throughput=4321.0, graph=False, graph_kind="cuda"), {},
                 id="input-throughput-before-cuda-graph"),
    pytest.param("Decode batch, #running-req: 5, #queue-req: 2, gen throughput (token/s): 99.50, #token: 700, "
                 "cuda graph: True, token usage: 0.05",
                 "decode", dict(running_req=5, queue_req=2, gen_throughput=99.5, num_token=700, graph=True,
                                graph_kind="cuda", token_usage=0.05), {}, id="decode-shuffled"),
    pytest.param("Decode batch. #running-req: 1, #token: 64, token usage: 0.00, gen throughput (token/s): 84.39, "
                 "#queue-req: 0, #cache_miss: 1",
                 "decode", dict(running_req=1, num_token=64, token_usage=0.0, gen_throughput=84.39, queue_req=0),
                 {"#cache_miss": "1"}, id="cache-miss-extra"),
    pytest.param("Decode batch, #running-req: 3, largest-len: 8190, #token: 100, token usage: 0.01, "
                 "gen throughput (token/s): 10.00, #queue-req: 0",
                 "decode", dict(running_req=3, num_token=100, token_usage=0.01, gen_throughput=10.0, queue_req=0),
                 {"largest-len": "8190"}, id="largest-len-extra"),
    pytest.param("Decode batch, #running-req: 3, #token: 100, token usage: 0.01, #queue-req: 0, ",
                 "decode", dict(running_req=3, num_token=100, token_usage=0.01, queue_req=0), {},
                 id="ending-comma-space"),
    pytest.param("Decode batch, #running-req: 3, #token: 100, token usage: 0.01, #queue-req: 0,",
                 "decode", dict(running_req=3, num_token=100, token_usage=0.01, queue_req=0), {},
                 id="ending-comma"),
    pytest.param("Decode batch, #running-req: 3, #token: 100, token usage: 0.01, #queue-req: 0",
                 "decode", dict(running_req=3, num_token=100, token_usage=0.01, queue_req=0), {},
                 id="ending-none"),
]
PREFIXES = [
    pytest.param(f"[{STAMP} TP1] ", "TP1", T0, id="default"),
    pytest.param(f"(SGLangEngine pid=4) [{STAMP} TP1] ", "pid=4 TP1", T0, id="ray"),
    pytest.param("[16:03:25 TP1] ", "TP1", None, id="time-only"),
    pytest.param(f"{STAMP},250 [INFO] sglang.srt.managers.scheduler: ", "", T0 + 0.25, id="logging"),
    pytest.param("[gpu=1] ", "gpu=1", None, id="gpu"),
    pytest.param("", "", None, id="none"),
]


@pytest.mark.parametrize("pre,rank,ts", PREFIXES)
@pytest.mark.parametrize("body,kind,fields,extra", BODIES)
@pytest.mark.parametrize("newline", ["", "\n"])
def test_bodies_behind_every_prefix(pre, rank, ts, body, kind, fields, extra, newline):
    for parser in (LineParser(), LineParser()):
        p = parser.parse(pre + body + newline)
        check_batch(p, kind=kind, rank=rank, ts=ts, host=None, engine="sglang", fields=fields, extra=extra)
        parser.parse(pre + body + newline)  # the second parser reads it again, warm


# A time-only stamp without an envelope: the day of the last full stamp, past midnight when it
# runs backwards by more than half a day.
def test_time_only_takes_the_date_of_the_last_full_stamp_and_passes_midnight():
    p = LineParser()
    assert p.parse(f"[04:40:55 TP0] {D_OLD.text}").record.ts is None  # no date known yet: no time
    p.parse(f"[2026-03-09 23:59:58 TP0] {D.text}")
    times = [p.parse(f"[{hms} TP0] {D_OLD.text}").record.ts for hms in ("23:59:59", "00:00:01", "00:00:02", "13:00:00")]
    assert times == [utc(2026, 3, 9, 23, 59, 59), utc(2026, 3, 10, 0, 0, 1), utc(2026, 3, 10, 0, 0, 2),
                     utc(2026, 3, 10, 13)]
    p.parse(f"2026-03-12 08:00:00,000 [INFO] sglang: {D.text}")  # Python logging's full stamp counts too
    assert p.parse(f"[08:00:01 TP0] {D_OLD.text}").record.ts == utc(2026, 3, 12, 8, 0, 1)


def test_ray_engines_are_series_of_their_own():
    """Two engines' TP0 (as SGLang's own debug_utils/log_parser.py keys them, by pid and ip) are
    two series, apart from the engine on the driver's node; the same engine's lines are one."""
    summary = Summary()
    ingest = Ingest(summary)
    for pid_ip, n in (("pid=1", 3), ("pid=2, ip=10.0.0.2", 2), ("pid=2, ip=10.0.0.3", 1)):
        for i in range(n):
            ingest.feed(f"(SGLangEngine {pid_ip}) [2026-03-09 16:03:{25 + i:02d} TP0] {D.text}")
    ingest.feed(f"[{STAMP} TP0] {D.text}")
    got = {key[1]: s.decode_batches for key, s in summary.series.items()}
    assert got == {"pid=1 TP0": 3, "pid=2@10.0.0.2 TP0": 2, "pid=2@10.0.0.3 TP0": 1, "TP0": 1}
    assert ingest.counts.batch == 7 and ingest.counts.unparsed == 0
    # the table shows each label whole: the two engines of pid 2 differ only at the end
    table = render_table(summary.to_json(ingest.counts.to_json()))
    assert " pid=2@10.0.0.2 TP0 " in table and " pid=2@10.0.0.3 TP0 " in table


def test_events_behind_a_ray_prefix_take_its_time_and_engine():
    p = LineParser().parse("(SGLangEngine pid=206831) [2026-02-26 12:02:18] Scheduler hit an exception: "
                           "Traceback (most recent call last):")
    assert p.outcome == "event"
    ev = p.record
    assert (ev.kind, ev.ts, ev.rank) == ("error", utc(2026, 2, 26, 12, 2, 18), "pid=206831")
    assert ev.text.startswith("Scheduler hit an exception")


def test_vllm_with_a_padded_level():
    line = ("INFO  09-09 05:27:57 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
            "Avg generation throughput: 11.5 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.5%, "
            "Prefix cache hit rate: 0.0%")
    p = LineParser()
    p.dates.note("2026-01-01")  # the year of vLLM's year-less stamp
    check_batch(p.parse(line), kind="decode", rank="Engine 000", ts=utc(2026, 9, 9, 5, 27, 57), host=None,
                engine="vllm", fields=dict(prompt_throughput=0.0, gen_throughput=11.5, running_req=2, queue_req=0,
                                           token_usage=0.015, prefix_cache_hit_rate=0.0), extra={})


# What still cannot be read: each is counted (unparsed, or dropped with a reason), never lost.
UNREADABLE = [
    pytest.param(f"{STAMP},659 [INFO] sglang: Decode batch, ", "unparsed",
                 id="head-without-fields-after-another-prefix"),  # cannot be told from prose naming a batch
    pytest.param("(SGLangEngine pid=1) Decode batch [1234", "unparsed", id="ray-head-cut-without-sglang-prefix"),
    pytest.param(f"{STAMP} INFO sglang: Decode batch, #running-req: twelve, #token: lots", "unparsed",
                 id="no-readable-field-after-another-prefix"),
    pytest.param(f"[{STAMP} TP0] Decode batch | #running-req: 5 | #token: 100", "unparsed",
                 id="another-separator-after-the-head"),
    pytest.param(f"{STAMP} INFO sglang: Decode batch | #running-req: 5 | #token: 100", "unparsed",
                 id="another-separator-after-another-prefix"),
    pytest.param("sglang.scheduler.Decode batch, #running-req: 5, #token: 100", "unparsed",
                 id="head-glued-to-a-word"),
    pytest.param("#token: 45678, token usage: 0.23, cuda graph: True, gen throughput (token/s): 1234.50", "unparsed",
                 id="second-half-of-a-wrapped-line"),
    pytest.param(json.dumps({"level": "info", "message": f"[{STAMP} TP0] {D.text}"}), "dropped",
                 id="another-tools-json-log"),
    pytest.param("[gpu=0] new fill batch. #seq: 1. #cached_token: 330. #new_token: 2172. #remaining_req: 57. "
                 "#running_req: 9. tree_cache_hit_rate: 69.16%", "unparsed", id="prefill-line-of-2024-early"),
]


@pytest.mark.parametrize("line,outcome", UNREADABLE)
def test_shapes_still_unreadable_are_counted(line, outcome):
    ingest = Ingest(Summary())
    ingest.feed(line)
    c = ingest.counts
    assert (c.read, c.batch, c.unparsed, c.dropped) == (1, 0, outcome == "unparsed", outcome == "dropped")
    if outcome == "dropped":
        assert c.drop_reasons == {"a json line that is neither journald's nor Docker's": 1}


# Any body, behind any prefix, reads as behind SGLang's default one.
_int = st.integers(min_value=0, max_value=10**6)
_num = st.floats(min_value=0, max_value=1e5, allow_nan=False).map(lambda x: f"{x:.2f}")
_ANY = [f"(SGLangEngine pid=41820) [{STAMP} TP0] ", "[16:03:25 TP0] ", f"{STAMP},001 [INFO] sglang: ",
        f"{STAMP} INFO 1 [DP0 TP0 EP0 scheduler.py:1] ", "[gpu=0] ", "", "2026-03-09T16:03:25Z stdout F ",
        f"(SGLangEngine pid=1, ip=10.0.0.1) {STAMP} | "]


@st.composite
def bodies(draw):
    items = [f"#running-req: {draw(_int)}", f"#token: {draw(_int)}", f"token usage: {draw(_num)}",
             f"cuda graph: {draw(st.booleans())}", f"gen throughput (token/s): {draw(_num)}",
             f"#queue-req: {draw(_int)}"]
    if draw(st.booleans()):
        items.insert(3, f"accept len: {draw(_num)}")
    if draw(st.booleans()):
        items.append(f"#{draw(st.sampled_from(['cache_miss', 'paused-req']))}: {draw(_int)}")
    items = draw(st.permutations(items))
    head = draw(st.sampled_from(["Decode batch, ", "Decode batch. ", "Decode batch [7], "]))
    return head + ", ".join(items) + draw(st.sampled_from(["", ",", ", "]))


@settings(max_examples=150, deadline=None)
@given(bodies(), st.sampled_from(_ANY))
def test_a_body_reads_the_same_behind_any_prefix(body, pre):
    want = LineParser().parse(f"[{STAMP} TP0] {body}").record
    got = LineParser().parse(pre + body)
    assert got.outcome == "batch", pre + body
    r = got.record
    assert (r.kind, r.fields, r.extra, r.truncated) == (want.kind, want.fields, want.extra, want.truncated)


