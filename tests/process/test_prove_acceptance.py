"""Per-request acceptance as the load generator reads it from the real simulator (a child process
on its own port): SGLang's /generate meta_info (completion_tokens / spec_verify_ct), by the
prompts' category; the simulator's model (sim/behaviour.py) accepts more on code than on chat."""

from __future__ import annotations

import os
import sys

from test_prove_child import started, stopped

from mtptui.prove import load
from mtptui.prove.prompts import Prompt
from mtptui.sim import behaviour
from mtptui.sources.process import ProcessSource
from test_control_child import free_port

CODE = Prompt.text("Write a Python function that reverses a list, with tests.", "code")
CHAT = Prompt.text("Tell me about your favourite season.", "chat")


class Fwd:
    host = "127.0.0.1"

    def __init__(self, port: int) -> None:
        self.port = port


async def test_generate_reports_acceptance_per_request_by_category():
    port = free_port()
    src = ProcessSource([sys.executable, "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3-8B", "--tp", "1",
                         "--sim-startup-seconds", "0.3", "--port", str(port), "--speculative-algorithm", "NEXTN",
                         "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                         "--speculative-num-draft-tokens", "4"],
                        host="simulator", env=dict(os.environ, PYTHONUNBUFFERED="1"))
    assert await load.measuring_path(Fwd(port), 2.0) == load.CHAT  # not started: nothing answers
    task = await started(src)
    try:
        assert await load.measuring_path(Fwd(port)) == load.GENERATE
        gen = await load.run_load(Fwd(port), "m", [CODE, CHAT] * 8, 4, 64, timeout=60, path=load.GENERATE)
        chat = await load.run_load(Fwd(port), "m", [CODE] * 2, 2, 16, timeout=60)
    finally:
        await stopped(task)
    print("per-request accept length", acc := gen.acceptance())
    assert gen.errors == 0 and all(s.tokens == 64 for s in gen.samples)
    assert acc["requests"] == 16 and acc["p10"] <= acc["p50"] <= acc["p90"]
    by = acc["by_category"]
    assert set(by) == {"code", "chat"} and by["code"]["requests"] == by["chat"]["requests"] == 8
    assert by["code"]["p10"] > by["chat"]["p90"]  # code accepts more, every request of it
    # NEXTN 3 steps on Qwen3-8B: about 2.1 on chat (factor 0.85), 2.8 on code (behaviour.py)
    assert 1.5 < by["chat"]["p50"] < 2.5 < by["code"]["p50"] <= 4.0
    assert behaviour.classify(CODE.messages[0]["content"]) == "code"
    # the chat endpoint carries no per-request acceptance (SGLang's does not): none, never a 1.0
    assert chat.errors == 0 and chat.acceptance()["requests"] == 0 and chat.acceptance()["p50"] is None
    assert all(s.ttft is not None and s.itls for s in gen.samples)


def test_acceptance_of_vllm_metrics_and_none_without():
    assert load.accept_of({"metrics": {"speculative_decoding": {"mean_acceptance_length": 1.23}}}) == (1.23, None)
    assert load.accept_of({"metrics": {"speculative_decoding": {"num_spec_steps": 10,
                                                                "num_accepted_draft_tokens": 5}}}) == (1.5, None)
    assert load.accept_of({"meta_info": {"spec_verify_ct": 0, "completion_tokens": 9}}) is None
    # vLLM 0.32's answer for a request no step drafted for (RequestSpecDecodeMetrics.to_dict)
    assert load.accept_of({"metrics": {"speculative_decoding": {
        "mean_acceptance_length": 1.0, "draft_acceptance_rate": 0.0, "acceptance_histogram": [0, 0, 0, 0],
        "num_spec_steps": 0, "num_accepted_draft_tokens": 0, "num_draft_tokens": 0, "num_spec_tokens": 3}}}) is None
    assert load.accept_of({"usage": {"completion_tokens": 9}}) is None
