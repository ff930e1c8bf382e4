"""The live simulator's session on a fake clock: what the live process does on the wall clock
(tests/integration/test_sim_live.py runs it), with the times under the test's control, so the
order of things is checked without timing a process.

The live runner asks `next_time()`, waits, and calls `advance(now)`; /health answers 200 when
the session's state is `ready`, and a request is served only then; a streamed request's tokens
are sent when the wall clock reaches the times the session gives them.
"""

from __future__ import annotations

from mtptui.sim import answers, scenario
from mtptui.sim.engine import RealRequest
from mtptui.sim.session import Session

T0 = 1_773_072_000.0
ARGV = ["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4", "--sim-load", "light", "--sim-startup-seconds", "2",
        "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4"]
READY = "The server is fired up and ready to roll!"


def _ready_session() -> tuple[Session, float, list[str]]:
    """A session driven as the live runner drives it, up to its ready line: (session, the time
    then, the lines released). Before that line it is not ready, and refuses requests."""
    s = Session(scenario.config_from_argv(ARGV), T0, 4242, mode="live")
    now, released = T0, []
    while READY not in "\n".join(released):
        assert s.state == "starting"
        assert not s.submit(RealRequest(prompt=9, tokens=["x"]), now)  # /v1/...: 503
        now = min(s.next_time(), now + 0.05)  # the runner wakes at least this often (requests, signals)
        assert now < T0 + 120, "no ready line within two simulated minutes"
        released += [m.text for m in s.advance(now)]
    return s, now, released


def test_health_turns_ready_exactly_at_the_ready_line():
    s, now, released = _ready_session()
    assert released[-1] == READY or READY in released[-1]
    assert s.state == "ready" and s.ready_at <= now
    assert s.submit(RealRequest(prompt=9, tokens=["ok"]), now)


def test_streamed_tokens_come_at_the_simulated_pace():
    """60 tokens in several chunks, with the times that the HTTP thread waits for before sending
    each (httpd._drain), spread over a stretch of simulated time (not all at once); the last one
    finishes the request."""
    s, now, _ = _ready_session()
    tokens, _finish = answers.reply("Tell me something", 60)
    chunks: list[tuple[list[str], float, bool]] = []
    req = RealRequest(prompt=answers.count_prompt_tokens("Tell me something"), tokens=tokens,
                      sink=lambda chunk, t, fin: chunks.append((chunk, t, fin)))
    assert s.submit(req, now)
    start = now
    while not req.done:
        now = min(s.next_time(), now + 0.05)
        assert now < start + 60, "the request did not finish within a simulated minute"
        s.advance(now)
    times = [t for _, t, _ in chunks]
    assert len(chunks) > 5 and times == sorted(times)
    assert [fin for _, _, fin in chunks] == [False] * (len(chunks) - 1) + [True]
    assert sum(len(c) for c, _, _ in chunks) == len(tokens)
    assert 0.1 < times[-1] - start < 10  # roughly 100-200 tokens/s, simulated
