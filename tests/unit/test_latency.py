"""The server's latency from its /metrics (core/latency.py): the bucket quantile against
hand-computed histograms, the window between two scrapes, and the names each version serves,
read from its sources: SGLang 0.4.4 (`time_per_output_token`), 0.4.9, 0.5.2 (`queue_time_s`),
0.5.12 (`srt/observability/metrics_collector.py`); vLLM 0.10.2 and 0.11.0
(`v1/metrics/loggers.py`, `v1/spec_decode/metrics.py`)."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from mtptui.core import latency
from mtptui.core.stats import bucket_quantile
from mtptui.sim import metrics as sim_metrics
from mtptui.sim.engine import Engine, layout
from mtptui.sim.scenario import config_from_argv

B = (0.1, 0.2, 0.4)


@pytest.mark.parametrize("cum, q, want", [
    ((10, 30, 40, 40), 0.5, 0.15),  # rank 20: 10 below, 20 in (0.1, 0.2]: half way
    ((10, 30, 40, 40), 0.9, 0.32),  # rank 36: 6 of 10 into (0.2, 0.4]
    ((10, 30, 40, 40), 0.99, 0.392),
    ((10, 30, 40, 40), 0.1, 0.04),  # the first bucket's lower bound is 0
    ((10, 30, 40, 50), 0.99, 0.4),  # in +Inf: the greatest finite bound
    ((0, 0, 0, 0), 0.5, None),
])
def test_bucket_quantile_as_histogram_quantile(cum, q, want):
    got = bucket_quantile(B, cum, q)
    assert got == (None if want is None else pytest.approx(want))


def test_a_bucket_at_zero_gives_zero():
    assert bucket_quantile((0.0, 0.1), (5, 5, 5), 0.5) == 0.0


def _sglang_text(v_names: dict, observations: dict, model="m") -> str:
    """What SGLang's prometheus_client histograms print, built with prometheus_client itself."""
    reg = CollectorRegistry()
    for fig, name in v_names.items():
        h = Histogram(name, "h", ["model_name"], buckets=sim_metrics._BUCKETS[fig], registry=reg)
        for x in observations.get(fig, ()):
            h.labels(model).observe(x)
    return generate_latest(reg).decode()


@pytest.mark.parametrize("version, itl, queue", [
    ((0, 4, 4), "sglang:time_per_output_token_seconds", None),
    ((0, 4, 9), "sglang:inter_token_latency_seconds", None),
    ((0, 5, 2), "sglang:inter_token_latency_seconds", "sglang:queue_time_s"),
    ((0, 5, 12), "sglang:inter_token_latency_seconds", "sglang:queue_time_seconds"),
])
def test_each_sglang_versions_names_are_read(version, itl, queue):
    names = sim_metrics.latency_names(version)
    assert names["itl"] == itl and names.get("queue") == queue
    obs = {"ttft": [0.05] * 3 + [0.3], "itl": [0.012] * 9 + [0.05], "e2e": [3.0, 5.0], "queue": [0.002] * 4}
    w = latency.window(None, latency.parse(_sglang_text(names, obs), 1.0))
    assert w["ttft"]["n"] == 4 and w["ttft"]["p50"] == pytest.approx(0.1 * 2 / 3)  # rank 2 of the 3 under 0.1
    assert w["itl"]["n"] == 10 and w["itl"]["p50"] == pytest.approx(0.010 + 0.005 * (5 - 0) / 9)
    assert w["e2e"]["p50"] == pytest.approx(2 + 2 * (1 - 0) / 1)
    assert (w["queue"] is None) == (queue is None)


def _vllm_text(itl_name_too: bool) -> str:
    """vLLM 0.10.2/0.11.0's families as its loggers register them (labels model_name, engine)."""
    reg = CollectorRegistry()
    lab = ["model_name", "engine"]
    itl_b = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0]
    names = ["vllm:time_per_output_token_seconds"] + (["vllm:inter_token_latency_seconds"] if itl_name_too else [])
    for n in names:
        h = Histogram(n, "h", lab, buckets=itl_b, registry=reg)
        for e in ("0", "1"):
            for _ in range(50):
                h.labels("llama", e).observe(0.02)
    ttft = Histogram("vllm:time_to_first_token_seconds", "h", lab, buckets=[0.1, 0.5, 1.0], registry=reg)
    ttft.labels("llama", "0").observe(0.3)
    q = Histogram("vllm:request_queue_time_seconds", "h", lab, buckets=[0.3, 0.5, 0.8, 1.0], registry=reg)
    q.labels("llama", "0").observe(0.1)
    drafts = Counter("vllm:spec_decode_num_drafts", "d", lab, registry=reg)
    drafted = Counter("vllm:spec_decode_num_draft_tokens", "d", lab, registry=reg)
    accepted = Counter("vllm:spec_decode_num_accepted_tokens", "d", lab, registry=reg)
    per_pos = Counter("vllm:spec_decode_num_accepted_tokens_per_pos", "d", lab + ["position"], registry=reg)
    drafts.labels("llama", "0").inc(100)
    drafted.labels("llama", "0").inc(300)
    accepted.labels("llama", "0").inc(80 + 50 + 20)
    for pos, n in enumerate((80, 50, 20)):
        per_pos.labels("llama", "0", str(pos)).inc(n)
    return generate_latest(reg).decode()


@pytest.mark.parametrize("both", [True, False])
def test_vllm_latency_and_per_position_acceptance(both):
    w = latency.window(None, latency.parse(_vllm_text(both), 1.0))
    assert w["itl"]["n"] == 100  # both engines summed
    assert w["itl"]["p50"] == pytest.approx(0.01 + 0.015 * 50 / 100)
    assert w["ttft"]["p50"] == pytest.approx(0.1 + 0.4 * 0.5)
    assert w["queue"]["n"] == 1 and w["e2e"] is None
    spec = w["spec"]
    assert spec["accept_len"] == pytest.approx(2.5) and spec["accept_rate"] == pytest.approx(0.5)
    assert spec["per_pos"] == pytest.approx([0.8, 0.5, 0.2])


def test_the_window_is_the_difference_of_two_scrapes_and_a_restart_starts_again():
    names = sim_metrics.latency_names((0, 5, 12))
    a = latency.parse(_sglang_text(names, {"itl": [0.003] * 100}), 0.0)
    b = latency.parse(_sglang_text(names, {"itl": [0.003] * 100 + [0.05] * 10}), 5.0)
    w = latency.window(a, b)
    assert w["span_s"] == 5.0 and w["itl"]["n"] == 10 and 0.04 < w["itl"]["p50"] <= 0.06
    restarted = latency.parse(_sglang_text(names, {"itl": [0.003] * 4}), 9.0)
    assert latency.window(b, restarted)["itl"]["n"] == 4
    kept = latency.Scrapes(window_s=30.0)
    for s in (a, b, restarted):
        kept.add(s)
    assert kept.latest()["itl"]["n"] == 4


def test_no_latency_families_and_not_an_exposition():
    s = latency.parse("sglang:num_running_reqs 3\n", 0.0)
    assert not s.has_latency and latency.window(None, s)["itl"] is None
    with pytest.raises(latency.NotExposition):
        latency.parse("<html>not found</html>\n{", 0.0)


def _sim(spec: bool, version: str = "0.5.12") -> dict:
    argv = ["--model-path", "Qwen/Qwen3-8B", "--enable-metrics", "--sim-version", version, "--sim-load", "steady"]
    if spec:
        argv += ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                 "--speculative-num-draft-tokens", "4", "--speculative-draft-model-path", "d"]
    cfg = config_from_argv(argv)
    e = Engine(cfg, layout(cfg), 0.0, 200000)
    e.set_ready(0.0)
    e.run_until(40.0)
    e.latency.catch_up(40.0)
    return latency.window(None, latency.parse(sim_metrics.latency_exposition(e.latency), 40.0))


def test_the_simulator_serves_lower_itl_with_speculation_at_low_load():
    off, on = _sim(False), _sim(True)
    assert all(off[f] and on[f] for f in latency.FIGURES)
    assert on["itl"]["p50"] < off["itl"]["p50"] * 0.85


def test_the_simulator_names_the_histograms_as_its_version():
    w = _sim(False, "0.4.9")  # no queue-time histogram before 0.5.2
    assert w["itl"] and w["queue"] is None


@pytest.mark.parametrize("s, want", [(None, "–"), (0.0004, "0.40ms"), (0.0123, "12ms"), (0.00456, "4.6ms"),
                                     (0.0, "0ms"), (0.999, "999ms"), (2.5, "2.50s"), (12.3, "12.3s"), (250.0, "250s")])
def test_ms(s, want):
    assert latency.ms(s) == want


def _vllm_render(serve=60.0):
    from mtptui.sim import vllm

    m = vllm.VllmMetrics(t_created=1.0)
    lines = list(vllm.render(envelope="cat", host="h", unit="vllm", unit_description="vLLM", seed=0, t0=1000.0,
                             serve=serve, metrics=m))
    return m, [ln.truth for ln in lines if ln.truth.get("kind") == "batch" and ln.truth.get("batch") == "spec"
               or ln.truth.get("fields", {}).get("drafted_tokens") is not None]


def test_the_vllm_simulators_metrics_agree_with_its_spec_lines():
    m, spec = _vllm_render()
    w = latency.window(None, latency.parse(m.exposition(), 60.0))
    fields = [t["fields"] for t in spec]
    assert fields, "no SpecDecoding lines"
    accepted, drafted = sum(f["accepted_tokens"] for f in fields), sum(f["drafted_tokens"] for f in fields)
    assert w["spec"]["accept_rate"] == pytest.approx(accepted / drafted)
    # per position: the lines' rates weighted by each interval's drafts (drafted / K)
    k = len(fields[0]["per_position_accept_rate"])
    drafts = [f["drafted_tokens"] / k for f in fields]
    want = [sum(f["per_position_accept_rate"][i] * d for f, d in zip(fields, drafts)) / sum(drafts) for i in range(k)]
    assert w["spec"]["per_pos"] == pytest.approx(want, abs=1e-3)
    assert w["itl"]["n"] > 0 and w["ttft"]["n"] > 0 and w["queue"]["n"] > 0
    # the step over the tokens it gives: below the step time itself (speculation's gain)
    assert w["itl"]["p50"] < 0.05


def test_the_vllm_simulators_text_is_shaped_as_prometheus_client_writes_it():
    from prometheus_client.parser import text_string_to_metric_families

    m, _ = _vllm_render(20.0)
    mine = {(f.name, f.type, s.name, tuple(sorted(s.labels))) for f in text_string_to_metric_families(m.exposition())
            for s in f.samples}
    real = {(f.name, f.type, s.name, tuple(sorted(s.labels))) for f in text_string_to_metric_families(_vllm_text(True))
            for s in f.samples}
    assert {x for x in real if "e2e" not in x[0]} <= mine  # the test text above has no e2e histogram


def test_sglangs_speculation_gauges_are_read():
    text = ('# TYPE sglang:spec_accept_length gauge\nsglang:spec_accept_length{tp_rank="0"} 2.5\n'
            'sglang:spec_accept_length{tp_rank="1"} 3.5\n# TYPE sglang:spec_accept_rate gauge\n'
            'sglang:spec_accept_rate{tp_rank="0"} 0.5\nsglang:spec_accept_rate{tp_rank="1"} 0.0\n')
    s = latency.parse(text, 0.0)
    assert latency.window(None, s)["spec"] == {"accept_len": 3.0, "accept_rate": 0.5}  # 0: not speculating yet
    assert latency.from_json(latency.to_json(s)) == s


# llama.cpp's server writes its exposition by hand (tools/server/server-context.cpp, the metrics
# task): HELP, TYPE and the value of each counter, `_total` in its name, the per-position counts
# labelled position="i".
LLAMACPP_TEXT = """\
# HELP llamacpp:tokens_predicted_total Number of generation tokens processed.
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 3469
# HELP llamacpp:spec_decode_num_drafts_total Total speculative drafts.
# TYPE llamacpp:spec_decode_num_drafts_total counter
llamacpp:spec_decode_num_drafts_total {drafts}
# HELP llamacpp:spec_decode_num_draft_tokens_total Total speculative draft tokens generated.
# TYPE llamacpp:spec_decode_num_draft_tokens_total counter
llamacpp:spec_decode_num_draft_tokens_total {drafted}
# HELP llamacpp:spec_decode_num_accepted_tokens_total Total speculative draft tokens accepted.
# TYPE llamacpp:spec_decode_num_accepted_tokens_total counter
llamacpp:spec_decode_num_accepted_tokens_total {accepted}
# HELP llamacpp:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position
# TYPE llamacpp:spec_decode_num_accepted_tokens_per_pos_total counter
llamacpp:spec_decode_num_accepted_tokens_per_pos_total{{position="0"}} {p0}
llamacpp:spec_decode_num_accepted_tokens_per_pos_total{{position="1"}} {p1}
"""


def test_llamacpps_spec_decode_counters_are_read_as_vllms():
    a = latency.parse(LLAMACPP_TEXT.format(drafts=100, drafted=200, accepted=130, p0=80, p1=50), 0.0)
    b = latency.parse(LLAMACPP_TEXT.format(drafts=200, drafted=400, accepted=230, p0=150, p1=80), 10.0)
    spec = latency.window(a, b)["spec"]
    assert spec["accept_len"] == pytest.approx(1 + 100 / 100) and spec["accept_rate"] == pytest.approx(100 / 200)
    assert spec["per_pos"] == pytest.approx([0.7, 0.3])
    assert a.counters[latency.VLLM_DRAFTS] == 100  # where the exporter's server counters read them
    assert latency.parse(LLAMACPP_TEXT.format(drafts=0, drafted=0, accepted=0, p0=0, p1=0), 0.0).per_pos == {0: 0.0, 1: 0.0}


def test_sglangs_steps_in_use_are_read_and_shown():
    """sglang:spec_num_steps / spec_num_draft_tokens (0.5.17+ observability/metrics_collector.py,
    set from the active spec config each decode log: with --speculative-adaptive, its tier)."""
    from mtptui.tui.latency_view import latency_line

    text = ("# HELP sglang:spec_num_steps Currently active speculative_num_steps.\n"
            "# TYPE sglang:spec_num_steps gauge\n"
            'sglang:spec_num_steps{model_name="m",tp_rank="0"} 2.0\n'
            "# HELP sglang:spec_num_draft_tokens Currently active speculative_num_draft_tokens.\n"
            "# TYPE sglang:spec_num_draft_tokens gauge\n"
            'sglang:spec_num_draft_tokens{model_name="m",tp_rank="0"} 3.0\n'
            "# HELP sglang:spec_accept_length accept\n# TYPE sglang:spec_accept_length gauge\n"
            'sglang:spec_accept_length{model_name="m",tp_rank="0"} 2.4\n')
    s = latency.parse(text, 0.0)
    assert (s.num_steps, s.num_draft_tokens) == (2.0, 3.0)
    assert latency.from_json(latency.to_json(s)) == s  # a record keeps them
    w = latency.window(None, s)
    assert w["spec"] == {"accept_len": 2.4, "num_steps": 2.0, "num_draft_tokens": 3.0}
    w["itl"] = {"n": 5, "mean": 0.01, "p50": 0.01, "p90": 0.02, "p99": 0.03}
    assert latency_line(w, None, 200).endswith("steps 2")
