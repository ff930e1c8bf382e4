"""The simulator's acceptance by content (sim/behaviour.py, "Acceptance and content"): the
category is read from the prompt's own text, a request's draft chains are sampled with its
category's factor, and the decode lines' accept len moves with the mix of what is served. Run
on a fake clock (the live session, without a process)."""

from __future__ import annotations

import re
import statistics

from mtptui.prove import prompts
from mtptui.sim import answers, behaviour, scenario
from mtptui.sim.engine import RealRequest
from mtptui.sim.session import Session

T0 = 1_773_072_000.0
ARGV = ["--model-path", "Qwen/Qwen3-8B", "--sim-load", "none", "--sim-startup-seconds", "2",
        "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4", "--decode-log-interval", "10"]
READY = "The server is fired up and ready to roll!"
CODE = "Write a Python function that merges two sorted lists into one sorted list, with tests."
CHAT = "Write a short story about a lighthouse keeper who finds a message in a bottle."


def test_the_shipped_prompts_read_as_their_category():
    for p in prompts.PROMPTS:
        assert behaviour.classify(p.messages[-1]["content"]) == p.category, p.messages[-1]["content"]
    assert set(behaviour.CATEGORY_FACTOR) == set(prompts.CATEGORIES)


def test_cues_are_words_and_chat_is_what_is_left():
    assert behaviour.classify("How is decoding sped up?") == "chat"  # "code" inside a word is no cue
    assert behaviour.classify("Please improve my essay") == "chat"  # nor "prove" inside "improve"
    assert behaviour.classify("```\nx = 1\n```") == "code"
    assert behaviour.classify("def f(x):\n    return x") == "code"
    assert behaviour.classify("Give the answer as JSON, with the Python code in a field") == "structured output"
    assert behaviour.classify("tl;dr of this thread please") == "summarisation"
    assert behaviour.classify("") == "chat"


def _serve(texts: list[str], rounds: int = 6) -> tuple[list[float], list[float]]:
    """Serves the texts `rounds` times, all at once each round: (each request's accept length,
    the accept len of each decode line)."""
    s = Session(scenario.config_from_argv(ARGV), T0, 4242, mode="live")
    now, released = T0, []
    while READY not in "\n".join(released):
        now = s.next_time()
        released += [m.text for m in s.advance(now)]
    per_request: list[float] = []
    lines: list[str] = []
    for _ in range(rounds):
        reqs = []
        for text in texts:
            tokens, _ = answers.reply(text, 96)
            reqs.append(RealRequest(prompt=answers.count_prompt_tokens(text), tokens=tokens,
                                    accept_factor=behaviour.content_factor(text)))
            assert s.submit(reqs[-1], now)
        while not all(r.done for r in reqs):
            now = min(s.next_time(), now + 0.05)
            lines += [m.text for m in s.advance(now)]
        per_request += [r.accept_sum / r.steps for r in reqs]
    logged = [float(m) for m in re.findall(r"accept len: ([0-9.]+)", "\n".join(lines))]
    return per_request, logged


def test_acceptance_follows_the_content_and_the_log_follows_the_mix():
    code, code_log = _serve([CODE] * 4)
    chat, chat_log = _serve([CHAT] * 4)
    mixed, mixed_log = _serve([CODE, CODE, CHAT, CHAT])
    # the model's means for NEXTN 3 steps at these factors
    q = behaviour.acceptance_chain(scenario.config_from_argv(ARGV).args, scenario.config_from_argv(ARGV).preset, "NEXTN")
    want_code = behaviour.chain_stats(q, behaviour.CATEGORY_FACTOR["code"])[0]
    want_chat = behaviour.chain_stats(q, behaviour.CATEGORY_FACTOR["chat"])[0]
    assert abs(statistics.mean(code) - want_code) < 0.25 and abs(statistics.mean(chat) - want_chat) < 0.2
    # each request's own: 96 tokens are some 40 draft chains, so single requests overlap a little
    # (chat 0.85 of code's q: about 2.1 against 2.8), but code's tenth percentile lies above chat's ninetieth
    assert sorted(code)[len(code) // 10] > sorted(chat)[-(len(chat) // 10) - 1]
    assert code_log and chat_log and mixed_log
    # a mixed batch's lines lie between (the code requests finish first, so its last lines are chat's)
    assert statistics.mean(chat_log) + 0.15 < statistics.mean(mixed_log) < statistics.mean(code_log) - 0.15
    assert statistics.mean(code_log) > statistics.mean(chat_log) + 0.5
