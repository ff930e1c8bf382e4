"""The live simulator's /metrics (`--enable-metrics`): SGLang's names, types, labels and HELP texts
per version, read with prometheus_client's own parser, and the values those of the batch lines
printed with them.

Each run has no background load: the test sends requests and waits until they are done, so the
scheduler is idle (nothing is logged, and the idle refresh is 30 s away) when it scrapes, and the
last batch line of each rank is the one the gauges must show."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from prometheus_client.parser import text_string_to_metric_families

from mtptui.core.parse import BATCH, LineParser
from mtptui.core.records import DECODE
from mtptui.sim.formats import vtuple

SPEC = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4"]
NAME = 'sim "q\\w"\nx'  # a served model name that needs every escape of the label syntax
HALF_CENT = 0.005 + 1e-9  # a `:.2f` field is within half a cent of the value, a float's hair aside
OLD_HELP = "The average acceptance length of speculative decoding."
NEW_HELP = "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward)."

CASES = {
    # version, flags, requests, the label names SGLang 0.x sets, the exporting ranks
    "0.5.12 tp2": ("0.5.12", ["--tp", "2"] + SPEC, 1,
                   ["model_name", "engine_type", "tp_rank", "pp_rank", "moe_ep_rank"], {"TP0": "0"}),
    "0.5.8 tp2 all schedulers": ("0.5.8", ["--tp", "2", "--enable-metrics-for-all-schedulers"] + SPEC, 1,
                                 ["model_name", "engine_type", "tp_rank", "pp_rank", "moe_ep_rank"],
                                 {"TP0": "0", "TP1": "1"}),
    "0.5.4 dp-attention": ("0.5.4", ["--tp", "2", "--dp", "2", "--enable-dp-attention"] + SPEC, 2,
                           ["model_name", "engine_type", "tp_rank", "pp_rank", "dp_rank"],
                           {"DP0 TP0": "0", "DP1 TP1": "1"}),
    "0.4.9 no spec": ("0.4.9", [], 1, ["model_name", "engine_type"], {"": None}),
}


def scrape(sim) -> dict:
    status, body = sim.get("/metrics")
    assert status == 200
    return {f.name: f for f in text_string_to_metric_families(body.decode())}


def last_batches(sim) -> dict[str, dict]:
    """rank -> {"any": the newest batch line's fields, "decode": the newest decode line's}."""
    parser = LineParser()
    out: dict[str, dict] = {}
    for _, line in sim.lines:
        p = parser.parse(line)
        if p.outcome == BATCH:
            r = p.record
            slot = out.setdefault(r.rank, {})
            slot["any"] = r.fields
            if r.kind == DECODE:
                slot["decode"] = r.fields
    return out


def generate(sim, n: int) -> None:
    with ThreadPoolExecutor(n) as pool:
        done = list(pool.map(lambda _: sim.post("/generate", {
            "text": "Tell me a long story", "sampling_params": {"max_new_tokens": 300}}), range(n)))
    assert all(status == 200 for status, _ in done)


@pytest.mark.parametrize("case", list(CASES))
def test_metrics_are_sglangs_and_match_the_lines(sim_factory, case):
    version, flags, requests, label_names, ranks = CASES[case]
    v = vtuple(version)
    sim = sim_factory(["--model-path", "Qwen/Qwen3-8B", "--served-model-name", NAME, "--enable-metrics",
                       "--decode-log-interval", "10", "--sim-startup-seconds", "0.5", "--sim-version", version]
                      + flags)
    sim.wait_line("The server is fired up and ready to roll!", timeout=20)
    generate(sim, requests)
    time.sleep(0.5)  # the last lines reach the pipe; the scheduler is idle now
    families = scrape(sim)
    lines = last_batches(sim)
    assert set(lines) == set(ranks)

    gauges = ["num_running_reqs", "num_used_tokens", "token_usage", "gen_throughput", "num_queue_reqs",
              "spec_accept_length"] + (["spec_accept_rate"] if v >= (0, 5, 4) else [])
    for g in gauges:
        fam = families[f"sglang:{g}"]
        assert fam.type == "gauge"
        assert [s.labels["model_name"] for s in fam.samples] == [NAME] * len(ranks)
        assert {tuple(s.labels) for s in fam.samples} == {tuple(label_names)}
    assert ("sglang:spec_accept_rate" in families) == (v >= (0, 5, 4))
    help_ = families["sglang:spec_accept_length"].documentation
    assert help_ == (NEW_HELP if v >= (0, 5, 12) else OLD_HELP)

    for rank, tp in ranks.items():
        def value(name, tp=tp):
            [s] = [s for s in families[f"sglang:{name}"].samples if s.labels.get("tp_rank") == tp]
            return s.value

        last, decode = lines[rank]["any"], lines[rank]["decode"]
        assert value("num_running_reqs") == last["running_req"]
        assert value("num_queue_reqs") == last["queue_req"]
        assert value("token_usage") == pytest.approx(last["token_usage"], abs=HALF_CENT)
        assert value("gen_throughput") == pytest.approx(decode["gen_throughput"], abs=HALF_CENT)
        if "accept_len" in decode:
            assert value("spec_accept_length") == pytest.approx(decode["accept_len"], abs=HALF_CENT)
            assert value("spec_accept_rate") == pytest.approx(decode["accept_rate"], abs=HALF_CENT)
        else:  # SGLang sets them to 0 on a server without speculation
            assert value("spec_accept_length") == 0
        if "num_token" in last:
            assert value("num_used_tokens") == last["num_token"]


def test_cuda_graph_passes_count_every_decode_step_on_every_tp_rank(sim_factory):
    sim = sim_factory(["--model-path", "Qwen/Qwen3-8B", "--tp", "2", "--enable-metrics", "--decode-log-interval",
                       "10", "--sim-startup-seconds", "0.5"] + SPEC)
    sim.wait_line("The server is fired up and ready to roll!", timeout=20)
    generate(sim, 1)
    time.sleep(0.5)
    fam = scrape(sim)["sglang:cuda_graph_passes"]  # the parser names a counter's family without _total
    assert fam.type == "counter"
    decode = {s.labels["tp_rank"]: s.value for s in fam.samples if s.labels["mode"] == "decode_cuda_graph"}
    lines = sum("Decode batch" in line for _, line in sim.lines)
    # Both TP ranks count the steps, though only TP0 logs; a line every 10th step.
    assert set(decode) == {"0", "1"} and decode["0"] == decode["1"]
    assert lines * 10 <= decode["0"] < (lines + 1) * 10
    prefill = [s for s in fam.samples if s.labels["mode"] == "prefill_none"]
    assert [s.labels["tp_rank"] for s in prefill] == ["0"]
    assert prefill[0].value == sum("Prefill batch" in line for _, line in sim.lines)


def test_metrics_need_the_flag(sim_factory):
    sim = sim_factory(["--model-path", "Qwen/Qwen3-8B", "--sim-startup-seconds", "0.5"])
    sim.wait_line("The server is fired up and ready to roll!", timeout=20)
    assert sim.get("/metrics")[0] == 404
    assert json.loads(sim.get("/server_info")[1])["enable_metrics"] is False
